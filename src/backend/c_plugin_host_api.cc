// The functions a C plug-in reads a group with: each checks its indices and the attribute's
// type, so that a plug-in's mistake returns 0 rather than reading out of bounds.
#include <algorithm>
#include <variant>

#include "backend/c_plugin_backend.h"
#include "backend/c_plugin_group.h"
#include "collage/sdk/kernel.h"
#include "collage/sdk/subgraph.h"

namespace collage {
namespace {

const Node* OpNode(const CollageGroup* group, int32_t op) {
  if (group == nullptr || op < 0 || static_cast<size_t>(op) >= group->match->op_nodes.size()) {
    return nullptr;
  }
  return &group->graph->node(group->match->op_nodes[static_cast<size_t>(op)]);
}

template <typename T>
const T* AttributeOf(const CollageGroup* group, int32_t op, const char* name) {
  const Node* node = OpNode(group, op);
  if (node == nullptr || name == nullptr) return nullptr;
  const Attribute* attribute = node->attributes.Find(name);
  return attribute == nullptr ? nullptr : std::get_if<T>(attribute);
}

// Fills `info` for `value`; 0 when the value is absent.
int DescribeValue(const CollageGroup* group, ValueId value, CollageTensorInfo* info) {
  if (value == kNoValue || info == nullptr) return 0;
  const Value& v = group->graph->value(value);
  info->dtype = static_cast<int32_t>(v.type.dtype);
  info->rank = static_cast<int32_t>(v.type.shape.size());
  info->dims = v.type.shape.data();
  info->constant_data = v.is_constant() ? v.constant->data() : nullptr;
  const auto input = std::find(group->inputs.begin(), group->inputs.end(), value);
  info->kernel_input =
      input == group->inputs.end() ? -1 : static_cast<int32_t>(input - group->inputs.begin());
  return 1;
}

int32_t OpCount(const CollageGroup* group) {
  return group == nullptr ? 0 : static_cast<int32_t>(group->match->op_nodes.size());
}

const char* OpType(const CollageGroup* group, int32_t op) {
  const Node* node = OpNode(group, op);
  return node == nullptr ? nullptr : node->op_type.c_str();
}

const char* OpDomain(const CollageGroup* group, int32_t op) {
  const Node* node = OpNode(group, op);
  return node == nullptr ? nullptr : node->domain.c_str();
}

int AttributeInt(const CollageGroup* group, int32_t op, const char* name, int64_t* value) {
  const int64_t* stored = AttributeOf<int64_t>(group, op, name);
  if (stored == nullptr || value == nullptr) return 0;
  *value = *stored;
  return 1;
}

int AttributeFloat(const CollageGroup* group, int32_t op, const char* name, float* value) {
  const float* stored = AttributeOf<float>(group, op, name);
  if (stored == nullptr || value == nullptr) return 0;
  *value = *stored;
  return 1;
}

int AttributeString(const CollageGroup* group, int32_t op, const char* name, const char** value) {
  const std::string* stored = AttributeOf<std::string>(group, op, name);
  if (stored == nullptr || value == nullptr) return 0;
  *value = stored->c_str();
  return 1;
}

int AttributeInts(const CollageGroup* group, int32_t op, const char* name, const int64_t** values,
                  int32_t* count) {
  const auto* stored = AttributeOf<std::vector<int64_t>>(group, op, name);
  if (stored == nullptr || values == nullptr || count == nullptr) return 0;
  *values = stored->data();
  *count = static_cast<int32_t>(stored->size());
  return 1;
}

int AttributeFloats(const CollageGroup* group, int32_t op, const char* name, const float** values,
                    int32_t* count) {
  const auto* stored = AttributeOf<std::vector<float>>(group, op, name);
  if (stored == nullptr || values == nullptr || count == nullptr) return 0;
  *values = stored->data();
  *count = static_cast<int32_t>(stored->size());
  return 1;
}

int32_t CaptureCount(const CollageGroup* group) {
  return group == nullptr ? 0 : static_cast<int32_t>(group->match->captures.size());
}

int Capture(const CollageGroup* group, int32_t index, CollageTensorInfo* info) {
  if (index < 0 || index >= CaptureCount(group)) return 0;
  return DescribeValue(group, group->match->captures[static_cast<size_t>(index)], info);
}

int32_t InputCount(const CollageGroup* group) {
  return group == nullptr ? 0 : static_cast<int32_t>(group->inputs.size());
}

int Input(const CollageGroup* group, int32_t index, CollageTensorInfo* info) {
  if (index < 0 || index >= InputCount(group)) return 0;
  return DescribeValue(group, group->inputs[static_cast<size_t>(index)], info);
}

int32_t OutputCount(const CollageGroup* group) {
  return group == nullptr ? 0 : static_cast<int32_t>(group->outputs.size());
}

int Output(const CollageGroup* group, int32_t index, CollageTensorInfo* info) {
  if (index < 0 || index >= OutputCount(group)) return 0;
  return DescribeValue(group, group->outputs[static_cast<size_t>(index)], info);
}

int32_t NumThreads(const CollageGroup* group) { return group == nullptr ? 0 : group->num_threads; }

}  // namespace

const CollageHostApi& CPluginHostApi() {
  static const CollageHostApi api = {
      COLLAGE_C_API_VERSION, sizeof(CollageHostApi), OpCount, OpType, OpDomain, AttributeInt,
      AttributeFloat, AttributeString, AttributeInts, AttributeFloats, CaptureCount, Capture,
      InputCount, Input, OutputCount, Output, NumThreads,
  };
  return api;
}

CollageGroup GroupOf(const Match& match, const CompileRequest& request) {
  CollageGroup group;
  group.graph = match.graph;
  group.match = &match;
  group.inputs = request.inputs;
  group.outputs = request.outputs;
  group.num_threads = request.context != nullptr ? request.num_threads() : 0;
  return group;
}

CollageGroup GroupOf(const Match& match) {
  // The request compiling these nodes would have, without a context: the same kernel
  // inputs and outputs, found as every compile finds them.
  const CompileRequest request = CompileRequest::For(
      *match.graph, SubGraph(match.graph->num_nodes(), match.op_nodes), "", nullptr);
  return GroupOf(match, request);
}

}  // namespace collage

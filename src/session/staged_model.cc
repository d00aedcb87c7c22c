#include "session/staged_model.h"

#include <fmt/ranges.h>

#include <map>
#include <set>
#include <unordered_set>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_registry.h"
#include "onnx/function_expansion.h"
#include "onnx/onnx_checks.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "session/host_nodes.h"
#include "session/run_inputs.h"
#include "session/written_summary.h"

namespace collage {
namespace {

// The opsets collage reads (as the importer does).
constexpr int64_t kMinStagedOpset = 7;
constexpr int64_t kMaxStagedOpset = 21;

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) return import.version();
  }
  return 0;
}

// Every op of `graph` and of the bodies it holds that collage cannot run, with one node each.
void CollectUnsupported(const onnx::GraphProto& graph, const FunctionExpander& functions,
                        std::map<std::string, std::string>& unsupported) {
  static const std::set<std::string> kStagedOps = {"Constant", "If", "Loop", "Scan"};
  // (The sequence ops, run as host steps: IsSequenceOp.)
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string domain = IsDefaultDomain(node.domain()) ? "" : node.domain();
    const bool known = (domain.empty() && kStagedOps.count(node.op_type())) || IsSequenceOp(node) ||
                       OpRegistry::Global().Find(domain, node.op_type()) != nullptr ||
                       functions.HasBody(node);
    if (!known) {
      unsupported.emplace(domain.empty() ? node.op_type() : domain + "::" + node.op_type(),
                          !node.name().empty() || node.output_size() == 0
                              ? node.name()
                              : node.op_type() + "->" + node.output(0));
    }
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) CollectUnsupported(attr.g(), functions, unsupported);
      for (const onnx::GraphProto& g : attr.graphs()) CollectUnsupported(g, functions, unsupported);
    }
  }
}

// Values of the main graph known when a segment compiles: its constants, and inputs small
// enough for a segment to bind by value (as a session of dynamic shapes does).
std::function<bool(const std::string&)> MainGraphFoldable(const onnx::ModelProto& model) {
  auto known = std::make_shared<std::unordered_set<std::string>>();
  for (const auto& init : model.graph().initializer()) known->insert(init.name());
  for (const DeclaredTensor& input : DeclaredInputs(model)) {
    int64_t elements = 1;
    for (int64_t d : input.shape) elements = d < 0 ? kMaxBindableElements + 1 : elements * d;
    if (elements <= kMaxBindableElements) known->insert(input.name);
  }
  return [known](const std::string& name) { return known->count(name) != 0; };
}

}  // namespace

bool StagedModel::NeedsStaging(const ParsedModel& model) {
  if (!model.proto || !model.proto->has_graph()) return false;
  const std::vector<bool> host =
      HostNodes(model.proto->graph(), DefaultOpset(*model.proto), MainGraphFoldable(*model.proto));
  return std::find(host.begin(), host.end(), true) != host.end();
}

StatusOr<std::unique_ptr<StagedModel>> StagedModel::Load(ParsedModel model,
                                                         const SessionOptions& options) {
  const onnx::ModelProto& proto = *model.proto;
  const int64_t opset = DefaultOpset(proto);
  if (opset < kMinStagedOpset || opset > kMaxStagedOpset) {
    return Unsupported("opset {} is not supported (collage runs control flow at opsets {} to {})",
                       opset, kMinStagedOpset, kMaxStagedOpset);
  }
  COLLAGE_RETURN_IF_ERROR(RefuseSparseTensors(proto));
  if (OnnxCheckerKnows(opset)) COLLAGE_RETURN_IF_ERROR(RunOnnxChecker(proto, model.base_dir));
  std::map<std::string, std::string> unsupported;
  CollectUnsupported(proto.graph(), FunctionExpander(proto, opset), unsupported);
  if (!unsupported.empty()) {
    std::vector<std::string> items;
    for (const auto& [op, node] : unsupported) items.push_back(fmt::format("{} (node '{}')", op, node));
    return Unsupported("{} unsupported op type{}: {}", unsupported.size(),
                       unsupported.size() == 1 ? "" : "s", fmt::join(items, ", "));
  }

  for (const auto* list : {&proto.graph().input(), &proto.graph().output()}) {
    for (const onnx::ValueInfoProto& value : *list) {
      if (value.type().value_case() != onnx::TypeProto::VALUE_NOT_SET &&
          !value.type().has_tensor_type()) {
        return Unsupported("{} '{}' is {}; a session takes and gives tensors (sequences run "
                           "inside the model only)",
                           list == &proto.graph().input() ? "input" : "output", value.name(),
                           value.type().has_sequence_type() ? "a sequence" : "not a tensor");
      }
    }
  }
  std::unique_ptr<StagedModel> staged(new StagedModel());
  for (const DeclaredTensor& input : DeclaredInputs(proto)) {
    TensorInfo info{input.name, input.dtype, input.shape};
    if (auto fixed = options.input_shapes.find(input.name); fixed != options.input_shapes.end()) {
      // Only dynamic dims are fixed: the model's static ones stand.
      bool agrees = input.shape.empty() || fixed->second.size() == input.shape.size();
      for (size_t d = 0; agrees && d < input.shape.size(); ++d) {
        agrees = input.shape[d] < 0 || input.shape[d] == fixed->second[d];
      }
      if (!agrees) {
        return InvalidArgument("--shape {}={} contradicts input '{}' ({}): only dynamic dims can be "
                               "fixed",
                               input.name, ShapeToString(fixed->second), input.name,
                               ShapeToString(input.shape));
      }
      info.shape = fixed->second;
    }
    staged->inputs_.push_back(std::move(info));
  }
  for (const auto& fixed : options.input_shapes) {
    if (std::none_of(staged->inputs_.begin(), staged->inputs_.end(),
                     [&](const TensorInfo& info) { return info.name == fixed.first; })) {
      return InvalidArgument("--shape names '{}', which is not a graph input", fixed.first);
    }
  }
  for (const DeclaredTensor& output : DeclaredOutputs(proto)) {
    staged->outputs_.push_back(TensorInfo{output.name, output.dtype, output.shape});
  }
  auto context = std::make_shared<StagedContext>();
  context->model = std::move(model);
  context->opset = opset;
  context->options = options;
  // Segments take their shapes from each run; the fixed ones are checked on the inputs.
  context->options.input_shapes.clear();
  context->options.input_shape_origins.clear();
  staged->context_ = context;
  const onnx::GraphProto& graph = context->model.proto->graph();
  COLLAGE_ASSIGN_OR_RETURN(staged->graph_,
                           StagedGraph::Build(graph, context, nullptr,
                                              MainGraphFoldable(*context->model.proto), 0));
  return staged;
}

StatusOr<std::map<std::string, Tensor>> StagedModel::Run(
    const std::map<std::string, Tensor>& inputs, RunProfile* /*profile*/) {
  COLLAGE_RETURN_IF_ERROR(CheckRunInputs(inputs_, inputs, UnshapedInputs::kAnyRankIfUnshaped));
  std::vector<RunValue> ordered;
  for (const TensorInfo& info : inputs_) {
    ordered.emplace_back(inputs.at(info.name));
    ordered.back().borrowed = true;
  }
  Scope top;
  COLLAGE_ASSIGN_OR_RETURN(std::vector<RunValue> outputs, graph_->Run(top, ordered));
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].is_sequence()) {  // the graph's declarations said tensor (Load checks them)
      return InvalidModel("output '{}' is a sequence; a session gives tensors", outputs_[i].name);
    }
    // Owned and the caller's alone: an output that is an input or a constant is copied.
    named[outputs_[i].name] = outputs[i].borrowed ? outputs[i].tensor.Clone() : outputs[i].tensor;
  }
  return named;
}

Status StagedModel::RefuseFixedGraphUse(const std::string& what) const {
  return Unsupported(
      "{} needs one graph of fixed shapes, and this model has none: its control flow or the "
      "shapes its data sets are decided by each run, so it runs in segments compiled per run "
      "on one backend (--backend)",
      what);
}

std::optional<ModelSummary> StagedModel::written_summary() const {
  return WrittenSummary(*context_->model.proto);
}

std::string StagedModel::placement_note() const {
  return fmt::format("(staged: each segment is placed on {} when its input shapes are known; "
                     "{} step{} run on the host between them)\n{}",
                     context_->options.backend, graph_->num_host_steps(),
                     graph_->num_host_steps() == 1 ? "" : "s", graph_->Describe("  "));
}

}  // namespace collage

#include "session/segment_step.h"

#include <fmt/format.h>

#include "collage/sdk/errors.h"
#include "onnx/onnx_types.h"

namespace collage {
namespace {

// A segment keeps at most this many compiled variants (one per dtype and rank of its inputs);
// beyond, the oldest are dropped. Each variant keeps its own shape cache.
constexpr size_t kMaxSegmentVariants = 8;

}  // namespace

void Segment::Label() {
  label_ = fmt::format("segment {} ({} node{})", index_, nodes.size(), nodes.size() == 1 ? "" : "s");
}

Status Segment::Run(Scope& scope, const ConstantTable& constants) const {
  std::vector<Tensor> feeds;  // in the order of `inputs`, as the compiled model declares them
  feeds.reserve(inputs.size());
  VariantKey key;
  key.reserve(2 * inputs.size());
  for (const std::string& name : inputs) {
    COLLAGE_ASSIGN_OR_RETURN(Tensor value, ReadValue(scope, constants, name, label_));
    key.push_back(static_cast<int64_t>(value.dtype()));
    key.push_back(value.rank());
    feeds.push_back(std::move(value));
  }
  COLLAGE_ASSIGN_OR_RETURN(std::shared_ptr<ShapeSpecializer> compiled, Compiled(key, feeds));
  StatusOr<std::vector<Tensor>> results = compiled->RunOrdered(feeds);
  if (!results.ok()) return results.status().WithContext(label_);
  if (results->size() != outputs.size()) {
    return Internal("{}: {} outputs for {}", label_, results->size(), outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) scope.Set(outputs[i], std::move((*results)[i]));
  return Status::Ok();
}

int Segment::num_compiled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int total = 0;
  for (const auto& variant : variants_) total += variant.second->num_compiled();
  return total;
}

StatusOr<std::shared_ptr<ShapeSpecializer>> Segment::Compiled(
    const VariantKey& key, const std::vector<Tensor>& feeds) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& variant : variants_) {
    if (variant.first == key) return variant.second;
  }
  auto model = std::make_shared<onnx::ModelProto>();
  const onnx::ModelProto& source = *context_->model.proto;
  model->set_ir_version(source.ir_version());
  *model->mutable_opset_import() = source.opset_import();
  *model->mutable_functions() = source.functions();
  onnx::GraphProto* graph = model->mutable_graph();
  graph->set_name(fmt::format("{} {}", graph_->name(), label_));
  for (const onnx::NodeProto* node : nodes) *graph->add_node() = *node;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& value = feeds[i];
    onnx::ValueInfoProto* input = graph->add_input();
    input->set_name(inputs[i]);
    // Dynamic dims of the run's rank: the segment compiles per shape signature.
    FillTypeProto(TensorType{value.dtype(), Shape(static_cast<size_t>(value.rank()), -1)},
                  *input->mutable_type());
  }
  for (const std::string& name : embedded) *graph->add_initializer() = *constants_->Find(name);
  // Untyped: the import infers them (libonnx's checker, which wants types, passed the whole).
  for (const std::string& name : outputs) graph->add_output()->set_name(name);
  ParsedModel parsed{std::move(model), fmt::format("{} ({})", context_->model.source_name, label_),
                     context_->model.base_dir};
  auto compiled = std::make_shared<ShapeSpecializer>(std::move(parsed), context_->options,
                                                     std::vector<std::string>{},
                                                     /*checked_whole=*/true);
  if (variants_.size() >= kMaxSegmentVariants) variants_.erase(variants_.begin());
  variants_.emplace_back(key, compiled);
  return compiled;
}

}  // namespace collage

// A segment of a staged graph (staged_graph.h): a run of ordinary nodes, made an ONNX model of
// its own at its first run (inputs typed from the run's tensors with dynamic dims, the
// constants it reads embedded, outputs what later steps read) and compiled per input
// signature on the session's backend by a ShapeSpecializer.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "session/shape_specializer.h"
#include "session/staged_graph.h"

namespace collage {

class Segment : public Step {
 public:
  Segment(std::shared_ptr<const StagedContext> context, const onnx::GraphProto& graph,
          const ConstantTable& constants, int index)
      : context_(std::move(context)), graph_(&graph), constants_(&constants), index_(index) {}

  // Filled by StagedGraph::Build, then Label() once.
  std::vector<const onnx::NodeProto*> nodes;
  std::vector<std::string> inputs;    // read from the scope
  std::vector<std::string> embedded;  // constants copied into the compiled model
  std::vector<std::string> outputs;   // what later steps and the graph's outputs read
  void Label();

  Status Run(Scope& scope, const ConstantTable& constants) const override;
  int num_compiled() const override;
  const std::string& Describe() const override { return label_; }

 private:
  using VariantKey = std::vector<int64_t>;  // each input's dtype and rank

  // The compiled model for inputs of these dtypes and ranks, made at the first such run.
  // Shared: a run keeps its variant while another run's new variant evicts the oldest.
  StatusOr<std::shared_ptr<ShapeSpecializer>> Compiled(const VariantKey& key,
                                                       const std::vector<Tensor>& feeds) const;

  std::shared_ptr<const StagedContext> context_;
  const onnx::GraphProto* graph_;
  const ConstantTable* constants_;
  int index_;
  std::string label_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<VariantKey, std::shared_ptr<ShapeSpecializer>>> variants_;
};

}  // namespace collage

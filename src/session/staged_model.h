// A session's model that runs in stages (staged_graph.h): one whose control flow (If on data,
// Loop, Scan) or whose shapes set by values it computes (NonZero, NonMaxSuppression, ...)
// only a run can decide. Its segments compile per input signature on the session's backend;
// optimizing and plans, which measure one fixed graph, are refused for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "session/per_run_model.h"
#include "session/staged_graph.h"

namespace collage {

class StagedModel : public PerRunModel {
 public:
  // Whether the model's main graph holds a node that must run between compiled segments.
  static bool NeedsStaging(const ParsedModel& model);

  // Checks the whole model (libonnx's checker where it knows the opset, every op of every
  // body supported, one error naming each unsupported op) and stages its graphs.
  static StatusOr<std::unique_ptr<StagedModel>> Load(ParsedModel model,
                                                     const SessionOptions& options);

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  StatusOr<std::map<std::string, Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                              RunProfile* profile) override;
  int num_compiled() const override { return graph_->num_compiled(); }
  std::shared_ptr<Session> latest() const override { return nullptr; }
  Status RefuseFixedGraphUse(const std::string& what) const override;
  std::string placement_note() const override;
  // The nodes of every graph of the model (bodies included) as written, its initializers'
  // elements; no FLOPs (the data of each run sets the shapes).
  std::optional<ModelSummary> written_summary() const override;

 private:
  StagedModel() = default;
  std::shared_ptr<const StagedContext> context_;
  std::unique_ptr<StagedGraph> graph_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
};

}  // namespace collage

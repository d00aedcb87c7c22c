// The part of a session that compiles per input signature (SessionOptions::shapes_per_run):
// a model whose input dims are dynamic, or whose shapes depend on the values of small inputs,
// is imported and compiled for the shapes (and those values) of each run, as a session of
// fixed shapes; the compiled sessions are kept in a bounded cache, most recently used first.
#pragma once

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collage/session.h"
#include "onnx/onnx_import.h"
#include "session/per_run_model.h"

namespace collage {

class ShapeSpecializer : public PerRunModel {
 public:
  // `value_inputs`: inputs whose values a first import already found shapes to depend on.
  // `checked_whole`: the model is a part of one that libonnx's checker passed whole (a staged
  // model's segment), so the checker is not run on it again.
  ShapeSpecializer(ParsedModel model, SessionOptions options,
                   const std::vector<std::string>& value_inputs, bool checked_whole = false);

  // The inputs and outputs as the model declares them (dynamic dims -1; input_shapes applied).
  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }

  // Checks the inputs against the declarations, compiles the model for their signature
  // unless a kept one fits, and runs it.
  StatusOr<std::map<std::string, Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                              RunProfile* profile) override;
  // The same with the inputs in the order of inputs() and the outputs in the order of
  // outputs(): no names looked up (a staged model's segments, at every iteration of a loop).
  StatusOr<std::vector<Tensor>> RunOrdered(const std::vector<Tensor>& inputs,
                                           RunProfile* profile = nullptr);

  int num_compiled() const override;
  // The session compiled for the latest run; nullptr before the first.
  std::shared_ptr<Session> latest() const override;
  Status RefuseFixedGraphUse(const std::string& what) const override;
  // What the compiled models said when they loaded (a plan at other shapes than it was made
  // for, groups that fell back), each once with the input shapes it was said at; the first
  // kMaxWarnings.
  std::vector<std::string> warnings() const override;
  static constexpr size_t kMaxWarnings = 64;
  // The model as its file writes it (before the first run compiles it at some shapes).
  std::optional<ModelSummary> written_summary() const override;
  std::string placement_note() const override {
    return "(placed at the first run, when the input shapes are known)\n";
  }

 private:
  // A model compiled for one signature, and which of the inputs (positions in inputs_) it
  // takes, in its order: the bound ones are constants of it.
  struct Compiled {
    std::string signature;
    std::shared_ptr<Session> session;
    std::vector<size_t> feeds;
  };
  // The cache key of a run: every input's shape, and the bytes of the bound ones.
  std::string Signature(const std::vector<Tensor>& inputs) const;
  StatusOr<Compiled> Compile(const std::vector<Tensor>& inputs);

  ParsedModel model_;
  SessionOptions options_;
  bool checked_whole_ = false;  // the checker passed the model (at load, or a first import)
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;

  mutable std::mutex mutex_;
  std::set<std::string> value_inputs_;  // bound to their values at each run; only ever grows
  // The weights as the first import decoded them: every compiled signature shares them.
  std::map<std::string, Tensor> decoded_initializers_;
  std::list<Compiled> cache_;  // most recent first
  std::vector<std::string> warnings_;
};

}  // namespace collage

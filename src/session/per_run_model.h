// A model that a session compiles while it runs rather than when it loads: one whose shapes
// are known only from each run's inputs (ShapeSpecializer), or one whose control flow and
// data-dependent shapes are decided by the run itself (StagedModel). The session asks it for
// its declared inputs and outputs and hands it every run; optimizing and plans, which measure
// one fixed graph, are refused for it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/session.h"

namespace collage {

class PerRunModel {
 public:
  virtual ~PerRunModel() = default;

  // As the model declares them: dynamic dims -1; a declaration without dims any rank.
  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;

  virtual StatusOr<std::map<std::string, Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                                      RunProfile* profile) = 0;

  // How many compiled models are kept (one per input signature, of every part compiled apart).
  virtual int num_compiled() const = 0;
  // The session compiled for the latest run, where one session runs it whole; else nullptr.
  virtual std::shared_ptr<Session> latest() const = 0;
  // The refusal of what needs one graph of fixed shapes (`what`: "optimizing", "running a
  // plan", ...), saying why this model has none and what, if anything, would give it one.
  virtual Status RefuseFixedGraphUse(const std::string& what) const = 0;
  // What DescribePlacement says before (or instead of) a compiled session's placement.
  virtual std::string placement_note() const = 0;
  // Warnings of its compiled models (a plan taken at shapes it was not made for), each once.
  virtual std::vector<std::string> warnings() const { return {}; }
  // What the model is made of where no one compiled session shows it; nullopt otherwise.
  virtual std::optional<ModelSummary> written_summary() const { return std::nullopt; }
};

}  // namespace collage

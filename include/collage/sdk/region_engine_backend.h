// An engine backend (backend/region_engine_rules.h) whole: a graph-level backend offering the
// engine rules over the nodes it supports, compiling every group by one function of the
// engine's. ONNX Runtime and OpenVINO differ only in what they support and how they compile.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/region_engine_rules.h"

namespace collage {

class RegionEngineBackend final : public Backend {
 public:
  using CompileFunction = StatusOr<std::unique_ptr<Kernel>> (*)(const CompileRequest& request);

  // `reduced`: the reduced precisions `compile` computes in on this CPU.
  RegionEngineBackend(std::string name, std::string version, const NodePredicate& supported,
                      CompileFunction compile, const std::vector<Precision>& reduced = {})
      : name_(std::move(name)),
        version_(std::move(version)),
        rules_(MakeRegionEngineRules(supported, compile, reduced)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return version_; }
  bool graph_level() const override { return true; }
  bool has_own_thread_pool() const override { return true; }
  const RuleSet& rules() const override { return rules_; }

 private:
  std::string name_;
  std::string version_;
  RuleSet rules_;
};

}  // namespace collage

// An engine backend (backend/region_engine_rules.h) whole: a graph-level backend offering the
// engine rules over the nodes it supports, compiling every group by one function of the
// engine's. ONNX Runtime and OpenVINO differ only in what they support and how they compile.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "collage/sdk/region_engine_rules.h"
#include "collage/sdk/backend.h"

namespace collage {

class RegionEngineBackend final : public Backend {
 public:
  using CompileFunction = StatusOr<std::unique_ptr<Kernel>> (*)(const CompileRequest& request);

  RegionEngineBackend(std::string name, std::string version, const NodePredicate& supported,
                      CompileFunction compile)
      : name_(std::move(name)),
        version_(std::move(version)),
        rules_(MakeRegionEngineRules(supported, compile)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return version_; }
  bool graph_level() const override { return true; }
  const RuleSet& rules() const override { return rules_; }

 private:
  std::string name_;
  std::string version_;
  RuleSet rules_;
};

}  // namespace collage

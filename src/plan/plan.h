// A Plan: the placement a search chose, saved as versioned JSON so that it can be shipped
// and run without searching again (DESIGN.md 1.5). It carries what decides whether it still
// applies: the model's hash (a plan for another model is refused), the backends and their
// versions (a missing backend is refused; another version only warns), and the device it
// was measured on (another device warns: the plan runs, but may no longer be the fastest).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/placement_source.h"
#include "collage/sdk/backend.h"
#include "collage/shape_range.h"
#include "runtime/placement.h"

namespace collage {

// A PlacedGroup as a plan file records it: adds the group's measured cost and its nodes'
// names for readers. Its nodes stay node numbers, not the PlacedGroup's SubGraph: a SubGraph
// is a bit set as large as the model, and a plan is read before the model is known (a
// number in a damaged file must not size memory). MakePlan records each placed group
// (PlanGroupOf in plan.cc); PlacementFromPlan turns each back once the graph checks its
// numbers (PlacedGroupOf). The JSON fields are these names, unchanged since version 1.
struct PlanGroup {
  std::string backend;
  std::string rule;
  // Written only when reduced ("precision": "bf16"); plans without it are float32.
  Precision precision = Precision::kFloat32;
  std::vector<NodeId> nodes;
  std::vector<std::string> node_names;  // for readers; the ids are what counts
  double cost_ms = 0;                   // the group's measured cost alone (0: not measured)
};

struct Plan {
  static constexpr int kFormatVersion = 1;
  std::string model_name;
  std::string model_hash;
  std::string device;
  PlacementSource search;  // what chose the placement
  int threads = 1;
  // The shapes of the model's inputs the plan was made for (a model with dynamic dims is
  // placed for one shape; another shape needs its own plan). Empty in plans written before
  // the field existed.
  std::map<std::string, Shape> input_shapes;
  // The shapes the plan is declared for besides the measured ones (a shape profile, `collage
  // optimize --shape-range`): each named input's bounds hold its measured shape. A graph whose
  // every input lies within these bounds (an input not named: at its measured shape) takes
  // the plan's placement as declared, without a warning. Empty: the measured shapes only.
  InputShapeRanges input_ranges;
  std::map<std::string, std::string> backend_versions;  // every backend the groups use
  std::vector<PlanGroup> groups;                        // in execution order
  double estimated_ms = 0;  // what the search added up: groups plus conversions
  double measured_ms = 0;   // end-to-end latency measured after the search (0: not measured)
  // Placed in strict NaN/Inf mode (SessionOptions::strict_non_finite): every group's rule
  // meets the contract. Plans written before the field existed read as false.
  bool strict_non_finite = false;
  // The accuracy budget the plan was made under, when some group may compute in a reduced
  // precision: the largest normalized error (max |a - b| / max |reference|) of any output
  // against the float32 reference kernels, and the error its check measured. 0 (not written)
  // for a plan of float32 groups alone.
  double tolerance = 0;
  double checked_error = 0;
  // The end-to-end decision that chose this plan (none when none was made): the finalist
  // kept, the next fastest (none when no other ran) and its time over this plan's (median of
  // per-round ratios; below 1 when this plan won a tie).
  std::optional<PlacementSource> kept_finalist;
  std::optional<PlacementSource> runner_up;
  double runner_up_ratio = 0;
};

// The graph's inputs and their shapes, as a plan records them; and those as text
// ("x=1x3x224x224, y=1x10").
std::map<std::string, Shape> InputShapesOf(const Graph& graph);
std::string ShapesText(const std::map<std::string, Shape>& shapes);
// Whether `shapes` lie within the plan's declared ranges: every input named by a range within
// it, every other one at the plan's measured shape. False for a plan without ranges.
bool WithinDeclaredRanges(const Plan& plan, const std::map<std::string, Shape>& shapes);
// The plan's measured shapes with its ranges: "x=1x3x320x320 (1x3x224x224..1x3x640x640)".
std::string DeclaredShapesText(const Plan& plan);

// A 64-bit hash (hex) of everything that makes a model what it is: structure, attributes,
// types, opset and every constant's bytes. Node and value names are left out.
std::string ModelHash(const Graph& graph);

// The plan of `placement` on this machine (model hash, device, backend versions filled).
Plan MakePlan(const Graph& graph, const Placement& placement, const BackendRegistry& registry,
              PlacementSource search, int threads);

std::string PlanToJson(const Plan& plan);
// `source` names the text in errors (a file path).
StatusOr<Plan> PlanFromJson(const std::string& text, const std::string& source);
Status WritePlanFile(const Plan& plan, const std::string& path);
StatusOr<Plan> ReadPlanFile(const std::string& path);
// The text of a plan file (one plan or a set), read with the size bound and file checks.
StatusOr<std::string> ReadPlanText(const std::string& path);

// The placement a plan describes, checked against this graph and registry: other input
// shapes (with the optimize command that makes a plan for them), another model, a missing
// backend, or groups that do not form a valid placement are refused; another device,
// other backend versions or another thread count add a warning.
StatusOr<Placement> PlacementFromPlan(const Plan& plan, const Graph& graph,
                                      const BackendRegistry& registry, int threads,
                                      std::vector<std::string>* warnings);

}  // namespace collage

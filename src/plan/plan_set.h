// Plans of one model at several input shapes (`collage optimize MODEL --shape x=A --shape
// x=B`), saved as one file, and how a graph at some input shapes picks its placement from
// them: the plan made for exactly its shapes, else the one measured at the nearest shapes
// (preferring plans whose declared shape ranges hold them), whose groups are kept where their
// rules still offer them at these shapes and run node by node on native where not (saying
// which). A file of one plan is a set of one.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace collage {

inline constexpr size_t kMaxPlansInSet = 64;

// One plan: the plan's own JSON (unchanged format); several: {"format": "collage-plan-set",
// "version": 1, "plans": [...]}.
std::string PlanSetToJson(const std::vector<Plan>& plans);
// Reads either form. `source` names the text in errors.
StatusOr<std::vector<Plan>> PlanSetFromJson(const std::string& text, const std::string& source);
Status WritePlanSetFile(const std::vector<Plan>& plans, const std::string& path);
StatusOr<std::vector<Plan>> ReadPlanSetFile(const std::string& path);

struct ChosenPlan {
  const Plan* plan = nullptr;  // nullptr: no plan of the set is for this model
  bool exact = false;          // made for exactly the graph's input shapes
  bool declared = false;       // not exact, but within the plan's declared shape ranges
};
// The plan made for `graph`'s input shapes; else, among the plans whose groups name the
// graph's nodes (the same model at other shapes), the one measured at the nearest shapes
// (the least sum over inputs of |log(elements here / elements there)|) of those whose
// declared ranges hold these shapes, else of all.
ChosenPlan ChoosePlan(const std::vector<Plan>& plans, const Graph& graph);

// The placement of `plan`, made for the same model at other input shapes, on `graph`: each
// group whose rule (or fusion) still offers its nodes at these shapes keeps its backend, the
// others run node by node on native. `warnings` name every group that fell back, and, unless
// the shapes are `declared` (within the plan's ranges), at which shapes the plan was measured.
StatusOr<Placement> PlacementAtOtherShapes(const Plan& plan, const Graph& graph,
                                           const BackendRegistry& registry, int threads,
                                           bool declared, std::vector<std::string>* warnings);

}  // namespace collage

// libFuzzer target for plan files (`collage run --plan FILE`): any text must give a Plan or
// an error Status from PlanFromJson, and any Plan a Placement or an error Status from
// PlacementFromPlan against a small fixed model (fuzz_fixtures.h) and the built-in
// backends; never a crash, a leak, undefined behaviour or an exception.
//
// Invariants beyond "does not crash":
// - a plan that reads survives the writer: PlanToJson and back gives the same plan;
// - a placement PlacementFromPlan accepts passes ValidatePlacement (every node in exactly
//   one convex group whose inputs earlier groups compute).
// Mutated model hashes would stop nearly every input at the hash check, so each plan is
// also checked with its hash set to the model's. The text is read as a plan set too, and each
// of its plans placed as one made at other input shapes (PlacementAtOtherShapes), whose
// placements must pass ValidatePlacement as well.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "fuzz_check.h"
#include "fuzz_fixtures.h"
#include "plan/plan.h"
#include "plan/plan_set.h"
#include "runtime/placement.h"

namespace {

using collage::Plan;
using collage::PlanGroup;

bool SameGroup(const PlanGroup& a, const PlanGroup& b) {
  return a.backend == b.backend && a.rule == b.rule && a.nodes == b.nodes &&
         a.node_names == b.node_names && a.cost_ms == b.cost_ms;
}

bool SamePlan(const Plan& a, const Plan& b) {
  if (a.model_name != b.model_name || a.model_hash != b.model_hash || a.device != b.device ||
      a.search != b.search || a.threads != b.threads || a.backend_versions != b.backend_versions ||
      a.estimated_ms != b.estimated_ms || a.measured_ms != b.measured_ms ||
      a.groups.size() != b.groups.size()) {
    return false;
  }
  for (size_t g = 0; g < a.groups.size(); ++g) {
    if (!SameGroup(a.groups[g], b.groups[g])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collage;
  static const Graph& graph = *new Graph(fuzz::PlanFuzzGraph());  // built once, never freed
  static const std::string hash = ModelHash(graph);
  const BackendRegistry& registry = GlobalBackendRegistry();

  const std::string text(reinterpret_cast<const char*>(data), size);
  auto set = PlanSetFromJson(text, "fuzz.plan.json");
  if (!set.ok()) fuzz::CheckNotInternal("PlanSetFromJson", set.status());
  for (const Plan& member : set.ok() ? *set : std::vector<Plan>{}) {
    auto placement = PlacementAtOtherShapes(member, graph, registry, /*threads=*/1, /*declared=*/false, nullptr);
    if (!placement.ok()) {
      fuzz::CheckNotInternal("PlacementAtOtherShapes", placement.status());
      continue;
    }
    Status valid = ValidatePlacement(graph, *placement, registry);
    if (!valid.ok())
      fuzz::Fail("PlacementAtOtherShapes accepted an invalid placement", valid.ToString());
  }
  auto plan = PlanFromJson(text, "fuzz.plan.json");
  if (!plan.ok()) {
    fuzz::CheckNotInternal("PlanFromJson", plan.status());
    return 0;
  }
  auto again = PlanFromJson(PlanToJson(*plan), "fuzz-rewritten.plan.json");
  if (!again.ok()) fuzz::Fail("re-reading what PlanToJson wrote", again.status().ToString());
  if (!SamePlan(*plan, *again)) fuzz::Fail("PlanToJson and back changed the plan");

  for (bool hash_matches : {false, true}) {
    Plan checked = *plan;
    if (hash_matches) checked.model_hash = hash;
    std::vector<std::string> warnings;
    auto placement = PlacementFromPlan(checked, graph, registry, /*threads=*/1, &warnings);
    if (!placement.ok()) {
      fuzz::CheckNotInternal("PlacementFromPlan", placement.status());
      continue;
    }
    Status valid = ValidatePlacement(graph, *placement, registry);
    if (!valid.ok())
      fuzz::Fail("PlacementFromPlan accepted an invalid placement", valid.ToString());
  }
  return 0;
}

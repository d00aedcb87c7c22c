#include "in_run_profile.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "util/random_tensor.h"

namespace collage::python {

namespace {

// As many as the command line profiles: enough to smooth a step's jitter, few enough to
// cost little beside the search.
constexpr int kProfiledRuns = 5;

bool IsConversion(const NodeTiming& step) { return step.op_type == "LayoutConversion"; }

RunProfile MeanProfile(const std::vector<RunProfile>& runs) {
  RunProfile mean = runs.front();
  for (size_t r = 1; r < runs.size(); ++r) {
    for (size_t s = 0; s < mean.nodes.size() && s < runs[r].nodes.size(); ++s)
      mean.nodes[s].milliseconds += runs[r].nodes[s].milliseconds;
  }
  for (NodeTiming& step : mean.nodes) step.milliseconds /= static_cast<double>(runs.size());
  return mean;
}

bool SetInRunTimes(const RunProfile& mean, const Graph& graph, OptimizeReport& report) {
  std::vector<const NodeTiming*> groups;
  for (const NodeTiming& step : mean.nodes) {
    if (!IsConversion(step)) groups.push_back(&step);
  }
  if (groups.size() != report.groups.size()) return false;
  for (size_t g = 0; g < groups.size(); ++g) {
    const GroupReport& group = report.groups[g];
    if (group.nodes.empty() || groups[g]->backend != group.backend || groups[g]->rule != group.rule ||
        groups[g]->node_name != graph.node(group.nodes.front()).name) {
      return false;
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) report.groups[g].in_run_ms = groups[g]->milliseconds;
  return true;
}

}  // namespace

StatusOr<RunProfile> ProfileKeptPlacement(Session& session, OptimizeReport& report) {
  std::mt19937 rng(0);
  std::map<std::string, Tensor> inputs;
  for (const TensorInfo& info : session.inputs()) inputs[info.name] = RandomTensor(info.dtype, info.shape, rng);
  COLLAGE_RETURN_IF_ERROR(session.Run(inputs).status());
  std::vector<RunProfile> runs(kProfiledRuns);
  for (RunProfile& run : runs) COLLAGE_RETURN_IF_ERROR(session.Run(inputs, &run).status());
  RunProfile mean = MeanProfile(runs);
  SetInRunTimes(mean, session.graph(), report);
  return mean;
}

double ConversionsMs(const RunProfile& profile) {
  double total = 0;
  for (const NodeTiming& step : profile.nodes) total += IsConversion(step) ? step.milliseconds : 0;
  return total;
}

}  // namespace collage::python

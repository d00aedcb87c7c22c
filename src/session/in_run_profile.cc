// The in-run profile (collage/in_run_profile.h).
#include "collage/in_run_profile.h"

#include <algorithm>
#include <random>

#include "collage/random_tensor.h"

namespace collage {

namespace {

// Enough to smooth a step's jitter, few enough to cost little beside the search (ResNet-50
// at 2 threads: well under a second).
constexpr int kProfiledRuns = 5;

}  // namespace

RunProfile MeanProfile(const std::vector<RunProfile>& runs) {
  if (runs.empty()) return {};
  RunProfile mean = runs.front();
  for (size_t r = 1; r < runs.size(); ++r) {
    for (size_t s = 0; s < mean.nodes.size() && s < runs[r].nodes.size(); ++s) {
      mean.nodes[s].milliseconds += runs[r].nodes[s].milliseconds;
      mean.nodes[s].start_ms += runs[r].nodes[s].start_ms;
    }
  }
  const double n = static_cast<double>(runs.size());
  for (NodeTiming& step : mean.nodes) {
    step.milliseconds /= n;
    step.start_ms /= n;
  }
  return mean;
}

double ConversionsMs(const RunProfile& profile) {
  double total = 0;
  for (const NodeTiming& step : profile.nodes) total += IsConversion(step) ? step.milliseconds : 0;
  return total;
}

StatusOr<RunProfile> ProfileCurrentPlacement(Session& session,
                                             const std::map<std::string, Tensor>& inputs,
                                             int runs) {
  COLLAGE_RETURN_IF_ERROR(session.Run(inputs).status());
  std::vector<RunProfile> profiles(static_cast<size_t>(std::max(1, runs)));
  for (RunProfile& profile : profiles)
    COLLAGE_RETURN_IF_ERROR(session.Run(inputs, &profile).status());
  return MeanProfile(profiles);
}

StatusOr<RunProfile> ProfileKeptPlacement(Session& session) {
  std::mt19937 rng(0);
  std::map<std::string, Tensor> inputs;
  for (const TensorInfo& info : session.inputs()) {
    inputs[info.name] = RandomTensor(info.dtype, info.shape, rng);
  }
  return ProfileCurrentPlacement(session, inputs, kProfiledRuns);
}

}  // namespace collage

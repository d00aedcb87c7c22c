// ChromeTraceJson (collage/report.h).
#include <nlohmann/json.hpp>

#include "collage/report.h"

namespace collage {

std::string ChromeTraceJson(const std::vector<TracedRun>& runs) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const NodeTiming& step : runs[r].profile.nodes) {
      events.push_back({{"name", step.op_type},
                        {"cat", step.backend},
                        {"ph", "X"},
                        {"ts", (runs[r].start_ms + step.start_ms) * 1000.0},
                        {"dur", step.milliseconds * 1000.0},
                        {"pid", 1},
                        {"tid", 1},
                        {"args", {{"backend", step.backend}, {"rule", step.rule},
                                  {"node", step.node_name}, {"run", r}}}});
    }
  }
  nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace collage

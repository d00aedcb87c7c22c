#include "bench_json.h"

#include <nlohmann/json.hpp>

#include "collage/available_backends.h"
#include "collage/device_fingerprint.h"
#include "collage/version.h"

namespace collage::cli {

namespace {

using json = nlohmann::json;

json Versions() {
  json backends = json::object();
  for (const BackendInfo& backend : AvailableBackends()) backends[backend.name] = backend.version;
  json not_built = json::object();
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) not_built[skipped.name] = skipped.reason;
  return {{"collage", Version()}, {"backends", backends}, {"backends_not_built", not_built}};
}

json TensorsOf(const std::vector<TensorInfo>& tensors) {
  json list = json::array();
  for (const TensorInfo& t : tensors) {
    list.push_back({{"name", t.name}, {"dtype", DTypeName(t.dtype)}, {"shape", t.shape}});
  }
  return list;
}

}  // namespace

std::string BenchJson(const BenchSummary& s, const Session& session) {
  const LatencyStats& l = s.latency;
  json j = {
      {"model", s.model},
      {"placement", s.placement},
      {"plan", s.plan.empty() ? json(nullptr) : json(s.plan)},
      {"threads", s.threads},
      {"streams", s.streams},
      {"warmup_runs", s.warmup_runs},
      {"limits", {{"runs", s.max_runs}, {"seconds", s.max_seconds}}},
      {"inputs", TensorsOf(session.inputs())},
      {"outputs", TensorsOf(session.outputs())},
      {"load_ms",
       {{"import", s.load.import_ms},
        {"compile", s.load.compile_ms},
        {"total", s.load.import_ms + s.load.compile_ms}}},
      {"first_inference_ms", s.first_inference_ms},
      {"runs", l.count},
      {"wall_seconds", s.wall_seconds},
      {"throughput_per_second", s.throughput()},
      {"latency_ms",
       {{"min", l.min_ms},
        {"mean", l.mean_ms},
        {"stddev", l.stddev_ms},
        {"p50", l.p50_ms},
        {"p90", l.p90_ms},
        {"p95", l.p95_ms},
        {"p99", l.p99_ms},
        {"max", l.max_ms}}},
      {"p99_is_max", l.p99_is_max()},
      {"compute", s.gflop_per_run > 0
                      ? json{{"gflop_per_run", s.gflop_per_run},
                             {"gflops", s.gflops},
                             {"fp32_peak_gflops", s.peak.gflops},
                             {"peak_isa", s.peak.isa},
                             {"peak_threads", s.peak.threads},
                             {"share_of_peak", s.peak.gflops > 0 ? s.gflops / s.peak.gflops : 0.0}}
                      : json(nullptr)},
      {"machine", DeviceFingerprint()},
      {"versions", Versions()},
  };
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace collage::cli

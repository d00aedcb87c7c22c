// Measurement fanned out over a Ray cluster (`collage optimize --workers ray`, README
// "Fanning measurement out with Ray"): the candidates of a batch are sent at once to a
// dispatcher, tools/ray/collage_ray_dispatch.py run by a Python that has Ray, which makes a
// Ray task of each. The tasks run only on nodes offering this machine's device resource
// (DeviceResourceName: the same fingerprint, so they measure as this machine would), one at
// a time per node, each through `collage_measure_worker --relay`, so a candidate crashing
// or hanging there costs that candidate, recorded by the same rules as a local worker's.
// A node that dies loses only its tasks: Ray sends them again to the others.
//
// Ray is a means, not a measurement condition: its version is not in any cost's key (the
// worker measures the same way whoever carried the request).
//
// What is not a candidate's fault is an error for the optimize, not an invalid record: Ray
// missing for that Python, no node offering the resource, the dispatcher dying or falling
// silent. Cancelling the optimize (WorkerOptions::cancel) kills the dispatcher (Ray then
// cancels its tasks) and gives kCancelled.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cost/measurer.h"
#include "cost/worker_measurer.h"
#include "util/subprocess.h"

namespace collage {

struct RayOptions {
  std::string python;      // an interpreter that imports ray: runs the dispatcher
  std::string dispatcher;  // collage_ray_dispatch.py
  // "auto": $RAY_ADDRESS or the cluster started on this machine; "ray://HOST:PORT": a
  // cluster's Ray Client server.
  std::string address = "auto";
  std::string resource;  // DeviceResourceName(): the nodes that may measure
  std::string device;    // DeviceFingerprint(), for the messages
  // The worker run on the nodes (the same path on each: collage installed alike), the
  // plug-ins it loads there, the backends and versions it must have, the per-request limit.
  WorkerOptions worker;
};

class RayMeasurer : public Measurer {
 public:
  // Starts the dispatcher and checks the hello of a worker on a matching node as
  // WorkerMeasurer checks its worker's. kUnsupported with the dispatcher's reason (no Ray,
  // no node, another build of the worker), kCancelled when interrupted meanwhile.
  static StatusOr<std::unique_ptr<RayMeasurer>> Start(RayOptions options);
  // Closes the dispatcher's stdin (it disconnects from Ray and exits), killing it if slow.
  ~RayMeasurer() override;

  Status CandidatesInBatch(const std::vector<CandidateJob>& jobs,
                           const std::function<Status(size_t, CostRecord)>& on_done) override;
  // One measurement at a time per matching node.
  int parallelism() const override { return nodes_ > 0 ? nodes_ : 1; }

  StatusOr<CostRecord> Candidate(const Graph& graph, const SubGraph& nodes,
                                 const std::string& backend, const std::string& rule,
                                 Precision precision, int threads, double tolerance,
                                 const MeasureSettings& settings) override;
  StatusOr<CostRecord> Conversion(const TensorType& type, const Layout& from, const Layout& to,
                                  int threads, const MeasureSettings& settings) override;
  bool MeasuresInThisProcess() const override { return false; }
  double time_limit_seconds() const override { return options_.worker.timeout_seconds; }

  // Alive nodes offering the resource, as the dispatcher last said.
  int nodes() const { return nodes_; }

 private:
  explicit RayMeasurer(RayOptions options) : options_(std::move(options)) {}
  Status Launch();
  // Sends each request ('C' or 'V' payload) as a job, then calls on_done(i, record) as the
  // replies come, in any order.
  Status Measure(const std::vector<std::string>& requests,
                 const std::function<Status(size_t, CostRecord)>& on_done);
  Status Send(const std::string& payload);
  // The next frame that is not a node count (those update nodes_). An error when the
  // dispatcher said 'X', died, sent garbage or nothing for `patience_s`.
  StatusOr<std::string> NextFrame(double patience_s, const std::string& doing);
  // Ends the dispatcher and says why measuring stopped, with how it ended and its stderr.
  Status Stop(StatusCode code, const std::string& why);

  RayOptions options_;
  std::unique_ptr<Subprocess> dispatcher_;
  uint32_t next_job_ = 0;
  int nodes_ = 0;
};

}  // namespace collage

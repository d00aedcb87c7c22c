// Who measures for the cost model (cost/cost_model.h): this process (InProcessMeasurer), or
// a worker process that a crashing, aborting or hanging library cannot take down with it
// (WorkerMeasurer, cost/worker_measurer.h). Either way a measurement gives a CostRecord:
// every failure of the candidate (it does not compile, computes the wrong answer, crashes
// the worker, times out) is an invalid record with the reason, stored like any other.
//
// A non-OK status means there is nothing to record: kCancelled when the optimize was
// cancelled (OptimizeOptions::cancel: Ctrl-C, SIGTERM), another code when measuring is
// impossible whatever the candidate (no worker can be started any more).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collage/sdk/backend.h"
#include "cost/cost_database.h"
#include "cost/measure.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"

namespace collage {

// One candidate to measure, as Measurer::Candidate takes it.
struct CandidateJob {
  const Graph* graph = nullptr;
  SubGraph nodes;
  std::string backend;
  std::string rule;
  Precision precision = Precision::kFloat32;
  int threads = 1;
  double tolerance = 0;
  MeasureSettings settings;
};

class Measurer {
 public:
  virtual ~Measurer() = default;

  // Measures `jobs`, calling `on_done(i, record)` as job i finishes, in any order. An error
  // from `on_done` or from a measurement (kCancelled: interrupted) ends the batch and is
  // returned; what finished before is kept by the caller. The default measures the jobs one
  // after another in their order; a measurer that measures several at once (on several
  // machines) overrides it.
  virtual Status CandidatesInBatch(const std::vector<CandidateJob>& jobs,
                                   const std::function<Status(size_t, CostRecord)>& on_done);
  // How many candidates it measures at once: the batches worth handing it.
  virtual int parallelism() const { return 1; }

  // The group `nodes` of `graph`, compiled by `backend` for `rule` in `precision` with `threads`
  // threads, checked against the reference kernels within `tolerance` (normalized error) and timed.
  virtual StatusOr<CostRecord> Candidate(const Graph& graph, const SubGraph& nodes,
                                         const std::string& backend, const std::string& rule,
                                         Precision precision, int threads, double tolerance,
                                         const MeasureSettings& settings) = 0;
  // The layout conversion the executable would insert for a value of `type`.
  virtual StatusOr<CostRecord> Conversion(const TensorType& type, const Layout& from,
                                          const Layout& to, int threads,
                                          const MeasureSettings& settings) = 0;
  // True when a candidate runs in the calling process, so that a crash of the candidate
  // ends that process (the cost database then never risks it again).
  virtual bool MeasuresInThisProcess() const = 0;
  // The longest one measurement may take before it is recorded as timed out; 0: no limit.
  virtual double time_limit_seconds() const = 0;
};

// Measures in this process with MeasureCandidate / MeasureConversion (cost/measure.h): what
// the worker itself runs, and the choice when no worker is available. The caller applies
// the thread policy. The random inputs (a fixed seed) and the reference outputs of the last
// node set are kept, so that the backends measured one after another on the same nodes
// share them.
class InProcessMeasurer : public Measurer {
 public:
  explicit InProcessMeasurer(const BackendRegistry& registry) : registry_(registry) {}

  // The seed of the random inputs, the same in every process.
  static constexpr unsigned kInputSeed = 1234;

  StatusOr<CostRecord> Candidate(const Graph& graph, const SubGraph& nodes,
                                 const std::string& backend, const std::string& rule,
                                 Precision precision, int threads, double tolerance,
                                 const MeasureSettings& settings) override;
  bool MeasuresInThisProcess() const override { return true; }
  double time_limit_seconds() const override { return 0; }
  StatusOr<CostRecord> Conversion(const TensorType& type, const Layout& from, const Layout& to,
                                  int threads, const MeasureSettings& settings) override;
  // Drops the kept reference run: for a caller that reuses one Graph object for another
  // graph (the worker imports every group into the same one).
  void ForgetReference() { reference_ = ReferenceRun(); }

 private:
  // Random inputs and the reference kernels' outputs for one node set of one graph.
  struct ReferenceRun {
    const Graph* graph = nullptr;
    std::string nodes;  // SubGraph::ToString; "" before the first
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
    Status status;
  };

  // One execution context per thread count, shared by every candidate measured at that
  // count, as a session's kernels share theirs (the same pools, made once).
  std::shared_ptr<ExecutionContext> ContextFor(int threads);

  const BackendRegistry& registry_;
  ReferenceRun reference_;
  std::map<int, std::shared_ptr<ExecutionContext>> contexts_;
};

}  // namespace collage

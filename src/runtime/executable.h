// Executable: a placement compiled for running — every group compiled by its backend into a
// kernel, a layout conversion wherever a producer's layout differs from what a consumer
// wants, and every intermediate buffer and kernel workspace given a place in one arena
// (runtime/memory_planner.h). Graph inputs are copied into the arena when a run starts.
// A view group (Reshape, Flatten, Squeeze, Unsqueeze, Identity on a plain input) runs no
// kernel: its output is its input's buffer. A Concat whose inputs' slices of its output are
// dense runs none either: their producers write straight into those slices; nor does a Split
// whose outputs are dense slices of its input (runtime/in_place.h).
// Run() may be called from several threads: each concurrent run takes its own arena from a
// pool.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/run_profile.h"
#include "collage/status.h"
#include "collage/sdk/graph.h"
#include "runtime/memory_planner.h"
#include "runtime/placement.h"

namespace collage {

// Bytes readable past the end of every buffer and workspace a kernel is given: some
// libraries' vector kernels read (never write) a little beyond their last element (XNNPACK:
// up to 16 bytes).
inline constexpr size_t kBufferSlack = 64;

class Executable {
 public:
  // `graph` must outlive the Executable. `num_threads` is passed to the backends' Compile.
  static StatusOr<std::unique_ptr<Executable>> Create(const Graph& graph,
                                                      const Placement& placement,
                                                      const BackendRegistry& registry,
                                                      int num_threads);
  ~Executable();

  // `inputs` are in graph-input order and must match their declared types (the Session
  // checks). Returns the graph outputs in order, as owned tensors.
  // With `profile`, records each step's wall time.
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs,
                                    RunProfile* profile = nullptr) const;

  const Placement& placement() const { return placement_; }
  const MemoryPlan& memory_plan() const { return plan_; }
  // Liveness requests behind the plan: one per arena buffer and per kernel workspace.
  const std::vector<BufferRequest>& buffer_requests() const { return requests_; }
  int num_steps() const { return static_cast<int>(steps_.size()); }
  // Groups that run no kernel: views, Concats written in place by their producers, Splits
  // read in place.
  int num_elided_groups() const { return static_cast<int>(elided_.size()); }
  // Buffer ids (one per value and layout held, plus a Concat's whole output) and, per buffer,
  // its request and byte offset in it: a view shares its source's id, a Concat input's slice
  // (a Split output) has the Concat output's (the Split input's) request at its offset.
  struct BufferSlot {
    size_t request = 0;
    size_t offset = 0;
  };
  const std::vector<BufferSlot>& buffer_slots() const { return buffers_; }
  int num_conversions() const;

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    std::vector<size_t> inputs;   // buffer ids
    std::vector<size_t> outputs;  // buffer ids
    int workspace_request = -1;   // request index, -1 when the kernel needs none
    NodeTiming label;             // names for profiles (milliseconds unused)
  };
  // A group that runs no kernel, listed in profiles (0 ms) where its step would have run.
  struct ElidedGroup {
    size_t before_step = 0;
    NodeTiming label;
  };
  struct RunContext;
  class Builder;

  explicit Executable(const Graph& graph);
  std::unique_ptr<RunContext> NewContext() const;
  // Where `buffer` lies in an arena.
  char* Address(char* arena, size_t buffer) const;

  const Graph& graph_;
  Placement placement_;
  // What every kernel is compiled in: the thread count and the resources the kernels share
  // (a library's thread pool), for this executable alone. Before steps_: it outlives them.
  std::shared_ptr<ExecutionContext> execution_context_;
  std::vector<Step> steps_;
  std::vector<BufferSlot> buffers_;    // buffer id → its place in a request
  std::vector<ElidedGroup> elided_;    // in execution order
  std::vector<size_t> input_buffers_;  // per graph input: its buffer id
  // Per graph output: the buffer holding it in plain layout, or -1 when it is a constant.
  std::vector<long> output_buffers_;
  std::vector<BufferRequest> requests_;
  MemoryPlan plan_;

  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<RunContext>> idle_contexts_;
};

}  // namespace collage

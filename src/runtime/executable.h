// Executable: a Graph compiled for running — every node resolved to its kernel, every
// intermediate tensor given a place in one arena (runtime/memory_planner.h). Run() may be
// called from several threads: each concurrent run takes its own arena from a pool.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "collage/session.h"
#include "collage/status.h"
#include "ir/graph.h"
#include "ops/op_registry.h"
#include "runtime/memory_planner.h"

namespace collage {

class Executable {
 public:
  // `graph` must outlive the Executable.
  static StatusOr<std::unique_ptr<Executable>> Create(const Graph& graph);
  ~Executable();

  // `inputs` are in graph-input order and must match their declared types (the Session
  // checks). Returns the graph outputs in order, as owned tensors.
  // With `profile`, records each step's wall time.
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs,
                                    RunProfile* profile = nullptr) const;

  const MemoryPlan& memory_plan() const { return plan_; }
  // Liveness requests behind the plan, one per arena value (for tests and reports).
  const std::vector<BufferRequest>& buffer_requests() const { return requests_; }
  int num_steps() const { return static_cast<int>(steps_.size()); }

 private:
  struct Step {
    const Node* node;
    const OpDef* def;
  };
  enum class Place { kNone, kConstant, kGraphInput, kArena };
  struct Slot {
    Place place = Place::kNone;
    size_t index = 0;  // graph-input index, or request index for arena values
  };
  struct RunContext;

  explicit Executable(const Graph& graph);
  std::unique_ptr<RunContext> NewContext() const;
  Tensor ViewOf(ValueId id, RunContext& ctx) const;

  const Graph& graph_;
  std::vector<Step> steps_;
  std::vector<Slot> slots_;  // per value
  std::vector<BufferRequest> requests_;
  MemoryPlan plan_;

  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<RunContext>> idle_contexts_;
};

}  // namespace collage

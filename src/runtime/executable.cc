#include "runtime/executable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "util/errors.h"

namespace collage {

// Everything one run needs, built once and reused: the arena and, per step, tensor views
// of its inputs and outputs. Graph inputs change each run, so their uses are patched.
struct Executable::RunContext {
  std::shared_ptr<void> arena;
  std::vector<std::vector<Tensor>> step_inputs;
  std::vector<std::vector<Tensor>> step_outputs;
  struct InputUse {
    size_t step;
    size_t slot;
    size_t graph_input;
  };
  std::vector<InputUse> input_uses;
};

Executable::Executable(const Graph& graph) : graph_(graph) {}
Executable::~Executable() = default;

StatusOr<std::unique_ptr<Executable>> Executable::Create(const Graph& graph) {
  COLLAGE_RETURN_IF_ERROR(graph.Validate());
  std::unique_ptr<Executable> exe(new Executable(graph));
  exe->slots_.resize(static_cast<size_t>(graph.num_values()));
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    exe->slots_[static_cast<size_t>(graph.inputs()[i])] = Slot{Place::kGraphInput, i};
  }
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    if (graph.value(v).is_constant()) exe->slots_[static_cast<size_t>(v)] = Slot{Place::kConstant, 0};
  }

  const int num_steps = graph.num_nodes();
  std::vector<int> last_use(static_cast<size_t>(graph.num_values()), -1);
  for (NodeId n = 0; n < num_steps; ++n) {
    for (ValueId in : graph.node(n).inputs) {
      if (in != kNoValue) last_use[static_cast<size_t>(in)] = n;
    }
  }
  for (ValueId out : graph.outputs()) last_use[static_cast<size_t>(out)] = num_steps;

  for (NodeId n = 0; n < num_steps; ++n) {
    const Node& node = graph.node(n);
    const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
    if (def == nullptr) {
      return Unsupported("{} node '{}': op is not supported", node.op_type, node.name);
    }
    exe->steps_.push_back(Step{&node, def});
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      const Value& value = graph.value(out);
      BufferRequest request{value.type.nbytes(), n, std::max(n, last_use[static_cast<size_t>(out)])};
      exe->slots_[static_cast<size_t>(out)] = Slot{Place::kArena, exe->requests_.size()};
      exe->requests_.push_back(request);
    }
  }
  exe->plan_ = PlanMemory(exe->requests_);
  return exe;
}

Tensor Executable::ViewOf(ValueId id, RunContext& ctx) const {
  if (id == kNoValue) return Tensor();
  const Value& value = graph_.value(id);
  const Slot& slot = slots_[static_cast<size_t>(id)];
  switch (slot.place) {
    case Place::kConstant: return *value.constant;
    case Place::kArena:
      return Tensor::View(value.type.dtype, value.type.shape,
                          static_cast<char*>(ctx.arena.get()) + plan_.offsets[slot.index]);
    case Place::kGraphInput:
    case Place::kNone: break;
  }
  return Tensor();
}

std::unique_ptr<Executable::RunContext> Executable::NewContext() const {
  auto ctx = std::make_unique<RunContext>();
  size_t bytes = std::max<size_t>(plan_.arena_bytes, kArenaAlignment);
  void* arena = std::aligned_alloc(kArenaAlignment, bytes);
  if (arena == nullptr) return nullptr;
  ctx->arena = std::shared_ptr<void>(arena, [](void* p) { std::free(p); });
  ctx->step_inputs.resize(steps_.size());
  ctx->step_outputs.resize(steps_.size());
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Node& node = *steps_[s].node;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId in = node.inputs[i];
      ctx->step_inputs[s].push_back(ViewOf(in, *ctx));
      if (in != kNoValue && slots_[static_cast<size_t>(in)].place == Place::kGraphInput) {
        ctx->input_uses.push_back({s, i, slots_[static_cast<size_t>(in)].index});
      }
    }
    for (ValueId out : node.outputs) ctx->step_outputs[s].push_back(ViewOf(out, *ctx));
  }
  return ctx;
}

StatusOr<std::vector<Tensor>> Executable::Run(const std::vector<Tensor>& inputs,
                                              RunProfile* profile) const {
  if (inputs.size() != graph_.inputs().size()) {
    return InvalidArgument("expected {} inputs, got {}", graph_.inputs().size(), inputs.size());
  }
  std::unique_ptr<RunContext> ctx;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!idle_contexts_.empty()) {
      ctx = std::move(idle_contexts_.back());
      idle_contexts_.pop_back();
    }
  }
  if (!ctx) ctx = NewContext();
  if (!ctx) return Internal("cannot allocate an arena of {} bytes", plan_.arena_bytes);

  for (const RunContext::InputUse& use : ctx->input_uses) {
    ctx->step_inputs[use.step][use.slot] = inputs[use.graph_input];
  }
  Status status;
  if (profile != nullptr) profile->nodes.clear();
  for (size_t s = 0; s < steps_.size() && status.ok(); ++s) {
    const Node& node = *steps_[s].node;
    KernelContext kernel{node, graph_.opset(), ctx->step_inputs[s], ctx->step_outputs[s]};
    if (profile == nullptr) {
      status = steps_[s].def->run(kernel);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    status = steps_[s].def->run(kernel);
    std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    profile->nodes.push_back(NodeTiming{node.name, node.op_type, elapsed.count()});
  }
  std::vector<Tensor> outputs;
  if (status.ok()) {
    for (ValueId out : graph_.outputs()) {
      const Slot& slot = slots_[static_cast<size_t>(out)];
      if (slot.place == Place::kGraphInput) {
        outputs.push_back(inputs[slot.index].Clone());
      } else {
        outputs.push_back(ViewOf(out, *ctx).Clone());
      }
    }
  }
  // Drop the per-run input handles before the context goes back to the pool.
  for (const RunContext::InputUse& use : ctx->input_uses) {
    ctx->step_inputs[use.step][use.slot] = Tensor();
  }
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    idle_contexts_.push_back(std::move(ctx));
  }
  if (!status.ok()) return status;
  return outputs;
}

}  // namespace collage

#include "runtime/executable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"
#include "runtime/compile_group.h"
#include "runtime/in_place.h"
#include "runtime/kernel_runner.h"
#include "runtime/layout_conversion.h"

namespace collage {

// Everything one run needs, built once and reused: the arena and, per step, the pointers of
// its buffers.
struct Executable::RunContext {
  std::shared_ptr<void> arena;
  std::vector<std::vector<const void*>> step_inputs;
  std::vector<std::vector<void*>> step_outputs;
  std::vector<void*> step_workspaces;
};

// Turns a placement into steps and buffers, one group at a time.
class Executable::Builder {
 public:
  Builder(Executable& exe, const BackendRegistry& registry)
      : exe_(exe), graph_(exe.graph_), registry_(registry) {}

  Status Build() {
    in_place_ = PlanInPlaceConcats(graph_, exe_.placement_);
    // Graph inputs are copied into the arena at the start of a run, so that every buffer a
    // kernel sees has the arena's slack after it.
    for (ValueId input : graph_.inputs()) {
      size_t id = NewArenaBuffer(graph_.value(input).type.nbytes());
      exe_.input_buffers_.push_back(id);
      buffer_of_[{input, Layout::Plain().name()}] = id;
      home_[input] = Layout::Plain();
    }
    for (size_t g = 0; g < exe_.placement_.groups.size(); ++g) {
      COLLAGE_RETURN_IF_ERROR(AddGroup(exe_.placement_.groups[g], g));
    }
    for (ValueId out : graph_.outputs()) {
      if (graph_.value(out).is_constant()) {
        exe_.output_buffers_.push_back(-1);
        continue;
      }
      COLLAGE_ASSIGN_OR_RETURN(size_t buffer, BufferIn(out, Layout::Plain()));
      exe_.output_buffers_.push_back(static_cast<long>(buffer));
    }
    // Graph outputs stay alive to the end of the run.
    const int end = static_cast<int>(exe_.steps_.size());
    for (long buffer : exe_.output_buffers_) {
      if (buffer < 0) continue;
      exe_.requests_[exe_.buffers_[static_cast<size_t>(buffer)].request].last_step = end;
    }
    COLLAGE_RETURN_IF_ERROR(CheckLiveness());
    exe_.plan_ = PlanMemory(exe_.requests_);
    return Status();
  }

 private:
  Status AddGroup(const PlacedGroup& group, size_t index) {
    group_index_ = static_cast<int>(index);
    if (auto source = ViewSource(graph_, group); source.has_value() && AddView(group, *source)) {
      return Status();
    }
    if (in_place_.groups.count(index) && AddConcatInPlace(group)) return Status();
    if (auto offsets = SplitSliceOffsets(graph_, group);
        offsets.has_value() && AddSplitInPlace(group, *offsets)) {
      return Status();
    }
    const Backend* backend = registry_.Find(group.backend);
    CompileRequest request =
        CompileRequest::For(graph_, group.nodes, group.rule, exe_.execution_context_);
    request.precision = group.precision;
    auto fail = [&](const Status& status) {
      return Status(status.code(), DescribeGroup(group.backend, request) + ": " + status.message());
    };
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, CompileGroup(*backend, request));
    Step step;
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      auto buffer = BufferIn(request.inputs[i], kernel->input_layouts()[i]);
      if (!buffer.ok()) return fail(buffer.status());
      step.inputs.push_back(*buffer);
    }
    // Marked again now that every input conversion is in: each one added a step before this
    // group's, and an input marked before them would otherwise end its life one step early,
    // free to be overwritten by this group's own output.
    for (size_t buffer : step.inputs) MarkRead(buffer);
    for (size_t i = 0; i < request.outputs.size(); ++i) {
      ValueId out = request.outputs[i];
      const Layout& layout = kernel->output_layouts()[i];
      size_t buffer = OutputBuffer(out, layout);
      buffer_of_[{out, layout.name()}] = buffer;
      home_[out] = layout;
      step.outputs.push_back(buffer);
    }
    step.label = LabelOf(group);
    step.kernel = std::move(kernel);
    AddStep(std::move(step));
    return Status();
  }

  NodeTiming LabelOf(const PlacedGroup& group) const {
    NodeTiming label;
    label.group = group_index_;
    label.backend = group.backend;
    label.rule = group.rule;
    label.precision = group.precision;
    std::vector<NodeId> nodes = group.nodes.Nodes();
    label.node_name = graph_.node(nodes.front()).name;
    for (NodeId n : nodes) {
      if (!label.op_type.empty()) label.op_type += "+";
      label.op_type += graph_.node(n).op_type;
    }
    return label;
  }

  void Elide(const PlacedGroup& group, const char* why) {
    NodeTiming label = LabelOf(group);
    label.elided = why;
    exe_.elided_.push_back(ElidedGroup{exe_.steps_.size(), std::move(label)});
  }

  // A view's output is its source's plain bytes: the same buffer, read under the view's
  // shape. Its readers mark that buffer read, so the source lives as long as any view of it
  // (kernels never write their inputs, so no reader can clobber what another still reads).
  // False when the source is held only in a layout whose bytes differ from plain: the group
  // then runs as a step (it would need a conversion anyway).
  bool AddView(const PlacedGroup& group, ValueId source) {
    std::optional<size_t> buffer = PlainBufferOf(source);
    if (!buffer.has_value()) return false;
    const ValueId out = graph_.node(group.nodes.Nodes().front()).outputs[0];
    buffer_of_[{out, Layout::Plain().name()}] = *buffer;
    home_[out] = Layout::Plain();
    Elide(group, "view");
    return true;
  }

  // A Split's outputs read where they lie in its input, as views of its slices (offsets from
  // SplitSliceOffsets). False, as for a view, when the input is not held in plain bytes, and
  // when an output is planned as a slice of an in-place Concat (it must be written there).
  bool AddSplitInPlace(const PlacedGroup& group, const std::vector<size_t>& offsets) {
    const Node& node = graph_.node(group.nodes.Nodes().front());
    for (ValueId out : node.outputs) {
      if (in_place_.slice_of.count(out)) return false;
    }
    std::optional<size_t> buffer = PlainBufferOf(node.inputs[0]);
    if (!buffer.has_value()) return false;
    const BufferSlot source = exe_.buffers_[*buffer];
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      exe_.buffers_.push_back(BufferSlot{source.request, source.offset + offsets[i]});
      buffer_of_[{node.outputs[i], Layout::Plain().name()}] = exe_.buffers_.size() - 1;
      home_[node.outputs[i]] = Layout::Plain();
    }
    Elide(group, "split in place");
    return true;
  }

  // The buffer holding `value` in plain bytes without a conversion, if any: its plain copy,
  // or its producer's output when that layout's bytes are plain ones.
  std::optional<size_t> PlainBufferOf(ValueId value) const {
    auto home = home_.find(value);
    if (home == home_.end()) return std::nullopt;
    if (auto plain = buffer_of_.find({value, Layout::Plain().name()}); plain != buffer_of_.end()) {
      return plain->second;
    }
    if (home->second.SameBytesAs(Layout::Plain(), graph_.value(value).type)) {
      return buffer_of_.at({value, home->second.name()});
    }
    return std::nullopt;
  }

  // Where a group's output goes: its slice of a Concat's output when the Concat is planned in
  // place and the producer writes plain bytes, a buffer of its own otherwise.
  size_t OutputBuffer(ValueId out, const Layout& layout) {
    const TensorType& type = graph_.value(out).type;
    auto slice = in_place_.slice_of.find(out);
    if (slice == in_place_.slice_of.end() || !layout.SameBytesAs(Layout::Plain(), type)) {
      return NewArenaBuffer(layout.BufferBytes(type));
    }
    const ValueId concat = slice->second.concat_output;
    auto whole = concat_buffer_.find(concat);
    if (whole == concat_buffer_.end()) {
      // Allocated when its first producer runs: its life starts there.
      whole =
          concat_buffer_.emplace(concat, NewArenaBuffer(graph_.value(concat).type.nbytes())).first;
    }
    exe_.buffers_.push_back(BufferSlot{exe_.buffers_[whole->second].request, slice->second.offset});
    ++slices_written_[concat];
    return exe_.buffers_.size() - 1;
  }

  // The Concat's inputs are already in its output: no step. False when a producer could not
  // write its slice (a non-plain layout); the Concat then runs as a step into a buffer of its
  // own, reading the slices.
  bool AddConcatInPlace(const PlacedGroup& group) {
    const Node& node = graph_.node(group.nodes.Nodes().front());
    const ValueId out = node.outputs[0];
    if (slices_written_[out] != node.inputs.size()) return false;
    buffer_of_[{out, Layout::Plain().name()}] = concat_buffer_.at(out);
    home_[out] = Layout::Plain();
    Elide(group, "concat in place");
    return true;
  }

  // The buffer holding `value` in `layout`, adding a conversion from the layout its
  // producer wrote when needed (once per value and layout).
  StatusOr<size_t> BufferIn(ValueId value, const Layout& layout) {
    auto found = buffer_of_.find({value, layout.name()});
    if (found != buffer_of_.end()) {
      MarkRead(found->second);
      return found->second;
    }
    auto home = home_.find(value);
    if (home == home_.end()) {
      return Internal("value '{}' is read before any group computes it", graph_.value(value).name);
    }
    const TensorType& type = graph_.value(value).type;
    size_t source = buffer_of_.at({value, home->second.name()});
    if (home->second.SameBytesAs(layout, type)) {
      buffer_of_[{value, layout.name()}] = source;
      MarkRead(source);
      return source;
    }
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> conversion,
                             CompileLayoutConversion(type, home->second, layout, registry_));
    Step step;
    MarkRead(source);
    step.inputs.push_back(source);
    size_t target = NewArenaBuffer(layout.BufferBytes(type));
    step.outputs.push_back(target);
    std::string owner = home->second.kind() == LayoutKind::kOpaque ? home->second.owner() : layout.owner();
    step.label = ConversionStep(graph_.value(value).name, owner.empty() ? kNativeBackend : owner,
                                home->second.name(), layout.name());
    step.kernel = std::move(conversion);
    AddStep(std::move(step));
    buffer_of_[{value, layout.name()}] = target;
    MarkRead(target);
    return target;
  }

  // Every buffer a step reads or writes is live during that step; the memory plan lets
  // buffers share bytes on the strength of it.
  Status CheckLiveness() const {
    for (size_t s = 0; s < exe_.steps_.size(); ++s) {
      const Step& step = exe_.steps_[s];
      for (const std::vector<size_t>* list : {&step.inputs, &step.outputs}) {
        for (size_t buffer : *list) {
          const BufferRequest& request = exe_.requests_[exe_.buffers_[buffer].request];
          if (request.first_step > static_cast<int>(s) || request.last_step < static_cast<int>(s)) {
            return Internal("buffer {} of step {} ({} '{}') is planned for steps {}..{} only", buffer, s,
                            step.label.op_type, step.label.node_name, request.first_step, request.last_step);
          }
        }
      }
    }
    return Status();
  }

  size_t NewArenaBuffer(size_t bytes) {
    const int next_step = static_cast<int>(exe_.steps_.size());
    exe_.requests_.push_back(BufferRequest{bytes + kBufferSlack, next_step, next_step});
    exe_.buffers_.push_back(BufferSlot{exe_.requests_.size() - 1, 0});
    return exe_.buffers_.size() - 1;
  }

  // The buffer is read by the step about to be added.
  void MarkRead(size_t buffer) {
    BufferRequest& request = exe_.requests_[exe_.buffers_[buffer].request];
    request.last_step = std::max(request.last_step, static_cast<int>(exe_.steps_.size()));
  }

  void AddStep(Step step) {
    const int index = static_cast<int>(exe_.steps_.size());
    if (step.kernel->workspace_bytes() > 0) {
      exe_.requests_.push_back(
          BufferRequest{step.kernel->workspace_bytes() + kBufferSlack, index, index});
      step.workspace_request = static_cast<int>(exe_.requests_.size() - 1);
    }
    exe_.steps_.push_back(std::move(step));
  }

  Executable& exe_;
  const Graph& graph_;
  const BackendRegistry& registry_;
  std::map<std::pair<ValueId, std::string>, size_t> buffer_of_;  // (value, layout) → buffer
  std::map<ValueId, Layout> home_;  // the layout the producer wrote
  InPlaceConcats in_place_;
  std::map<ValueId, size_t> concat_buffer_;   // Concat output planned in place → its buffer
  std::map<ValueId, size_t> slices_written_;  // Concat output → inputs written into it
  int group_index_ = -1;                      // the group AddGroup is adding
};

Executable::Executable(const Graph& graph) : graph_(graph) {}
Executable::~Executable() = default;

StatusOr<std::unique_ptr<Executable>> Executable::Create(const Graph& graph,
                                                         const Placement& placement,
                                                         const BackendRegistry& registry,
                                                         int num_threads) {
  COLLAGE_RETURN_IF_ERROR(graph.Validate());
  COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, placement, registry));
  std::unique_ptr<Executable> exe(new Executable(graph));
  exe->placement_ = placement;
  exe->execution_context_ = std::make_shared<ExecutionContext>(num_threads);
  Builder builder(*exe, registry);
  COLLAGE_RETURN_IF_ERROR(builder.Build());
  return exe;
}

int Executable::num_conversions() const {
  int count = 0;
  for (const Step& step : steps_) count += IsConversion(step.label);
  return count;
}

char* Executable::Address(char* arena, size_t buffer) const {
  const BufferSlot& slot = buffers_[buffer];
  return arena + plan_.offsets[slot.request] + slot.offset;
}

std::unique_ptr<Executable::RunContext> Executable::NewContext() const {
  auto ctx = std::make_unique<RunContext>();
  size_t bytes = std::max<size_t>(plan_.arena_bytes, kArenaAlignment);
  void* arena = std::aligned_alloc(kArenaAlignment, (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment);
  if (arena == nullptr) return nullptr;
  ctx->arena = std::shared_ptr<void>(arena, [](void* p) { std::free(p); });
  char* base = static_cast<char*>(arena);
  auto address = [&](size_t buffer) -> void* { return Address(base, buffer); };
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    std::vector<const void*> inputs;
    for (size_t buffer : step.inputs) inputs.push_back(address(buffer));
    std::vector<void*> outputs;
    for (size_t buffer : step.outputs) outputs.push_back(address(buffer));
    ctx->step_inputs.push_back(std::move(inputs));
    ctx->step_outputs.push_back(std::move(outputs));
    ctx->step_workspaces.push_back(
        step.workspace_request < 0 ? nullptr
                                   : base + plan_.offsets[static_cast<size_t>(step.workspace_request)]);
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
  if (!ctx) {
    // Most likely the model's intermediate values are too large for this machine's memory
    // (a batch or image size too large): say which model and how much it asked for.
    return InvalidArgument("graph '{}': cannot allocate {:.1f} MiB for its intermediate values "
                   "(out of memory; a smaller --shape needs less)",
                   graph_.name(), static_cast<double>(plan_.arena_bytes) / (1 << 20));
  }

  char* base = static_cast<char*>(ctx->arena.get());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].nbytes() > 0) {
      std::memcpy(Address(base, input_buffers_[i]), inputs[i].data(), inputs[i].nbytes());
    }
  }
  Status status;
  if (profile != nullptr) profile->nodes.clear();
  const auto run_start = profile != nullptr ? std::chrono::steady_clock::now()
                                            : std::chrono::steady_clock::time_point();
  // Groups that ran no kernel are listed where their step would have been, with 0 ms.
  size_t next_elided = 0;
  auto list_elided_before = [&](size_t step) {
    for (; next_elided < elided_.size() && elided_[next_elided].before_step <= step;
         ++next_elided) {
      NodeTiming timing = elided_[next_elided].label;
      timing.start_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - run_start)
              .count();
      profile->nodes.push_back(std::move(timing));
    }
  };
  for (size_t s = 0; s < steps_.size() && status.ok(); ++s) {
    if (profile != nullptr) list_elided_before(s);
    KernelBuffers buffers{ctx->step_inputs[s], ctx->step_outputs[s], ctx->step_workspaces[s]};
    const auto start = profile != nullptr ? std::chrono::steady_clock::now()
                                          : std::chrono::steady_clock::time_point();
    status = steps_[s].kernel->Run(buffers);
    if (!status.ok()) {
      const NodeTiming& step = steps_[s].label;
      status = Status(status.code(), fmt::format("{} '{}' on backend '{}' (rule '{}'): {}",
                                                 step.op_type, step.node_name, step.backend,
                                                 step.rule, status.message()));
    }
    if (profile != nullptr) {
      std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
      NodeTiming timing = steps_[s].label;
      timing.milliseconds = elapsed.count();
      timing.start_ms = std::chrono::duration<double, std::milli>(start - run_start).count();
      profile->nodes.push_back(std::move(timing));
    }
  }
  if (profile != nullptr && status.ok()) list_elided_before(steps_.size());
  std::vector<Tensor> outputs;
  if (status.ok()) {
    for (size_t o = 0; o < graph_.outputs().size(); ++o) {
      const Value& value = graph_.value(graph_.outputs()[o]);
      long buffer = output_buffers_[o];
      if (buffer < 0) {
        outputs.push_back(value.constant->Clone());
        continue;
      }
      Tensor out(value.type.dtype, value.type.shape);
      if (out.nbytes() > 0) {
        std::memcpy(out.data(), Address(base, static_cast<size_t>(buffer)), out.nbytes());
      }
      outputs.push_back(std::move(out));
    }
  }
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    idle_contexts_.push_back(std::move(ctx));
  }
  if (!status.ok()) return status;
  return outputs;
}

}  // namespace collage

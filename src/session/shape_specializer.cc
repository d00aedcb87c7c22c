#include "session/shape_specializer.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "collage/sdk/errors.h"
#include "session/run_inputs.h"
#include "plan/plan.h"
#include "session/session_access.h"
#include "session/written_summary.h"

namespace collage {
namespace {

// Binding a value may reveal that another shape depends on another input: each import can
// add inputs to bind; more rounds than inputs cannot add anything new.
constexpr int kMaxBindingRounds = 8;

TensorInfo InfoOf(const DeclaredTensor& declared) {
  return TensorInfo{declared.name, declared.dtype, declared.shape};
}

}  // namespace

ShapeSpecializer::ShapeSpecializer(ParsedModel model, SessionOptions options,
                                   const std::vector<std::string>& value_inputs,
                                   bool checked_whole)
    : model_(std::move(model)),
      options_(std::move(options)),
      checked_whole_(checked_whole),
      value_inputs_(value_inputs.begin(), value_inputs.end()) {
  for (const DeclaredTensor& input : DeclaredInputs(*model_.proto)) {
    TensorInfo info = InfoOf(input);
    if (auto fixed = options_.input_shapes.find(info.name); fixed != options_.input_shapes.end()) {
      info.shape = fixed->second;
    }
    inputs_.push_back(std::move(info));
  }
  for (const DeclaredTensor& output : DeclaredOutputs(*model_.proto)) {
    outputs_.push_back(InfoOf(output));
  }
  options_.shape_cache_size = std::max(options_.shape_cache_size, 1);
}

std::string ShapeSpecializer::Signature(const std::vector<Tensor>& inputs) const {
  // Raw bytes, not text: a staged model's bodies look their signature up at every iteration.
  // Each input adds its rank, its dims, and the byte count and bytes of a bound value, so no
  // two signatures run together.
  std::string key;
  auto append = [&key](int64_t n) { key.append(reinterpret_cast<const char*>(&n), sizeof(n)); };
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Tensor& t = inputs[i];
    append(t.rank());
    for (int64_t d : t.shape()) append(d);
    if (value_inputs_.count(inputs_[i].name) && t.nbytes() > 0) {
      append(static_cast<int64_t>(t.nbytes()));
      key.append(static_cast<const char*>(t.data()), t.nbytes());
    } else {
      append(-1);
    }
  }
  return key;
}

StatusOr<ShapeSpecializer::Compiled> ShapeSpecializer::Compile(const std::vector<Tensor>& inputs) {
  for (int round = 0;; ++round) {
    ImportOptions import;
    import.run_onnx_checker = !checked_whole_;
    import.decoded_initializers = &decoded_initializers_;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const std::string& name = inputs_[i].name;
      const Tensor& t = inputs[i];
      import.input_shapes[name] = t.shape();
      import.input_shape_origins[name] =
          fmt::format("input '{}' of this run (shape {})", name, ShapeToString(t.shape()));
      if (value_inputs_.count(name)) import.input_values.emplace(name, t);
    }
    ImportNeeds needs;
    import.needs = &needs;
    StatusOr<Graph> graph = ImportParsed(model_, import);
    if (!graph.ok()) {
      bool learned = false;
      for (const std::string& name : needs.value_inputs)
        learned |= value_inputs_.insert(name).second;
      if (learned && round < kMaxBindingRounds) continue;
      return graph.status().WithContext("compiling for the input shapes of this run");
    }
    // The checker reads the model as written, which no input shape changes: once is enough.
    checked_whole_ = true;
    SessionOptions fixed = options_;
    fixed.input_shapes.clear();
    fixed.input_shape_origins.clear();
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                             SessionAccess::FromGraph(std::move(graph).value(), fixed));
    const std::string shapes = ShapesText(InputShapesOf(SessionGraph(*session)));
    for (const std::string& warning : session->warnings()) {
      std::string said = fmt::format("at input shapes {}: {}", shapes, warning);
      if (warnings_.size() < kMaxWarnings &&
          std::find(warnings_.begin(), warnings_.end(), said) == warnings_.end()) {
        warnings_.push_back(std::move(said));
      }
    }
    Compiled compiled;
    for (const TensorInfo& input : session->inputs()) {
      auto at = std::find_if(inputs_.begin(), inputs_.end(),
                             [&](const TensorInfo& info) { return info.name == input.name; });
      if (at == inputs_.end()) {
        return Internal("the compiled model takes an input '{}' the model does not declare",
                        input.name);
      }
      compiled.feeds.push_back(static_cast<size_t>(at - inputs_.begin()));
    }
    compiled.session = std::move(session);
    return compiled;
  }
}

StatusOr<std::vector<Tensor>> ShapeSpecializer::RunOrdered(const std::vector<Tensor>& inputs,
                                                           RunProfile* profile) {
  COLLAGE_RETURN_IF_ERROR(
      CheckOrderedRunInputs(inputs_, inputs, UnshapedInputs::kAnyRankIfUnshaped));
  std::shared_ptr<Session> session;
  std::vector<Tensor> feeds;
  {
    // Compiling under the lock keeps two runs at one new signature from compiling it twice.
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string key = Signature(inputs);
    auto hit = std::find_if(cache_.begin(), cache_.end(),
                            [&](const Compiled& entry) { return entry.signature == key; });
    if (hit != cache_.end()) {
      cache_.splice(cache_.begin(), cache_, hit);
    } else {
      COLLAGE_ASSIGN_OR_RETURN(Compiled compiled, Compile(inputs));
      // Compiling may have bound more inputs, which changes the key.
      compiled.signature = Signature(inputs);
      cache_.push_front(std::move(compiled));
      while (cache_.size() > static_cast<size_t>(options_.shape_cache_size)) cache_.pop_back();
    }
    session = cache_.front().session;
    // Bound inputs are constants of the compiled model, no longer its inputs.
    for (size_t at : cache_.front().feeds) feeds.push_back(inputs[at]);
  }
  return SessionAccess::RunOrdered(*session, feeds, profile);
}

StatusOr<std::map<std::string, Tensor>> ShapeSpecializer::Run(
    const std::map<std::string, Tensor>& inputs, RunProfile* profile) {
  COLLAGE_RETURN_IF_ERROR(CheckRunInputs(inputs_, inputs, UnshapedInputs::kAnyRankIfUnshaped));
  std::vector<Tensor> ordered;
  for (const TensorInfo& info : inputs_) ordered.push_back(inputs.at(info.name));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, RunOrdered(ordered, profile));
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < outputs.size() && i < outputs_.size(); ++i) {
    named[outputs_[i].name] = std::move(outputs[i]);
  }
  return named;
}

Status ShapeSpecializer::RefuseFixedGraphUse(const std::string& what) const {
  return InvalidArgument(
      "{} needs the model's input shapes fixed; this session compiles per run (its inputs "
      "have dynamic dims, or its shapes depend on input values): load it with input_shapes "
      "(--shape NAME=DIMS)",
      what);
}

std::optional<ModelSummary> ShapeSpecializer::written_summary() const {
  return WrittenSummary(*model_.proto);
}

std::vector<std::string> ShapeSpecializer::warnings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warnings_;
}

int ShapeSpecializer::num_compiled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(cache_.size());
}

std::shared_ptr<Session> ShapeSpecializer::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.empty() ? nullptr : cache_.front().session;
}

}  // namespace collage

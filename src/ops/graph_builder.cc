#include "ops/graph_builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "collage/sdk/op_registry.h"
#include "collage/sdk/errors.h"
#include "util/stable_hash.h"

namespace collage {

namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// xoshiro256+: small, fast, and ours, so the weights are the same with every standard
// library (std::normal_distribution's algorithm is implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& s : s_) {
      seed = SplitMix64(seed);
      s = seed;
    }
  }
  uint64_t Next() {
    const uint64_t result = s_[0] + s_[3];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return result;
  }
  // Uniform in [0, 1) with 24 random bits (every float32 step in [0.5, 1) is reachable).
  float Uniform() { return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f); }

 private:
  uint64_t s_[4];
};

// Elements are generated in fixed-size chunks, each from its own stream, so chunks can be
// filled in parallel and the result does not depend on the thread count.
constexpr int64_t kChunk = 1 << 14;

template <typename Fill>
void FillChunked(float* data, int64_t n, uint64_t stream_seed, Fill fill) {
  const int64_t num_chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (num_chunks > 4)
  for (int64_t c = 0; c < num_chunks; ++c) {
    Rng rng(SplitMix64(stream_seed ^ (static_cast<uint64_t>(c) * 0xD1B54A32D192ED03ull)));
    const int64_t begin = c * kChunk;
    const int64_t end = std::min(n, begin + kChunk);
    fill(rng, data + begin, end - begin);
  }
}

std::string Lower(const std::string& text) {
  std::string out = text;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name, int64_t opset, uint64_t seed,
                           const OpRegistry* registry)
    : registry_(registry != nullptr ? registry : &OpRegistry::Global()), seed_(seed) {
  graph_.set_name(std::move(graph_name));
  graph_.set_opset(opset);
}

ValueId GraphBuilder::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
  return kNoValue;
}

std::string GraphBuilder::Scoped(const std::string& name) const {
  std::string out;
  for (const std::string& scope : scopes_) {
    out += scope;
    out += '.';
  }
  return out + name;
}

void GraphBuilder::PushScope(const std::string& scope) { scopes_.push_back(scope); }

void GraphBuilder::PopScope() {
  if (!scopes_.empty()) scopes_.pop_back();
}

std::string GraphBuilder::UniqueNodeName(const std::string& base) {
  std::string name = base;
  // Numbering resumes where the last name made from this base stopped, so that the n-th
  // "relu" costs one look-up, not n.
  int& suffix = next_suffix_[base];
  while (node_names_.count(name)) name = base + "_" + std::to_string(++suffix);
  node_names_.insert(name);
  return name;
}

uint64_t GraphBuilder::StreamSeed(const std::string& full_name) const {
  return SplitMix64(seed_ ^ SplitMix64(StableHash(full_name)));
}

ValueId GraphBuilder::Input(const std::string& name, DType dtype, Shape shape) {
  if (!ok()) return kNoValue;
  if (graph_.FindValue(name)) {
    return Fail(InvalidArgument("graph input name '{}' is already used", name));
  }
  TensorType type{dtype, std::move(shape)};
  if (!type.is_static() || DTypeSize(dtype) == 0) {
    return Fail(InvalidArgument("graph input '{}': type {} is not a static tensor type", name,
                                type.ToString()));
  }
  ValueId id = graph_.AddValue(name, std::move(type));
  graph_.AddInput(id);
  return id;
}

ValueId GraphBuilder::Constant(const std::string& name, Tensor data) {
  if (!ok()) return kNoValue;
  if (data.empty()) return Fail(InvalidArgument("constant '{}' has no data", Scoped(name)));
  return graph_.AddConstant(Scoped(name), std::move(data));
}

ValueId GraphBuilder::Ints(const std::string& name, const std::vector<int64_t>& values) {
  return Constant<int64_t>(name, Shape{static_cast<int64_t>(values.size())}, values);
}

ValueId GraphBuilder::RandomNormal(const std::string& name, Shape shape, float stddev,
                                   float mean) {
  if (!ok()) return kNoValue;
  if (!(stddev >= 0.0f)) {
    return Fail(InvalidArgument("constant '{}': stddev {} is negative", Scoped(name), stddev));
  }
  Tensor t(DType::kFloat32, std::move(shape));
  // Box-Muller: each pair of uniforms gives two independent normals.
  FillChunked(t.data_as<float>(), t.num_elements(), StreamSeed(Scoped(name)),
              [stddev, mean](Rng& rng, float* out, int64_t n) {
                constexpr float kTwoPi = 6.28318530717958647692f;
                for (int64_t i = 0; i < n; i += 2) {
                  const float u1 = 1.0f - rng.Uniform();  // (0, 1]: log is finite
                  const float u2 = rng.Uniform();
                  const float r = std::sqrt(-2.0f * std::log(u1)) * stddev;
                  out[i] = mean + r * std::cos(kTwoPi * u2);
                  if (i + 1 < n) out[i + 1] = mean + r * std::sin(kTwoPi * u2);
                }
              });
  return Constant(name, std::move(t));
}

ValueId GraphBuilder::RandomUniform(const std::string& name, Shape shape, float low, float high) {
  if (!ok()) return kNoValue;
  if (!(low <= high)) {
    return Fail(InvalidArgument("constant '{}': uniform range [{}, {}) is empty", Scoped(name),
                                low, high));
  }
  Tensor t(DType::kFloat32, std::move(shape));
  const float width = high - low;
  FillChunked(t.data_as<float>(), t.num_elements(), StreamSeed(Scoped(name)),
              [low, width](Rng& rng, float* out, int64_t n) {
                for (int64_t i = 0; i < n; ++i) out[i] = low + width * rng.Uniform();
              });
  return Constant(name, std::move(t));
}

ValueId GraphBuilder::Node(const std::string& op_type, const std::vector<ValueId>& inputs,
                           const NamedAttributes& attributes, const std::string& name) {
  std::vector<ValueId> outputs = NodeMulti(op_type, inputs, 1, attributes, name);
  return outputs.empty() ? kNoValue : outputs[0];
}

std::vector<ValueId> GraphBuilder::NodeMulti(const std::string& op_type,
                                             const std::vector<ValueId>& inputs, int num_outputs,
                                             const NamedAttributes& attributes,
                                             const std::string& name, const std::string& domain) {
  if (!ok()) return std::vector<ValueId>(static_cast<size_t>(std::max(num_outputs, 0)), kNoValue);
  auto fail = [&](Status status) {
    Fail(std::move(status));
    return std::vector<ValueId>(static_cast<size_t>(std::max(num_outputs, 0)), kNoValue);
  };

  ::collage::Node node;
  node.name = UniqueNodeName(Scoped(name.empty() ? Lower(op_type) : name));
  node.op_type = op_type;
  node.domain = domain;
  for (const NamedAttribute& a : attributes) {
    if (node.attributes.Has(a.name)) {
      return fail(InvalidArgument("{} node '{}': attribute '{}' given twice", op_type, node.name,
                                  a.name));
    }
    node.attributes.Set(a.name, a.value);
  }
  if (num_outputs < 1) {
    return fail(InvalidArgument("{} node '{}': needs at least one output, got {}", op_type,
                                node.name, num_outputs));
  }
  const OpDef* def = registry_->Find(domain, op_type);
  if (def == nullptr) {
    return fail(Unsupported("{} node '{}': op {} is not registered", op_type, node.name,
                            domain.empty() ? op_type : domain + "::" + op_type));
  }

  InferContext ctx{node, graph_.opset(), {}, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    ValueId in = inputs[i];
    if (in == kNoValue) {
      ctx.input_types.push_back(nullptr);
      ctx.input_values.push_back(nullptr);
      continue;
    }
    if (in < 0 || in >= graph_.num_values()) {
      return fail(InvalidArgument("{} node '{}': input {} is not a value of this graph (id {})",
                                  op_type, node.name, i, in));
    }
    const Value& v = graph_.value(in);
    ctx.input_types.push_back(&v.type);
    ctx.input_values.push_back(v.is_constant() ? &*v.constant : nullptr);
  }
  // InferNodeTypes reads the output count from the node, and treats kNoValue as "output not
  // wanted": every output here is wanted, so placeholders (real ids are assigned below).
  node.outputs.assign(static_cast<size_t>(num_outputs), 0);
  Status inferred = InferNodeTypes(*def, ctx);
  if (!inferred.ok()) return fail(inferred);
  std::vector<TensorType> types = std::move(ctx.output_types);

  node.inputs = inputs;
  for (int i = 0; i < num_outputs; ++i) {
    std::string value_name = num_outputs == 1 ? node.name : node.name + ":" + std::to_string(i);
    node.outputs[static_cast<size_t>(i)] =
        graph_.AddValue(std::move(value_name), std::move(types[static_cast<size_t>(i)]));
  }
  std::vector<ValueId> outputs = node.outputs;
  StatusOr<NodeId> added = graph_.AddNode(std::move(node));
  if (!added.ok()) return fail(added.status());
  return outputs;
}

void GraphBuilder::Output(ValueId value, const std::string& name) {
  if (!ok()) return;
  if (value < 0 || value >= graph_.num_values()) {
    Fail(InvalidArgument("graph output: id {} is not a value of this graph", value));
    return;
  }
  if (!name.empty() && name != graph_.value(value).name) {
    std::optional<ValueId> existing = graph_.FindValue(name);
    if (existing || std::any_of(renames_.begin(), renames_.end(),
                                [&](const auto& r) { return r.second == name; })) {
      Fail(InvalidArgument("graph output name '{}' is already used", name));
      return;
    }
    renames_.emplace_back(value, name);
  }
  graph_.AddOutput(value);
}

StatusOr<Graph> GraphBuilder::Build() && {
  if (!ok()) return status_;
  if (graph_.outputs().empty()) return InvalidArgument("graph '{}' has no outputs", graph_.name());
  Graph graph = std::move(graph_);
  if (!renames_.empty()) {
    // Graph keeps a name index it alone maintains, so renamed outputs are applied by
    // re-adding every value (same order, same ids) under its final name.
    std::vector<std::string> names;
    for (const Value& v : graph.values()) names.push_back(v.name);
    for (const auto& [id, name] : renames_) names[static_cast<size_t>(id)] = name;
    Graph renamed;
    renamed.set_name(graph.name());
    renamed.set_opset(graph.opset());
    for (ValueId id = 0; id < graph.num_values(); ++id) {
      const Value& v = graph.value(id);
      ValueId new_id = v.is_constant() ? renamed.AddConstant(names[static_cast<size_t>(id)], *v.constant)
                                       : renamed.AddValue(names[static_cast<size_t>(id)], v.type);
      if (renamed.value(new_id).name != names[static_cast<size_t>(id)]) {
        return InvalidArgument("graph output name '{}' clashes with another value's name",
                               names[static_cast<size_t>(id)]);
      }
    }
    for (const ::collage::Node& node : graph.nodes()) {
      COLLAGE_ASSIGN_OR_RETURN(NodeId unused, renamed.AddNode(node));
      (void)unused;
    }
    for (ValueId in : graph.inputs()) renamed.AddInput(in);
    for (ValueId out : graph.outputs()) renamed.AddOutput(out);
    graph = std::move(renamed);
  }
  COLLAGE_RETURN_IF_ERROR(graph.Validate());
  return graph;
}

}  // namespace collage

#include "native_elementwise_chain.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "native_group_values.h"
#include "native_node_sequence.h"
#include "ops/elementwise.h"
#include "collage/sdk/op_registry.h"
#include "collage/sdk/errors.h"

namespace collage::native {
namespace {

// Numpy broadcast of two shapes; nullopt when incompatible.
std::optional<Shape> Broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Whether `from` broadcasts to exactly `to` (numpy's unidirectional broadcast).
bool BroadcastsTo(const Shape& from, const Shape& to) {
  std::optional<Shape> b = Broadcast(from, to);
  return b.has_value() && *b == to;
}

// Copies the tile [begin, end) of `src` broadcast to the chain's shape into `dst`.
void ExpandTile(const BroadcastPlan<1>& plan, const char* src, size_t elsize, int64_t begin,
                int64_t end, char* dst) {
  const bool contiguous = plan.contiguous(0);
  plan.ForRange(begin, end, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t len) {
    char* d = dst + static_cast<size_t>(o - begin) * elsize;
    const char* s = src + static_cast<size_t>(off[0]) * elsize;
    if (contiguous) {
      std::memcpy(d, s, static_cast<size_t>(len) * elsize);
      return;
    }
    auto fill = [&](auto tag) {
      using T = decltype(tag);
      T v;
      std::memcpy(&v, s, sizeof(T));
      T* out = reinterpret_cast<T*>(d);
      for (int64_t i = 0; i < len; ++i) out[i] = v;
    };
    switch (elsize) {
      case 1: fill(uint8_t{}); break;
      case 2: fill(uint16_t{}); break;
      case 4: fill(uint32_t{}); break;
      case 8: fill(uint64_t{}); break;
      default:
        for (int64_t i = 0; i < len; ++i) std::memcpy(d + static_cast<size_t>(i) * elsize, s, elsize);
    }
  });
}

// A value as the tiled nodes see it, re-made for every tile.
struct TileValue {
  enum class Source {
    kStream,   // lives in memory with the full element count: view at the tile's offset
    kScratch,  // an intermediate: a per-thread tile buffer
    kExpand,   // a broadcast operand: expanded into a per-thread tile buffer
  };
  ValueId value = kNoValue;
  DType dtype = DType::kUndefined;
  size_t elsize = 0;
  Source source = Source::kStream;
  size_t scratch_offset = 0;  // kScratch / kExpand: within the thread's scratch
  size_t plan = 0;            // kExpand: index into the plans
};

// A value passed to the tiled nodes whole (scalars as rank 0, parameters as they are).
struct WholeValue {
  ValueId value = kNoValue;
  bool as_scalar = false;
};

struct Operand {
  enum class Kind { kAbsent, kTile, kWhole };
  Kind kind = Kind::kAbsent;
  size_t index = 0;
};

// fp32 ops the chain runs with its own loops: calling a reference KernelFn costs a few
// hundred nanoseconds (views, dispatch, broadcast plan), as much as the arithmetic of a
// whole tile for these cheap ops. The loops compute exactly what the reference functors do.
enum class FastOp { kNone, kAdd, kSub, kMul, kDiv, kMax, kMin, kRelu, kNeg };

FastOp FastOpOf(const std::string& op_type) {
  static const std::map<std::string, FastOp> kOps = {
      {"Add", FastOp::kAdd}, {"Sub", FastOp::kSub}, {"Mul", FastOp::kMul},
      {"Div", FastOp::kDiv}, {"Max", FastOp::kMax}, {"Min", FastOp::kMin},
      {"Relu", FastOp::kRelu}, {"Neg", FastOp::kNeg}};
  auto it = kOps.find(op_type);
  return it == kOps.end() ? FastOp::kNone : it->second;
}

template <typename F>
void BinaryLoop(const float* a, bool a_scalar, const float* b, bool b_scalar, float* out,
                int64_t n, F f) {
  if (!a_scalar && !b_scalar) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (!a_scalar) {
    const float y = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], y);
  } else if (!b_scalar) {
    const float x = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
  } else {
    const float v = f(*a, *b);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

void RunFast(FastOp op, const float* a, bool a_scalar, const float* b, bool b_scalar,
             float* out, int64_t n) {
  switch (op) {
    case FastOp::kAdd: BinaryLoop(a, a_scalar, b, b_scalar, out, n, std::plus<float>()); break;
    case FastOp::kSub: BinaryLoop(a, a_scalar, b, b_scalar, out, n, std::minus<float>()); break;
    case FastOp::kMul:
      BinaryLoop(a, a_scalar, b, b_scalar, out, n, std::multiplies<float>());
      break;
    case FastOp::kDiv: BinaryLoop(a, a_scalar, b, b_scalar, out, n, std::divides<float>()); break;
    case FastOp::kMax: BinaryLoop(a, a_scalar, b, b_scalar, out, n, NanMax<float>); break;
    case FastOp::kMin: BinaryLoop(a, a_scalar, b, b_scalar, out, n, NanMin<float>); break;
    case FastOp::kRelu:
      for (int64_t i = 0; i < n; ++i) out[i] = a[i] < 0.0f ? 0.0f : a[i];  // NaN stays NaN
      break;
    case FastOp::kNeg:
      for (int64_t i = 0; i < n; ++i) out[i] = -a[i];
      break;
    case FastOp::kNone: break;
  }
}

struct TileStep {
  Node node;
  const OpDef* def = nullptr;
  FastOp fast = FastOp::kNone;
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
};

class ElementwiseChainKernel final : public Kernel {
 public:
  Status Run(const KernelBuffers& buffers) const override {
    try {
      return RunChain(buffers);
    } catch (const std::exception& e) {
      return Internal("native elementwise chain: {}", e.what());
    }
  }

  // Filled by CompileElementwiseChain.
  GroupValues values_;
  NodeSequence prologue_;
  std::vector<TileValue> tile_values_;
  std::vector<WholeValue> whole_values_;
  std::vector<BroadcastPlan<1>> plans_;
  std::vector<TileStep> steps_;
  int64_t opset_ = 0;
  int64_t total_ = 0;  // elements of the chain's shape
  int64_t tile_ = kDefaultTileElements;
  size_t shared_bytes_ = 0;      // the prologue's values, before the per-thread scratch
  size_t per_thread_bytes_ = 0;  // tile buffers of one thread
  int max_threads_ = 1;

  explicit ElementwiseChainKernel(const CompileRequest& request) : values_(request) {}

  void SetLayoutsAndWorkspace(size_t num_inputs, size_t num_outputs) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(num_outputs, Layout::Plain());
    const size_t threads = static_cast<size_t>(std::max(1, max_threads_));
    workspace_bytes_ = shared_bytes_ + threads * per_thread_bytes_;
  }

 private:
  int ThreadsFor(int64_t num_tiles) const {
    if (omp_in_parallel()) return 1;
    // Same threshold as the reference kernels: a team costs microseconds.
    if (total_ * static_cast<int64_t>(steps_.size()) < kParallelWork) return 1;
    return static_cast<int>(
        std::min<int64_t>({max_threads_, omp_get_max_threads(), num_tiles}));
  }

  Status RunChain(const KernelBuffers& buffers) const {
    if (!prologue_.empty()) COLLAGE_RETURN_IF_ERROR(prologue_.Run(values_, buffers));
    const int64_t num_tiles = (total_ + tile_ - 1) / tile_;
    if (num_tiles == 0 || steps_.empty()) return Status::Ok();

    std::vector<Tensor> wholes;
    for (const WholeValue& w : whole_values_) {
      Tensor t = values_.View(w.value, buffers);
      wholes.push_back(w.as_scalar ? t.Reshaped({}) : t);
    }
    std::vector<char*> bases;  // kStream / kExpand sources
    for (const TileValue& v : tile_values_) {
      bases.push_back(v.source == TileValue::Source::kScratch
                          ? nullptr
                          : static_cast<char*>(values_.Data(v.value, buffers)));
    }

    const int threads = ThreadsFor(num_tiles);
    std::vector<Status> statuses(static_cast<size_t>(threads));
    std::atomic<bool> failed{false};
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int t = omp_get_thread_num();
      const int team = omp_get_num_threads();
      char* scratch = static_cast<char*>(buffers.workspace) + shared_bytes_ +
                      static_cast<size_t>(t) * per_thread_bytes_;
      const int64_t chunk = (num_tiles + team - 1) / team;
      const int64_t first = std::min(num_tiles, t * chunk);
      const int64_t last = std::min(num_tiles, first + chunk);
      Status status;
      try {
        std::vector<char*> tiles(tile_values_.size());
        std::vector<Tensor> inputs;
        std::vector<Tensor> outputs;
        for (int64_t tile = first; tile < last && status.ok() && !failed.load(); ++tile) {
          const int64_t begin = tile * tile_;
          const int64_t n = std::min(tile_, total_ - begin);
          for (size_t k = 0; k < tile_values_.size(); ++k) {
            const TileValue& v = tile_values_[k];
            switch (v.source) {
              case TileValue::Source::kStream:
                tiles[k] = bases[k] + static_cast<size_t>(begin) * v.elsize;
                break;
              case TileValue::Source::kScratch: tiles[k] = scratch + v.scratch_offset; break;
              case TileValue::Source::kExpand:
                tiles[k] = scratch + v.scratch_offset;
                ExpandTile(plans_[v.plan], bases[k], v.elsize, begin, begin + n, tiles[k]);
                break;
            }
          }
          for (const TileStep& step : steps_) {
            if (step.fast != FastOp::kNone) {
              // Operands are fp32 tiles or rank-0 scalars (checked at Compile).
              auto operand = [&](size_t i) -> std::pair<const float*, bool> {
                const Operand& op = step.inputs[i < step.inputs.size() ? i : 0];
                if (op.kind == Operand::Kind::kTile) {
                  return {reinterpret_cast<const float*>(tiles[op.index]), false};
                }
                return {wholes[op.index].data_as<float>(), true};
              };
              auto [a, a_scalar] = operand(0);
              auto [b, b_scalar] = operand(1);
              RunFast(step.fast, a, a_scalar, b, b_scalar,
                      reinterpret_cast<float*>(tiles[step.outputs[0].index]), n);
              continue;
            }
            auto pick = [&](const Operand& op) {
              switch (op.kind) {
                case Operand::Kind::kTile: {
                  const TileValue& v = tile_values_[op.index];
                  return Tensor::View(v.dtype, Shape{n}, tiles[op.index]);
                }
                case Operand::Kind::kWhole: return wholes[op.index];
                case Operand::Kind::kAbsent: break;
              }
              return Tensor();
            };
            inputs.clear();
            outputs.clear();
            for (const Operand& op : step.inputs) inputs.push_back(pick(op));
            for (const Operand& op : step.outputs) outputs.push_back(pick(op));
            KernelContext ctx{step.node, opset_, inputs, outputs};
            status = step.def->run(ctx);
            if (!status.ok()) break;
          }
        }
      } catch (const std::exception& e) {
        status = Internal("native elementwise chain: {}", e.what());
      }
      if (!status.ok()) {
        failed.store(true);
        statuses[static_cast<size_t>(t)] = status;
      }
    }
    for (const Status& s : statuses) COLLAGE_RETURN_IF_ERROR(s);
    return Status::Ok();
  }
};

}  // namespace

bool IsDataOperand(const Node& node, size_t index) {
  if (index == 0) return true;
  const std::string& op = node.op_type;
  return !(op == "Expand" || op == "CastLike" || op == "Clip" || op == "Dropout");
}

// A QuantizeLinear or DequantizeLinear whose scale is per axis or per block: the chain runs
// each node on a flat tile of the tensor, where the axis a scale belongs to is lost.
bool QuantizesPerAxis(const Graph& graph, const Node& node) {
  if (node.op_type != "QuantizeLinear" && node.op_type != "DequantizeLinear") return false;
  return node.inputs.size() < 2 || node.inputs[1] == kNoValue ||
         graph.value(node.inputs[1]).type.num_elements() != 1;
}

bool IsChainableNode(const Graph& graph, const Node& node) {
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
  if (def == nullptr || !def->domain.empty()) return false;
  if (def->kind != OpKind::kElementwise && def->kind != OpKind::kBroadcast) return false;
  if (node.op_type == "BatchNormalization" || QuantizesPerAxis(graph, node)) return false;
  const Shape* shape = nullptr;
  for (ValueId out : node.outputs) {
    if (out == kNoValue) continue;
    const TensorType& t = graph.value(out).type;
    if (DTypeSize(t.dtype) == 0 || !t.is_static()) return false;
    if (shape != nullptr && *shape != t.shape) return false;
    shape = &graph.value(out).type.shape;
  }
  if (shape == nullptr) return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    if (in == kNoValue) continue;
    const TensorType& t = graph.value(in).type;
    if (!t.is_static()) return false;
    if (IsDataOperand(node, i) && (DTypeSize(t.dtype) == 0 || !BroadcastsTo(t.shape, *shape))) {
      return false;
    }
  }
  return true;
}

StatusOr<std::unique_ptr<Kernel>> CompileElementwiseChain(const CompileRequest& request,
                                                          ChainOptions options) {
  const Graph& graph = *request.graph;
  if (options.tile_elements < 1) {
    return InvalidArgument("tile of {} elements: must be at least 1", options.tile_elements);
  }
  const std::vector<NodeId> nodes = request.node_ids();
  // The chain's shape: every output broadcasts to it.
  Shape shape;
  bool first_output = true;
  for (NodeId id : nodes) {
    const Node& node = graph.node(id);
    if (!IsChainableNode(graph, node)) {
      return Unsupported("{} node '{}' cannot be part of an elementwise chain", node.op_type,
                         node.name);
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      const Shape& s = graph.value(out).type.shape;
      std::optional<Shape> b = first_output ? std::optional<Shape>(s) : Broadcast(shape, s);
      if (!b) {
        return Unsupported("outputs of shapes {} and {} do not broadcast to one shape",
                           ShapeToString(shape), ShapeToString(s));
      }
      shape = *b;
      first_output = false;
    }
  }
  const int64_t total = NumElements(shape);

  // Split: nodes that produce full-size values are tiled, smaller ones form the prologue.
  std::vector<NodeId> prologue_nodes;
  std::vector<NodeId> tiled_nodes;
  std::map<ValueId, bool> tiled_value;  // produced by a tiled node
  for (NodeId id : nodes) {
    const Node& node = graph.node(id);
    bool full = true;
    for (ValueId out : node.outputs) {
      if (out != kNoValue) full = full && graph.value(out).type.num_elements() == total;
    }
    if (full) {
      tiled_nodes.push_back(id);
      for (ValueId out : node.outputs) {
        if (out != kNoValue) tiled_value[out] = true;
      }
      continue;
    }
    for (ValueId in : node.inputs) {
      if (in != kNoValue && tiled_value.count(in) != 0) {
        return Unsupported("{} node '{}' writes {} from a value of the chain's shape {}",
                           node.op_type, node.name,
                           ShapeToString(graph.value(node.outputs[0]).type.shape),
                           ShapeToString(shape));
      }
    }
    prologue_nodes.push_back(id);
  }

  auto kernel = std::make_unique<ElementwiseChainKernel>(request);
  ElementwiseChainKernel& k = *kernel;
  COLLAGE_ASSIGN_OR_RETURN(k.prologue_, NodeSequence::Build(graph, prologue_nodes, k.values_));
  k.shared_bytes_ = k.values_.workspace_bytes();
  k.opset_ = graph.opset();
  k.total_ = total;
  k.tile_ = options.tile_elements;
  k.max_threads_ = request.num_threads();
  if (total == 0) tiled_nodes.clear();  // nothing to compute, nothing to write

  std::map<ValueId, size_t> tile_index;
  std::map<std::pair<ValueId, bool>, size_t> whole_index;
  auto add_scratch = [&](ValueId value, TileValue::Source source) {
    TileValue v;
    v.value = value;
    v.dtype = graph.value(value).type.dtype;
    v.elsize = DTypeSize(v.dtype);
    v.source = source;
    if (source != TileValue::Source::kStream) {
      v.scratch_offset = k.per_thread_bytes_;
      k.per_thread_bytes_ += AlignUp(static_cast<size_t>(k.tile_) * v.elsize);
    }
    if (source == TileValue::Source::kExpand) {
      v.plan = k.plans_.size();
      k.plans_.emplace_back(std::array<const Shape*, 1>{&graph.value(value).type.shape}, shape);
    }
    tile_index[value] = k.tile_values_.size();
    k.tile_values_.push_back(v);
    return Operand{Operand::Kind::kTile, tile_index[value]};
  };
  auto add_whole = [&](ValueId value, bool as_scalar) {
    auto key = std::make_pair(value, as_scalar);
    auto it = whole_index.find(key);
    if (it == whole_index.end()) {
      it = whole_index.emplace(key, k.whole_values_.size()).first;
      k.whole_values_.push_back(WholeValue{value, as_scalar});
    }
    return Operand{Operand::Kind::kWhole, it->second};
  };

  for (NodeId id : tiled_nodes) {
    const Node& node = graph.node(id);
    TileStep step;
    step.node = node;
    step.def = OpRegistry::Global().Find(node.domain, node.op_type);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (in == kNoValue) {
        step.inputs.push_back(Operand{});
        continue;
      }
      if (auto it = tile_index.find(in); it != tile_index.end()) {
        step.inputs.push_back(Operand{Operand::Kind::kTile, it->second});
        continue;
      }
      if (!k.values_.Has(in)) {
        return Internal("{} node '{}': input '{}' is neither an input of the group nor computed "
                        "before it",
                        node.op_type, node.name, graph.value(in).name);
      }
      const int64_t n = graph.value(in).type.num_elements();
      if (!IsDataOperand(node, i)) {
        step.inputs.push_back(add_whole(in, false));
      } else if (n == total) {
        step.inputs.push_back(add_scratch(in, TileValue::Source::kStream));
      } else if (n == 1) {
        step.inputs.push_back(add_whole(in, true));
      } else {
        step.inputs.push_back(add_scratch(in, TileValue::Source::kExpand));
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) {
        step.outputs.push_back(Operand{});
        continue;
      }
      // Values the group hands out are written in place; the rest (intermediates, and
      // outputs nothing reads) live in tile buffers only.
      step.outputs.push_back(add_scratch(
          out, k.values_.Has(out) ? TileValue::Source::kStream : TileValue::Source::kScratch));
    }
    step.fast = FastOpOf(node.op_type);
    const bool unary = step.fast == FastOp::kRelu || step.fast == FastOp::kNeg;
    bool fast_ok = step.inputs.size() == (unary ? 1u : 2u) && step.outputs.size() == 1 &&
                   graph.value(node.outputs[0]).type.dtype == DType::kFloat32;
    for (size_t i = 0; i < step.inputs.size() && fast_ok; ++i) {
      const Operand& op = step.inputs[i];
      fast_ok = graph.value(node.inputs[i]).type.dtype == DType::kFloat32 &&
                (op.kind == Operand::Kind::kTile ||
                 (op.kind == Operand::Kind::kWhole && k.whole_values_[op.index].as_scalar));
    }
    if (!fast_ok) step.fast = FastOp::kNone;
    k.steps_.push_back(std::move(step));
  }

  k.SetLayoutsAndWorkspace(request.inputs.size(), request.outputs.size());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::native

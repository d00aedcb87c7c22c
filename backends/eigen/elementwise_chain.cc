#include "elementwise_chain.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "elementwise_ops.h"
#include "collage/sdk/errors.h"

namespace collage::eigen {
namespace {

// 512 floats = 2 KiB per tile: kMaxChainOps intermediates plus two expanded constants stay
// within a 32 KiB L1 data cache, and a tile is long enough for Eigen's vector loops.
constexpr int64_t kTile = 512;
// Below this many elements the chain runs on the calling thread.
constexpr int64_t kParallelMinElements = int64_t{1} << 15;

struct ChainOperand {
  enum class Kind { kStep, kInput, kScalar, kConstant };
  Kind kind = Kind::kInput;
  int index = 0;       // kStep: the producing step; kInput: the kernel input
  float scalar = 0.0f;  // kScalar
  std::vector<float> data;  // kConstant, broadcast by `block`
  BroadcastBlock block;
};

struct ChainStep {
  ElementwiseOp op = ElementwiseOp::kRelu;
  ElementwiseParams params;
  std::vector<ChainOperand> operands;  // 1 (unary) or 2 (binary)
  int output = -1;                     // the kernel output it writes, or -1
};

// Element i (t0 <= i < t0 + n) of a constant in block form, copied into dst; or a pointer
// into the constant itself when the tile reads it contiguously.
const float* ConstantTile(const ChainOperand& c, int64_t t0, int64_t n, float* dst) {
  const int64_t len = c.block.len;
  if (c.block.inner == 1) {
    const int64_t start = t0 % len;
    if (start + n <= len) return c.data.data() + start;
    for (int64_t i = 0, j = start; i < n;) {  // wraps around the constant
      const int64_t run = std::min(n - i, len - j);
      std::memcpy(dst + i, c.data.data() + j, sizeof(float) * static_cast<size_t>(run));
      i += run;
      j = 0;
    }
    return dst;
  }
  for (int64_t i = 0; i < n;) {  // runs of `inner` equal values
    const int64_t flat = t0 + i;
    const int64_t run = std::min(n - i, c.block.inner - flat % c.block.inner);
    std::fill(dst + i, dst + i + run, c.data[static_cast<size_t>((flat / c.block.inner) % len)]);
    i += run;
  }
  return dst;
}

class ElementwiseChainKernel final : public Kernel {
 public:
  ElementwiseChainKernel(std::vector<ChainStep> steps, int64_t elements, size_t num_inputs,
                         size_t num_outputs)
      : steps_(std::move(steps)), elements_(elements) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(num_outputs, Layout::Plain());
  }

  Status Run(const KernelBuffers& buffers) const override {
    const int64_t tiles = (elements_ + kTile - 1) / kTile;
    const bool parallel = !omp_in_parallel() && elements_ >= kParallelMinElements;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < tiles; ++t) RunTile(buffers, t * kTile);
    return Status::Ok();
  }

 private:
  void RunTile(const KernelBuffers& buffers, int64_t t0) const {
    alignas(64) float scratch[kMaxChainOps][kTile];
    alignas(64) float expanded[2][kTile];
    float* result[kMaxChainOps];
    const int64_t n = std::min(kTile, elements_ - t0);
    for (size_t s = 0; s < steps_.size(); ++s) {
      const ChainStep& step = steps_[s];
      result[s] = step.output >= 0
                      ? static_cast<float*>(buffers.outputs[static_cast<size_t>(step.output)]) + t0
                      : scratch[s];
      const float* args[2] = {nullptr, nullptr};
      bool is_scalar[2] = {false, false};
      float scalars[2] = {0.0f, 0.0f};
      for (size_t i = 0; i < step.operands.size(); ++i) {
        const ChainOperand& o = step.operands[i];
        switch (o.kind) {
          case ChainOperand::Kind::kStep: args[i] = result[o.index]; break;
          case ChainOperand::Kind::kInput:
            args[i] = static_cast<const float*>(buffers.inputs[static_cast<size_t>(o.index)]) + t0;
            break;
          case ChainOperand::Kind::kScalar:
            is_scalar[i] = true;
            scalars[i] = o.scalar;
            break;
          case ChainOperand::Kind::kConstant: args[i] = ConstantTile(o, t0, n, expanded[i]); break;
        }
      }
      if (!IsBinary(step.op)) {
        if (is_scalar[0]) {  // a unary op of a constant scalar: evaluate it on a filled tile
          std::fill(expanded[0], expanded[0] + n, scalars[0]);
          args[0] = expanded[0];
        }
        EvalUnary(step.op, step.params, args[0], result[s], n);
      } else if (is_scalar[0] && is_scalar[1]) {
        std::fill(expanded[0], expanded[0] + n, scalars[0]);
        EvalBinaryScalar(step.op, expanded[0], scalars[1], false, result[s], n);
      } else if (is_scalar[1]) {
        EvalBinaryScalar(step.op, args[0], scalars[1], false, result[s], n);
      } else if (is_scalar[0]) {
        EvalBinaryScalar(step.op, args[1], scalars[0], true, result[s], n);
      } else {
        EvalBinary(step.op, args[0], args[1], result[s], n);
      }
    }
  }

  std::vector<ChainStep> steps_;
  int64_t elements_;
};

int IndexOf(const std::vector<ValueId>& ids, ValueId id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? -1 : static_cast<int>(it - ids.begin());
}

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileElementwiseChain(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const std::vector<NodeId> nodes = request.node_ids();
  if (nodes.empty() || nodes.size() > static_cast<size_t>(kMaxChainOps)) {
    return Unsupported("an elementwise chain of {} ops (1 to {} are supported)", nodes.size(),
                       kMaxChainOps);
  }
  const Shape& shape = graph.value(graph.node(nodes[0]).outputs[0]).type.shape;
  std::vector<ValueId> step_values;  // the value each step produces
  std::vector<ChainStep> steps;
  for (NodeId id : nodes) {
    const Node& node = graph.node(id);
    const std::optional<ElementwiseOp> op = LookupElementwiseOp(node.op_type);
    if (!op || !ChainSupportsNode(graph, node)) {
      return Unsupported("node '{}' ({}) is not an elementwise op the chain evaluates", node.name,
                         node.op_type);
    }
    if (graph.value(node.outputs[0]).type.shape != shape) {
      return Unsupported("node '{}' has shape {}, the chain has {}", node.name,
                         ShapeToString(graph.value(node.outputs[0]).type.shape),
                         ShapeToString(shape));
    }
    ChainStep step;
    step.op = *op;
    COLLAGE_ASSIGN_OR_RETURN(step.params, ReadParams(graph, node, *op));
    step.output = IndexOf(request.outputs, node.outputs[0]);
    const size_t data_inputs = IsBinary(*op) ? 2 : 1;
    for (size_t i = 0; i < data_inputs; ++i) {
      const ValueId in = node.inputs[i];
      const Value& v = graph.value(in);
      ChainOperand operand;
      if (int s = IndexOf(step_values, in); s >= 0) {
        operand.kind = ChainOperand::Kind::kStep;
        operand.index = s;
      } else if (v.is_constant()) {
        const std::optional<BroadcastBlock> block = BlockOf(v.type.shape, shape);
        if (!block) return Unsupported("constant '{}' does not broadcast in block form", v.name);
        const float* data = v.constant->data_as<float>();
        if (block->len == 1) {
          operand.kind = ChainOperand::Kind::kScalar;
          operand.scalar = data[0];
        } else {
          operand.kind = ChainOperand::Kind::kConstant;
          operand.block = *block;
          operand.data.assign(data, data + block->len);
        }
      } else {
        operand.kind = ChainOperand::Kind::kInput;
        operand.index = IndexOf(request.inputs, in);
        if (operand.index < 0) return Internal("value '{}' is not an input of the group", v.name);
      }
      step.operands.push_back(std::move(operand));
    }
    step_values.push_back(node.outputs[0]);
    steps.push_back(std::move(step));
  }
  for (ValueId out : request.outputs) {
    if (IndexOf(step_values, out) < 0) return Internal("output '{}' is not computed by the chain", graph.value(out).name);
  }
  return std::unique_ptr<Kernel>(std::make_unique<ElementwiseChainKernel>(
      std::move(steps), NumElements(shape), request.inputs.size(), request.outputs.size()));
}

}  // namespace collage::eigen

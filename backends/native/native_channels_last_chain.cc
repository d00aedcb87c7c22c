#include "native_channels_last_chain.h"

#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "collage/sdk/errors.h"
#include "native_elementwise_chain.h"

namespace collage::native {
namespace {

bool ChainRank(size_t rank) { return rank == 4 || rank == 5; }

// `shape` with leading 1s up to `rank`.
Shape Aligned(const Shape& shape, size_t rank) {
  Shape aligned(rank - shape.size(), 1);
  aligned.insert(aligned.end(), shape.begin(), shape.end());
  return aligned;
}

// `shape` aligned to `rank`, then dim 1 moved last: NCHW → NHWC, NCDHW → NDHWC.
Shape ChannelsLastShape(const Shape& shape, size_t rank) {
  const Shape aligned = Aligned(shape, rank);
  Shape out = {aligned[0]};
  out.insert(out.end(), aligned.begin() + 2, aligned.end());
  out.push_back(aligned[1]);
  return out;
}

// Plain and channels-last place every element of `shape`, aligned to `rank`, at the same
// byte (Layout::SameBytesAs: one channel or one spatial position).
bool SameBytesChannelsLast(const Shape& shape, size_t rank) {
  return Layout::ChannelsLast().SameBytesAs(Layout::Plain(),
                                            TensorType{DType::kFloat32, Aligned(shape, rank)});
}

// A constant's elements moved to ChannelsLastShape(shape, rank).
Tensor ToChannelsLast(const Tensor& tensor, size_t rank) {
  const Shape aligned = Aligned(tensor.shape(), rank);
  Tensor out(tensor.dtype(), ChannelsLastShape(tensor.shape(), rank));
  const size_t elsize = DTypeSize(tensor.dtype());
  const int64_t batch = aligned[0];
  const int64_t channels = aligned[1];
  const int64_t spatial = NumElements(aligned) / std::max<int64_t>(1, batch * channels);
  const auto* src = static_cast<const char*>(tensor.data());
  auto* dst = static_cast<char*>(out.data());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t from = (n * channels + c) * spatial + s;
        const int64_t to = (n * spatial + s) * channels + c;
        std::memcpy(dst + static_cast<size_t>(to) * elsize,
                    src + static_cast<size_t>(from) * elsize, elsize);
      }
    }
  }
  return out;
}

size_t OutputRank(const Graph& graph, const Node& node) {
  for (ValueId out : node.outputs) {
    if (out != kNoValue) return graph.value(out).type.shape.size();
  }
  return 0;
}

// The tiled chain of the permuted graph copy, with the layouts of the real one. The copy is
// held for as long as the chain: its kernel reads types and constants from it.
class ChannelsLastChainKernel final : public Kernel {
 public:
  ChannelsLastChainKernel(std::shared_ptr<const Graph> permuted, std::unique_ptr<Kernel> chain,
                          std::vector<Layout> inputs, std::vector<Layout> outputs)
      : permuted_(std::move(permuted)), chain_(std::move(chain)) {
    input_layouts_ = std::move(inputs);
    output_layouts_ = std::move(outputs);
    workspace_bytes_ = chain_->workspace_bytes();
  }

  Status Run(const KernelBuffers& buffers) const override { return chain_->Run(buffers); }

 private:
  std::shared_ptr<const Graph> permuted_;  // first: outlives chain_
  std::unique_ptr<Kernel> chain_;
};

}  // namespace

bool IsChannelsLastChainableNode(const Graph& graph, const Node& node) {
  if (!IsChainableNode(graph, node)) return false;
  if (node.op_type == "Expand" || node.attributes.Has("axis")) return false;
  const size_t rank = OutputRank(graph, node);
  if (!ChainRank(rank)) return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    if (in == kNoValue || !IsDataOperand(node, i)) continue;
    const Value& value = graph.value(in);
    const Shape& shape = value.type.shape;
    if (shape.size() < rank && !value.is_constant() && !SameBytesChannelsLast(shape, rank)) {
      return false;
    }
  }
  return true;
}

StatusOr<std::unique_ptr<Kernel>> CompileChannelsLastChain(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  size_t rank = 0;
  for (NodeId id : request.node_ids()) {
    const Node& node = graph.node(id);
    if (!IsChannelsLastChainableNode(graph, node)) {
      return Unsupported("{} node '{}' cannot be part of a channels-last elementwise chain",
                         node.op_type, node.name);
    }
    const size_t r = OutputRank(graph, node);
    if (rank != 0 && r != rank) {
      return Unsupported("a channels-last chain computes values of one rank: {} and {}", rank, r);
    }
    rank = r;
  }
  if (rank == 0) return InvalidArgument("a channels-last chain of no nodes");

  // Every data value of the group takes its channels-last shape in the copy; parameters
  // (Clip's bounds, Dropout's ratio) and one-element values keep theirs.
  auto permuted = std::make_shared<Graph>(graph);
  std::set<ValueId> moved;
  auto move = [&](ValueId id) {
    if (id == kNoValue || graph.value(id).type.num_elements() == 1 || !moved.insert(id).second) {
      return;
    }
    Value& value = permuted->mutable_value(id);
    if (value.is_constant()) value.constant = ToChannelsLast(*value.constant, rank);
    value.type.shape = ChannelsLastShape(value.type.shape, rank);
  };
  for (NodeId id : request.node_ids()) {
    const Node& node = graph.node(id);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (IsDataOperand(node, i)) move(node.inputs[i]);
    }
    for (ValueId out : node.outputs) move(out);
  }

  std::vector<Layout> inputs;
  for (ValueId in : request.inputs) {
    const Shape& shape = graph.value(in).type.shape;
    if (shape.size() == rank) {
      inputs.push_back(Layout::ChannelsLast());
    } else if (SameBytesChannelsLast(shape, rank)) {
      inputs.push_back(Layout::Plain());
    } else {
      return Unsupported("input '{}' of shape {} has no channels-last form in a rank-{} chain",
                         graph.value(in).name, ShapeToString(shape), rank);
    }
  }
  std::vector<Layout> outputs(request.outputs.size(), Layout::ChannelsLast());

  CompileRequest on_permuted = request;
  on_permuted.graph = permuted.get();
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> chain, CompileElementwiseChain(on_permuted));
  return std::unique_ptr<Kernel>(std::make_unique<ChannelsLastChainKernel>(
      std::move(permuted), std::move(chain), std::move(inputs), std::move(outputs)));
}

}  // namespace collage::native

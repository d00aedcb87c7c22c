// ShuffleNet's channel shuffle as exporters write it, Reshape [N, C, *S] -> [N, g, C/g, *S],
// Transpose perm [0, 2, 1, 3, ...], Reshape back to [N, C, *S], as one oneDNN shuffle
// primitive on axis 1, plain and "_blocked": between convolutions in the layout oneDNN picks
// the shuffle then needs no conversion to plain and back.
#include <numeric>

#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

// The group count g of a Reshape -> Transpose -> Reshape triple that is exactly a channel
// shuffle of an image (rank 4 or 5), or 0 when it is anything else.
int64_t ShuffleGroups(const Match& match) {
  const Graph& graph = *match.graph;
  const Node& unsplit = match.node(0);  // the outer Reshape, back to [N, C, *S]
  const Node& transpose = match.node(1);
  const Node& split = match.node(2);  // the inner Reshape, to [N, g, C/g, *S]
  const ValueId x = split.inputs[0];
  if (!IsFloatValue(graph, x)) return 0;
  const Shape& in = graph.value(x).type.shape;
  const Shape& grouped = graph.value(split.outputs[0]).type.shape;
  const Shape& out = graph.value(unsplit.outputs[0]).type.shape;
  if (in.size() < 4 || in.size() > 5 || out != in || grouped.size() != in.size() + 1) return 0;
  const int64_t channels = in[1], groups = grouped[1];
  if (groups < 1 || channels % groups != 0 || grouped[0] != in[0] ||
      grouped[2] != channels / groups) {
    return 0;
  }
  for (size_t d = 2; d < in.size(); ++d) {
    if (grouped[d + 1] != in[d]) return 0;
  }
  std::vector<int64_t> perm(grouped.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[1], perm[2]);
  if (transpose.attributes.GetInts("perm") != perm) return 0;
  return groups;
}

// The shuffle as one reorder between two strided views of the same format, for a format
// whose channels are not split in blocks (plain, channels-last): the source viewed as
// [N, g, C/g, *S] in place, the destination with its channel c * g + i at view index
// [i, c]. oneDNN 2.6 runs that with its JIT reorder; its shuffle primitive has only the
// reference implementation for these formats, several times slower (410 us against 89 us
// plain, 17 against 14 channels-last, for ShuffleNet's 116x28x28).
StatusOr<std::unique_ptr<Kernel>> CompileShuffleReorder(const memory::desc& data, int64_t groups,
                                                        const Layout& layout) {
  const memory::dims dims = data.dims();
  const dnnl_blocking_desc_t& blocking = data.data.format_desc.blocking;
  if (data.data.format_kind != dnnl_blocked || blocking.inner_nblks != 0) {
    return Unsupported("shuffle as a reorder needs a format without channel blocks");
  }
  const memory::dim c_stride = blocking.strides[1];
  memory::dims view = {dims[0], groups, dims[1] / groups};
  memory::dims from = {blocking.strides[0], dims[1] / groups * c_stride, c_stride};
  memory::dims to = {blocking.strides[0], c_stride, groups * c_stride};
  for (size_t d = 2; d < dims.size(); ++d) {
    view.push_back(dims[d]);
    from.push_back(blocking.strides[d]);
    to.push_back(blocking.strides[d]);
  }
  memory::desc src, dst;
  COLLAGE_RETURN_IF_ERROR(Guard("shuffle as reorder", [&]() -> Status {
    src = memory::desc(view, memory::data_type::f32, from);
    dst = memory::desc(view, memory::data_type::f32, to);
    return Status();
  }));
  return ReorderKernel("shuffle as reorder", src, dst, layout, layout);
}

StatusOr<std::unique_ptr<Kernel>> CompileShuffle(const CompileRequest& request, const Match& match,
                                                 bool blocked) {
  const int64_t groups = ShuffleGroups(match);
  if (groups == 0) return Unsupported("not a channel shuffle");
  const ValueId x = match.node(2).inputs[0];
  const ValueId y = match.node(0).outputs[0];
  if (request.inputs != std::vector<ValueId>{x} || request.outputs != std::vector<ValueId>{y}) {
    return Unsupported("the shuffle's intermediate values are read outside it");
  }
  const Shape& shape = request.type(x).shape;
  std::unique_ptr<Kernel> kernel;
  bool as_reorder = false;
  const memory::desc data = ActivationDesc(shape, blocked);
  COLLAGE_RETURN_IF_ERROR(Guard("shuffle", [&]() -> Status {
    // oneDNN views the axis as [C / group_size, group_size] and transposes it: the Reshape
    // to [g, C/g] and the Transpose exporters write are group_size = C/g (checked against
    // the reference kernels).
    dnnl::shuffle_forward::desc desc(dnnl::prop_kind::forward_inference, data, 1,
                                     static_cast<int>(shape[1] / groups));
    dnnl::shuffle_forward::primitive_desc pd(desc, Engine(), BaseAttr());
    // Its JIT implementation takes the blocked formats (nChw16c, nChw8c) only.
    if (IsReferenceImplementation(pd.impl_info_str())) {
      as_reorder = true;
      return Status();
    }
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(x, DNNL_ARG_SRC, data));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(y, DNNL_ARG_DST, data));
    COLLAGE_ASSIGN_OR_RETURN(kernel,
                             builder.Finish(std::string("shuffle ") + pd.impl_info_str(),
                                            dnnl::shuffle_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  if (as_reorder) return CompileShuffleReorder(data, groups, LayoutOf(data));
  return kernel;
}

}  // namespace

void AddShuffleRules(std::vector<RuleEntry>& rules) {
  const Pattern shuffle = Op("Reshape")(Op("Transpose")(Op("Reshape")(Any(), Const())), Const());
  auto is_shuffle = [](const Match& m) { return ShuffleGroups(m) != 0; };
  rules.push_back({Rule("channel_shuffle", shuffle)
                       .Where(is_shuffle)
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileShuffle(r, m, false);
                       }),
                   false});
  rules.push_back({Rule("channel_shuffle_blocked", shuffle)
                       .Where(is_shuffle)
                       .Where([](const Match& m) {
                         return HasBlockedForm(m.graph->value(m.node(2).inputs[0]).type.shape);
                       })
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileShuffle(r, m, true);
                       }),
                   true});
}

}  // namespace collage::onednn

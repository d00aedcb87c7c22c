#include "conv_transpose_kernel.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "mkl_threads.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

// The product col = W_gᵀ · X: rows (output channel of the group, kernel row, kernel column);
// columns one image's input pixels, or, with one input pixel per image (a generator's first
// layer), the batch's images: a product per image would be a matrix-vector product reading
// all the weights each time.
int64_t InPixels(const ConvTransposeParams& p) { return p.in_spatial[0] * p.in_spatial[1]; }
bool BatchFolded(const ConvTransposeParams& p) { return InPixels(p) == 1 && p.group == 1; }
int64_t ProductRows(const ConvTransposeParams& p) {
  return p.group_out_channels() * p.kernel[0] * p.kernel[1];
}
int64_t ProductColumns(const ConvTransposeParams& p) {
  return BatchFolded(p) ? p.batch : InPixels(p);
}

std::optional<ConvTransposeParams> Params(const Graph& graph, const Node& node) {
  if (node.op_type != "ConvTranspose" || node.inputs.size() < 2 || node.outputs.size() != 1)
    return std::nullopt;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v == kNoValue) continue;
    const TensorType& t = graph.value(v).type;
    if (t.dtype != DType::kFloat32 || !t.is_static()) return std::nullopt;
    if (i > 0 && !graph.value(v).is_constant()) return std::nullopt;
  }
  const TensorType& y = graph.value(node.outputs[0]).type;
  if (y.dtype != DType::kFloat32 || !y.is_static()) return std::nullopt;
  StatusOr<ConvTransposeParams> p = ReadConvTransposeParams(graph, node);
  if (!p.ok() || p->spatial_rank != 2 || p->output_shape() != y.shape) return std::nullopt;
  const int64_t m = ProductRows(*p);
  const int64_t n = ProductColumns(*p);
  const int64_t k = p->group_in_channels();
  if (m < 1 || n < 1 || k < 1 || !FitsMklInt(m) || !FitsMklInt(n) || !FitsMklInt(k))
    return std::nullopt;
  return *p;
}

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(const ConvTransposeParams& p, std::vector<PackedMatrix> weights,
                      std::vector<float> bias, int num_threads)
      : p_(p),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        num_threads_(std::max(1, num_threads)) {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
    workspace_bytes_ = sizeof(float) * static_cast<size_t>(ProductRows(p_) * ProductColumns(p_));
  }

  Status Run(const KernelBuffers& buffers) const override {
    const auto* x = static_cast<const float*>(buffers.inputs[0]);
    auto* y = static_cast<float*>(buffers.outputs[0]);
    auto* col = static_cast<float*>(buffers.workspace);
    const int64_t out_pixels = p_.out_spatial[0] * p_.out_spatial[1];
    const int64_t in_pixels = InPixels(p_);
    const int64_t rows = ProductRows(p_);
    MklThreadScope threads(num_threads_);
    for (int64_t n = 0; n < p_.batch; ++n) {
      float* image = y + n * p_.out_channels * out_pixels;
      for (int64_t c = 0; c < p_.out_channels; ++c) {
        std::fill_n(image + c * out_pixels, out_pixels,
                    bias_.empty() ? 0.0f : bias_[static_cast<size_t>(c)]);
      }
    }
    if (BatchFolded(p_)) {
      // One pixel per image: X [N, C] is the product's Bᵀ, and col's column n is image n's.
      cblas_sgemm_compute(CblasRowMajor, CblasPacked, CblasTrans, static_cast<MKL_INT>(rows),
                          static_cast<MKL_INT>(p_.batch), static_cast<MKL_INT>(p_.in_channels),
                          weights_[0].data(), static_cast<MKL_INT>(rows), x,
                          static_cast<MKL_INT>(p_.in_channels), 0.0f, col,
                          static_cast<MKL_INT>(p_.batch));
      for (int64_t n = 0; n < p_.batch; ++n) {
        Col2Im(p_, p_.out_channels, col + n, p_.batch, y + n * p_.out_channels * out_pixels);
      }
      return Status::Ok();
    }
    for (int64_t n = 0; n < p_.batch; ++n) {
      float* image = y + n * p_.out_channels * out_pixels;
      for (int64_t g = 0; g < p_.group; ++g) {
        const float* xg = x + (n * p_.in_channels + g * p_.group_in_channels()) * in_pixels;
        cblas_sgemm_compute(
            CblasRowMajor, CblasPacked, CblasNoTrans, static_cast<MKL_INT>(rows),
            static_cast<MKL_INT>(in_pixels), static_cast<MKL_INT>(p_.group_in_channels()),
            weights_[static_cast<size_t>(g)].data(), static_cast<MKL_INT>(rows), xg,
            static_cast<MKL_INT>(in_pixels), 0.0f, col, static_cast<MKL_INT>(in_pixels));
        Col2Im(p_, p_.group_out_channels(), col, in_pixels,
               image + g * p_.group_out_channels() * out_pixels);
      }
    }
    return Status::Ok();
  }

 private:
  ConvTransposeParams p_;
  std::vector<PackedMatrix> weights_;  // per group: A = Wᵀ [rows x group_in]
  std::vector<float> bias_;            // empty or M values
  int num_threads_;
};

}  // namespace

bool ConvTranspose2dSupported(const Graph& graph, const Node& node) {
  return Params(graph, node).has_value();
}

StatusOr<std::unique_ptr<Kernel>> CompileConvTranspose(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const std::vector<NodeId> nodes = request.node_ids();
  if (nodes.size() != 1) return Unsupported("an MKL ConvTranspose kernel runs one node");
  const Node& node = graph.node(nodes[0]);
  const std::optional<ConvTransposeParams> p = Params(graph, node);
  if (!p) {
    return Unsupported(
        "ConvTranspose '{}': only 2-D float32 with constant weights and bias runs on MKL",
        node.name);
  }
  const Tensor& w = *graph.value(node.inputs[1]).constant;
  const int64_t rows = ProductRows(*p);
  const int64_t group_in = p->group_in_channels();
  std::vector<PackedMatrix> weights;
  for (int64_t g = 0; g < p->group; ++g) {
    // W [C, M / group, kH, kW]: the group's C / group rows, each rows values long; Aᵀ of the
    // product.
    COLLAGE_ASSIGN_OR_RETURN(
        PackedMatrix packed,
        PackedMatrix::Pack(CblasAMatrix, CblasTrans, GemmDims{rows, ProductColumns(*p), group_in},
                           1.0f, w.data_as<float>() + g * group_in * rows, rows,
                           request.num_threads()));
    weights.push_back(std::move(packed));
  }
  std::vector<float> bias;
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    bias = graph.value(node.inputs[2]).constant->ToVector<float>();
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConvTransposeKernel>(
      *p, std::move(weights), std::move(bias), request.num_threads()));
}

}  // namespace collage::mkl

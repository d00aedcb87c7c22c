#include "packed_matrix.h"

#include <mkl_service.h>

#include <climits>

#include "mkl_threads.h"
#include "collage/sdk/errors.h"

namespace collage::mkl {

bool FitsMklInt(int64_t v) {
  static_assert(sizeof(MKL_INT) == sizeof(int), "the LP64 interface: MKL_INT is int");
  return v >= 0 && v <= INT_MAX;
}

void PackedMatrix::MklFree::operator()(float* p) const { mkl_free(p); }

StatusOr<PackedMatrix> PackedMatrix::Pack(CBLAS_IDENTIFIER which, CBLAS_TRANSPOSE trans,
                                          const GemmDims& dims, float alpha, const float* src,
                                          int64_t ld, int num_threads) {
  if (dims.m <= 0 || dims.n <= 0 || dims.k <= 0 || !FitsMklInt(dims.m) || !FitsMklInt(dims.n) ||
      !FitsMklInt(dims.k) || !FitsMklInt(ld)) {
    return InvalidArgument("cannot pack a {}x{}x{} GEMM operand (ld {})", dims.m, dims.n, dims.k,
                           ld);
  }
  const MKL_INT m = static_cast<MKL_INT>(dims.m);
  const MKL_INT n = static_cast<MKL_INT>(dims.n);
  const MKL_INT k = static_cast<MKL_INT>(dims.k);
  const size_t bytes = cblas_sgemm_pack_get_size(which, m, n, k);
  PackedMatrix packed;
  packed.data_.reset(static_cast<float*>(mkl_malloc(bytes, 64)));
  if (packed.data_ == nullptr)
    return Internal("mkl_malloc of {} bytes for packed weights failed", bytes);
  MklThreadScope threads(num_threads);
  cblas_sgemm_pack(CblasRowMajor, which, trans, m, n, k, alpha, src, static_cast<MKL_INT>(ld),
                   packed.data_.get());
  return packed;
}

}  // namespace collage::mkl

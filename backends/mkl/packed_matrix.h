// One GEMM operand packed once into MKL's internal blocked format (cblas_sgemm_pack), for
// cblas_sgemm_compute: constant weights are packed at compile time, so each run skips the
// packing a plain cblas_sgemm redoes on every call.
#pragma once

#include <mkl_cblas.h>

#include <cstdint>
#include <memory>

#include "collage/status.h"

namespace collage::mkl {

// True when v fits MKL_INT, the dims' type of the LP64 interface.
bool FitsMklInt(int64_t v);

// The product the packed operand takes part in: C[m x n] = op(A)[m x k] * op(B)[k x n],
// row-major.
struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
};

class PackedMatrix {
 public:
  // Packs alpha * op(src), the A (m x k) or B (k x n) operand of `dims`; `ld` is src's
  // leading dim as cblas_sgemm takes it. Packed on `num_threads` threads, the count the
  // compute calls use (Intel: the fastest when they match). Dims must be positive and fit
  // MKL_INT.
  static StatusOr<PackedMatrix> Pack(CBLAS_IDENTIFIER which, CBLAS_TRANSPOSE trans,
                                     const GemmDims& dims, float alpha, const float* src,
                                     int64_t ld, int num_threads);

  const float* data() const { return data_.get(); }

 private:
  struct MklFree {
    void operator()(float* p) const;
  };
  // Intel: never copy a packed matrix elsewhere, the format depends on the alignment of
  // metadata stored in it. So the object owns the buffer through a pointer and moves only that.
  std::unique_ptr<float, MklFree> data_;
};

}  // namespace collage::mkl

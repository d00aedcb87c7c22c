// Sgemm follows the BLIS structure: for each block of columns of B (NC) and of the shared
// dimension (KC), op(B) is packed into NR-wide panels and op(A) into MR-high panels (alpha is
// folded in there), then a micro-kernel multiplies one MR-row A panel by one NR-column B panel
// into an MR x NR register tile. The micro-kernel is plain C++ over fixed-size arrays: at -O3
// GCC keeps the MR x NR accumulator tile in vector registers (12 x 32 floats = 24 zmm on
// AVX-512) and emits one broadcast + 2 FMAs per row and step of k, which runs at
// the core's FMA peak. A row block that does not fill whole panels is spread over panels of
// fewer rows, each with a micro-kernel instantiated for its row count (no wasted FMAs);
// columns left over at the right of B are zero-padded in the packed panel and only the valid
// columns are stored.
//
// Around that core: with several threads C is cut into one block per thread, each an
// independent blocked product (SgemmParallel); a C whose columns pad badly to 32-wide panels
// (n = 49) is computed as C^T = op(B)^T op(A)^T, which pads nothing; and a single row or column
// (m == 1 or n == 1) skips packing for a matrix-vector loop.
//
// Measured on the 2-vCPU Zen development VM (one core's FMA peak there: 117 GFLOP/s, zmm or
// ymm alike): 512^3 at 100-105 GFLOP/s on one thread; see bench/gemm_bench.cc.
//
// This file is compiled once per instruction set (cmake/CollageSgemmVariants.cmake), each
// copy in its own namespace COLLAGE_SGEMM_VARIANT (sgemm_avx512, sgemm_avx2, sgemm_baseline),
// and sgemm_dispatch.cc runs the widest one the CPU supports: the register tile and the
// vector width are fixed at compile time, so one portable binary gets the AVX-512 kernel on
// an AVX-512 machine and still runs on any x86-64. Whatever this file defines with external
// linkage must therefore live in that namespace, and it uses no std:: templates that could
// leave an out-of-line copy compiled for a wide ISA (the linker keeps one copy of such a
// function for the whole program, which could then be this one on a CPU without it):
// the sgemm_variant_symbols test (tests/sgemm_variant_symbols.cmake) checks the objects.
#ifndef COLLAGE_SGEMM_VARIANT
#error "compile with -DCOLLAGE_SGEMM_VARIANT=<namespace> (cmake/CollageSgemmVariants.cmake)"
#endif

#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <utility>

#include "ops/kernels/sgemm_variants.h"

namespace collage::COLLAGE_SGEMM_VARIANT {
namespace {

// Register tile: MR rows of C (one broadcast each) by NR columns (NR / vector width vector
// registers). MR * NR / width accumulators + NR / width B vectors + 1 broadcast must fit
// in the register file (32 zmm, 16 ymm / xmm). NR is kept above 16: GCC 12 completely
// unrolls a 16-iteration column loop before vectorising, then vectorises across rows instead
// and runs 20x slower (measured: 6 x 16 on AVX2 at 4 GFLOP/s, 4 x 24 at 109).
#if defined(__AVX512F__)
constexpr int kMR = 12;
constexpr int kNR = 32;
#elif defined(__AVX__)
constexpr int kMR = 4;
constexpr int kNR = 24;
#else
constexpr int kMR = 4;
constexpr int kNR = 8;
#endif

// Cache blocking. One packed B micro-panel (KC x NR = 32 KiB) is streamed from L1/L2 while
// the micro-kernel sweeps an MC x KC block of packed A (144 KiB) that stays in L2; the
// KC x NC block of packed B (4 MiB at most) lives in L3.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 144 / kMR * kMR;
constexpr int64_t kNC = 4096 / kNR * kNR;
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t Max(int64_t a, int64_t b) { return a > b ? a : b; }
void Fill(float* begin, float* end, float value) {
  for (float* p = begin; p < end; ++p) *p = value;
}

// A growable 64-byte aligned float buffer (packed panels are read with aligned vector loads
// when the compiler chooses to).
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(data_); }

  float* Get(size_t n) {
    if (n > capacity_) {
      size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      std::free(data_);
      data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      capacity_ = n;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  size_t capacity_ = 0;
};

// C[0..R)[0..cols) = A_panel * B_panel (+ beta * C when load_c), element (i, j) of C at
// c[i * rs_c + j * cs_c]. `a` holds kc steps of kMR values (only the first R used), `b` kc
// steps of kNR values.
template <int R>
void MicroKernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                 float* __restrict c, int64_t rs_c, int64_t cs_c, int cols, bool load_c,
                 float beta) {
  float acc[R][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* ap = a + p * kMR;
    const float* bp = b + p * kNR;
    for (int i = 0; i < R; ++i) {
      for (int j = 0; j < kNR; ++j) acc[i][j] += ap[i] * bp[j];
    }
  }
  if (cs_c == 1 && cols == kNR) {
    if (load_c) {
      for (int i = 0; i < R; ++i) {
        for (int j = 0; j < kNR; ++j) c[i * rs_c + j] = acc[i][j] + beta * c[i * rs_c + j];
      }
    } else {
      for (int i = 0; i < R; ++i) {
        for (int j = 0; j < kNR; ++j) c[i * rs_c + j] = acc[i][j];
      }
    }
    return;
  }
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < cols; ++j) {
      float& out = c[i * rs_c + j * cs_c];
      out = load_c ? acc[i][j] + beta * out : acc[i][j];
    }
  }
}

using MicroKernelFn = void (*)(int64_t, const float*, const float*, float*, int64_t, int64_t, int,
                               bool, float);

// kMicroKernels.by_rows[r - 1] handles an r-row panel.
struct MicroKernelTable {
  MicroKernelFn by_rows[kMR];
};
template <size_t... I>
constexpr MicroKernelTable MakeMicroKernels(std::index_sequence<I...>) {
  return {{&MicroKernel<static_cast<int>(I) + 1>...}};
}
constexpr MicroKernelTable kMicroKernels = MakeMicroKernels(std::make_index_sequence<kMR>{});

// Packs rows [i0, i0 + rows) x columns [p0, p0 + kc) of alpha * op(A) as dst[p * kMR + i].
void PackA(bool trans_a, const float* a, int64_t lda, int64_t i0, int64_t rows, int64_t p0,
           int64_t kc, float alpha, float* __restrict dst) {
  if (trans_a) {  // op(A)[i][p] = a[p][i]: contiguous along i
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = a + (p0 + p) * lda + i0;
      for (int64_t i = 0; i < rows; ++i) dst[p * kMR + i] = alpha * src[i];
    }
  } else {
    for (int64_t i = 0; i < rows; ++i) {
      const float* src = a + (i0 + i) * lda + p0;
      for (int64_t p = 0; p < kc; ++p) dst[p * kMR + i] = alpha * src[p];
    }
  }
}

// Packs rows [p0, p0 + kc) x columns [j0, j0 + cols) of op(B) as dst[p * kNR + j], zero
// padding columns cols..kNR.
void PackB(bool trans_b, const float* b, int64_t ldb, int64_t j0, int64_t cols, int64_t p0,
           int64_t kc, float* __restrict dst) {
  if (!trans_b) {  // contiguous along j
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + (p0 + p) * ldb + j0;
      float* d = dst + p * kNR;
      if (cols == kNR) {
        for (int j = 0; j < kNR; ++j) d[j] = src[j];
      } else {
        for (int64_t j = 0; j < cols; ++j) d[j] = src[j];
        for (int64_t j = cols; j < kNR; ++j) d[j] = 0.0f;
      }
    }
    return;
  }
  // op(B)[p][j] = b[j][p]: transpose blocks of 8 steps so that reads stay sequential along p
  // and each destination cache line is written in one go.
  constexpr int64_t kStep = 8;
  int64_t p = 0;
  for (; p + kStep <= kc; p += kStep) {
    float tile[kStep][kNR];
    if (cols < kNR) {  // the padding columns (a full panel overwrites the whole tile)
      for (int64_t s = 0; s < kStep; ++s) Fill(tile[s] + cols, tile[s] + kNR, 0.0f);
    }
    for (int64_t j = 0; j < cols; ++j) {
      const float* src = b + (j0 + j) * ldb + p0 + p;
      for (int64_t s = 0; s < kStep; ++s) tile[s][j] = src[s];
    }
    for (int64_t s = 0; s < kStep; ++s) {
      for (int j = 0; j < kNR; ++j) dst[(p + s) * kNR + j] = tile[s][j];
    }
  }
  for (; p < kc; ++p) {
    float* d = dst + p * kNR;
    for (int64_t j = 0; j < cols; ++j) d[j] = b[(j0 + j) * ldb + p0 + p];
    for (int64_t j = cols; j < kNR; ++j) d[j] = 0.0f;
  }
}

// C = beta * C, without reading C when beta == 0.
void ScaleC(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0f) {
      Fill(row, row + n, 0.0f);
    } else if (beta != 1.0f) {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// Dot product with many independent partial sums (GCC does not reorder a single float sum,
// so one accumulator would neither vectorise nor hide the FMA latency).
float Dot(const float* __restrict x, const float* __restrict y, int64_t k) {
  constexpr int64_t kLanes = 64;
  float acc[kLanes] = {};
  int64_t p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += x[p + l] * y[p + l];
  }
  float sum = 0.0f;
  for (; p < k; ++p) sum += x[p] * y[p];
  for (int64_t l = 0; l < kLanes; ++l) sum += acc[l];
  return sum;
}

// Matrix-vector products, for m == 1 or n == 1 where packing would cost as much as the
// arithmetic. `x` is contiguous (k values); the result y[j], j < len, is stored as
// out[j * out_stride] = alpha * y[j] + beta * out[j * out_stride].
//   by_rows:  y[j] = sum_p x[p] * mat[p * ld + j]   (axpy over the k rows of mat)
//   !by_rows: y[j] = sum_p mat[j * ld + p] * x[p]   (a dot product per row of mat)
void Gemv(bool by_rows, const float* x, int64_t k, const float* mat, int64_t ld, int64_t len,
          float alpha, float beta, float* out, int64_t out_stride, int threads) {
  constexpr int64_t kChunk = 512;  // y chunk kept in L1 while the rows stream past
  auto store = [&](int64_t j, float y) {
    float& o = out[j * out_stride];
    o = beta == 0.0f ? alpha * y : alpha * y + beta * o;
  };
  if (by_rows) {
    const int64_t chunks = CeilDiv(len, kChunk);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const int64_t j0 = ch * kChunk;
      const int64_t cols = Min(kChunk, len - j0);
      alignas(64) float acc[kChunk] = {};
      for (int64_t p = 0; p < k; ++p) {
        const float xp = x[p];
        const float* row = mat + p * ld + j0;
        for (int64_t j = 0; j < cols; ++j) acc[j] += xp * row[j];
      }
      for (int64_t j = 0; j < cols; ++j) store(j0 + j, acc[j]);
    }
  } else {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t j = 0; j < len; ++j) store(j, Dot(mat + j * ld, x, k));
  }
}

// Copies a strided vector into contiguous memory when needed.
const float* Contiguous(const float* v, int64_t stride, int64_t k, Scratch& buf) {
  if (stride == 1) return v;
  float* out = buf.Get(static_cast<size_t>(k));
  for (int64_t p = 0; p < k; ++p) out[p] = v[p * stride];
  return out;
}

// One thread's packed, blocked product (BLIS loop order: columns of B in NC blocks, k in KC
// blocks with B packed once per block, rows of A in MC blocks packed once per block, then B
// panels x A panels through the micro-kernel). Element (i, j) of C is c[i * rs_c + j * cs_c],
// which lets the caller compute C^T = op(B)^T op(A)^T into C when that tiles better.
// Needs m, n, k >= 1.
void SgemmBlocked(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t rs_c, int64_t cs_c) {
  // Split k into equal blocks of at most kKC (k = 300 gives 150 + 150, not 256 + 44).
  const int64_t kc_max = CeilDiv(k, CeilDiv(k, kKC));
  const int64_t mc_max = CeilDiv(Min(m, kMC), kMR) * kMR;
  const int64_t nc_max = CeilDiv(Min(n, kNC), kNR) * kNR;
  thread_local Scratch a_scratch;
  thread_local Scratch b_scratch;
  float* packed_a = a_scratch.Get(static_cast<size_t>(mc_max * kc_max));
  float* packed_b = b_scratch.Get(static_cast<size_t>(nc_max * kc_max));
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = Min(kNC, n - jc);
    const int64_t n_panels = CeilDiv(nc, kNR);
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = Min(kc_max, k - pc);
      // The first k block applies beta; later ones accumulate onto it.
      const bool load_c = pc > 0 || beta != 0.0f;
      const float c_scale = pc > 0 ? 1.0f : beta;
      for (int64_t q = 0; q < n_panels; ++q) {
        PackB(trans_b, b, ldb, jc + q * kNR, Min(kNR, nc - q * kNR), pc, kc,
              packed_b + q * kNR * kc);
      }
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t mc = Min(kMC, m - ic);
        // The block's rows are spread evenly over its panels (49 rows: 10+10+10+10+9, not
        // 12+12+12+12+1): a panel of fewer than 4 rows is FMA-latency bound and slow.
        const int64_t m_panels = CeilDiv(mc, kMR);
        auto panel_begin = [&](int64_t r) { return r * mc / m_panels; };
        for (int64_t r = 0; r < m_panels; ++r) {
          PackA(trans_a, a, lda, ic + panel_begin(r), panel_begin(r + 1) - panel_begin(r), pc, kc,
                alpha, packed_a + r * kMR * kc);
        }
        for (int64_t q = 0; q < n_panels; ++q) {
          const int cols = static_cast<int>(Min(kNR, nc - q * kNR));
          const float* bp = packed_b + q * kNR * kc;
          for (int64_t r = 0; r < m_panels; ++r) {
            const int64_t row = panel_begin(r);
            const int64_t rows = panel_begin(r + 1) - row;
            float* cp = c + (ic + row) * rs_c + (jc + q * kNR) * cs_c;
            kMicroKernels.by_rows[rows - 1](kc, packed_a + r * kMR * kc, bp, cp, rs_c,
                                                         cs_c, cols, load_c, c_scale);
          }
        }
      }
    }
  }
}

// Splits C into a grid of threads_m x threads_n blocks (whole register-tile panels each), one
// per thread, each an independent SgemmBlocked with its own packing: one fork and join per
// call and no barriers in between (barriers are what suffers when a VM's cores are shared).
// Each thread packs all the A rows and B columns its block needs, so the grid is chosen to
// minimise the largest block's multiply-adds plus its packing (weighted as one vector FMA per
// packed element, i.e. 16 multiply-adds).
void SgemmParallel(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t rs_c, int64_t cs_c, int threads) {
  const int64_t m_panels = CeilDiv(m, kMR);
  const int64_t n_panels = CeilDiv(n, kNR);
#pragma omp parallel num_threads(threads)
  {
    // The team may be smaller than asked for (thread limits), so size the grid from it.
    const int team = omp_get_num_threads();
    int64_t grid_m = 1;
    double best = -1.0;
    for (int64_t tm = 1; tm <= team; ++tm) {
      if (team % tm != 0) continue;
      const int64_t tn = team / tm;
      const double rows = static_cast<double>(Min(m, CeilDiv(m_panels, tm) * kMR));
      const double cols = static_cast<double>(Min(n, CeilDiv(n_panels, tn) * kNR));
      const double cost = static_cast<double>(k) * (rows * cols + 16.0 * (rows + cols));
      if (best < 0.0 || cost < best) {
        best = cost;
        grid_m = tm;
      }
    }
    const int64_t grid_n = team / grid_m;
    const int64_t t = omp_get_thread_num();
    const int64_t ti = t / grid_n;
    const int64_t tj = t % grid_n;
    const int64_t i0 = ti * m_panels / grid_m * kMR;
    const int64_t i1 = Min(m, (ti + 1) * m_panels / grid_m * kMR);
    const int64_t j0 = tj * n_panels / grid_n * kNR;
    const int64_t j1 = Min(n, (tj + 1) * n_panels / grid_n * kNR);
    if (i1 > i0 && j1 > j0) {
      SgemmBlocked(trans_a, trans_b, i1 - i0, j1 - j0, k, alpha, trans_a ? a + i0 : a + i0 * lda,
                   lda, trans_b ? b + j0 * ldb : b + j0, ldb, beta, c + i0 * rs_c + j0 * cs_c, rs_c,
                   cs_c);
    }
  }
}

void SgemmPacked(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                 int64_t rs_c, int64_t cs_c, int threads) {
  if (threads > 1) {
    SgemmParallel(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, rs_c, cs_c, threads);
  } else {
    SgemmBlocked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, rs_c, cs_c);
  }
}

// Estimated micro-kernel time of an m x n product (per step of k, in FMAs of one row and
// column): column panels are padded to kNR, while rows are spread evenly over their panels, so
// only a product of fewer than 4 rows pays for its FMA latency (it runs as slowly as 4 rows).
double TileCost(int64_t m, int64_t n) {
  return static_cast<double>(Max(m, 4)) * static_cast<double>(CeilDiv(n, kNR) * kNR);
}

}  // namespace

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    ScaleC(m, n, beta, c, ldc);
    return;
  }
  const int max_threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = macs >= kGemmParallelMinMacs ? max_threads : 1;

  if (m == 1 || n == 1) {
    thread_local Scratch x_buf;
    if (m == 1) {  // C row = x^T op(B), x = op(A) row 0
      const float* x = Contiguous(a, trans_a ? lda : 1, k, x_buf);
      Gemv(!trans_b, x, k, b, ldb, n, alpha, beta, c, 1, threads);
    } else {  // C column = op(A) x, x = op(B) column 0
      const float* x = Contiguous(b, trans_b ? 1 : ldb, k, x_buf);
      Gemv(trans_a, x, k, a, lda, m, alpha, beta, c, ldc, threads);
    }
    return;
  }

  // Column panels are padded to kNR, so a narrow C (conv at 7x7: n = 49) wastes a quarter of
  // the FMAs; the transposed problem pads rows instead, which costs less when m is wide.
  if (TileCost(n, m) < 0.9 * TileCost(m, n)) {
    SgemmPacked(!trans_b, !trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, 1, ldc, threads);
  } else {
    SgemmPacked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, threads);
  }
}

}  // namespace COLLAGE_SGEMM_VARIANT

// MKL's thread count for the calls of one kernel run: the CompileRequest::num_threads() the
// kernel was compiled for, set for the calling thread only and restored on leaving.
//
// MKL keeps a per-thread setting (mkl_set_num_threads_local) that overrides its process-wide
// one for the MKL calls of that thread, so sessions with different counts call MKL side by
// side with no lock (OpenBLAS, by contrast, has only a process-wide count, which
// backends/openblas/blas_threads.h changes under a lock). The process-wide setter
// (mkl_set_num_threads) is never used: it would change the count of every other session's
// calls. On the GNU threading layer MKL's threads are libgomp's, the pool collage's other
// libraries use; inside an active OpenMP region MKL runs on the calling thread alone.
#pragma once

#include <mkl_service.h>

#include <algorithm>

namespace collage::mkl {

class MklThreadScope {
 public:
  explicit MklThreadScope(int num_threads)
      : previous_(mkl_set_num_threads_local(std::max(1, num_threads))) {}
  // mkl_set_num_threads_local returns the previous local count, 0 when there was none; setting
  // 0 goes back to following the process-wide count.
  ~MklThreadScope() { mkl_set_num_threads_local(previous_); }
  MklThreadScope(const MklThreadScope&) = delete;
  MklThreadScope& operator=(const MklThreadScope&) = delete;

 private:
  int previous_;
};

}  // namespace collage::mkl

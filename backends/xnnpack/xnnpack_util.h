// Shared plumbing of the XNNPACK backends: the one place where xnn_status becomes Status,
// library initialisation, the thread pools, and the operator kernel base that serialises
// setup + run.
#pragma once

#include <xnnpack.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"

namespace collage::xnnpack {

// Flags every operator and runtime is created with: none. (XNN_FLAG_YIELD_WORKERS only
// reaches the thread pool, whose workers here are the OpenMP team's: OpenMP's wait policy
// decides when they sleep, src/runtime/threading.h.)
inline constexpr uint32_t kCreateFlags = 0;

// XNNPACK may read up to XNN_EXTRA_BYTES past the end of the arrays it is given. Buffers
// this backend owns (constants passed at run time or as static tensors) are padded with it.
template <typename T>
std::vector<T> PadForXnnpack(std::vector<T> data) {
  data.resize(data.size() + (XNN_EXTRA_BYTES + sizeof(T) - 1) / sizeof(T));
  return data;
}

// The status boundary: every XNNPACK call goes through it, naming the call.
Status Check(xnn_status status, const char* call);

// xnn_initialize once per process (thread-safe); the result is remembered.
Status EnsureInitialized();

// "XNNPACK git20220216.ae108ef avx512f".
std::string LibraryVersion();

// Whether XNNPACK's pthreadpool calls reach collage's implementation on the OpenMP team
// (openmp_pthreadpool.cc). They do unless a library exporting the pthreadpool API entered
// the global lookup scope before collage; then XNNPACK kernels run on the calling thread
// (a pool of ours must never reach another implementation) and a warning says why, once.
// Checked once per process, by running one small operator with a null pool.
bool XnnpackUsesTheOpenMpPool();

// The pthreadpool a kernel runs on (null for one thread: XNNPACK then runs on the caller,
// without any hand-off) and the execution context that owns it. One pool per context, made
// on first use: every kernel of a session shares its session's pool, sessions with other
// thread counts have their own, and nothing resizes a pool. A kernel keeps the handle, so the
// pool is destroyed with the context's last kernel, never under a running one. The pool is
// the thread count of an OpenMP team (openmp_pthreadpool.cc): each parallelize call runs on
// a team of that size, so concurrent calls on one pool do not wait for each other.
struct PoolHandle {
  pthreadpool_t pool = nullptr;
  std::shared_ptr<ExecutionContext> owner;
};
PoolHandle ThreadPoolFor(const CompileRequest& request);

struct OperatorDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using OperatorPtr = std::unique_ptr<xnn_operator, OperatorDeleter>;

// A kernel over one XNNPACK operator. xnn_setup_* stores the shapes and buffer pointers in
// the operator object, so setup + xnn_run_operator is one critical section: concurrent Run
// calls with different buffers serialise on mutex_ (the operator is not reentrant).
class OperatorKernel : public Kernel {
 public:
  explicit OperatorKernel(PoolHandle pool) : pool_(std::move(pool)) {}

  Status Run(const KernelBuffers& buffers) const final;

 protected:
  // Binds `buffers` to op_ (xnn_setup_*); called with mutex_ held.
  virtual Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const = 0;

 private:
  const PoolHandle pool_;  // first: outlives op_

 protected:
  OperatorPtr op_;

 private:
  mutable std::mutex mutex_;
};

}  // namespace collage::xnnpack

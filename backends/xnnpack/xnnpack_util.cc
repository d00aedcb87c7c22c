#include "xnnpack_util.h"

#include <pthreadpool.h>

#include <mutex>

#include "collage/sdk/errors.h"

namespace collage::xnnpack {

namespace {

const char* StatusName(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

}  // namespace

Status Check(xnn_status status, const char* call) {
  switch (status) {
    case xnn_status_success: return Status();
    case xnn_status_invalid_parameter:
    case xnn_status_unsupported_parameter:
    case xnn_status_unsupported_hardware:
      return Unsupported("XNNPACK {} failed: {}", call, StatusName(status));
    default: return Internal("XNNPACK {} failed: {}", call, StatusName(status));
  }
}

Status EnsureInitialized() {
  // xnn_initialize is itself idempotent, but its result must reach every caller.
  static const Status status = Check(xnn_initialize(nullptr), "xnn_initialize");
  return status;
}

std::string LibraryVersion() {
  // The Debian snapshot (libxnnpack0 0.0~git20220216.ae108ef) has no version macro.
  std::string isa = "sse2";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    isa = "avx512f";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    isa = "avx2";
  } else if (__builtin_cpu_supports("avx")) {
    isa = "avx";
  }
  return "XNNPACK git20220216.ae108ef " + isa;
}

namespace {

struct OwnedPool {
  explicit OwnedPool(int num_threads)
      : pool(pthreadpool_create(static_cast<size_t>(num_threads))) {}
  ~OwnedPool() {
    if (pool != nullptr) pthreadpool_destroy(pool);
  }
  OwnedPool(const OwnedPool&) = delete;
  OwnedPool& operator=(const OwnedPool&) = delete;
  pthreadpool_t pool;
};

}  // namespace

PoolHandle ThreadPoolFor(const CompileRequest& request) {
  if (request.num_threads() <= 1) return {};  // also without a context
  const int threads = request.num_threads();
  OwnedPool& owned = request.context->Resource<OwnedPool>(
      "xnnpack.pthreadpool", [threads] { return std::make_unique<OwnedPool>(threads); });
  return {owned.pool, request.context};
}

Status OperatorKernel::Run(const KernelBuffers& buffers) const {
  std::lock_guard<std::mutex> lock(mutex_);
  COLLAGE_RETURN_IF_ERROR(Setup(buffers, pool_.pool));
  return Check(xnn_run_operator(op_.get(), pool_.pool), "xnn_run_operator");
}

}  // namespace collage::xnnpack

#include "xnnpack_util.h"

#include <pthreadpool.h>

#include <map>
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

pthreadpool_t ThreadPoolFor(int num_threads) {
  if (num_threads <= 1) return nullptr;
  // Looked up at compile time only, never per run: a mutex is cheap enough. The pools are
  // leaked on purpose: destroying one at exit could race with a kernel still running on it.
  static std::mutex mutex;
  static auto* pools = new std::map<int, pthreadpool_t>();
  std::lock_guard<std::mutex> lock(mutex);
  pthreadpool_t& pool = (*pools)[num_threads];
  if (pool == nullptr) pool = pthreadpool_create(static_cast<size_t>(num_threads));
  return pool;
}

Status OperatorKernel::Run(const KernelBuffers& buffers) const {
  std::lock_guard<std::mutex> lock(mutex_);
  COLLAGE_RETURN_IF_ERROR(Setup(buffers, pool_));
  return Check(xnn_run_operator(op_.get(), pool_), "xnn_run_operator");
}

}  // namespace collage::xnnpack

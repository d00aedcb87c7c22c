#include "xnnpack_util.h"

#include <pthreadpool.h>

#include <cstdio>
#include <mutex>

#include "collage/sdk/errors.h"
#include "openmp_pthreadpool.h"

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

namespace {

// Where XNNPACK's pthreadpool calls go, found once by running one small operator with a
// null pool: safe with any pthreadpool implementation (it runs the items on the caller), and
// XNNPACK calls the pool even then.
struct PoolBinding {
  bool probed = false;  // the operator ran
  bool reaches_ours = false;
};

PoolBinding ProbePoolBinding() {
  PoolBinding binding;
  if (!EnsureInitialized().ok()) return binding;
  xnn_operator_t raw = nullptr;
  if (xnn_create_clamp_nc_f32(1, 1, 1, -1.0f, 1.0f, 0, &raw) != xnn_status_success) {
    return binding;
  }
  const OperatorPtr op(raw);
  const std::vector<float> input = PadForXnnpack(std::vector<float>(4, 0.5f));
  std::vector<float> output(4, 0.0f);
  const uint64_t before = OpenMpPoolCallsOnThisThread();
  binding.probed = xnn_setup_clamp_nc_f32(op.get(), 4, input.data(), output.data(), nullptr) ==
                       xnn_status_success &&
                   xnn_run_operator(op.get(), nullptr) == xnn_status_success;
  binding.reaches_ours = binding.probed && OpenMpPoolCallsOnThisThread() > before;
  if (binding.probed && !binding.reaches_ours) {
    std::fprintf(stderr,
                 "collage: XNNPACK's thread-pool calls go to another pthreadpool library loaded "
                 "before collage (in Python: a module such as torch imported first); XNNPACK "
                 "kernels run on one thread. Import collage first to run them on the shared "
                 "OpenMP team.\n");
  }
  return binding;
}

// Probed when the backends register (LibraryVersion needs it): xnn_initialize and one
// operator, ~0.2 ms timed standalone, paid once per process.
const PoolBinding& Binding() {
  static const PoolBinding binding = ProbePoolBinding();
  return binding;
}

}  // namespace

bool XnnpackUsesTheOpenMpPool() { return Binding().reaches_ours; }

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
  // Costs measured on one thread because XNNPACK's pool calls go elsewhere must not be
  // taken for those of the OpenMP team.
  return "XNNPACK git20220216.ae108ef " + isa +
         (Binding().probed && !Binding().reaches_ours ? ", one thread (another pthreadpool bound)"
                                                      : "");
}

namespace {

struct OwnedPool {
  explicit OwnedPool(int num_threads) : pool(CreateOpenMpPool(static_cast<size_t>(num_threads))) {}
  ~OwnedPool() { DestroyOpenMpPool(pool); }
  OwnedPool(const OwnedPool&) = delete;
  OwnedPool& operator=(const OwnedPool&) = delete;
  pthreadpool_t pool;
};

}  // namespace

PoolHandle ThreadPoolFor(const CompileRequest& request) {
  if (request.num_threads() <= 1) return {};  // also without a context
  // A pool of ours handed to another implementation would be read as its own pool: run
  // XNNPACK on the caller instead.
  if (!XnnpackUsesTheOpenMpPool()) return {};
  const int threads = request.num_threads();
  OwnedPool& owned = request.context->Resource(
      ResourceKey<OwnedPool>{"xnnpack.pthreadpool"},
      [threads] { return std::make_unique<OwnedPool>(threads); });
  return {owned.pool, request.context};
}

Status OperatorKernel::Run(const KernelBuffers& buffers) const {
  std::lock_guard<std::mutex> lock(mutex_);
  COLLAGE_RETURN_IF_ERROR(Setup(buffers, pool_.pool));
  return Check(xnn_run_operator(op_.get(), pool_.pool), "xnn_run_operator");
}

}  // namespace collage::xnnpack

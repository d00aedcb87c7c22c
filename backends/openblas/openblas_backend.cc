// The OpenBLAS backend: GEMM-shaped float32 ops on cblas_sgemm from OpenBLAS's OpenMP build.
#include <cblas.h>

#include <exception>
#include <sstream>

#include "collage/sdk/backend.h"
#include "conv_kernel.h"
#include "gemm_kernels.h"
#include "openblas_rules.h"
#include "collage/sdk/errors.h"

namespace collage {
namespace {

class OpenblasBackend final : public Backend {
 public:
  OpenblasBackend() : rules_(openblas::BuildRules()) {}

  std::string name() const override { return "openblas"; }

  // "OpenBLAS 0.3.21 Haswell": the version from the build configuration and the core whose
  // kernels OpenBLAS dispatches to (OPENBLAS_CORETYPE changes it, and the speed with it).
  std::string version() const override {
    std::istringstream config(openblas_get_config());
    std::string product, release;
    config >> product >> release;
    return fmt::format("{} {} {}", product, release, openblas_get_corename());
  }

  const RuleSet& rules() const override { return rules_; }

  StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest& request) const override {
    try {
      if (request.rule == "matmul" || request.rule == "matmul_bias") {
        return openblas::CompileMatMul(request);
      }
      if (request.rule == "gemm") return openblas::CompileGemm(request);
      if (request.rule == "conv" || request.rule == "conv_relu") return openblas::CompileConv(request);
      return InvalidArgument("openblas has no rule '{}'", request.rule);
    } catch (const std::exception& e) {  // allocation failures while packing weights
      return Internal("openblas: {}", e.what());
    }
  }

  // No process-wide thread count: OpenBLAS's count is process-wide; each call sets it from the calling
  // thread's OpenMP count under a lock (BlasThreadScope, blas_threads.h).

 private:
  RuleSet rules_;
};

}  // namespace

Status RegisterOpenblasBackend(BackendRegistry& registry) {
  return registry.Register(std::make_unique<OpenblasBackend>());
}

}  // namespace collage

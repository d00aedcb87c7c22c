// The OpenBLAS backend: GEMM-shaped float32 ops on cblas_sgemm from OpenBLAS's OpenMP build.
#include <cblas.h>

#include <sstream>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "openblas_rules.h"

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

// The MKL backend: GEMM-shaped float32 ops on Intel oneMKL's BLAS, on its GNU OpenMP
// threading layer (CMakeLists.txt says why), with constant operands packed at compile time.
#include <fmt/format.h>
#include <link.h>
#include <mkl_cblas.h>
#include <mkl_service.h>

#include <cstring>
#include <string>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "mkl_functions.h"
#include "mkl_rules.h"

namespace collage {
namespace {

// libmkl_core loads the kernels for this CPU at its first computation, from one library per
// code path: libmkl_def.so.3 (the generic path, what it takes on non-Intel CPUs),
// libmkl_mc3, libmkl_avx2, libmkl_avx512, libmkl_avx10. Returns "def", "avx512", ...; empty
// when none is loaded (a static MKL).
std::string LoadedKernelLibrary() {
  float a = 1.0f, b = 1.0f, c = 0.0f;
  mkl::MklSgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* slash = std::strrchr(info->dlpi_name, '/');
        const std::string file = slash != nullptr ? slash + 1 : info->dlpi_name;
        for (const char* path : {"def", "mc3", "avx2", "avx512", "avx10"}) {
          if (file == fmt::format("libmkl_{}.so.3", path)) {
            *static_cast<std::string*>(out) = path;
            return 1;
          }
        }
        return 0;
      },
      &found);
  return found;
}

class MklBackend final : public Backend {
 public:
  MklBackend() : rules_(mkl::BuildRules()) {}

  std::string name() const override { return "mkl"; }

  // "MKL 2026.0.2 build 20260915 def": MKL's version and build, and the code path it
  // dispatches to on this CPU (MKL_ENABLE_INSTRUCTIONS changes it, and the speed with it).
  // mkl_cbwr_get_auto_branch() would name the path only on Intel CPUs (elsewhere it answers
  // MKL_CBWR_AUTO), so the path is the kernel library MKL loaded, or failing that
  // MKL_Get_Version's processor field.
  std::string version() const override {
    static const std::string version = [] {
      MKLVersion v;
      mkl_get_version(&v);
      std::string path = LoadedKernelLibrary();
      if (path.empty()) path = v.Processor;
      return fmt::format("MKL {}.{}.{} build {} {}", v.MajorVersion, v.MinorVersion,
                         v.UpdateVersion, v.Build, path);
    }();
    return version;
  }

  const RuleSet& rules() const override { return rules_; }

  // No process-wide thread count: each kernel runs on its CompileRequest::num_threads(), set for
  // the calling thread only around its MKL calls (MklThreadScope, mkl_threads.h).

 private:
  RuleSet rules_;
};

}  // namespace

Status RegisterMklBackend(BackendRegistry& registry) {
  return registry.Register(std::make_unique<MklBackend>());
}

}  // namespace collage

#include "mkl_functions.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace collage::mkl {
namespace {

// The interface layer this plug-in links (CMakeLists.txt): already loaded, so RTLD_NOLOAD
// only returns its handle, and dlsym on it searches MKL's own libraries.
void* MklInterfaceLibrary() {
  static void* handle = dlopen("libmkl_intel_lp64.so.3", RTLD_NOW | RTLD_NOLOAD);
  return handle;
}

template <typename Function>
Function FromMkl(const char* name) {
  void* handle = MklInterfaceLibrary();
  void* address = handle == nullptr ? nullptr : dlsym(handle, name);
  if (address == nullptr) {
    // The plug-in links MKL: a missing symbol means a broken MKL install, not a user error.
    std::fprintf(stderr, "collage: the mkl backend cannot find %s in MKL's library\n", name);
    std::abort();
  }
  return reinterpret_cast<Function>(address);
}

}  // namespace

SgemmFunction MklSgemm() {
  static const SgemmFunction function = FromMkl<SgemmFunction>("cblas_sgemm");
  return function;
}

SgemmBatchStridedFunction MklSgemmBatchStrided() {
  static const SgemmBatchStridedFunction function =
      FromMkl<SgemmBatchStridedFunction>("cblas_sgemm_batch_strided");
  return function;
}

}  // namespace collage::mkl

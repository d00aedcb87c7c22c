// MKL's functions whose names other libraries of the process define too. OpenBLAS (its own
// backend, linked by libcollage.so) exports cblas_sgemm as well, and this plug-in, loaded
// after it, would bind that name to OpenBLAS's: the dynamic linker looks in the process's
// global scope before a plug-in's own dependencies. These are taken from MKL's library
// itself. Names only MKL defines (cblas_sgemm_pack, cblas_sgemm_compute, ...) are called
// directly.
#pragma once

#include <mkl_cblas.h>

namespace collage::mkl {

using SgemmFunction = decltype(&cblas_sgemm);
using SgemmBatchStridedFunction = decltype(&cblas_sgemm_batch_strided);

// MKL's cblas_sgemm and cblas_sgemm_batch_strided; never null once the plug-in is loaded
// (MKL's interface library is one of its dependencies).
SgemmFunction MklSgemm();
SgemmBatchStridedFunction MklSgemmBatchStrided();

}  // namespace collage::mkl

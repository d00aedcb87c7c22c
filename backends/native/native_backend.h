// The native backend: collage's own reference kernels (src/ops) as a backend. It runs every
// op the registry has (rule `op`), the fallback that makes every model placeable, plus
// chains: `elementwise_chain` (tiled, loop-fused) and `injective_chain` (node by node).
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::native {

// Bumped whenever the native kernels (src/ops or the chain kernels here) change in a way
// that changes their speed: part of version(), so old cost measurements are not reused.
inline constexpr int kNativeKernelVersion = 3;

// The instruction set the reference GEMM (the heavy ops' core) runs with on this CPU, chosen
// at run time among the copies the build compiled ("avx512", "avx2", "sse2", ...;
// ops/kernels/sgemm_variants.h).
const char* NativeIsa();

// The instruction set the other reference kernels are compiled for: the build's own ("sse2"
// for a portable x86-64 build, the machine's with COLLAGE_NATIVE_ARCH).
const char* NativeBaselineIsa();

// A new native backend (the registry holds one; tests may make their own).
StatusOr<std::unique_ptr<Backend>> MakeNativeBackend();

}  // namespace collage::native

namespace collage {
Status RegisterNativeBackend(BackendRegistry& registry);
}  // namespace collage

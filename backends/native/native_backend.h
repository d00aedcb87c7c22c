// The native backend: collage's own reference kernels (src/ops) as a backend. It runs every
// op the registry has (rule `op`), the fallback that makes every model placeable, plus
// chains: `elementwise_chain` (tiled, loop-fused) and `injective_chain` (node by node).
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::native {

// Bumped whenever the native kernels (src/ops or the chain kernels here) change in a way
// that changes their speed: part of version(), so old cost measurements are not reused.
inline constexpr int kNativeKernelVersion = 1;

// The instruction set the build targets ("avx512", "avx2", ...): the project builds with
// -march=native, so the compiler's macros say what the reference kernels were vectorised for.
const char* NativeIsa();

// A new native backend (the registry holds one; tests may make their own).
StatusOr<std::unique_ptr<Backend>> MakeNativeBackend();

}  // namespace collage::native

namespace collage {
Status RegisterNativeBackend(BackendRegistry& registry);
}  // namespace collage

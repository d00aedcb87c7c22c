// Conversion kernels between layouts (collage/layout.h). Plain ↔ channels-last is the
// framework's own; a conversion touching an opaque layout is asked of the backend that named
// it (the prefix of "backend:format"), and when no single kernel does it, two run in a row
// through the plain layout.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage {

// A kernel with one input in `from` and one output in `to`. `from == to` is an error (the
// caller should not convert).
StatusOr<std::unique_ptr<Kernel>> CompileLayoutConversion(const TensorType& type,
                                                          const Layout& from, const Layout& to,
                                                          const BackendRegistry& registry);

}  // namespace collage

// The one place a group becomes a kernel: measurement (KernelRunner), the executable and the
// measurement worker all compile through CompileGroup, so that every caller gets the same
// checks and the same errors.
#pragma once

#include <memory>
#include <string>

#include "collage/sdk/backend.h"

namespace collage {

// "backend 'onednn', rule 'conv', node 'conv1' (Conv) and 2 more": how errors name a group.
std::string DescribeGroup(const std::string& backend, const CompileRequest& request);

// Compiles `request` with `backend`. A library that throws (an allocation failure, a
// library's own error type) gives a Status instead; a kernel declaring the wrong number of
// layouts is refused. Every error is prefixed with DescribeGroup.
StatusOr<std::unique_ptr<Kernel>> CompileGroup(const Backend& backend, const CompileRequest& request);

}  // namespace collage

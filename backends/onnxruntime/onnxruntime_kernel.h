// A region of nodes run by ONNX Runtime: the region exported as an in-memory ONNX model,
// one OrtSession per kernel, inputs and outputs bound to collage's buffers without copies.
#pragma once

#include <memory>
#include <string>

#include "collage/sdk/backend.h"

namespace collage::onnxruntime {

// "onnxruntime 1.32.0 (C API 21)"; empty when the library cannot serve the API version
// these headers were written for.
std::string LibraryVersion();

// Why the library is unusable ("" when it is usable): the backend is then not registered.
std::string LibraryProblem();

StatusOr<std::unique_ptr<Kernel>> CompileRegion(const CompileRequest& request);

}  // namespace collage::onnxruntime

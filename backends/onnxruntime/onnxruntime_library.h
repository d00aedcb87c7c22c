// ONNX Runtime's library, opened at run time. Its whole C API is one entry point
// (OrtGetApiBase), so the backend links nothing of it: the library is looked for where
// collage's build, its install and the Python package put it, and a machine without it
// only lacks this backend. (Linking it would also not do for the Python package: the
// onnxruntime wheel ships libonnxruntime.so.1.<minor>.<patch> without the soname's link.)
#pragma once

#include <onnxruntime_c_api.h>

#include <string>

namespace collage::onnxruntime {

// The loaded library's API base, or null with `problem` saying where it was looked for and
// what the loader said. Loaded once per process.
const OrtApiBase* LoadedApiBase(std::string* problem);

}  // namespace collage::onnxruntime

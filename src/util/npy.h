// NumPy .npy files ↔ Tensor (the input/output format of `collage run` next to ONNX .pb).
//
// Reads format versions 1.0, 2.0 and 3.0 holding a little-endian (or byte-order-free),
// C-ordered array of f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 or b1. Big-endian data,
// Fortran order (where it differs from C order), structured and object dtypes are refused
// with kUnsupported; a damaged or truncated file is kInvalidArgument naming the file.
// Writes exactly the bytes numpy 1.24's np.save writes (version 1.0 unless the header needs
// 2.0), so files round-trip with numpy in both directions.
#pragma once

#include <string>
#include <string_view>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// Parses the bytes of a whole .npy file; `source_name` names it in error messages.
StatusOr<Tensor> NpyFromBytes(std::string_view bytes, const std::string& source_name = "<npy>");
StatusOr<Tensor> ReadNpyFile(const std::string& path);

// The bytes np.save would write for this tensor. kUnsupported for dtypes numpy has no
// .npy code for here (string, bfloat16).
StatusOr<std::string> NpyToBytes(const Tensor& tensor);
Status WriteNpyFile(const Tensor& tensor, const std::string& path);

}  // namespace collage

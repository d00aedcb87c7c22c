// Whole-file reads and writes with the error codes the frontend promises: a missing file is
// kNotFound, anything else that fails is kIoError; messages name the path.
#pragma once

#include <cstdint>
#include <string>

#include "collage/status.h"

namespace collage {

StatusOr<std::string> ReadFileBytes(const std::string& path);
// Size in bytes of a regular file.
StatusOr<int64_t> FileSize(const std::string& path);
// Reads `length` bytes at `offset` into `out`; a file too short for the range is kIoError.
Status ReadFileRange(const std::string& path, int64_t offset, int64_t length, void* out);
Status WriteFileBytes(const std::string& path, const std::string& bytes);

}  // namespace collage

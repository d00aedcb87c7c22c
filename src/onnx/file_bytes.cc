#include "onnx/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "util/errors.h"

namespace collage {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Opens `path` for reading, telling "does not exist" apart from "cannot be read" and
// refusing directories (fopen succeeds on them on Linux, reads then fail obscurely).
StatusOr<FilePtr> OpenForRead(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return IoError("cannot read '{}': {}", path, ec.message());
    }
    return NotFound("file '{}' does not exist", path);
  }
  if (std::filesystem::is_directory(status)) {
    return IoError("cannot read '{}': it is a directory", path);
  }
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) return IoError("cannot open '{}': {}", path, std::strerror(errno));
  return f;
}

}  // namespace

StatusOr<std::string> ReadFileBytes(const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(FilePtr f, OpenForRead(path));
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    size_t n = std::fread(buffer, 1, sizeof(buffer), f.get());
    bytes.append(buffer, n);
    if (n < sizeof(buffer)) break;
  }
  if (std::ferror(f.get())) return IoError("error reading '{}': {}", path, std::strerror(errno));
  return bytes;
}

StatusOr<int64_t> FileSize(const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(FilePtr f, OpenForRead(path));
  if (std::fseek(f.get(), 0, SEEK_END) != 0) {
    return IoError("cannot seek in '{}': {}", path, std::strerror(errno));
  }
  const long size = std::ftell(f.get());
  if (size < 0) return IoError("cannot seek in '{}': {}", path, std::strerror(errno));
  return static_cast<int64_t>(size);
}

Status ReadFileRange(const std::string& path, int64_t offset, int64_t length, void* out) {
  COLLAGE_ASSIGN_OR_RETURN(FilePtr f, OpenForRead(path));
  if (offset < 0 || length < 0) {
    return IoError("cannot read '{}': bad range (offset {}, length {})", path, offset, length);
  }
  if (std::fseek(f.get(), 0, SEEK_END) != 0) {
    return IoError("cannot seek in '{}': {}", path, std::strerror(errno));
  }
  const long size = std::ftell(f.get());
  if (size < 0) return IoError("cannot seek in '{}': {}", path, std::strerror(errno));
  if (offset > size || length > size - offset) {
    return IoError("'{}' has {} bytes, but {} bytes are needed at offset {}", path, size, length,
                   offset);
  }
  if (std::fseek(f.get(), static_cast<long>(offset), SEEK_SET) != 0) {
    return IoError("cannot seek in '{}': {}", path, std::strerror(errno));
  }
  if (length > 0 &&
      std::fread(out, 1, static_cast<size_t>(length), f.get()) != static_cast<size_t>(length)) {
    return IoError("error reading '{}': {}", path, std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteFileBytes(const std::string& path, const std::string& bytes) {
  FilePtr f(std::fopen(path.c_str(), "wb"));
  if (!f) return IoError("cannot create '{}': {}", path, std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) {
    return IoError("error writing '{}': {}", path, std::strerror(errno));
  }
  if (std::fclose(f.release()) != 0) {
    return IoError("error writing '{}': {}", path, std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace collage

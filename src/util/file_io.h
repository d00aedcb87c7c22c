// Every file collage reads or writes goes through here, so that a hostile or careless path
// cannot make it hang, read what it should not, or destroy what is not its own:
// - reads take regular files only (a FIFO would block forever, /dev/zero never ends), sized
//   before a byte is read, with an optional upper bound;
// - files a model refers to (external data) are opened inside the model's folder, one path
//   component at a time, with symlinks refused at every step;
// - writes go to a temporary file beside the target and are renamed over it only when
//   complete: a full disk or a crash leaves the old file (or nothing), never half a file.
// Messages name the path; a missing file is kNotFound, anything else kIoError.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "collage/file_io.h"
#include "collage/status.h"

namespace collage {

inline constexpr int64_t kNoSizeLimit = std::numeric_limits<int64_t>::max();

// The whole of a regular file; refused before reading when larger than `max_bytes`, with
// `why_limited` (what may be that large) in the message.
StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes = kNoSizeLimit,
                                      const char* why_limited = "no such file is that large");

// Size in bytes of a regular file (a FIFO, device or directory is refused).
StatusOr<int64_t> RegularFileSize(const std::string& path);

// A regular file opened inside a folder without following any symlink; closes itself.
class ConfinedFile {
 public:
  // Opens `relative` (no absolute path, no "..") inside `base_dir`. `base_dir` itself is the
  // caller's choice and may be reached through symlinks; nothing below it may be one.
  static StatusOr<ConfinedFile> Open(const std::string& base_dir, const std::string& relative);

  ConfinedFile(ConfinedFile&& other) noexcept;
  ConfinedFile& operator=(ConfinedFile&& other) noexcept;
  ConfinedFile(const ConfinedFile&) = delete;
  ConfinedFile& operator=(const ConfinedFile&) = delete;
  ~ConfinedFile();

  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads `length` bytes at `offset`; a file too short for the range is kIoError.
  Status ReadRange(int64_t offset, int64_t length, void* out) const;

 private:
  ConfinedFile(int fd, int64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  int64_t size_ = 0;
  std::string path_;
};

// WriteFileAtomically, the writer applications use too, is declared in collage/file_io.h.

}  // namespace collage

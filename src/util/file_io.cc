#include "util/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "collage/sdk/errors.h"

namespace collage {

namespace {

// Closes a descriptor on every path out of a function.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symlink";
  return "not a regular file";
}

Status NotRegular(const std::string& path, mode_t mode) {
  return IoError("cannot read '{}': it is {}, not a regular file", path, FileKind(mode));
}

Status OpenFailure(const std::string& what, const std::string& path, int error) {
  if (error == ENOENT) return NotFound("file '{}' does not exist", path);
  return IoError("cannot {} '{}': {}", what, path, std::strerror(error));
}

// Reads exactly `length` bytes at `offset`, retrying short reads and interrupts.
Status PreadAll(int fd, int64_t offset, int64_t length, void* out, const std::string& path) {
  auto* dst = static_cast<char*>(out);
  while (length > 0) {
    const size_t chunk = static_cast<size_t>(std::min<int64_t>(length, 1 << 30));
    const ssize_t n = ::pread(fd, dst, chunk, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("error reading '{}': {}", path, std::strerror(errno));
    if (n == 0) return IoError("'{}' became shorter while it was read", path);
    dst += n;
    offset += n;
    length -= n;
  }
  return Status::Ok();
}

// Opens a regular file for reading. The type is checked before opening (opening a FIFO
// blocks until a writer comes, a tape device may rewind) and again on the descriptor (the
// path may have been swapped in between). O_NONBLOCK keeps the second open from blocking.
StatusOr<int> OpenRegularForRead(const std::string& path, int64_t* size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return OpenFailure("read", path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  FdCloser fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return OpenFailure("open", path, errno);
  if (::fstat(fd.get(), &st) != 0)
    return IoError("cannot read '{}': {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  *size = static_cast<int64_t>(st.st_size);
  return fd.release();
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace

StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes,
                                      const char* why_limited) {
  int64_t size = 0;
  COLLAGE_ASSIGN_OR_RETURN(int raw_fd, OpenRegularForRead(path, &size));
  FdCloser fd(raw_fd);
  if (size > max_bytes) {
    return IoError("'{}' has {} bytes, more than the {} bytes allowed: {}", path, size, max_bytes,
                   why_limited);
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  COLLAGE_RETURN_IF_ERROR(PreadAll(fd.get(), 0, size, bytes.data(), path));
  return bytes;
}

StatusOr<int64_t> RegularFileSize(const std::string& path) {
  int64_t size = 0;
  COLLAGE_ASSIGN_OR_RETURN(int raw_fd, OpenRegularForRead(path, &size));
  FdCloser fd(raw_fd);
  return size;
}

StatusOr<ConfinedFile> ConfinedFile::Open(const std::string& base_dir,
                                          const std::string& relative) {
  const std::string path = JoinPath(base_dir, relative);
  std::vector<std::string> parts;
  for (const auto& part : std::filesystem::path(relative)) {
    const std::string name = part.string();
    if (name.empty() || name == "." || name == "/") continue;
    if (name == "..") return IoError("cannot read '{}': it leaves the folder '{}'", path, base_dir);
    parts.push_back(name);
  }
  if (parts.empty() || std::filesystem::path(relative).is_absolute()) {
    return IoError("cannot read '{}': '{}' is not a file name inside '{}'", path, relative,
                   base_dir);
  }
  FdCloser dir(::open(base_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return OpenFailure("open the folder", base_dir, errno);
  std::string reached = base_dir;
  for (size_t i = 0; i < parts.size(); ++i) {
    reached = JoinPath(reached, parts[i]);
    struct stat st {};
    if (::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return OpenFailure("read", reached, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      return IoError(
          "cannot read '{}': '{}' is a symlink, and a model may refer only to files "
          "inside its own folder",
          path, reached);
    }
    const bool last = i + 1 == parts.size();
    if (!last && !S_ISDIR(st.st_mode)) {
      return IoError("cannot read '{}': '{}' is not a folder", path, reached);
    }
    if (last && !S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
    const int flags =
        O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK | O_NOCTTY : O_DIRECTORY);
    FdCloser next(::openat(dir.get(), parts[i].c_str(), flags));
    if (next.get() < 0) return OpenFailure("open", reached, errno);
    // Swapped for something else since the check above?
    if (::fstat(next.get(), &st) != 0)
      return IoError("cannot read '{}': {}", path, std::strerror(errno));
    if (last) {
      if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
      return ConfinedFile(next.release(), static_cast<int64_t>(st.st_size), path);
    }
    if (!S_ISDIR(st.st_mode))
      return IoError("cannot read '{}': '{}' is not a folder", path, reached);
    dir.reset(next.release());
  }
  return Internal("cannot read '{}': no file name", path);
}

ConfinedFile::ConfinedFile(ConfinedFile&& other) noexcept
    : fd_(other.fd_), size_(other.size_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

ConfinedFile& ConfinedFile::operator=(ConfinedFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

ConfinedFile::~ConfinedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status ConfinedFile::ReadRange(int64_t offset, int64_t length, void* out) const {
  if (offset < 0 || length < 0) {
    return IoError("cannot read '{}': bad range (offset {}, length {})", path_, offset, length);
  }
  if (offset > size_ || length > size_ - offset) {
    return IoError("'{}' has {} bytes, but {} bytes are needed at offset {}", path_, size_, length,
                   offset);
  }
  return PreadAll(fd_, offset, length, out, path_);
}

namespace {

// Where a write to `path` lands: `path` itself, or the file a symlink of this user's at
// `path` points to.
// Fills `existing` when there is a file to replace.
StatusOr<std::string> WriteTarget(const std::string& path, struct stat* existing, bool* exists) {
  std::string target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // A link of one's own is followed; one someone else planted (in a shared folder, where
    // anyone may create names) would make this write replace a file of theirs choosing.
    if (st.st_uid != ::geteuid()) {
      return IoError(
          "cannot write '{}': it is a symlink that belongs to another user (uid {}), not "
          "followed; remove it or write elsewhere",
          path, st.st_uid);
    }
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
      return IoError("cannot write '{}': it is a symlink to a file that cannot be reached ({})",
                     path, std::strerror(errno));
    }
    target = resolved;
  }
  *exists = ::stat(target.c_str(), existing) == 0;
  if (!*exists && errno != ENOENT) {
    return IoError("cannot write '{}': {}", path, std::strerror(errno));
  }
  if (*exists && !S_ISREG(existing->st_mode)) {
    return IoError("cannot write '{}': it is {}; only a regular file is replaced", path,
                   FileKind(existing->st_mode));
  }
  return target;
}

// Creates an empty, uniquely named file beside `target` with the mode the umask allows.
StatusOr<int> CreateTemporaryBeside(const std::string& target, std::string* temporary) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path where(target);
  const std::filesystem::path dir = where.has_parent_path() ? where.parent_path() : ".";
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temporary = (dir / ("." + where.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                         "-" + std::to_string(counter++)))
                     .string();
    const int fd = ::open(temporary->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      return IoError("cannot write '{}': cannot create a file in '{}': {}", target, dir.string(),
                     std::strerror(errno));
    }
  }
  return IoError("cannot write '{}': no free temporary name in its folder", target);
}

Status WriteAll(int fd, const std::string& bytes, const std::string& path) {
  const char* src = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, src, std::min<size_t>(left, 1 << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("error writing '{}': {}", path, std::strerror(errno));
    src += n;
    left -= static_cast<size_t>(n);
  }
  // A full disk may only show here, on write-back; the old file must then stay.
  if (::fsync(fd) != 0) return IoError("error writing '{}': {}", path, std::strerror(errno));
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  struct stat existing {};
  bool exists = false;
  COLLAGE_ASSIGN_OR_RETURN(const std::string target, WriteTarget(path, &existing, &exists));
  std::string temporary;
  COLLAGE_ASSIGN_OR_RETURN(int raw_fd, CreateTemporaryBeside(target, &temporary));
  FdCloser fd(raw_fd);
  Status written = WriteAll(fd.get(), bytes, path);
  if (written.ok() && exists) {
    // The replacement keeps the replaced file's mode and, where allowed, its owner.
    ::fchmod(fd.get(), existing.st_mode & 07777);
    if (::fchown(fd.get(), existing.st_uid, existing.st_gid) != 0) { /* not ours to give */
    }
  }
  if (written.ok() && ::close(fd.release()) != 0) {
    written = IoError("error writing '{}': {}", path, std::strerror(errno));
  }
  if (written.ok() && ::rename(temporary.c_str(), target.c_str()) != 0) {
    written = IoError("cannot write '{}': {}", path, std::strerror(errno));
  }
  if (!written.ok()) ::unlink(temporary.c_str());
  return written;
}

}  // namespace collage

// A file-size limit (RLIMIT_FSIZE) for the duration of a scope: writes past it fail with
// EFBIG, as they would on a full disk, instead of killing the process with SIGXFSZ.
#pragma once

#include <sys/resource.h>

#include <csignal>

namespace collage::testing {

class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(rlim_t bytes) {
    ok_ = ::getrlimit(RLIMIT_FSIZE, &saved_) == 0;
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = saved_;
    small.rlim_cur = bytes;
    ok_ = ok_ && ::setrlimit(RLIMIT_FSIZE, &small) == 0;
  }
  ~ScopedFileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  ScopedFileSizeLimit(const ScopedFileSizeLimit&) = delete;
  ScopedFileSizeLimit& operator=(const ScopedFileSizeLimit&) = delete;

  bool ok() const { return ok_; }

 private:
  struct rlimit saved_ {};
  void (*old_handler_)(int) = SIG_DFL;
  bool ok_ = false;
};

}  // namespace collage::testing

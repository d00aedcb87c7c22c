// What a session lends the kernels it compiles: the thread count they run on, and the
// resources a backend keeps per session rather than per process (a library's thread pool,
// say). One context serves every kernel of an executable (and every candidate of one
// measurement); a kernel that uses a resource keeps the context alive (CompileRequest::context
// is shared), so a pool outlives every kernel running on it and is destroyed with the last
// one — no process-wide pool that sessions with different thread counts would fight over.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collage {

class ExecutionContext {
 public:
  // `num_threads` >= 1: the threads each kernel compiled in this context may use.
  explicit ExecutionContext(int num_threads);
  ~ExecutionContext();  // destroys the resources, the last made first
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  int num_threads() const { return num_threads_; }

  // The resource this context holds under `key` (a backend names its own, e.g.
  // "xnnpack.pthreadpool"), made by `make` on first use; later calls with the same key
  // return the same object. Thread-safe. The same key must always name the same type.
  template <typename T>
  T& Resource(std::string_view key, const std::function<std::unique_ptr<T>()>& make) {
    std::shared_ptr<void> held =
        FindOrAdd(key, [&]() -> std::shared_ptr<void> { return std::shared_ptr<T>(make()); });
    return *static_cast<T*>(held.get());
  }

 private:
  std::shared_ptr<void> FindOrAdd(std::string_view key,
                                  const std::function<std::shared_ptr<void>()>& make);

  const int num_threads_;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<void>>> resources_;
};

}  // namespace collage

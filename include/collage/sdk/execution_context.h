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
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

namespace collage {

// The key a backend keeps a resource of type T under: its own name for it (e.g.
// "xnnpack.pthreadpool") and the type, so that a resource is only ever handed back as what it
// was made as (the same name with another type is another resource).
template <typename T>
struct ResourceKey {
  std::string_view name;
};

class ExecutionContext {
 public:
  // `num_threads` >= 1: the threads each kernel compiled in this context may use.
  explicit ExecutionContext(int num_threads);
  ~ExecutionContext();  // destroys the resources, the last made first
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  int num_threads() const { return num_threads_; }

  // The resource this context holds under `key`, made by `make` on first use; later calls
  // with the same key return the same object. Thread-safe.
  template <typename T>
  T& Resource(ResourceKey<T> key,
              const std::type_identity_t<std::function<std::unique_ptr<T>()>>& make) {
    std::shared_ptr<void> held = FindOrAdd(
        key.name, typeid(T), [&]() -> std::shared_ptr<void> { return std::shared_ptr<T>(make()); });
    // FindOrAdd matched the type as well as the name: the object is a T.
    return *static_cast<T*>(held.get());
  }

 private:
  struct Held {
    std::string name;
    std::type_index type;
    std::shared_ptr<void> object;
  };
  std::shared_ptr<void> FindOrAdd(std::string_view name, const std::type_info& type,
                                  const std::function<std::shared_ptr<void>()>& make);

  const int num_threads_;
  std::mutex mutex_;
  std::vector<Held> resources_;
};

}  // namespace collage

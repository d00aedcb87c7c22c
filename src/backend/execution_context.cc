#include "collage/sdk/execution_context.h"

#include <algorithm>

namespace collage {

ExecutionContext::ExecutionContext(int num_threads) : num_threads_(std::max(1, num_threads)) {}

ExecutionContext::~ExecutionContext() {
  while (!resources_.empty()) resources_.pop_back();
}

std::shared_ptr<void> ExecutionContext::FindOrAdd(
    std::string_view name, const std::type_info& type,
    const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Held& held : resources_) {
    if (held.name == name && held.type == std::type_index(type)) return held.object;
  }
  std::shared_ptr<void> made = make();
  resources_.push_back(Held{std::string(name), std::type_index(type), made});
  return made;
}

}  // namespace collage

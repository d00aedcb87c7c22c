#include "collage/sdk/execution_context.h"

#include <algorithm>

namespace collage {

ExecutionContext::ExecutionContext(int num_threads) : num_threads_(std::max(1, num_threads)) {}

ExecutionContext::~ExecutionContext() {
  while (!resources_.empty()) resources_.pop_back();
}

std::shared_ptr<void> ExecutionContext::FindOrAdd(
    std::string_view key, const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [name, resource] : resources_) {
    if (name == key) return resource;
  }
  std::shared_ptr<void> made = make();
  resources_.emplace_back(std::string(key), made);
  return made;
}

}  // namespace collage

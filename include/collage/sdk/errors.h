// Formatted Status constructors: `return Unsupported("Conv: dtype {} is not supported", name);`
#pragma once

#include <fmt/format.h>

#include "collage/status.h"

namespace collage {

template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status InvalidModel(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidModel, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Unsupported(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kUnsupported, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status IoError(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kIoError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Internal(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace collage

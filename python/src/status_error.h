// collage reports errors as Status values; Python gets them as exceptions. The binding code
// throws StatusError, and the translator that BindErrors registers raises the exception
// class of the package (python/collage/_errors.py) that matches the status code, carrying
// collage's message.
#pragma once

#include <exception>
#include <utility>

#include "collage/status.h"

namespace collage::python {

class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return status_.message().c_str(); }

 private:
  Status status_;
};

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <typename T>
T ValueOrThrow(StatusOr<T>&& result) {
  if (!result.ok()) throw StatusError(result.status());
  return std::move(result).value();
}

}  // namespace collage::python

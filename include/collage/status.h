// Status: the error value of every fallible call in collage. No exception crosses the public API.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace collage {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller passed something wrong (bad shape, bad flag, bad file content)
  kInvalidModel,     // the model is malformed or fails the ONNX checker
  kUnsupported,      // valid input that collage does not implement (op, dtype, attribute value)
  kNotFound,         // a file, tensor name or op that does not exist
  kIoError,          // reading or writing a file failed
  kInternal,         // a broken invariant inside collage
  kCancelled,        // the user interrupted the work (Ctrl-C, SIGTERM); nothing is half done
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", or "OK".
  std::string ToString() const;

  // Prefixes context to the message ("while importing node 'conv1': ...").
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : data_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : data_(std::move(status)) {}     // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace collage

#define COLLAGE_CONCAT_INNER_(a, b) a##b
#define COLLAGE_CONCAT_(a, b) COLLAGE_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function if it is not OK.
#define COLLAGE_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::collage::Status collage_status_ = (expr);        \
    if (!collage_status_.ok()) return collage_status_; \
  } while (0)

// `COLLAGE_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a StatusOr or returns its Status.
#define COLLAGE_ASSIGN_OR_RETURN(lhs, expr) \
  COLLAGE_ASSIGN_OR_RETURN_IMPL_(COLLAGE_CONCAT_(collage_statusor_, __LINE__), lhs, expr)
#define COLLAGE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

// Overflow-checked int64 arithmetic for shapes, element counts and offsets computed from model
// data (attributes, constant inputs, input dims). A model is untrusted input: signed overflow
// is undefined behaviour, and in practice the wrapped value is a small or negative number that
// passes every later check (Range(-10, INT64_MAX - 5, INT64_MAX) came out empty). Every such
// computation goes through these functions and is refused when it does not fit.
//
// The free functions answer one operation; CheckedInt chains them so that a formula still
// reads as the formula and is checked once at the end:
//   const CheckedInt span = CheckedInt(in) + pad_begin + pad_end - ((CheckedInt(k) - 1) * d + 1);
//   if (!span.ok()) ...refuse...
// Ops report failures through CheckedValue in ops/op_helpers.h, which names the node.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

namespace collage {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Truncating division (C++'s /). nullopt for b == 0 and for INT64_MIN / -1, whose quotient
// 2^63 does not fit.
inline std::optional<int64_t> CheckedDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  return a / b;
}

// The product of `values` (1 when empty); nullopt when it or a partial product overflows. A
// zero anywhere makes the product 0 even if the other factors would overflow together: an
// empty tensor of shape [0, 2^40, 2^40] is fine.
inline std::optional<int64_t> CheckedProduct(std::span<const int64_t> values) {
  for (int64_t v : values) {
    if (v == 0) return 0;
  }
  int64_t p = 1;
  for (int64_t v : values) {
    if (__builtin_mul_overflow(p, v, &p)) return std::nullopt;
  }
  return p;
}

// `v` truncated towards zero as int64; nullopt for NaN, infinities and values outside int64
// (the plain cast is undefined behaviour for those, e.g. floor(in * scale) of a huge scale).
inline std::optional<int64_t> CheckedToInt64(double v) {
  // -2^63 is exact in double; 2^63 is the first double above INT64_MAX.
  if (!(v >= -0x1p63 && v < 0x1p63)) return std::nullopt;
  return static_cast<int64_t>(v);
}

// An int64 that remembers whether any operation on the way to it overflowed. Implicitly
// constructible from int64_t so that plain values mix into a formula; an overflowed operand
// makes every result that uses it overflowed.
class CheckedInt {
 public:
  constexpr CheckedInt(int64_t v) : value_(v) {}  // NOLINT(google-explicit-constructor)
  constexpr CheckedInt(std::optional<int64_t> v) : value_(v) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  // The value; nullopt when some step overflowed.
  std::optional<int64_t> get() const { return value_; }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) { return a.Apply(b, CheckedAdd); }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) { return a.Apply(b, CheckedSub); }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) { return a.Apply(b, CheckedMul); }
  // Truncating division; division by zero counts as overflow (there is no value).
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) { return a.Apply(b, CheckedDiv); }
  friend CheckedInt operator-(CheckedInt a) { return CheckedInt(0) - a; }

 private:
  template <typename Op>
  CheckedInt Apply(CheckedInt b, Op op) const {
    if (!value_ || !b.value_) return CheckedInt(std::nullopt);
    return CheckedInt(op(*value_, *b.value_));
  }

  std::optional<int64_t> value_;
};

}  // namespace collage

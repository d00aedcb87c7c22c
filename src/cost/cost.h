// What a measurement says a candidate costs: a time, or that it cannot run (it does not
// compile, fails, hangs or computes wrong outputs), or that it has not been measured. A time
// never stands for either of the other two (no infinity, no 0 with a flag beside it), so a
// comparison or a sum cannot mistake them for a time.
#pragma once

#include <cmath>

namespace collage {

class Cost {
 public:
  enum class State : unsigned char { kValue, kUnknown, kInvalid };

  Cost() = default;  // unknown
  static Cost Unknown() { return Cost(); }
  static Cost Invalid() { return Cost(State::kInvalid, 0); }
  // A time in milliseconds; one that is not a finite number >= 0 cannot be a measurement and
  // is invalid.
  static Cost Milliseconds(double ms) {
    return std::isfinite(ms) && ms >= 0 ? Cost(State::kValue, ms) : Invalid();
  }

  bool is_value() const { return state_ == State::kValue; }
  bool is_invalid() const { return state_ == State::kInvalid; }
  bool is_unknown() const { return state_ == State::kUnknown; }
  // The time; 0 unless is_value().
  double ms() const { return ms_; }

  // Invalid when either part is, else unknown when either is, else the sum: the cost of
  // running both.
  friend Cost operator+(const Cost& a, const Cost& b) {
    if (a.is_invalid() || b.is_invalid()) return Invalid();
    if (a.is_unknown() || b.is_unknown()) return Unknown();
    return Cost(State::kValue, a.ms_ + b.ms_);
  }
  // Cheaper first: times by their value, then unknown, then invalid (what a search prefers).
  friend bool operator<(const Cost& a, const Cost& b) {
    if (a.state_ != b.state_) return a.state_ < b.state_;
    return a.is_value() && a.ms_ < b.ms_;
  }
  friend bool operator==(const Cost& a, const Cost& b) = default;

 private:
  Cost(State state, double ms) : state_(state), ms_(ms) {}
  State state_ = State::kUnknown;
  double ms_ = 0;
};

}  // namespace collage

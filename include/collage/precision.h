// The arithmetic precision a group is computed in. Every group reads and writes float32 values
// (and the integer ones its ops define) at its boundary; a group in a reduced precision
// converts its float inputs and weights inside its kernel, computes there, and hands float32
// back. A rule or fusion offers its groups in float32 and, where its library and the CPU
// compute them faster so, in the reduced precisions it declares (Rule::Precisions); the
// search places each group at the (backend, precision) it measured fastest, and the plan is
// then checked end to end against the float32 reference kernels within the user's tolerance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collage {

enum class Precision : uint8_t {
  kFloat32,   // the ONNX model's own arithmetic: what every group computes by default
  kBfloat16,  // products in bfloat16 (8-bit mantissa), sums in float32
};

// "fp32", "bf16": the names plans, cost keys, reports and the command line use.
constexpr const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFloat32: return "fp32";
    case Precision::kBfloat16: return "bf16";
  }
  return "?";
}

// The precision named `name` (as PrecisionName writes it); none for any other text.
constexpr std::optional<Precision> PrecisionNamed(std::string_view name) {
  if (name == "fp32") return Precision::kFloat32;
  if (name == "bf16") return Precision::kBfloat16;
  return std::nullopt;
}

// A rule's name as reports show it: "conv" in float32, "conv bf16" in a reduced precision.
inline std::string RuleInPrecision(const std::string& rule, Precision precision) {
  return precision == Precision::kFloat32 ? rule : rule + " " + PrecisionName(precision);
}

// The normalized error (max |a - b| / max(1, max |reference|)) a group in `precision` may show
// against the float32 reference kernels when measured alone on random inputs. It tells a wrong
// kernel (errors of the order of the values themselves) from rounding, no more: whether a plan's
// reduced-precision groups together keep the model's outputs within the user's tolerance is
// checked on the whole plan. bfloat16 keeps 8 significant bits: each product of two rounded
// operands is off by up to 2^-7 of itself, and a sum of K of them by about 2^-8 sqrt(K) of a
// term; a 64-long product of N(0, 1) inputs and 0.3-scaled weights then measured 0.04 off at
// an activation that caps the output's scale at 1. 1/8 leaves room for longer sums.
constexpr double GroupErrorBound(Precision precision) {
  return precision == Precision::kBfloat16 ? 1.0 / 8 : 0.0;
}

}  // namespace collage

// What the fuzz targets share for reporting a broken invariant: an abort, which libFuzzer
// treats as a crash and saves the input for.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage::fuzz {

[[noreturn]] inline void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz invariant broken: %s%s%s\n", what, detail.empty() ? "" : ": ",
               detail.c_str());
  std::abort();
}

// A reader may refuse any input, but kInternal means a broken invariant inside collage.
inline void CheckNotInternal(const char* what, const Status& status) {
  if (status.code() == StatusCode::kInternal) Fail(what, status.ToString());
}

// Whether two tensors hold the same dtype, shape and bytes.
inline bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

}  // namespace collage::fuzz

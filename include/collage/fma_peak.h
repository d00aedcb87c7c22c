// This CPU's peak float32 arithmetic rate, measured rather than looked up: a roofline for
// `collage bench`. A model that already runs near it gains little from any placement; one far
// below it is bound by memory, by small ops or by overheads, where placement can pay.
#pragma once

#include <string>

namespace collage {

struct FmaPeak {
  double gflops = 0;  // 0: not measured (not an x86-64 CPU)
  std::string isa;    // the instructions timed: "AVX-512 FMA", "AVX2 FMA" or "SSE multiply+add"
  int threads = 0;
};

// Every one of `threads` threads runs chains of independent fused multiply-adds on the widest
// float32 vectors the CPU has (chosen from its flags at run time) for about `seconds`; the
// best of three tries (other processes only ever lower it). A multiply-add counts 2.
FmaPeak MeasureFmaPeak(int threads, double seconds = 0.05);

}  // namespace collage

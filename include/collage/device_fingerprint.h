// What identifies "this machine" for measured costs: a cost or a plan measured elsewhere may
// rank backends differently (DESIGN.md 1.4).
#pragma once

#include <string>

namespace collage {

// "x86_64 | AMD EPYC 9R45 | avx2 avx512f avx512_bf16 | 2 cpus": the architecture, the
// processor's name, the vector extensions the libraries dispatch on, and how many CPUs the
// process may use. Stable across runs on one machine.
const std::string& DeviceFingerprint();

// "collage-device-0123456789abcdef" (16 hex digits of a hash of `fingerprint`): the Ray
// custom resource a node offers when its fingerprint is this one (`collage ray resources`),
// so that `collage optimize --workers ray` measures only on machines that measure like
// this one (README, "Fanning measurement out with Ray").
std::string DeviceResourceName(const std::string& fingerprint = DeviceFingerprint());

}  // namespace collage

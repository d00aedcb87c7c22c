// The name of the one backend every build has: collage's own reference kernels, which run any
// node no other backend takes and against which every other backend's outputs are checked.
#pragma once

namespace collage {

inline constexpr char kNativeBackend[] = "native";

}  // namespace collage

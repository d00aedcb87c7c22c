// The backend folders this build left out because their library was not found (the folder's
// CMakeLists.txt called collage_skip_backend): `collage backends` and the tests name them.
#pragma once

#include <string>
#include <vector>

namespace collage {

struct SkippedBackend {
  std::string name;
  std::string reason;
};

// Defined in the generated builtin_backends.cc.
const std::vector<SkippedBackend>& SkippedBuiltinBackends();

}  // namespace collage

// Times as people type them on a command line or in a call: "120s", "2m", "500ms".
#pragma once

#include <string>

#include "collage/status.h"

namespace collage {

// A positive time such as "120s", "120" (seconds), "2m", "1.5m" or "500ms" → seconds; the
// error names `what` (a flag such as "--budget", or an argument's name).
StatusOr<double> ParseSeconds(const std::string& text, const std::string& what);

}  // namespace collage

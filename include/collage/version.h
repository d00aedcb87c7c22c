// collage's own version (the project's release number; the backends' library versions are
// Backend::version()).
#pragma once

namespace collage {

// "0.1.0"
const char* Version();

}  // namespace collage

#include "collage/version.h"

namespace collage {

const char* Version() { return COLLAGE_VERSION; }

}  // namespace collage

// Writing a file all or nothing: what collage writes (plans, reports, tensors) goes through
// here, and an application writing its own results gets the same guarantee. A full disk or a
// crash leaves the old file (or nothing), never half a file.
#pragma once

#include <string>

#include "collage/status.h"

namespace collage {

// Replaces `path` with `bytes`, all or nothing. A symlink is written through: its target is
// replaced and the link kept (a dangling link is refused). A directory, device, FIFO or
// socket at `path` (or at the link's target) is refused untouched. A new file gets the mode
// the umask allows; a replaced file keeps its mode.
Status WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace collage

// What the library itself sees of a Session beyond the public API: the graph it runs (after
// simplification), which the report, the in-run profile, the Python package and the tests
// need. Not installed: the application API shows no IR type (collage/session.h).
#pragma once

#include "collage/session.h"
#include "collage/sdk/graph.h"

namespace collage {

struct SessionAccess {
  static const Graph& graph(const Session& session);
};

// The graph `session` runs.
inline const Graph& SessionGraph(const Session& session) { return SessionAccess::graph(session); }

}  // namespace collage

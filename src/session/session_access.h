// What the library itself sees of a Session beyond the public API: the graph it runs (after
// simplification), which the report, the in-run profile, the Python package and the tests
// need, and a session made from a graph built in memory (the zoo, the tests). Not
// installed: the application API shows no IR type (collage/session.h).
#pragma once

#include <vector>

#include "collage/session.h"
#include "collage/sdk/graph.h"

namespace collage {

struct SessionAccess {
  static const Graph& graph(const Session& session);
  // Session::LoadBytes without the import: `graph` is already imported and checked.
  static StatusOr<std::unique_ptr<Session>> FromGraph(Graph graph,
                                                      const SessionOptions& options = {});
  // Session::Run with the inputs in the order of inputs() and the outputs in the order of
  // outputs(), no names looked up (a session of fixed shapes only): what a staged model's
  // segments run at every iteration of a loop.
  static StatusOr<std::vector<Tensor>> RunOrdered(Session& session,
                                                  const std::vector<Tensor>& inputs,
                                                  RunProfile* profile = nullptr);
};

// The graph `session` runs.
inline const Graph& SessionGraph(const Session& session) { return SessionAccess::graph(session); }

}  // namespace collage

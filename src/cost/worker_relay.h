// `collage_measure_worker --relay`: a worker that measures nothing itself. It speaks the
// worker protocol to its parent (a Ray task, tools/ray/collage_ray_dispatch.py) and hands
// each request to a worker of its own through a WorkerMeasurer, so that a candidate that
// crashes or hangs kills that child, never the relay, and the child's death or silence
// becomes the candidate's record by the same rules as on the optimizing machine. Its
// replies are full records ('F'), which also say whether the candidate timed out or was
// killed from outside: an 'R' cannot, and the parent stores both.
#pragma once

#include "collage/status.h"
#include "cost/worker_measurer.h"

namespace collage {

// Starts the child worker (`options.executable`, normally this same program), forwards its
// hello on `replies`, then answers every request read from `requests` until that ends.
// An error when the child cannot be started or a pipe fails: the relay then exits, and its
// parent reports it.
Status RelayRequests(int requests, int replies, WorkerOptions options);

}  // namespace collage

// A request to stop long work (measuring candidates, the two-level search) at the next point
// where stopping loses nothing: Session::Optimize then returns StatusCode::kCancelled, keeping
// every measurement made in the cost database. The command line asks for it on SIGINT/SIGTERM
// (RequestInterruptOnSignals); an application may too, or call RequestInterrupt from its own
// handler or thread. Work that takes minutes polls it between steps. Async-signal-safe to
// request.
#pragma once

namespace collage {

// Makes InterruptRequested() true for the rest of the process's life.
void RequestInterrupt();
bool InterruptRequested();

// Installs handlers that request an interrupt on the first SIGINT or SIGTERM and restore the
// default action, so that a second signal ends the process at once. A signal ignored when
// the process started stays ignored.
void RequestInterruptOnSignals();

}  // namespace collage

// A request to stop long work — an optimize's measurements, calibration runs, graph-level
// search and decision — at the next point where stopping loses nothing: Session::Optimize then
// returns StatusCode::kCancelled, keeping every measurement made in the cost database. It is
// passed with the call (OptimizeOptions::cancel): cancelling stops the work that holds this
// token and nothing else, and the next call with a new token starts afresh. Copies share one
// state, so an application keeps a copy and cancels it from any thread or from a signal
// handler (Cancel is async-signal-safe).
#pragma once

#include <atomic>
#include <memory>

namespace collage {

class CancellationToken {
 public:
  CancellationToken();  // not cancelled
  void Cancel() const;
  bool cancelled() const { return state_->load(std::memory_order_relaxed); }

 private:
  friend void CancelOnSignals(const CancellationToken& token);
  std::shared_ptr<std::atomic<bool>> state_;
};

// Cancels `token` on the first SIGINT or SIGTERM and restores the signal's default action,
// so that a second signal ends the process at once; a signal ignored when the process started
// stays ignored. The handlers cancel the token of the latest call. What the command line does
// for `collage optimize` and `collage demo`.
void CancelOnSignals(const CancellationToken& token);

}  // namespace collage

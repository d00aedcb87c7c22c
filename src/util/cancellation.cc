#include "collage/cancellation.h"

#include <csignal>

namespace collage {
namespace {

static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

// The state the handlers cancel, and the token that keeps it alive: the handler may only
// touch a lock-free atomic.
std::atomic<std::atomic<bool>*> signal_target{nullptr};
std::shared_ptr<std::atomic<bool>> signal_target_owner;

extern "C" void OnCancellingSignal(int signal_number) {
  if (std::atomic<bool>* target = signal_target.load(std::memory_order_relaxed)) {
    target->store(true, std::memory_order_relaxed);
  }
  std::signal(signal_number, SIG_DFL);
}

}  // namespace

CancellationToken::CancellationToken() : state_(std::make_shared<std::atomic<bool>>(false)) {}

void CancellationToken::Cancel() const { state_->store(true, std::memory_order_relaxed); }

void CancelOnSignals(const CancellationToken& token) {
  signal_target.store(token.state_.get(), std::memory_order_relaxed);
  signal_target_owner = token.state_;
  for (int signal_number : {SIGINT, SIGTERM}) {
    // A signal the parent chose to ignore (a background job's SIGINT) stays ignored.
    if (std::signal(signal_number, &OnCancellingSignal) == SIG_IGN) {
      std::signal(signal_number, SIG_IGN);
    }
  }
}

}  // namespace collage

#include "collage/interrupt.h"

#include <atomic>
#include <csignal>

namespace collage {

namespace {

std::atomic<bool> interrupt_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void OnInterruptSignal(int signal_number) {
  interrupt_requested.store(true, std::memory_order_relaxed);
  std::signal(signal_number, SIG_DFL);
}

}  // namespace

void RequestInterrupt() { interrupt_requested.store(true, std::memory_order_relaxed); }

bool InterruptRequested() { return interrupt_requested.load(std::memory_order_relaxed); }

void RequestInterruptOnSignals() {
  for (int signal_number : {SIGINT, SIGTERM}) {
    // A signal the parent chose to ignore (a background job's SIGINT) stays ignored.
    if (std::signal(signal_number, &OnInterruptSignal) == SIG_IGN)
      std::signal(signal_number, SIG_IGN);
  }
}

}  // namespace collage

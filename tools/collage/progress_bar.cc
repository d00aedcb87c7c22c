#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace collage::cli {

namespace {
constexpr int kWidth = 30;
}

ProgressBar::ProgressBar() : terminal_(::isatty(STDERR_FILENO) == 1) {}

void ProgressBar::Update(const OptimizeProgress& progress) {
  const bool phase_changed = progress.phase != phase_;
  if (phase_changed && drawn_ && terminal_) std::fputc('\n', stderr);
  if (phase_changed) {
    phase_ = progress.phase;
    last_tenth_ = -1;
    last_draw_ = -1e9;  // a phase's clock starts again
  }
  const bool finished = progress.done == progress.total;
  if (terminal_) {
    if (!finished && !phase_changed && progress.elapsed_seconds - last_draw_ < 0.1) return;
    last_draw_ = progress.elapsed_seconds;
    std::fputc('\r', stderr);
    Draw(progress);
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  const int tenth = progress.total > 0 ? progress.done * 10 / progress.total : 10;
  if (tenth == last_tenth_) return;
  last_tenth_ = tenth;
  Draw(progress);
  std::fputc('\n', stderr);
}

void ProgressBar::Update(const GenerationProgress& p) {
  if (phase_ != "generations") {
    if (drawn_ && terminal_) std::fputc('\n', stderr);
    phase_ = "generations";
    last_draw_ = -1e9;
    last_best_ = 0;
  }
  // In place on a terminal; otherwise a line when the best improves, or every 10 s.
  const bool improved = p.best_ms > 0 && (last_best_ == 0 || p.best_ms < last_best_);
  if (!terminal_ && !improved && p.elapsed_seconds - last_draw_ < 10) return;
  if (terminal_ && !improved && p.elapsed_seconds - last_draw_ < 0.1) return;
  last_draw_ = p.elapsed_seconds;
  last_best_ = p.best_ms;
  std::fprintf(stderr, "%sgeneration %d  best %.3f ms  %d evaluated  %d cache hits  %.1f s%s",
               terminal_ ? "\r" : "", p.generation, p.best_ms, p.evaluations, p.cache_hits, p.elapsed_seconds,
               terminal_ ? "" : "\n");
  std::fflush(stderr);
  drawn_ = terminal_;
}

void ProgressBar::Finish() {
  if (drawn_ && terminal_) std::fputc('\n', stderr);
  drawn_ = false;
}

void ProgressBar::Draw(const OptimizeProgress& p) {
  const int filled = p.total > 0 ? p.done * kWidth / p.total : kWidth;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  // The phases after the measurements (OptimizeProgress) count plans, finalists and rounds.
  if (p.phase == "calibration") {
    std::fprintf(stderr, "%-21s [%s] %d/%d plans run  %.1f s", "calibrating", bar.c_str(),
                 p.done, p.total, p.elapsed_seconds);
  } else if (p.phase == "finalists") {
    std::fprintf(stderr, "%-21s [%s] %d/%d  %.1f s", "checking finalists", bar.c_str(), p.done,
                 p.total, p.elapsed_seconds);
  } else if (p.phase == "decision") {
    std::fprintf(stderr, "%-21s [%s] round %d/%d  %.1f s", "deciding", bar.c_str(), p.done,
                 p.total, p.elapsed_seconds);
  } else {
    std::fprintf(stderr, "measuring %-11s [%s] %d/%d  %d cached  %d invalid  %.1f s",
                 p.phase.c_str(), bar.c_str(), p.done, p.total, p.cache_hits, p.invalid,
                 p.elapsed_seconds);
  }
}

}  // namespace collage::cli

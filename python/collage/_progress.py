"""The progress display of collage.optimize() on stderr: one line per phase (the
measurements, the calibration runs, the finalists' checks, the decision's rounds), redrawn in
place on a terminal; on another stream (a log) a line per tenth of each phase. The phases are
the library's (OptimizeProgress, include/collage/optimize.h)."""

import sys

_WIDTH = 30
# The phases after the measurements; every other phase is a kind of measurement.
_LABELS = {
    "calibration": "calibrating",
    "finalists": "checking finalists",
    "decision": "deciding",
}


class ProgressLine:
    """Called as on_progress(phase, done, total, cache_hits, invalid, seconds)."""

    def __init__(self, stream=None):
        self._stream = stream if stream is not None else sys.stderr
        self._terminal = hasattr(self._stream, "isatty") and self._stream.isatty()
        self._phase = None
        self._tenth = -1
        self._drawn = False

    def __call__(self, phase, done, total, cache_hits, invalid, seconds):
        if phase != self._phase:
            self._end_line()
            self._phase, self._tenth = phase, -1
        tenth = done * 10 // total if total > 0 else 10
        if not self._terminal and tenth == self._tenth:
            return
        self._tenth = tenth
        filled = done * _WIDTH // total if total > 0 else _WIDTH
        bar = "#" * filled + "." * (_WIDTH - filled)
        measuring = phase not in _LABELS
        count = f"round {done}/{total}" if phase == "decision" else f"{done}/{total}"
        extra = f"  {cache_hits} cached  {invalid} invalid" if measuring else ""
        label = f"measuring {phase}" if measuring else _LABELS[phase]
        line = f"{label:<21} [{bar}] {count}{extra}  {seconds:.1f} s"
        if self._terminal:
            self._stream.write("\r" + line)
            self._drawn = True
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def finish(self):
        self._end_line()

    def _end_line(self):
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False

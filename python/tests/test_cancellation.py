"""Stopping collage.optimize: a CancellationToken passed with the call, cancelled from any
thread, or Ctrl-C in the calling thread. The optimize stops with what it measured kept in the
cost database and no plan saved; the next optimize runs."""

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import collage
from collage import _optimize


def test_cancelling_a_token_from_another_thread_cancels_that_token_only():
    token = collage.CancellationToken()
    other = collage.CancellationToken()
    assert not token.cancelled
    canceller = threading.Thread(target=token.cancel)
    canceller.start()
    canceller.join()
    assert token.cancelled and not other.cancelled


def test_a_cancelled_token_stops_the_optimize_and_a_new_one_runs(tiny_model, tmp_path):
    token = collage.CancellationToken()
    token.cancel()
    with pytest.raises(collage.CancelledError):
        collage.optimize(tiny_model.path, threads=1, rounds=2, cost_db=tmp_path / "costs.sqlite",
                         save_plan=tmp_path / "tiny.plan", cancel=token)
    assert not (tmp_path / "tiny.plan").exists()
    report = collage.optimize(tiny_model.path, threads=1, rounds=0, cost_db=tmp_path / "costs.sqlite",
                              cancel=collage.CancellationToken())
    assert report.groups


def test_cancelling_from_another_thread_keeps_what_was_measured(tiny_model, tmp_path, monkeypatch):
    token = collage.CancellationToken()
    seen = []

    class CancelAfterTheFirstMeasurement:
        """Stands in for the progress display: called on the optimizing thread."""

        def __call__(self, phase, done, total, cache_hits, invalid, seconds):
            seen.append((phase, done))
            if done >= 1:
                token.cancel()

        def finish(self):
            pass

    monkeypatch.setattr(_optimize, "ProgressLine", CancelAfterTheFirstMeasurement)
    with pytest.raises(collage.CancelledError):
        collage.optimize(tiny_model.path, threads=1, rounds=2, cost_db=tmp_path / "costs.sqlite",
                         save_plan=tmp_path / "tiny.plan", progress=True, cancel=token)
    assert seen and seen[0][0] == "candidates", seen
    assert not (tmp_path / "tiny.plan").exists()
    monkeypatch.undo()
    again = collage.optimize(tiny_model.path, threads=1, rounds=0, cost_db=tmp_path / "costs.sqlite")
    assert again.cache_hits >= 1, again


def test_something_other_than_a_token_is_refused(tiny_model):
    with pytest.raises(collage.InvalidArgumentError, match="CancellationToken"):
        collage.optimize(tiny_model.path, cancel=True)


def test_ctrl_c_stops_the_optimize_and_raises_keyboard_interrupt(tiny_model, tmp_path):
    # A Python program of a user: optimize with the progress on stderr (a line per tenth of a
    # phase, as stderr is a pipe), interrupted once the measuring has begun.
    program = textwrap.dedent(f"""
        import collage
        try:
            collage.optimize({str(tiny_model.path)!r}, threads=1, rounds=50,
                             cost_db={str(tmp_path / "costs.sqlite")!r},
                             save_plan={str(tmp_path / "tiny.plan")!r}, progress=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise
    """)
    child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    first_line = child.stderr.readline()
    assert "measuring" in first_line, first_line
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        raise
    assert child.returncode != 0
    assert "interrupted" in out and "KeyboardInterrupt" in err, err
    assert not (tmp_path / "tiny.plan").exists()

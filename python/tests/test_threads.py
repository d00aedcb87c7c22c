"""The GIL is released while a model runs: Python threads run models at once, each getting
its own right answer, and other Python code goes on meanwhile."""

import threading
import time

import numpy as np

import collage
from conftest import assert_close


def test_two_threads_running_one_session_get_their_own_results(tiny_model):
    session = collage.InferenceSession(tiny_model.path, threads=1)
    inputs = [np.random.default_rng(seed).standard_normal((1, 4, 16, 16)).astype(np.float32)
              for seed in (10, 11)]
    expected = [tiny_model.reference(x)["probs"].astype(np.float32) for x in inputs]
    failures = []

    def work(which):
        try:
            for _ in range(200):
                [probs] = session.run(["probs"], {"x": inputs[which]})
                assert_close(probs, expected[which], 1e-5)
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def _ticks_while_running(session, feeds):
    """Runs the session in a thread while this one records the time as fast as it can: the
    run's start and end, and the ticks."""
    span = {}

    def run():
        span["start"] = time.perf_counter()
        session.run(None, feeds)
        span["end"] = time.perf_counter()

    ticks = []
    worker = threading.Thread(target=run)
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    return span["start"], span["end"], ticks


def test_python_code_runs_while_a_model_runs(mobilenet, image):
    session = collage.InferenceSession(mobilenet, threads=1)
    session.run(None, {"input": image})  # the first run pays page faults
    # The main thread ticks in the middle third of a run only if the run holds no GIL then (a
    # run holding it would leave at most a switch interval, 5 ms, at its very start). Up to
    # three tries: on a loaded machine this thread may wait for a core through one run.
    for _ in range(3):
        start, end, ticks = _ticks_while_running(session, {"input": image})
        assert end - start > 0.015, "the run is too short to tell"
        third = (end - start) / 3
        if any(start + third < t < end - third for t in ticks):
            return
    raise AssertionError("no Python code ran in the middle of any of three runs")

"""collage.optimize: measure every backend's candidates for a model on this machine, find
the fastest placement, and report it (what `collage optimize` does)."""

import dataclasses
import json
import os
import sys
import threading

from . import _collage
from ._collage import CancellationToken
from ._errors import InvalidArgumentError
from ._progress import ProgressLine


@dataclasses.dataclass(frozen=True)
class Finalist:
    """One contender of the end-to-end decision: "op-level", "two-level" or
    "single-backend:<name>", measured side by side with the others."""

    name: str
    kind: str  # "op-level", "two-level", "single-backend" or "whole-graph"
    backend: str  # a single-backend or whole-graph finalist's backend ("" for the searches)
    label: str  # as the reports say it: "op-level plan", "onednn alone"
    estimated_ms: float  # the op-level search's estimate of it (0: none)
    median_ms: float  # median over the decision's rounds
    ratio_to_kept: float  # median of (its time / the kept one's) per round: 1 for the kept one
    rounds_won: int
    rounds_run: int
    kept: bool
    skipped: str  # why it was not a contender ("" if it was)


@dataclasses.dataclass(frozen=True)
class CalibrationPlan:
    """One plan the op-level search ran to calibrate its costs: its groups were then priced
    at their times in the run."""

    estimated_ms: float  # the search's estimate of it, before it ran
    in_run_ms: float  # the median time of its profiled runs
    groups_repriced: int  # its groups priced at their time in a run for the first time
    origin: str  # "search", or a plan of its own: "whole-graph:<backend>", "single-backend:<backend>"


@dataclasses.dataclass(frozen=True)
class Group:
    """One group of the kept placement: nodes that one backend runs as one kernel."""

    backend: str
    rule: str
    precision: str  # "fp32", or the reduced precision it computes in ("bf16")
    nodes: list  # node names, in execution order
    estimated_ms: float  # measured alone, as the search priced it
    measured_alone: bool  # False: a two-level region, measured only within whole plans
    in_run_ms: float  # mean time of its step in profiled runs of the kept placement


@dataclasses.dataclass(frozen=True)
class OptimizeReport:
    """What collage.optimize found; `shares` is each backend's part of the estimate."""

    search: str
    estimated_ms: float  # the search's additive estimate of the kept placement
    measured_ms: float  # the kept finalist's median end to end (0: no decision, rounds=0)
    kept_finalist: str
    decision_rounds: int
    round_spread: float
    finalists: list
    calibration: list  # CalibrationPlan per plan run; the op-level plan is the fastest of them
    calibration_stopped: str  # why before the search repeated a plan ("": it did)
    calibration_retimed: int  # plans within 25% of the fastest timed again side by side (0: none)
    groups: list
    shares: dict  # backend → fraction of estimated_ms (0..1)
    conversions_in_run_ms: float
    candidates: int
    distinct_candidates: int
    measured: int  # measurements made now (candidates, conversions and probes)
    cache_hits: int  # found in the cost database
    candidates_measured: int  # of the distinct candidates, measured now
    candidates_found: int  # of the distinct candidates, found in the cost database
    invalid: int
    invalid_examples: list
    conversions: int
    measure_seconds: float
    search_seconds: float
    generations: int  # two-level only
    evaluations: int  # two-level only
    evolve_seconds: float  # two-level only
    cost_db: str
    # The accuracy check of precision="bf16"/"auto" (input_sets 0 for fp32): error (the kept
    # plan's largest output error against the float32 reference), tolerance, input_sets,
    # searches, reduced_groups, reverted (groups sent back to fp32), all_float32_because.
    accuracy: dict
    warnings: list
    placement: str  # the kept placement, as InferenceSession.placement() shows it
    plan: object  # the saved plan's path, or None


def _report_from_json(j):
    """The report from the JSON summary the library writes (`collage optimize --json`)."""
    groups = [Group(backend=g["backend"], rule=g["rule"], precision=g["precision"],
                    nodes=g["node_names"], estimated_ms=g["estimated_ms"],
                    measured_alone=g["measured_alone"], in_run_ms=g["in_run_ms"])
              for g in j["groups"]]
    measurements = j["measurements"]
    two_level = j.get("two_level", {})
    return OptimizeReport(
        search=j["search"], estimated_ms=j["estimated_ms"], measured_ms=j["measured_ms"],
        kept_finalist=j["kept_finalist"], decision_rounds=j["decision_rounds"],
        round_spread=j["round_spread"], finalists=[Finalist(**f) for f in j["finalists"]],
        calibration=[CalibrationPlan(**c) for c in j["calibration"]],
        calibration_stopped=j["calibration_stopped"],
        calibration_retimed=j["calibration_retimed"], groups=groups, shares=_shares(groups),
        conversions_in_run_ms=j["conversions_in_run_ms"],
        candidates=measurements["candidates_offered"],
        distinct_candidates=measurements["candidates_distinct"],
        measured=measurements["measured"], cache_hits=measurements["cache_hits"],
        candidates_measured=measurements["candidates_measured"],
        candidates_found=measurements["candidates_found"], invalid=measurements["invalid"],
        invalid_examples=measurements["invalid_examples"],
        conversions=measurements["conversions"],
        measure_seconds=measurements["measure_seconds"],
        search_seconds=measurements["search_seconds"],
        generations=two_level.get("generations", 0),
        evaluations=two_level.get("evaluations", 0),
        evolve_seconds=two_level.get("seconds", 0.0), cost_db=j["cost_db"],
        accuracy=j["accuracy"], warnings=j["warnings"], placement=j["placement"],
        plan=j["plan"])


def _shares(groups):
    total = sum(g.estimated_ms for g in groups)
    shares = {}
    for g in groups:
        shares[g.backend] = shares.get(g.backend, 0.0) + (g.estimated_ms / total if total > 0 else 0.0)
    return shares


_SIGNAL_POLL_SECONDS = 0.05


def _run_cancellably(call, token):
    """call() on a thread of its own while this one waits, so that a KeyboardInterrupt here
    (Ctrl-C: Python handles signals in the main thread only, and the library runs for minutes
    without it) cancels `token` and is raised once call() has stopped, not left to fire after
    it. Whatever call() returns or raises is this function's."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed over to the waiting thread
            outcome["error"] = error

    worker = threading.Thread(target=run, name="collage.optimize", daemon=True)
    worker.start()
    try:
        # In short waits: the kernel may deliver SIGINT to any thread of the process (one of
        # the library's), and then only a wait that ends lets this thread see it at once.
        while worker.is_alive():
            worker.join(_SIGNAL_POLL_SECONDS)
    except KeyboardInterrupt:
        token.cancel()
        worker.join()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def optimize(path, search="op-level", budget=None, threads=0, save_plan=None, cost_db=None,
             backends=None, rounds=None, calibrate=None, shapes=None, strict_nan=False,
             precision="fp32", tolerance=1e-2, progress=None, workers=None, ray_python=None,
             cancel=None):
    """Places the model's ops on the fastest backends by measurement and returns an
    OptimizeReport.

    search     "op-level" (groups measured alone, dynamic programming) or "two-level"
               (then whole plans measured end to end, within `budget`)
    budget     two-level only: seconds, or "120s" / "2m" / "500ms" (default 120 s)
    threads    threads measured and run with (0: one per core)
    save_plan  write the kept placement here, for InferenceSession(path, plan=...)
    cost_db    the cost database: a SQLite file (default: ~/.cache/collage/costs.sqlite, or
               $COLLAGE_CACHE_DIR/costs.sqlite) or a shared PostgreSQL database
               ("postgresql://user@host/db"); a second optimize measures nothing
    backends   the backends the placement may use, a list or "a,b" (default: all; native is
               always in)
    rounds     least rounds of the end-to-end decision between the search's plan and each
               backend alone (default 15); 0 skips it and keeps the search's plan unmeasured
    calibrate  plans of the op-level search run to re-price its groups at their times in a
               run, searching again after each (default 10); 0: groups priced alone only
    shapes, strict_nan   as for InferenceSession
    precision  "fp32" (every group in float32), "bf16" or "auto": each group in float32 or a
               reduced precision a backend offers on this CPU, whichever measures faster,
               the plan's outputs kept within `tolerance` of the float32 reference kernels
               (max |a - b| / max |reference|, on 2 seeded random input sets)
    workers    where candidates are measured: None or "local" (a worker process of this
               machine), "in-process", "ray" (the nodes of the Ray cluster at $RAY_ADDRESS or
               started on this machine that offer this machine's device resource: `collage ray
               resources`) or "ray://HOST:PORT" (through the cluster's Ray Client server)
    ray_python the Python that drives Ray for workers="ray…" (default: this interpreter)
    progress   a progress display on stderr through every phase (measuring, calibrating,
               checking finalists, deciding): None (default) shows it when stderr is a
               terminal, True always, False never
    cancel     a CancellationToken: its cancel(), from any thread, stops this optimize at the
               next point where stopping loses nothing and it raises CancelledError; every
               measurement made stays in the cost database, no plan is saved. Ctrl-C (a
               KeyboardInterrupt in the calling thread) cancels it likewise and is raised
               once the optimize has stopped.
    """
    if search not in ("op-level", "two-level"):
        raise InvalidArgumentError(f"search {search!r}: expected 'op-level' or 'two-level'")
    if isinstance(backends, str):
        backends = [b for b in backends.split(",") if b]
    if rounds is not None and (isinstance(rounds, bool) or int(rounds) != rounds or rounds < 0):
        raise InvalidArgumentError(f"rounds {rounds!r}: expected a whole number >= 0")
    if calibrate is not None and (isinstance(calibrate, bool) or int(calibrate) != calibrate or calibrate < 0):
        raise InvalidArgumentError(f"calibrate {calibrate!r}: expected a whole number >= 0")
    if precision not in ("fp32", "bf16", "auto"):
        raise InvalidArgumentError(f"precision {precision!r}: expected 'fp32', 'bf16' or 'auto'")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 < tolerance < float("inf"):
        raise InvalidArgumentError(f"tolerance {tolerance!r}: expected a number above 0")
    shapes = {name: [int(d) for d in dims] for name, dims in (shapes or {}).items()}
    if progress is None:
        progress = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if cancel is None:
        cancel = CancellationToken()
    elif not isinstance(cancel, CancellationToken):
        raise InvalidArgumentError(f"cancel {cancel!r}: expected a collage.CancellationToken")
    display = ProgressLine() if progress else None
    try:
        arguments = (str(path), search, "" if budget is None else str(budget), int(threads),
                     "" if save_plan is None else str(save_plan),
                     "" if cost_db is None else str(cost_db), list(backends or []),
                     -1 if rounds is None else int(rounds),
                     -1 if calibrate is None else int(calibrate), shapes, bool(strict_nan),
                     precision, float(tolerance), "" if workers is None else str(workers),
                     sys.executable if ray_python is None else str(ray_python),
                     os.environ.get("COLLAGE_MEASURE_WORKER", ""), display, cancel)
        summary = _run_cancellably(lambda: _collage.optimize(*arguments), cancel)
    finally:
        if display is not None:
            display.finish()
    return _report_from_json(json.loads(summary))

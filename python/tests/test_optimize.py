"""collage.optimize: measures the candidates (in the measurement worker), returns the report
as objects, saves a plan that InferenceSession runs with the same outputs."""

import io

import numpy as np
import pytest

import collage
from collage._progress import ProgressLine
from conftest import assert_close


@pytest.fixture(scope="module")
def optimized(tiny_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("optimize")
    report = collage.optimize(tiny_model.path, threads=1, rounds=2, cost_db=folder / "costs.sqlite",
                              save_plan=folder / "tiny.plan")
    return report, folder


def test_the_report_describes_the_kept_placement(optimized, tiny_model):
    report, folder = optimized
    assert isinstance(report, collage.OptimizeReport)
    assert report.search == "op-level" and report.cost_db == str(folder / "costs.sqlite")
    assert report.measured > 0 and report.cache_hits == 0 and report.invalid == 0
    assert report.candidates_measured == report.distinct_candidates and report.candidates_found == 0
    assert report.estimated_ms > 0 and report.measured_ms > 0
    # Every node in exactly one group, in the model's order here (a chain).
    assert [n for g in report.groups for n in g.nodes] == ["conv", "relu", "pool", "flatten", "fc", "softmax"]
    assert all(isinstance(g, collage.Group) and g.estimated_ms > 0 for g in report.groups)
    # Every group runs a step of its own in the run, except a Flatten alone: a view of its
    # input (as when a backend alone is kept and Flatten is left to native), 0 ms in the run.
    assert all(g.in_run_ms > 0 or (g.nodes == ["flatten"] and g.in_run_ms == 0) for g in report.groups)
    assert sum(report.shares.values()) == pytest.approx(1.0)
    assert set(report.shares) == {g.backend for g in report.groups}
    assert report.plan == str(folder / "tiny.plan")
    # Measured in the worker process, not in this one.
    assert not any("measurement worker" in w for w in report.warnings), report.warnings


def test_the_finalists_hold_the_kept_one(optimized):
    report, _ = optimized
    names = [f.name for f in report.finalists]
    assert "op-level" in names and "single-backend:native" in names
    [kept] = [f for f in report.finalists if f.kept]
    assert kept.name == report.kept_finalist and kept.ratio_to_kept == 1.0
    assert kept.median_ms == report.measured_ms and report.decision_rounds >= 2
    for finalist in report.finalists:
        assert finalist.skipped or finalist.median_ms > 0


def test_each_finalist_says_its_kind_and_backend(optimized):
    report, _ = optimized
    by_kind = {}
    for finalist in report.finalists:
        by_kind.setdefault(finalist.kind, []).append(finalist)
    assert [f.backend for f in by_kind["op-level"]] == [""]
    assert "native" in [f.backend for f in by_kind["single-backend"]]
    assert all(f.label for f in report.finalists)


def test_the_saved_plan_runs_with_the_reference_outputs(optimized, tiny_model, tiny_input):
    report, folder = optimized
    planned = collage.InferenceSession(tiny_model.path, plan=folder / "tiny.plan", threads=1)
    reference = collage.InferenceSession(tiny_model.path, backend="native").run(None, {"x": tiny_input})
    for a, b in zip(planned.run(None, {"x": tiny_input}), reference):
        assert_close(a, b)
    # The kept placement, not a default one.
    assert planned.placement_source() == report.kept_finalist
    assert planned.placement() == report.placement


def test_the_op_level_plan_is_one_of_the_plans_run_to_calibrate(optimized):
    report, _ = optimized
    assert report.calibration and all(isinstance(c, collage.CalibrationPlan) for c in report.calibration)
    assert report.calibration[0].origin == "search" and report.calibration[0].groups_repriced > 0
    assert all(c.in_run_ms > 0 and c.estimated_ms > 0 for c in report.calibration)
    # The fastest of them (timed again side by side where several are close), with the
    # estimate it had before it ran.
    [op_level] = [f for f in report.finalists if f.name == "op-level"]
    assert op_level.estimated_ms == report.estimated_ms
    assert report.estimated_ms in [c.estimated_ms for c in report.calibration]


def test_a_second_optimize_finds_every_cost_in_the_database(optimized, tiny_model):
    _, folder = optimized
    again = collage.optimize(tiny_model.path, threads=1, rounds=0, cost_db=folder / "costs.sqlite")
    assert again.measured == 0 and again.cache_hits > 0
    assert again.candidates_found == again.distinct_candidates and again.candidates_measured == 0
    # rounds=0: no end-to-end decision, the search's plan kept unmeasured.
    assert again.finalists == [] and again.measured_ms == 0 and again.plan is None
    uncalibrated = collage.optimize(tiny_model.path, threads=1, rounds=0, calibrate=0,
                                    cost_db=folder / "costs.sqlite")
    assert uncalibrated.calibration == [] and uncalibrated.calibration_stopped == ""


def test_the_backends_option_limits_the_placement(tiny_model, tmp_path):
    report = collage.optimize(tiny_model.path, threads=1, rounds=0, backends="native",
                              cost_db=tmp_path / "costs.sqlite")
    assert {g.backend for g in report.groups} == {"native"}


def test_bad_options_are_refused_before_measuring(tiny_model, tmp_path):
    with pytest.raises(collage.InvalidArgumentError, match="search 'fast'"):
        collage.optimize(tiny_model.path, search="fast")
    with pytest.raises(collage.InvalidArgumentError, match="budget '2h'"):
        collage.optimize(tiny_model.path, search="two-level", budget="2h")
    with pytest.raises(collage.InvalidArgumentError, match="rounds -1"):
        collage.optimize(tiny_model.path, rounds=-1)
    with pytest.raises(collage.InvalidArgumentError, match="calibrate 1.5"):
        collage.optimize(tiny_model.path, calibrate=1.5)
    with pytest.raises(collage.CollageError, match="no_such_backend"):
        collage.optimize(tiny_model.path, backends=["no_such_backend"], cost_db=tmp_path / "c.sqlite")
    with pytest.raises(collage.CollageError, match="missing.onnx"):
        collage.optimize(tmp_path / "missing.onnx", cost_db=tmp_path / "c.sqlite")


def test_workers_it_does_not_know_or_a_python_without_ray_are_refused(tiny_model, tmp_path):
    with pytest.raises(collage.InvalidArgumentError, match="workers 'everywhere'"):
        collage.optimize(tiny_model.path, workers="everywhere")
    # Debian's own Python has no Ray: the optimize stops saying so, nothing is measured here.
    with pytest.raises(collage.CollageError, match="pip install ray"):
        collage.optimize(tiny_model.path, workers="ray", ray_python="/usr/bin/python3",
                         cost_db=tmp_path / "c.sqlite")


def test_reduced_precision_keeps_the_plan_within_the_tolerance(tiny_model, tiny_input, tmp_path):
    report = collage.optimize(tiny_model.path, threads=1, rounds=2, calibrate=1,
                              cost_db=tmp_path / "costs.sqlite", save_plan=tmp_path / "auto.plan",
                              precision="auto", tolerance=1e-2)
    accuracy = report.accuracy
    assert accuracy["input_sets"] == 2 and accuracy["tolerance"] == 1e-2
    assert accuracy["error"] <= 1e-2
    reduced = [g for g in report.groups if g.precision != "fp32"]
    assert accuracy["reduced_groups"] == len(reduced)
    assert (accuracy["all_float32_because"] == "") == (len(reduced) > 0)
    assert all(g.precision in ("fp32", "bf16") for g in report.groups)
    planned = collage.InferenceSession(tiny_model.path, plan=tmp_path / "auto.plan", threads=1)
    reference = collage.InferenceSession(tiny_model.path, backend="native").run(None, {"x": tiny_input})
    # An input the check did not run on: the budget held on its sets, and on this one within
    # twice it (bf16 rounding is not tied to particular inputs).
    for a, b in zip(planned.run(None, {"x": tiny_input}), reference):
        assert np.max(np.abs(a - b)) <= 2e-2 * max(np.max(np.abs(b)), 1e-12)


def test_a_precision_or_tolerance_it_does_not_know_is_refused(tiny_model):
    with pytest.raises(collage.InvalidArgumentError, match="precision 'int4'"):
        collage.optimize(tiny_model.path, precision="int4")
    with pytest.raises(collage.InvalidArgumentError, match="tolerance"):
        collage.optimize(tiny_model.path, precision="auto", tolerance=0)


def test_progress_is_shown_through_every_phase_when_asked(tiny_model, tmp_path, capfd):
    collage.optimize(tiny_model.path, threads=1, rounds=2, backends="native,onednn",
                     cost_db=tmp_path / "costs.sqlite", progress=True)
    err = capfd.readouterr().err
    for phase in ("measuring candidates", "calibrating", "checking finalists", "deciding"):
        assert phase in err, err
    assert "round 2/2" in err, err


def test_no_progress_by_default_when_stderr_is_not_a_terminal(tiny_model, tmp_path, capfd):
    collage.optimize(tiny_model.path, threads=1, rounds=2, backends="native",
                     cost_db=tmp_path / "costs.sqlite")
    err = capfd.readouterr().err
    assert "measuring" not in err and "deciding" not in err, err


def test_the_progress_line_redraws_in_place_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    line = ProgressLine(stream)
    line("candidates", 0, 4, 0, 0, 0.0)
    line("candidates", 4, 4, 1, 0, 0.5)
    line("decision", 3, 15, 0, 0, 1.0)
    line.finish()
    text = stream.getvalue()
    assert text.count("\n") == 2, repr(text)  # one line per phase
    assert "\rmeasuring candidates  [" + "#" * 30 + "] 4/4  1 cached  0 invalid  0.5 s" in text
    assert "deciding" in text and "round 3/15" in text

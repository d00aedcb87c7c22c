"""The package: its version, the backends it lists, and the environment it sets before the
C++ library loads (OpenMP's wait policy, the measurement worker)."""

import os
import re
import subprocess
import sys

import pytest

import collage
from collage import _collage, _environment
from conftest import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_version_is_the_projects():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as cmake:
        declared = re.search(r"project\(collage VERSION ([0-9.]+)", cmake.read()).group(1)
    assert collage.__version__ == declared


def test_backends_lists_native_first_and_says_why_one_is_missing():
    listed = collage.backends()
    assert listed[0].name == "native" and listed[0].available and listed[0].rules > 0
    assert listed[0].version
    names = [b.name for b in listed]
    assert len(names) == len(set(names))
    for backend in listed:
        assert backend.available == (backend.reason == "")
        assert backend.available == bool(backend.version)


def test_the_spin_count_is_the_libraries():
    assert _environment.OPENMP_SPIN_COUNT == _collage.OPENMP_SPIN_COUNT


def _python(code, **env_changes):
    """Runs `code` in a fresh interpreter with this one's environment changed; its stdout
    and stderr."""
    env = dict(os.environ)
    for name in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "COLLAGE_MEASURE_WORKER"):
        env.pop(name, None)
    env.update(env_changes)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True)
    return done.stdout.strip(), done.stderr


def test_importing_collage_first_sets_the_openmp_wait_policy_silently():
    out, err = _python("import collage, os; print(os.environ['GOMP_SPINCOUNT'])")
    assert out == _collage.OPENMP_SPIN_COUNT and "Warning" not in err


def test_the_users_wait_setting_is_kept():
    out, _ = _python("import collage, os; print(os.environ.get('GOMP_SPINCOUNT'))", OMP_WAIT_POLICY="passive")
    assert out == "None"
    out, _ = _python("import collage, os; print(os.environ['GOMP_SPINCOUNT'])", GOMP_SPINCOUNT="7")
    assert out == "7"


def test_a_wait_policy_set_too_late_is_warned_about():
    # Too late exactly when libgomp is in the process already: numpy loads it where its
    # OpenBLAS is the OpenMP build (Debian's libopenblas0-openmp).
    code = """
import warnings, numpy
loaded = any('libgomp' in line for line in open('/proc/self/maps'))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    import collage
print(loaded, any(w.category is collage.OpenMpSettingTooLateWarning for w in caught))
"""
    out, _ = _python(code)
    assert out in ("True True", "False False")


def test_the_warning_names_the_remedy(monkeypatch):
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setattr(_environment, "_libgomp_loaded", lambda: True)
    with pytest.warns(collage.OpenMpSettingTooLateWarning, match=f"GOMP_SPINCOUNT={_environment.OPENMP_SPIN_COUNT} in the environment"):
        _environment.set_openmp_wait_policy()
    assert os.environ["GOMP_SPINCOUNT"] == _environment.OPENMP_SPIN_COUNT


def test_the_packaged_worker_is_pointed_at(tmp_path, monkeypatch):
    worker = tmp_path / _environment.WORKER_NAME
    worker.write_text("#!/bin/sh\n")
    worker.chmod(0o755)
    monkeypatch.setattr(_environment, "PACKAGE_DIR", str(tmp_path))
    monkeypatch.delenv("COLLAGE_MEASURE_WORKER", raising=False)
    _environment.point_at_packaged_worker()
    assert os.environ["COLLAGE_MEASURE_WORKER"] == str(worker)
    # The user's choice stays.
    monkeypatch.setenv("COLLAGE_MEASURE_WORKER", "/elsewhere/worker")
    _environment.point_at_packaged_worker()
    assert os.environ["COLLAGE_MEASURE_WORKER"] == "/elsewhere/worker"


def test_a_thread_pool_library_loaded_first_leaves_xnnpack_on_one_thread(tiny_model):
    """XNNPACK's thread pool is collage's, on the OpenMP team. A library exporting the same
    pthreadpool API that entered the process's global scope first (PyTorch imported before
    collage does that) gets XNNPACK's pool calls instead: collage must then not hand it a pool
    of its own (that hung), but run XNNPACK on the calling thread and say so."""
    if not any(b.name == "xnnpack" and b.available for b in collage.backends()):
        pytest.skip("the xnnpack backend is not built")
    code = f"""
import ctypes
ctypes.CDLL("libpthreadpool.so.0", mode=ctypes.RTLD_GLOBAL)
import collage, numpy as np
x = np.random.default_rng(3).standard_normal((1, 4, 16, 16)).astype(np.float32)
path = {str(tiny_model.path)!r}
[ref] = collage.InferenceSession(path, backend="native", threads=2).run(["probs"], {{"x": x}})
[out] = collage.InferenceSession(path, backend="xnnpack", threads=2).run(["probs"], {{"x": x}})
print(float(np.max(np.abs(out - ref)) / np.max(np.abs(ref))))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert float(done.stdout.strip()) <= 1e-5
    assert "XNNPACK kernels run on one thread" in done.stderr


def _cli_backends(cli):
    """The backends `collage backends` lists as available (their rows name a device)."""
    listed = subprocess.run([cli, "backends"], capture_output=True, text=True, timeout=120,
                            check=True).stdout.splitlines()[1:]
    return [line.split()[0] for line in listed if len(line.split()) > 1 and line.split()[1] == "cpu"]


def test_the_package_has_the_backends_of_the_command_line(cli):
    """The engines' backends are plug-ins that ship with both: the same list, same order."""
    assert [b.name for b in collage.backends() if b.available] == _cli_backends(cli)


def test_a_plan_of_the_command_line_that_keeps_openvino_runs_from_python(cli, mobilenet, image,
                                                                        tmp_path):
    if not any(b.name == "openvino" and b.available for b in collage.backends()):
        pytest.skip("the openvino backend is not available")
    plan = tmp_path / "mobilenet.plan"
    subprocess.run([cli, "optimize", mobilenet, "--backends", "openvino", "--threads", "2",
                    "--save-plan", str(plan), "--cost-db", str(tmp_path / "costs.sqlite")],
                   capture_output=True, text=True, timeout=900, check=True)
    # On MobileNetV2 OpenVINO is several times faster than the reference kernels.
    assert '"openvino"' in plan.read_text()
    [want] = collage.InferenceSession(mobilenet, backend="native").run(None, {"input": image})
    [got] = collage.InferenceSession(mobilenet, plan=str(plan), threads=2).run(None, {"input": image})
    assert_close(got, want, 1e-3)


def test_the_package_depends_on_the_engine_wheels_its_plug_ins_are_built_against():
    """pyproject.toml's pins are the backends' (backends/*/dependencies): a plug-in built
    against one version of an engine loads that version's library."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        declared = re.search(r"^dependencies = \[(.*)\]", f.read(), re.M).group(1)
    pins = set(re.findall(r'"([A-Za-z_-]+==[0-9.]+)"', declared))
    for engine in ("onnxruntime", "openvino", "mkl"):
        with open(os.path.join(ROOT, "backends", engine, "dependencies"), encoding="utf-8") as f:
            wheel = re.search(rf"^pip .*?\b({engine}==[0-9.]+)", f.read(), re.M).group(1)
        assert wheel in pins, f"pyproject.toml does not pin {wheel}"

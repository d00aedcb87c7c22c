"""ONNX Runtime's Python API on collage: a script written for ONNX Runtime runs with only its
import changed, and gives what ONNX Runtime gives; the settings and providers collage has no
counterpart for are accepted and reported."""

import os
import subprocess
import sys

import numpy as np
import pytest

import collage
from conftest import assert_close
from test_session import _import_onnxruntime

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "ort_example_script.py")


def _run_script(text, model, results, cwd, extra_path):
    script = cwd / "script.py"
    script.write_text(text)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [extra_path, env.get("PYTHONPATH", "")] if p)
    done = subprocess.run([sys.executable, str(script), str(model), str(results)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(np.load(results))


def test_an_onnx_runtime_script_runs_with_only_its_import_changed(tiny_model, tmp_path):
    onnxruntime = _import_onnxruntime()
    ort_site = os.path.dirname(os.path.dirname(onnxruntime.__file__))
    original = open(SCRIPT).read()
    assert original.count("import onnxruntime as rt") == 1
    changed = original.replace("import onnxruntime as rt", "import collage as rt")

    (tmp_path / "ort").mkdir()
    (tmp_path / "collage").mkdir()
    theirs = _run_script(original, tiny_model.path, tmp_path / "ort.npz", tmp_path / "ort", ort_site)
    ours = _run_script(changed, tiny_model.path, tmp_path / "collage.npz", tmp_path / "collage", "")
    assert set(ours) == set(theirs)
    for key in ours:
        if ours[key].dtype == bool:
            assert ours[key] and theirs[key], key
        else:
            assert_close(ours[key], theirs[key])
    # end_profiling wrote a Chrome trace in the working folder.
    assert any(name.startswith("onnxruntime_profile_") for name in os.listdir(tmp_path / "collage"))


def test_model_bytes_metadata_and_providers(tiny_model, tiny_input):
    data = open(tiny_model.path, "rb").read()
    session = collage.InferenceSession(data, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    [probs] = session.run(["probs"], {"x": tiny_input})
    assert_close(probs, tiny_model.reference(tiny_input)["probs"].astype(np.float32))
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert any("CUDAExecutionProvider" in w for w in session.warnings())
    meta = session.get_modelmeta()
    assert meta.graph_name and isinstance(meta.custom_metadata_map, dict)
    # The bytes are never echoed in an error.
    with pytest.raises(collage.CollageError) as error:
        collage.InferenceSession(b"\x08\x07" + b"garbage" * 1000)
    assert len(str(error.value)) < 1000


def test_a_provider_with_a_collage_backend_runs_on_it(tiny_model, tiny_input):
    built = {b.name for b in collage.backends() if b.available}
    if "onednn" not in built:
        pytest.skip("the oneDNN backend is not built")
    assert "DnnlExecutionProvider" in collage.get_available_providers()
    session = collage.InferenceSession(tiny_model.path, providers=["DnnlExecutionProvider",
                                                                   "CPUExecutionProvider"])
    assert session.get_providers() == ["DnnlExecutionProvider", "CPUExecutionProvider"]
    assert session.placement_source() == "single-backend:onednn"
    [probs] = session.run(["probs"], {"x": tiny_input})
    assert_close(probs, tiny_model.reference(tiny_input)["probs"].astype(np.float32))


def test_settings_without_a_counterpart_are_reported_and_bad_ones_refused(tiny_model, tiny_input):
    options = collage.SessionOptions()
    options.execution_mode = collage.ExecutionMode.ORT_PARALLEL
    options.add_session_config_entry("session.load_model_format", "ONNX")
    session = collage.InferenceSession(tiny_model.path, options)
    assert any("execution_mode" in w for w in session.warnings())
    assert any("session.load_model_format" in w for w in session.warnings())
    assert session.end_profiling() == ""  # profiling was off
    with pytest.raises(TypeError):
        collage.InferenceSession(tiny_model.path, {"threads": 1})
    # A misspelt name is named, not reported as the input it was meant for being missing.
    with pytest.raises(collage.InvalidArgumentError, match="the model has no input named 'X'"):
        session.run(None, {"X": tiny_input})
    binding = session.io_binding()
    with pytest.raises(collage.InvalidArgumentError, match="collage runs on the CPU"):
        binding.bind_output("probs", "cuda", 0)
    # A preallocated output of the wrong shape is refused, not overrun.
    binding.bind_cpu_input("x", tiny_input)
    binding.bind_ortvalue_output("probs", collage.OrtValue.ortvalue_from_shape_and_type([1, 2], np.float32))
    with pytest.raises(collage.InvalidArgumentError, match="output 'probs'"):
        session.run_with_iobinding(binding)

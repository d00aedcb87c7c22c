"""Errors reach Python as collage's exception classes, carrying collage's message."""

import numpy as np
import pytest

import collage


def test_a_missing_model_file_names_the_file(tmp_path):
    missing = tmp_path / "no_such_model.onnx"
    with pytest.raises(collage.NotFoundError, match=r"file '.*no_such_model.onnx' does not exist") as raised:
        collage.InferenceSession(missing)
    assert isinstance(raised.value, RuntimeError) and isinstance(raised.value, LookupError)
    assert raised.value.code == "not found"


def test_a_folder_for_a_model_is_an_io_error(tmp_path):
    with pytest.raises(collage.CollageIOError, match="it is a directory, not a regular file"):
        collage.InferenceSession(tmp_path)


def test_a_file_that_is_not_onnx_is_an_invalid_model(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00\xffthis is not a protobuf" * 10)
    with pytest.raises(collage.InvalidModelError) as raised:
        collage.InferenceSession(garbage)
    assert isinstance(raised.value, ValueError) and str(raised.value)


def test_wrong_shape_missing_and_unknown_inputs(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"input 'x' has shape 1x4x8x8, the model expects 1x4x16x16"):
        session.run(None, {"x": np.zeros((1, 4, 8, 8), np.float32)})
    with pytest.raises(ValueError, match=r"missing input\(s\): x"):
        session.run(None, {})
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"the model has no input named 'y' \(its inputs: x\)"):
        session.run(None, {"x": tiny_input, "y": tiny_input})


def test_an_unknown_output_name_lists_the_outputs(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"the model has no output named 'logits' \(its outputs: probs, features\)"):
        session.run(["probs", "logits"], {"x": tiny_input})


def test_a_string_for_output_names_is_a_type_error(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    with pytest.raises(TypeError, match="output_names"):
        session.run("probs", {"x": tiny_input})


def test_an_unknown_backend_and_a_missing_plan_are_refused(tiny_model, tmp_path):
    with pytest.raises(collage.NotFoundError, match=r"no backend named 'no_such_backend' \(registered: native"):
        collage.InferenceSession(tiny_model.path, backend="no_such_backend")
    with pytest.raises(collage.NotFoundError, match=r"loading the plan: file '.*missing.plan' does not exist"):
        collage.InferenceSession(tiny_model.path, plan=tmp_path / "missing.plan")


def test_a_shape_for_an_unknown_input_is_refused(tiny_model):
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"shapes\['nope'\] names 'nope', which is not a graph input"):
        collage.InferenceSession(tiny_model.path, shapes={"nope": [1, 2]})


def test_a_shape_that_contradicts_a_static_dim_is_refused(tiny_model):
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"shapes\['x'\] \(shape 2x4x16x16\) contradicts input 'x'.*its dim 0 is 1"):
        collage.InferenceSession(tiny_model.path, shapes={"x": [2, 4, 16, 16]})


def test_every_status_code_has_its_class():
    for code, cls in (("invalid argument", collage.InvalidArgumentError),
                      ("invalid model", collage.InvalidModelError),
                      ("unsupported", collage.UnsupportedError),
                      ("not found", collage.NotFoundError),
                      ("I/O error", collage.CollageIOError),
                      ("internal error", collage.InternalError),
                      ("cancelled", collage.CancelledError)):
        error = collage._errors.error_from_status(code, "the message")
        assert type(error) is cls and error.code == code and str(error) == "the message"
        assert isinstance(error, collage.CollageError)

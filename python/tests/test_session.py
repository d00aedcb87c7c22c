"""InferenceSession: what the model declares, running it on each backend, against numpy,
ONNX Runtime's own Python package and the reference kernels, and choosing outputs."""

import glob
import os
import sys

import numpy as np
import pytest

import collage
from conftest import assert_close


def test_inputs_and_outputs_are_described_as_onnx_runtime_does(mobilenet):
    session = collage.InferenceSession(mobilenet)
    [image] = session.get_inputs()
    [logits] = session.get_outputs()
    assert (image.name, image.type, image.shape) == ("input", "tensor(float)", [1, 3, 224, 224])
    assert (logits.name, logits.type, logits.shape) == ("logits", "tensor(float)", [1, 1000])


def test_the_tiny_model_matches_numpy(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    probs, features = session.run(None, {"x": tiny_input})
    expected = tiny_model.reference(tiny_input)
    assert_close(probs, expected["probs"].astype(np.float32), 1e-5)
    assert_close(features, expected["features"].astype(np.float32), 1e-5)
    assert probs.sum() == pytest.approx(1.0, abs=1e-5)


def test_every_built_backend_matches_the_reference_kernels(mobilenet, image):
    reference = collage.InferenceSession(mobilenet, backend="native").run(None, {"input": image})[0]
    # Finite and far from constant, or agreeing with it would prove little.
    assert np.isfinite(reference).all() and reference.std() > 0.1
    built = [b.name for b in collage.backends() if b.available and b.name != "native"]
    assert built, "no backend but native is built"
    for backend in built:
        session = collage.InferenceSession(mobilenet, backend=backend, threads=2)
        [logits] = session.run(None, {"input": image})
        assert_close(logits, reference)
        assert session.placement_source() == f"single-backend:{backend}"


def _import_onnxruntime():
    """ONNX Runtime's Python package, installed without its dependencies into the build's
    engines folder (scripts/install_engines.sh); None where it cannot be imported."""
    engines = os.environ.get("COLLAGE_ENGINES_DIR", "")
    for site in glob.glob(os.path.join(engines, "lib", "python3*", "site-packages")):
        if site not in sys.path:
            sys.path.append(site)
    try:
        import onnxruntime
    except Exception as error:  # a missing dependency raises more than ImportError
        pytest.skip(f"onnxruntime cannot be imported ({error}); COLLAGE_ENGINES_DIR={engines!r}")
    return onnxruntime


def test_outputs_match_onnx_runtimes_python_package(mobilenet, image, tiny_model, tiny_input):
    onnxruntime = _import_onnxruntime()
    for path, feeds in ((mobilenet, {"input": image}), (tiny_model.path, {"x": tiny_input})):
        ours = collage.InferenceSession(path).run(None, feeds)
        theirs = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_close(a, b)


def test_output_names_choose_and_order_the_outputs(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    probs, features = session.run(None, {"x": tiny_input})
    [only_features] = session.run(["features"], {"x": tiny_input})
    np.testing.assert_array_equal(only_features, features)
    swapped = session.run(["features", "probs"], {"x": tiny_input})
    np.testing.assert_array_equal(swapped[0], features)
    np.testing.assert_array_equal(swapped[1], probs)
    assert session.run([], {"x": tiny_input}) == []


def test_an_output_asked_twice_gives_two_arrays_that_do_not_alias(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    first, second = session.run(["probs", "probs"], {"x": tiny_input})
    np.testing.assert_array_equal(first, second)
    first[...] = 0
    assert second.sum() == pytest.approx(1.0, abs=1e-5)


def test_outputs_own_their_memory_after_the_session_is_gone(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    expected = tiny_model.reference(tiny_input)["probs"].astype(np.float32)
    probs, = session.run(["probs"], {"x": tiny_input})
    del session
    # Writable, and the values still there once other runs reused the runtime's memory.
    probs += 0
    for _ in range(3):
        collage.InferenceSession(tiny_model.path).run(None, {"x": tiny_input * 2})
    assert_close(probs, expected, 1e-5)


def test_a_plain_list_is_converted_to_the_inputs_dtype(tiny_model, tiny_input):
    session = collage.InferenceSession(tiny_model.path)
    from_list = session.run(["probs"], {"x": tiny_input.tolist()})[0]
    np.testing.assert_array_equal(from_list, session.run(["probs"], {"x": tiny_input})[0])


def test_a_model_of_dynamic_dims_runs_at_any_input_shape(dynamic_tiny_model):
    session = collage.InferenceSession(dynamic_tiny_model.path, threads=1)
    assert session.get_inputs()[0].shape == [None, 4, None, None]
    rng = np.random.default_rng(3)
    for shape in [(1, 4, 16, 16), (2, 4, 9, 23), (3, 4, 5, 5), (1, 4, 16, 16)]:
        x = rng.standard_normal(shape).astype(np.float32)
        probs, features = session.run(["probs", "features"], {"x": x})
        expected = dynamic_tiny_model.reference(x)
        assert_close(probs, expected["probs"].astype(np.float32))
        assert_close(features, expected["features"].astype(np.float32))
    assert session.num_compiled_shapes() == 3  # the last shape was compiled already
    with pytest.raises(collage.InvalidArgumentError, match=r"expects \?x4x\?x\?"):
        session.run(None, {"x": np.zeros((1, 3, 8, 8), np.float32)})


def test_a_loop_whose_data_decides_its_trip_count_runs(tmp_path):
    """A while-loop (a Loop whose condition its body computes) doubling a vector until its sum
    reaches a limit given at each run: the trip count and the stacked rows' count are the
    data's."""
    onnx = pytest.importorskip("onnx", reason="the onnx package (python3-onnx) builds the model")
    from onnx import TensorProto, helper, numpy_helper

    two = numpy_helper.from_array(np.array(2, np.float32), "two")
    body = helper.make_graph(
        [helper.make_node("Mul", ["v", "two"], ["v_out"]),
         helper.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["c_out"]),
         helper.make_node("Identity", ["v_out"], ["row"])],
        "double",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [3])],
        [two])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["v0"], ["s0"], keepdims=0),
         helper.make_node("Less", ["s0", "limit"], ["go"]),
         helper.make_node("Loop", ["", "go", "v0"], ["v_last", "rows"], body=body)],
        "while_loop",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("limit", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("v_last", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["steps", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "while_loop.onnx"
    onnx.save(model, str(path))

    session = collage.InferenceSession(str(path), threads=1)
    v0 = np.array([0.5, 1.0, 1.5], np.float32)
    for limit in (10.0, 1000.0, 2.0):
        v, rows = v0.copy(), []
        while v.sum() < limit:
            v = v * 2
            rows.append(v)
        v_last, got_rows = session.run(None, {"v0": v0, "limit": np.array(limit, np.float32)})
        np.testing.assert_array_equal(v_last, v)
        assert got_rows.shape == (len(rows), 3)
        if rows:
            np.testing.assert_array_equal(got_rows, np.stack(rows))

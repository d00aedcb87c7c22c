"""Fixtures of the Python package's tests: the models they run.

Run by ctest (entry python_package_tests) with PYTHONPATH at the build's package
(BUILD_DIR/python), COLLAGE_CLI at the build's command line (it exports the zoo models) and
COLLAGE_ENGINES_DIR at the engines' folder (ONNX Runtime's Python package, to compare with).
"""

import os
import subprocess

# Before numpy, as a user should (python/collage/_environment.py says why).
import collage  # noqa: F401
import numpy as np
import pytest

# Normalized error allowed between two backends' outputs: max |a - b| / max |reference|, the
# measure the C++ tests use (tests/backend_ops: 1e-4, 1e-3 where an output sums over more than
# 1000 products, as MobileNetV2's do).
TOLERANCE = 1e-3


def assert_close(actual, reference, tolerance=TOLERANCE):
    assert actual.shape == reference.shape and actual.dtype == reference.dtype
    scale = float(np.max(np.abs(reference))) or 1.0
    error = float(np.max(np.abs(actual.astype(np.float64) - reference))) / scale
    assert error <= tolerance, f"normalized error {error:.3g} above {tolerance:g}"


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("COLLAGE_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("COLLAGE_CLI does not name the collage executable (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def mobilenet(cli, tmp_path_factory):
    """MobileNetV2 from the built-in zoo, exported to ONNX by the command line."""
    path = tmp_path_factory.mktemp("zoo") / "mobilenetv2.onnx"
    subprocess.run([cli, "zoo", "export", "mobilenetv2", "-o", str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    return path


class TinyModel:
    """Conv → Relu (output "features") → GlobalAveragePool → Flatten → Gemm → Softmax
    (output "probs"), input "x" float32 1x4x16x16: small enough to optimize in seconds, and
    computed here with numpy as well."""

    def __init__(self, path, weights):
        self.path = path
        self.weights = weights

    def reference(self, x):
        """{"probs": ..., "features": ...} computed with numpy in float64."""
        w, b, fw, fb = (self.weights[k].astype(np.float64) for k in ("w", "b", "fw", "fb"))
        padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
        conv = np.einsum("nchwij,ocij->nohw", windows, w) + b[None, :, None, None]
        features = np.maximum(conv, 0)
        logits = features.mean(axis=(2, 3)) @ fw + fb
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return {"probs": e / e.sum(axis=1, keepdims=True), "features": features}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    return _build_tiny_model(tmp_path_factory, [1, 4, 16, 16])


@pytest.fixture(scope="session")
def dynamic_tiny_model(tmp_path_factory):
    """The tiny model with its batch, height and width dynamic."""
    return _build_tiny_model(tmp_path_factory, ["batch", 4, "height", "width"])


def _build_tiny_model(tmp_path_factory, input_dims):
    onnx = pytest.importorskip("onnx", reason="the onnx package (python3-onnx) builds the small model")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = {name: rng.standard_normal(shape).astype(np.float32)
               for name, shape in (("w", (8, 4, 3, 3)), ("b", (8,)), ("fw", (8, 5)), ("fb", (5,)))}

    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["features"], name="relu"),
        helper.make_node("GlobalAveragePool", ["features"], ["pooled"], name="pool"),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_dims)],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [input_dims[0], 5]),
         helper.make_tensor_value_info("features", TensorProto.FLOAT,
                                       [input_dims[0], 8, input_dims[2], input_dims[3]])],
        [numpy_helper.from_array(value, name) for name, value in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    path = tmp_path_factory.mktemp("tiny") / "tiny.onnx"
    onnx.save(model, str(path))
    return TinyModel(path, weights)


@pytest.fixture(scope="session")
def image():
    return np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)


@pytest.fixture(scope="session")
def tiny_input():
    return np.random.default_rng(2).standard_normal((1, 4, 16, 16)).astype(np.float32)

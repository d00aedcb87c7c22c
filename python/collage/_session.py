"""InferenceSession: ONNX Runtime's interface over collage's Session."""

import numpy as np

from . import _collage
from ._errors import InvalidArgumentError

# collage's dtype names (DTypeName) → ONNX Runtime's type strings and numpy's dtypes.
_ORT_TYPES = {
    "float32": "tensor(float)", "float64": "tensor(double)", "float16": "tensor(float16)",
    "bfloat16": "tensor(bfloat16)", "int8": "tensor(int8)", "int16": "tensor(int16)",
    "int32": "tensor(int32)", "int64": "tensor(int64)", "uint8": "tensor(uint8)",
    "uint16": "tensor(uint16)", "uint32": "tensor(uint32)", "uint64": "tensor(uint64)",
    "bool": "tensor(bool)",
}
_NUMPY_DTYPES = {name: np.dtype(name) for name in _ORT_TYPES if name != "bfloat16"}


class NodeArg:
    """An input or output of the model, as ONNX Runtime describes it."""

    def __init__(self, name, dtype, shape):
        self.name = name
        # A dynamic dim (the session compiles per input shape) is None, as ONNX Runtime shows
        # a dim it does not know.
        self.shape = [d if d >= 0 else None for d in shape]
        self.type = _ORT_TYPES.get(dtype, f"tensor({dtype})")
        self.dtype = dtype  # collage's name: "float32", "int64", ...

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class InferenceSession:
    """A loaded ONNX model, run with numpy arrays.

    path       the .onnx file
    threads    threads for the kernels of every backend (0: one per core)
    plan       run the placement saved by collage.optimize(save_plan=...) or
               `collage optimize --save-plan` instead of one backend
    backend    run every node on this backend where one of its rules matches, "native"
               elsewhere (collage.backends() lists them)
    shapes     fix dynamic input dims: {"input": [1, 3, 224, 224]}; without it a model of
               dynamic dims runs at any input shape, compiled once per new shape
    strict_nan use only kernels that propagate NaN and infinities as the ONNX spec does

    Errors are raised as collage.CollageError subclasses carrying collage's message.
    """

    def __init__(self, path, threads=0, plan=None, backend="native", shapes=None, strict_nan=False):
        shapes = {name: [int(d) for d in dims] for name, dims in (shapes or {}).items()}
        self._session = _collage.Session(str(path), int(threads), "" if plan is None else str(plan),
                                         str(backend), shapes, bool(strict_nan))
        self._inputs = [NodeArg(*info) for info in self._session.inputs()]
        self._outputs = [NodeArg(*info) for info in self._session.outputs()]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        """Returns the outputs named in `output_names` (all, in the model's order, for None)
        as a list of numpy arrays, computed from `input_feed`: input name → array.

        An input whose array is C-contiguous, of the input's dtype and in native byte order
        is read where it is (no copy); another layout is copied into C order first. A wrong
        dtype is refused (as ONNX Runtime does), not converted; a Python list or scalar is
        converted to the input's dtype. The GIL is released while the model runs, so other
        Python threads, and other runs of this session, go on meanwhile.
        """
        del run_options  # ONNX Runtime's RunOptions have no counterpart here
        if output_names is not None:
            if isinstance(output_names, str):
                raise TypeError("output_names must be a list of names or None, not a string")
            output_names = [str(name) for name in output_names]
        feeds = {}
        for name, value in dict(input_feed).items():
            if not isinstance(name, str):
                raise TypeError(f"input names must be strings, not {type(name).__name__}")
            feeds[name] = self._as_array(name, value)
        return self._session.run(output_names, feeds)

    def _as_array(self, name, value):
        if not isinstance(value, np.ndarray):
            declared = next((i.dtype for i in self._inputs if i.name == name), None)
            value = np.asarray(value, dtype=_NUMPY_DTYPES.get(declared))
        if value.dtype.newbyteorder("=") not in _NUMPY_DTYPES.values():
            expected = next((i.dtype for i in self._inputs if i.name == name), "?")
            raise InvalidArgumentError(f"input '{name}' has numpy dtype {value.dtype}, which collage has "
                                       f"no type for (the model expects {expected})")
        if not value.dtype.isnative:
            value = value.astype(value.dtype.newbyteorder("="))
        if not value.flags.c_contiguous:
            value = value.copy(order="C")
        return value

    # collage's own views of the session.
    def placement(self):
        """How the nodes are grouped and which backend runs each group (text)."""
        return self._session.placement()

    def placement_source(self):
        """"single-backend:<name>", "op-level", or the search recorded in a loaded plan."""
        return self._session.placement_source()

    def warnings(self):
        """Warnings from loading a plan (another device, other library versions)."""
        return self._session.warnings()

    def num_compiled_shapes(self):
        """For a model of dynamic dims: how many input shapes have a compiled model kept (each
        run at a new shape compiles one; the last 8 are kept). 0 for fixed shapes."""
        return self._session.num_compiled_shapes()

"""InferenceSession: ONNX Runtime's interface over collage's Session."""

import time

import numpy as np

from . import _collage
from ._errors import InvalidArgumentError
from ._ort_value import IOBinding, OrtValue
from ._providers import backend_for, provider_for
from ._session_options import SessionOptions

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


class ModelMetadata:
    """What the model file says of itself, as ONNX Runtime's ModelMetadata."""

    def __init__(self, fields):
        self.producer_name = fields["producer_name"]
        self.graph_name = fields["graph_name"]
        self.domain = fields["domain"]
        self.description = fields["description"]
        self.graph_description = fields["graph_description"]
        self.version = fields["version"]
        self.custom_metadata_map = dict(fields["custom_metadata_map"])


class InferenceSession:
    """A loaded ONNX model, run with numpy arrays, with ONNX Runtime's interface.

    path_or_bytes     the .onnx file, or the model's bytes
    sess_options      a SessionOptions (intra_op_num_threads, enable_profiling, ...)
    providers         ONNX Runtime provider names (or (name, options) pairs): one that maps to
                      a collage backend runs the nodes it has rules for on it
                      (collage.get_available_providers() lists them); others are ignored, and
                      warnings() says so
    provider_options  accepted and returned by get_provider_options(); no effect

    collage's own settings, by keyword:
    threads    threads for the kernels of every backend (0: one per core); wins over
               sess_options.intra_op_num_threads
    plan       run the placement saved by collage.optimize(save_plan=...) or
               `collage optimize --save-plan` instead of one backend
    backend    run every node on this backend where one of its rules matches, "native"
               elsewhere (collage.backends() lists them); wins over providers
    shapes     fix dynamic input dims: {"input": [1, 3, 224, 224]}; without it a model of
               dynamic dims runs at any input shape, compiled once per new shape
    strict_nan use only kernels that propagate NaN and infinities as the ONNX spec does

    Errors are raised as collage.CollageError subclasses carrying collage's message.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 *, threads=None, plan=None, backend=None, shapes=None, strict_nan=False):
        options = sess_options if sess_options is not None else SessionOptions()
        if not isinstance(options, SessionOptions):
            raise TypeError(f"sess_options must be a collage.SessionOptions, not "
                            f"{type(options).__name__}")
        from_providers, self._providers, self._notes = backend_for(providers)
        self._provider_options = [dict(o) for o in (provider_options or [])]
        self._notes += [f"SessionOptions: {name} has no effect in collage"
                        for name in options.ignored_settings()]
        if threads is None:
            threads = options.intra_op_num_threads
        if backend is None:
            backend = from_providers or "native"
        elif from_providers is not None and from_providers != backend:
            self._notes.append(f"backend='{backend}' wins over the providers given")
        if backend != "native":
            self._providers = [provider_for(backend), "CPUExecutionProvider"]
        self._options = options
        self._profiling = bool(options.enable_profiling)
        shapes = {name: [int(d) for d in dims] for name, dims in (shapes or {}).items()}
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            path, model_bytes = "", bytes(path_or_bytes)
        else:
            path, model_bytes = str(path_or_bytes), None
        self._session = _collage.Session(path, model_bytes, int(threads),
                                         "" if plan is None else str(plan), str(backend), shapes,
                                         bool(strict_nan))
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
        declared = [i.name for i in self._inputs]
        for name, value in dict(input_feed).items():
            if not isinstance(name, str):
                raise TypeError(f"input names must be strings, not {type(name).__name__}")
            if name not in declared:
                # Before the missing ones: a misspelt name is named as such, not as the
                # input it was meant for being missing.
                raise InvalidArgumentError(f"the model has no input named '{name}' (its inputs: "
                                           f"{', '.join(declared)})")
            feeds[name] = self._as_array(name, value)
        return self._session.run(output_names, feeds, self._profiling)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """run() on OrtValues, giving OrtValues."""
        feeds = {name: value.numpy() for name, value in dict(input_dict_ort_values).items()}
        return [OrtValue(a) for a in self.run(output_names, feeds, run_options)]

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(lambda names, feeds: self.run(names, feeds, run_options))

    # ONNX Runtime's descriptions of the session.
    def get_modelmeta(self):
        return ModelMetadata(self._session.metadata())

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {name: (self._provider_options[i] if i < len(self._provider_options) else {})
                for i, name in enumerate(self._providers)}

    def get_session_options(self):
        return self._options

    def get_overridable_initializers(self):
        """None: collage folds the weights into its kernels, none can be fed at run time."""
        return []

    def end_profiling(self):
        """Writes the runs profiled since the session started (or the last end_profiling) as a
        Chrome trace, profile_file_prefix + date + ".json" in the working folder, and returns
        its name; "" when profiling is off (SessionOptions.enable_profiling)."""
        if not self._profiling:
            return ""
        path = self._options.profile_file_prefix + time.strftime("%Y-%m-%d_%H-%M-%S") + ".json"
        self._session.end_profiling(path)
        return path

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
        """Warnings from loading a plan (another device, other library versions), and the
        ONNX Runtime settings and providers given that had no effect."""
        return self._notes + self._session.warnings()

    def num_compiled_shapes(self):
        """For a model of dynamic dims: how many input shapes have a compiled model kept (each
        run at a new shape compiles one; the last 8 are kept). 0 for fixed shapes."""
        return self._session.num_compiled_shapes()

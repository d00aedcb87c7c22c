"""OrtValue and IOBinding, as ONNX Runtime's Python API has them, for CPU memory.

An OrtValue holds a numpy array; an IOBinding names the arrays a run reads and, where bound,
the arrays it writes its outputs into (a bound output of the right dtype and shape is filled
in place, as a preallocated ONNX Runtime output is). Devices other than "cpu" are refused.
"""

import ctypes

import numpy as np

from ._errors import InvalidArgumentError

# ONNX Runtime's element type strings → numpy dtypes.
_NUMPY_OF_TYPE = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int8)": np.int8, "tensor(int16)": np.int16, "tensor(int32)": np.int32,
    "tensor(int64)": np.int64, "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32, "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
}
_TYPE_OF_NUMPY = {np.dtype(v): k for k, v in _NUMPY_OF_TYPE.items()}


def _check_cpu(device_type, device_id=0):
    if str(device_type).lower() != "cpu" or int(device_id) != 0:
        raise InvalidArgumentError(f"device {device_type}:{device_id} is not supported: collage "
                                   f"runs on the CPU (device 'cpu', id 0)")


def _numpy_dtype(element_type):
    """A numpy dtype from a numpy type, a dtype or an ONNX Runtime type string."""
    if isinstance(element_type, str) and element_type in _NUMPY_OF_TYPE:
        return np.dtype(_NUMPY_OF_TYPE[element_type])
    return np.dtype(element_type)


def _array_at(buffer_ptr, element_type, shape):
    """A numpy array over `shape` elements of `element_type` at address `buffer_ptr` (the
    caller's memory, which must outlive the array)."""
    dtype = _numpy_dtype(element_type)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype, count=count).reshape([int(d) for d in shape])


class OrtValue:
    """A tensor in CPU memory."""

    def __init__(self, array):
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(array, device_type="cpu", device_id=0):
        _check_cpu(device_type, device_id)
        return OrtValue(np.asarray(array))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        _check_cpu(device_type, device_id)
        return OrtValue(np.zeros([int(d) for d in shape], dtype=_numpy_dtype(element_type)))

    def numpy(self):
        return self._array

    def shape(self):
        return list(self._array.shape)

    def data_type(self):
        return _TYPE_OF_NUMPY.get(self._array.dtype, f"tensor({self._array.dtype})")

    def element_type(self):
        return self._array.dtype.type

    def device_name(self):
        return "cpu"

    def data_ptr(self):
        return self._array.ctypes.data

    def is_tensor(self):
        return True

    def has_value(self):
        return True

    def __repr__(self):
        return f"OrtValue({self.data_type()}, shape={self.shape()})"


class IOBinding:
    """The inputs and outputs of InferenceSession.run_with_iobinding."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = {}  # name → array to fill, or None (a new array each run)
        self._results = []

    def bind_cpu_input(self, name, array):
        self._inputs[name] = np.asarray(array)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        _check_cpu(device_type, device_id)
        self._inputs[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        _check_cpu(device_type, device_id)
        if buffer_ptr is None:
            self._outputs[name] = None
            return
        if element_type is None or shape is None:
            raise InvalidArgumentError(f"output '{name}' bound to memory needs its element_type "
                                       f"and shape")
        self._outputs[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_output(self, name, ortvalue):
        self._outputs[name] = ortvalue.numpy()

    def clear_binding_inputs(self):
        self._inputs.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()

    def synchronize_inputs(self):
        """Nothing to wait for on the CPU."""

    def synchronize_outputs(self):
        """Nothing to wait for on the CPU."""

    def get_outputs(self):
        """The last run's outputs, in the order they were bound, as OrtValues."""
        return [OrtValue(array) for array in self._results]

    def copy_outputs_to_cpu(self):
        """The last run's outputs as numpy arrays (copies)."""
        return [array.copy() for array in self._results]

    def _run(self, run):
        """Runs `run(output_names, feeds)` and fills the bound outputs."""
        names = list(self._outputs) or None
        results = run(names, dict(self._inputs))
        if names is None:
            self._results = results
            return
        for name, result in zip(names, results):
            target = self._outputs[name]
            if target is None:
                continue
            if target.shape != result.shape or target.dtype != result.dtype:
                raise InvalidArgumentError(
                    f"output '{name}' is {result.dtype} {list(result.shape)}; the memory bound "
                    f"to it is {target.dtype} {list(target.shape)}")
            np.copyto(target, result)
        self._results = [result if self._outputs[name] is None else self._outputs[name]
                         for name, result in zip(names, results)]

"""collage: runs ONNX models on several backend libraries and places each group of ops on
the fastest one by measurement.

    import collage, numpy as np
    session = collage.InferenceSession("model.onnx")   # ONNX Runtime's interface
    outputs = session.run(None, {"input": np.zeros((1, 3, 224, 224), np.float32)})
    report = collage.optimize("model.onnx", save_plan="model.plan")
    fast = collage.InferenceSession("model.onnx", plan="model.plan")
"""

# Before anything loads libgomp (the extension module, numpy): see _environment.py.
from . import _environment

_environment.set_openmp_wait_policy()
_environment.point_at_packaged_worker()

from ._errors import (  # noqa: E402
    CancelledError, CollageError, CollageIOError, InternalError, InvalidArgumentError,
    InvalidModelError, NotFoundError, UnsupportedError)
from ._collage import __version__  # noqa: E402
from ._session import InferenceSession, ModelMetadata, NodeArg  # noqa: E402
from ._session_options import (  # noqa: E402
    ExecutionMode, GraphOptimizationLevel, RunOptions, SessionOptions)
from ._providers import get_all_providers, get_available_providers  # noqa: E402
from ._ort_value import IOBinding, OrtValue  # noqa: E402
from ._optimize import CalibrationPlan, CancellationToken, Finalist, Group, OptimizeReport, optimize  # noqa: E402
from ._backends import BackendInfo, backends  # noqa: E402
from ._environment import OpenMpSettingTooLateWarning  # noqa: E402



def get_device():
    """The device collage runs on, as ONNX Runtime's get_device() names it."""
    return "CPU"


__all__ = [
    "InferenceSession", "NodeArg", "ModelMetadata", "SessionOptions", "RunOptions",
    "GraphOptimizationLevel", "ExecutionMode", "get_available_providers", "get_all_providers",
    "get_device", "OrtValue", "IOBinding", "optimize", "OptimizeReport", "Finalist", "Group", "CalibrationPlan",
    "CancellationToken",
    "backends", "BackendInfo", "CollageError", "InvalidArgumentError", "InvalidModelError",
    "UnsupportedError", "NotFoundError", "CollageIOError", "InternalError", "CancelledError",
    "OpenMpSettingTooLateWarning", "__version__",
]

"""collage: runs ONNX models on several backend libraries and places each group of ops on
the fastest one by measurement.

    import collage, numpy as np
    session = collage.InferenceSession("model.onnx")
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
from ._session import InferenceSession, NodeArg  # noqa: E402
from ._optimize import CalibrationPlan, Finalist, Group, OptimizeReport, optimize  # noqa: E402
from ._backends import BackendInfo, backends  # noqa: E402
from ._environment import OpenMpSettingTooLateWarning  # noqa: E402

__all__ = [
    "InferenceSession", "NodeArg", "optimize", "OptimizeReport", "Finalist", "Group", "CalibrationPlan",
    "backends", "BackendInfo", "CollageError", "InvalidArgumentError", "InvalidModelError",
    "UnsupportedError", "NotFoundError", "CollageIOError", "InternalError", "CancelledError",
    "OpenMpSettingTooLateWarning", "__version__",
]

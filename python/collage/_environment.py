"""What must be in the environment before collage's C++ library loads.

Imported first by __init__.py, before the extension module (and with it libgomp, the
OpenMP runtime) is loaded, so it may import neither the module nor numpy.

OpenMP wait policy: libgomp reads OMP_WAIT_POLICY / GOMP_SPINCOUNT once, when it is
loaded. Every library collage places runs on its one team, and how long an idle worker
spins decides whether the team is still awake for the next small kernel (too short: 4x
slower on NASNet-A at 2 threads) and how long it holds a core the engines' own pools
(ONNX Runtime, OpenVINO) need at a hand-off (libgomp's default 300k spins: ~3 ms, by a
pause instruction's ~11 ns).
collage's executables re-execute themselves with GOMP_SPINCOUNT set
(src/runtime/thread_policy_preinit.cc); a Python process cannot, so the package sets the
same value in its own environment here, unless the user chose a wait setting. That works
only if libgomp is not loaded yet: numpy linked against an OpenMP OpenBLAS (Debian's
libopenblas0-openmp) loads it on `import numpy`. Then the setting comes too late, and
this module warns once, saying how to put it into effect.

Measurement worker: `optimize` measures candidates in the executable
collage_measure_worker (src/cost/worker_measurer.cc). The library looks for it in
$COLLAGE_MEASURE_WORKER, beside the running executable (here: the Python interpreter) and
in its build tree; pip installs it inside the package, so the package points
COLLAGE_MEASURE_WORKER at it unless the user set it.
"""

import os
import warnings

# The value of kOpenMpSpinCount (src/runtime/threading.h); the tests check that they agree.
OPENMP_SPIN_COUNT = "100000"
_WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
WORKER_NAME = "collage_measure_worker"


class OpenMpSettingTooLateWarning(RuntimeWarning):
    """libgomp was loaded before collage could set its wait policy."""


def _libgomp_loaded():
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return any("libgomp" in line for line in maps)
    except OSError:
        return False


def set_openmp_wait_policy():
    """Sets GOMP_SPINCOUNT unless a wait setting is there; warns if it comes too late."""
    if any(name in os.environ for name in _WAIT_SETTINGS):
        return
    too_late = _libgomp_loaded()
    os.environ["GOMP_SPINCOUNT"] = OPENMP_SPIN_COUNT
    if too_late:
        warnings.warn(
            "collage: the OpenMP runtime (libgomp) was loaded before collage (by numpy's "
            f"OpenBLAS, most likely), so collage's wait policy GOMP_SPINCOUNT={OPENMP_SPIN_COUNT} "
            "does not apply in this process and mixed placements may run slower; import collage "
            f"before numpy, or start Python with GOMP_SPINCOUNT={OPENMP_SPIN_COUNT} in the "
            "environment",
            OpenMpSettingTooLateWarning,
            stacklevel=3,
        )


def point_at_packaged_worker():
    """Points COLLAGE_MEASURE_WORKER at the worker installed in the package, if there is one."""
    if os.environ.get("COLLAGE_MEASURE_WORKER"):
        return
    worker = os.path.join(PACKAGE_DIR, WORKER_NAME)
    if os.access(worker, os.X_OK):
        os.environ["COLLAGE_MEASURE_WORKER"] = worker

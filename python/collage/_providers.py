"""ONNX Runtime's execution providers in collage's terms.

An ONNX Runtime provider list is a priority order with the CPU provider as the fallback: each
node runs on the first provider that has a kernel for it. collage's `backend` option is the
same rule for one backend (every node it has a rule for, "native" for the rest), so a list
naming one provider that maps to a collage backend runs on that backend; "CPUExecutionProvider"
alone is collage's own choice (its native kernels, or the placement of a plan). Providers for
devices collage does not drive (CUDA, TensorRT, ...) are accepted and ignored, and the session
says so.
"""

from . import _collage

CPU = "CPUExecutionProvider"
# provider name → collage backend
_BACKEND_OF = {
    "DnnlExecutionProvider": "onednn",
    "OpenVINOExecutionProvider": "openvino",
    "XnnpackExecutionProvider": "xnnpack",
}


def _built_backends():
    return {b["name"] for b in _collage.backends() if b["available"]}


def provider_for(backend):
    """The provider name of a collage backend: ONNX Runtime's for the same library, else
    "collage:<backend>"."""
    for name, mapped in _BACKEND_OF.items():
        if mapped == backend:
            return name
    return f"collage:{backend}"


def get_all_providers():
    """Every provider name collage understands."""
    return list(_BACKEND_OF) + [CPU]


def get_available_providers():
    """The providers this build can run: those whose backend is built, then the CPU one."""
    built = _built_backends()
    return [p for p, backend in _BACKEND_OF.items() if backend in built] + [CPU]


def backend_for(providers):
    """(collage backend or None for collage's default, providers in use, warnings) for an
    ONNX Runtime provider list: names, or (name, options) pairs."""
    built = None  # asked of the library only when a provider other than the CPU one is named
    chosen, warnings = None, []
    for entry in providers or []:
        name = entry[0] if isinstance(entry, (tuple, list)) else entry
        if not isinstance(name, str):
            raise TypeError(f"a provider is a name or a (name, options) pair, not {entry!r}")
        if name == CPU:
            continue
        backend = _BACKEND_OF.get(name)
        built = _built_backends() if built is None else built
        if backend is None or backend not in built:
            warnings.append(f"provider {name} is not available in collage and is ignored "
                            f"(available: {', '.join(get_available_providers())})")
        elif chosen is None:
            chosen = (name, backend)
        elif backend != chosen[1]:
            warnings.append(f"provider {name} is ignored: collage runs one backend besides its "
                            f"own kernels, and {chosen[0]} comes first")
    if chosen is None:
        return None, [CPU], warnings
    return chosen[1], [chosen[0], CPU], warnings

"""collage.backends(): what `collage backends` lists."""

import dataclasses

from . import _collage


@dataclasses.dataclass(frozen=True)
class BackendInfo:
    """A backend: built into this package (with its library's version) or left out of the
    build (with the reason, e.g. its library was not found when the package was built)."""

    name: str
    built: bool
    version: str  # library version and instruction set, e.g. "oneDNN 2.7.3 avx512_core"
    device: str
    rules: int  # rules and fusions it offers
    graph_level: bool  # True: it compiles whole regions (the engines)
    reason: str  # why it is not built ("" when built)


def backends():
    """Every backend: the built ones first (registration order, "native" first), then those
    left out of this build."""
    return [BackendInfo(**b) for b in _collage.backends()]

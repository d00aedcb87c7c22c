"""collage.backends(): what `collage backends` lists."""

import dataclasses

from . import _collage


@dataclasses.dataclass(frozen=True)
class BackendInfo:
    """A backend: available (with its library's version), or not, with the reason: left out of
    the build (its library was not found when the package was built), or built as an engine's
    plug-in that did not load here (the engine's wheel is not installed)."""

    name: str
    built: bool  # built into this package (an engine's plug-in may still not load here)
    available: bool  # registered in this process: sessions can place work on it
    version: str  # library version and instruction set, e.g. "oneDNN 2.7.3 avx512_core"
    device: str
    rules: int  # rules and fusions it offers
    graph_level: bool  # True: it compiles whole regions (the engines)
    reason: str  # why it is not available ("" when it is)


def backends():
    """Every backend: the available ones first (registration order, "native" first), then
    those left out of this build or not loadable here."""
    return [BackendInfo(**b) for b in _collage.backends()]

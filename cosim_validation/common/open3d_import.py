"""open3d without loading its Plotly viewer until it is used.

open3d's package imports ``open3d.visualization``, which imports its Plotly viewer (``draw_plotly``), which imports
Dash and Plotly: 0.42 s of CPU of a 0.92 s import (``python -X importtime -c "import open3d"``, this project's
machine). The project only computes distances and ray hits with open3d (:class:`~cosim_validation.monitor.metrics.
MeshDistance`, the needle force model's tissue intervals), in every monitor node, campaign worker and bag replay.

:func:`load_open3d` puts a deferred module in the viewer's place while open3d is imported: its three functions
(``get_plotly_fig``, ``draw_plotly``, ``draw_plotly_server``, what ``open3d.visualization`` imports from it) and any
other attribute load the real viewer module from its file the first time they are used, and it then replaces the
deferred one (so a newer open3d that imports a fourth name from its viewer gets the real viewer at once). An open3d
blocked by the caller (``sys.modules["open3d"] = None``) stays blocked; an import that fails leaves no stand-in
behind.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from cosim_validation.common.optional import require

VIEWER = "open3d.visualization.draw_plotly"
VIEWER_NAMES = ("get_plotly_fig", "draw_plotly", "draw_plotly_server")
_LOCK = threading.Lock()  # two threads importing at once install one stand-in


def load_open3d(feature: str) -> ModuleType:
    """Import open3d (quietly) with its Plotly viewer deferred until used.

    Args:
        feature: What needs open3d, for the error message.

    Raises:
        MissingDependencyError: open3d is not installed or cannot be imported.
    """
    with _LOCK:
        if "open3d" in sys.modules:  # imported already, or blocked by the caller (None): as it is
            return require("open3d", "open3d", feature, quiet=True)
        viewer = _viewer_file()
        if viewer is None or VIEWER in sys.modules:
            return require("open3d", "open3d", feature, quiet=True)
        sys.modules[VIEWER] = DeferredViewer(viewer)
        try:
            return require("open3d", "open3d", feature, quiet=True)
        except BaseException:  # leave no stand-in and no half-imported open3d behind
            for name in [n for n in sys.modules if n == "open3d" or n.startswith("open3d.")]:
                del sys.modules[name]
            raise


def _viewer_file() -> Path | None:
    """The file of open3d's Plotly viewer, found without importing open3d; None if there is none."""
    try:
        spec = importlib.util.find_spec("open3d")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "visualization" / "draw_plotly.py"
    return path if path.is_file() else None


class DeferredViewer(ModuleType):
    """Stands in for ``open3d.visualization.draw_plotly`` until one of its attributes is used.

    Args:
        path: The real module's file.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(VIEWER, "open3d's Plotly viewer, loaded when first used")
        self.__file__ = str(path)
        self.__package__ = VIEWER.rpartition(".")[0]
        self.__spec__ = importlib.util.spec_from_file_location(VIEWER, path)
        for name in VIEWER_NAMES:
            setattr(self, name, _forward(self, name))

    def load(self) -> ModuleType:
        """Load the real viewer module (Dash, Plotly) and put it in this one's place in ``sys.modules``."""
        spec = importlib.util.spec_from_file_location(VIEWER, self.__file__)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {VIEWER} from {self.__file__}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[VIEWER] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules[VIEWER] = self
            raise
        return module  # open3d.visualization keeps the three functions it took (its draw_plotly is the function)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        real = sys.modules.get(VIEWER)
        return getattr(real if real is not None and real is not self else self.load(), name)


def _forward(viewer: DeferredViewer, name: str) -> Callable[..., Any]:
    """The viewer's function ``name``, calling the real one (loaded on the first call)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        real = sys.modules.get(VIEWER)
        module = real if real is not None and real is not viewer else viewer.load()
        return getattr(module, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"open3d.visualization.{name}, loaded on its first call (it imports Dash and Plotly)."
    return call

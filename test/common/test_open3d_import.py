"""open3d is imported without its Plotly viewer (Dash, Plotly), which still works when used."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from cosim_validation.common.open3d_import import load_open3d
o3d = load_open3d("a test")
print("after import:", "dash" in sys.modules, "plotly" in sys.modules, type(sys.modules["{viewer}"]).__name__)
box = o3d.geometry.TriangleMesh.create_box()
figure = o3d.visualization.get_plotly_fig([box])
print("after use:", type(figure).__name__, "dash" in sys.modules, type(sys.modules["{viewer}"]).__name__)
print("functions:", callable(o3d.visualization.draw_plotly), callable(o3d.visualization.draw_plotly_server))
"""


def _run(script: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_viewer_loads_when_used_not_before() -> None:
    from cosim_validation.common.open3d_import import VIEWER

    lines = _run(SCRIPT.replace("{viewer}", VIEWER))
    assert lines[0] == "after import: False False DeferredViewer"
    assert lines[1] == "after use: Figure True module"  # the real viewer made a Plotly figure
    assert lines[2] == "functions: True True"


def test_a_name_the_stand_in_does_not_offer_loads_the_real_viewer() -> None:
    """An open3d whose package imports a fourth name from its viewer gets the real viewer at that import."""
    script = (
        "import cosim_validation.common.open3d_import as m\n"
        "m.VIEWER_NAMES = ('get_plotly_fig', 'draw_plotly')\n"  # one of the three the package imports is missing
        "o3d = m.load_open3d('a test')\n"
        "import sys\n"
        "viewer = type(sys.modules[m.VIEWER]).__name__\n"
        "print(viewer, 'dash' in sys.modules, callable(o3d.visualization.draw_plotly_server))\n"
    )
    assert _run(script) == ["module True True"]


def test_a_blocked_open3d_stays_blocked() -> None:
    """A caller that blocked open3d (``sys.modules["open3d"] = None``) gets the missing-dependency error."""
    script = (
        "import sys\n"
        "sys.modules['open3d'] = None\n"
        "from cosim_validation.common.exceptions import MissingDependencyError\n"
        "import cosim_validation.common.open3d_import as m\n"
        "try:\n"
        "    m.load_open3d('a test')\n"
        "except MissingDependencyError as exc:\n"
        "    print('refused:', 'open3d' in str(exc))\n"
        "print(sys.modules['open3d'], m.VIEWER in sys.modules)\n"
    )
    assert _run(script) == ["refused: True", "None False"]


def test_an_import_that_fails_leaves_no_stand_in() -> None:
    """When open3d's import fails (here its viewer cannot load: Dash is blocked and the package wants a name the
    stand-in lacks), no stand-in and no half-imported open3d module stay behind, and the error names open3d."""
    script = (
        "import sys\n"
        "sys.modules['dash'] = None\n"
        "from cosim_validation.common.exceptions import MissingDependencyError\n"
        "import cosim_validation.common.open3d_import as m\n"
        "m.VIEWER_NAMES = ('get_plotly_fig', 'draw_plotly')\n"
        "try:\n"
        "    m.load_open3d('a test')\n"
        "except MissingDependencyError as exc:\n"
        "    print('refused:', 'open3d' in str(exc))\n"
        "print(sorted(n for n in sys.modules if n == 'open3d' or n.startswith('open3d.')))\n"
    )
    assert _run(script) == ["refused: True", "[]"]

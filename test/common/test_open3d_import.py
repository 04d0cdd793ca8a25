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


def test_an_open3d_that_wants_more_of_its_viewer_is_imported_as_it_is() -> None:
    """The deferred viewer offers three names; an open3d whose package imports a fourth gets its real viewer."""
    script = (
        "import cosim_validation.common.open3d_import as m\n"
        "m.VIEWER_NAMES = ('get_plotly_fig', 'draw_plotly')\n"  # one of the three the package imports is missing
        "o3d = m.load_open3d('a test')\n"
        "import sys\n"
        "viewer = type(sys.modules[m.VIEWER]).__name__\n"
        "print(viewer, 'dash' in sys.modules, callable(o3d.visualization.draw_plotly_server))\n"
    )
    assert _run(script) == ["module True True"]

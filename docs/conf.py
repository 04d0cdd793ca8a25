"""Sphinx configuration of the cosim_validation documentation (``make docs``).

Laid out as rosdoc2 builds ROS 2 package documentation for docs.ros.org: Sphinx with MyST Markdown, the Python
API from the docstrings through ``sphinx.ext.autodoc`` and ``sphinx.ext.napoleon`` (Google style), and only
extensions that rosdoc2 allows. The Sphinx project is docs/ rather than rosdoc2's default doc/, named by
``sphinx_sourcedir`` in rosdoc2.yaml (exported from package.xml), so the guides stay where README.md links them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if (ROOT / "cosim_validation" / "__init__.py").is_file():  # run by sphinx-build on a checkout, not installed
    sys.path.insert(0, str(ROOT))

import cosim_validation  # noqa: E402  (after the path above)

project = "cosim_validation"
author = "The cosim_validation contributors"
copyright = "the cosim_validation contributors, Apache License 2.0"
release = cosim_validation.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# MyST: GitHub's heading anchors, so that the guides' links (CASES.md#reports) resolve in Sphinx as on GitHub
myst_heading_anchors = 6
myst_enable_extensions = ["colon_fence"]

# The API reference: one page per module, generated from the docstrings by autosummary (docs/api/generated,
# not kept in git), Google-style sections through napoleon.
autosummary_generate = True
autosummary_imported_members = False
# members defined in each module only (a package's __all__ re-exports are documented where they are defined)
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Without nitpicky mode the only Python reference warnings are names that match several objects (``Scenario`` of
# hazards and of supervisor, in a signature that autodoc could not resolve to the full name); Sphinx links the
# first, which these warnings would otherwise turn into a failed build.
suppress_warnings = ["ref.python"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # a dataclass's "Attributes:" as fields of the class, not a second entry per field

html_theme = "alabaster"
html_title = f"cosim_validation {release}"


# The Markdown pages link as GitHub shows them: README.md and CHANGELOG.md at the repository root, the guides in
# docs/. Here README.md is the start page (index.md includes it) and CHANGELOG.md the page changelog.md, so the
# links that leave docs/ are pointed at those pages while Sphinx reads them; the files themselves are unchanged.
ROOT_PAGES = {"README.md": "index.md", "CHANGELOG.md": "changelog.md"}
ROOT_FILES = ("LICENSE", "CITATION.cff")


def root_prefix(srcdir: str | Path) -> str:
    """How the Sphinx project reaches the files of the repository root.

    ``"../"`` from docs/ in a checkout; ``""`` where they lie beside the pages, as rosdoc2 copies README.md,
    CHANGELOG.md and LICENSE into the project it builds.
    """
    return "" if (Path(srcdir) / "README.md").is_file() else "../"


def sphinx_links(text: str, to_root: str, root: str = "../") -> str:
    """``text`` (Markdown) with its links to the root pages pointed at their pages here.

    Args:
        text: a page of docs/ (``to_root`` ``"../"``) or a root page included by one (``to_root`` ``""``).
        to_root: how the page's links spell the repository root.
        root: how the Sphinx project reaches the root's other files (:func:`root_prefix`).
    """
    for name, page in ROOT_PAGES.items():
        text = re.sub(rf"\]\({re.escape(to_root + name)}(?=[#)])", f"]({page}", text)
    if not to_root:  # an included root page: its links to the root's other files, as seen from the project
        for name in ROOT_FILES:
            text = text.replace(f"]({name})", f"]({root}{name})")
    return text


def _on_config_inited(app: Any, config: Any) -> None:
    if not root_prefix(app.srcdir):  # the root pages beside the project are included, not pages of their own
        config.exclude_patterns = [*config.exclude_patterns, *ROOT_PAGES]


def _on_source_read(app: Any, docname: str, source: list[str]) -> None:
    text = sphinx_links(source[0], "../")
    if not root_prefix(app.srcdir):
        text = text.replace("{include} ../", "{include} ")
    source[0] = text


def _on_include_read(app: Any, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    if Path(relative_path).name in ROOT_PAGES:
        content[0] = sphinx_links(content[0], "", root_prefix(app.srcdir))


def setup(app: Any) -> dict[str, bool]:
    """Registers the link rewriting above."""
    app.connect("config-inited", _on_config_inited)
    app.connect("source-read", _on_source_read)
    app.connect("include-read", _on_include_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

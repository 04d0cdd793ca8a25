"""The Sphinx documentation (``make docs``) builds with warnings as errors, and its link rewriting holds.

test/test_docs.py checks the Markdown as GitHub shows it (every relative link and anchor, every ``cosim`` command
of a code block); this builds it as Sphinx does (docs/conf.py: MyST, the API reference from every module's
docstrings), where a broken link, a heading anchor that is not there or a docstring docutils cannot read is a
warning and so a failed build. The full build reads some 440 pages: about 2 min of CPU, so the tests of the built
site (marked ``docs_build``) run in ``make docs``, on the site it has just built with warnings as errors, and not in
``make test``; CI runs both. Run alone (``pytest -m docs_build test/test_docs_build.py``) they build the site on
every core (``-j auto``) from a copy of the pages, so nothing is written into the checkout. The small projects
below, which check that a warning fails the build, run in ``make test``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = [
    "common",
    "anatomy",
    "monitor",
    "robots",
    "testgen",
    "controllers",
    "supervisor",
    "hazards",
    "error_injection",
    "assembly",
    "runs",
    "live",
    "cli",
]
BUILD_TIMEOUT_S = 1800.0


def sphinx(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``sphinx-build -b html -W --keep-going`` of ``source`` into ``out`` (doctrees beside it), documenting the
    package of this checkout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q"]
    command += ["-d", str(out.parent / f"{out.name}-doctrees"), *extra, str(source), str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False, env=env)


def repository_copy(tmp: Path) -> Path:
    """The pages laid out as in the repository: README.md and what it links at the root, docs/ below."""
    for name in ("README.md", "CHANGELOG.md", "LICENSE", "CITATION.cff"):
        shutil.copy2(ROOT / name, tmp / name)
    shutil.copytree(ROOT / "docs", tmp / "docs", ignore=shutil.ignore_patterns("generated", "__pycache__"))
    return tmp / "docs"


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: the one ``make docs`` has just built (``COSIM_BUILT_DOCS``), or built here."""
    if os.environ.get("COSIM_BUILT_DOCS"):
        return Path(os.environ["COSIM_BUILT_DOCS"]).resolve()
    tmp = tmp_path_factory.mktemp("docs")
    result = sphinx(repository_copy(tmp), tmp / "html", "-j", "auto")
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stderr[-8000:]}"
    return tmp / "html"


@pytest.mark.docs_build
def test_the_docs_build_without_warnings(built_docs: Path) -> None:
    index = (built_docs / "index.html").read_text(encoding="utf-8")
    assert "Two commands" in index  # the start page is the README
    assert 'href="CASES.html"' in index  # README's docs/CASES.md, here a page beside it
    guide_pages = {page.stem for page in (ROOT / "docs").glob("*.md")} - {"index"}
    missing = sorted(name for name in guide_pages if not (built_docs / f"{name}.html").is_file())
    assert not missing, missing


@pytest.mark.docs_build
def test_the_api_reference_has_every_package(built_docs: Path) -> None:
    generated = built_docs / "api" / "generated"
    missing = [p for p in PACKAGES if not (generated / f"cosim_validation.{p}.html").is_file()]
    assert not missing, missing
    # a module's page holds its documented objects, from the docstrings
    page = (generated / "cosim_validation.assembly.record_check.html").read_text(encoding="utf-8")
    assert "RecordReport" in page
    assert "What the monitor says about one record" in page


@pytest.mark.docs_build
def test_links_that_leave_docs_point_at_their_pages(built_docs: Path) -> None:
    """A guide's ``../README.md#anchor`` is the start page's anchor; ``../CHANGELOG.md`` the changelog page."""
    cases = (built_docs / "CASES.html").read_text(encoding="utf-8")
    assert 'href="index.html#' in cases
    assert 'href="changelog.html"' in (built_docs / "RESULTS.html").read_text(encoding="utf-8")
    assert "Unreleased" in (built_docs / "changelog.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("See [the guides](CASES.md#no-such-heading).\n", "no-such-heading"),
        ("See [a guide](NO_SUCH_GUIDE.md).\n", "NO_SUCH_GUIDE"),
        ("```{autofunction} cosim_validation.no_such_module.f\n```\n", "no_such_module"),
    ],
    ids=["anchor", "page", "api"],
)
def test_a_broken_page_fails_the_build(tmp_path: Path, page: str, expected: str) -> None:
    """The same configuration (``-c docs``) on a small project: one warning is a failed build, and it is named."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "index.md").write_text(f"# Title\n\n```{{toctree}}\nCASES\n```\n\n{page}", encoding="utf-8")
    (source / "CASES.md").write_text("# Cases\n\n## Reports\n\nText.\n", encoding="utf-8")
    result = sphinx(source, tmp_path / "html", "-c", str(ROOT / "docs"))
    assert result.returncode != 0
    assert expected in result.stderr, result.stderr


def test_a_sound_small_project_builds(tmp_path: Path) -> None:
    """The counterpart of the broken pages: the same project with a good link builds."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "index.md").write_text("# Title\n\n```{toctree}\nCASES\n```\n\n[r](CASES.md#reports)\n", encoding="utf-8")
    (source / "CASES.md").write_text("# Cases\n\n## Reports\n\nText.\n", encoding="utf-8")
    result = sphinx(source, tmp_path / "html", "-c", str(ROOT / "docs"))
    assert result.returncode == 0, result.stderr
    assert 'href="CASES.html#reports"' in (tmp_path / "html" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("layout", ["checkout", "rosdoc2"])
def test_the_readme_is_the_start_page_in_either_layout(tmp_path: Path, layout: str) -> None:
    """index.md includes README.md from the repository root (a checkout) or from beside it (rosdoc2 copies the
    root's README.md, CHANGELOG.md and LICENSE into the project it builds); its links to LICENSE follow."""
    source = tmp_path / "root" / "docs"
    source.mkdir(parents=True)
    root = source.parent if layout == "checkout" else source
    (root / "README.md").write_text("# Package\n\nIntro.\n\n## Two parts\n\nSee [LICENSE](LICENSE).\n", "utf-8")
    (root / "LICENSE").write_text("Apache License 2.0\n", encoding="utf-8")
    (source / "index.md").write_text((ROOT / "docs" / "index.md").read_text(encoding="utf-8").split("```{toctree}")[0])
    result = sphinx(source, tmp_path / "html", "-c", str(ROOT / "docs"))
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "Two parts" in page
    assert re.search(r'href="_downloads/\w+/LICENSE"', page), "README's link to LICENSE is not the file"
    assert not (tmp_path / "html" / "README.html").exists()


def docs_conf() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_conf", ROOT / "docs" / "conf.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("text", "to_root", "expected"),
    [
        ("[README](../README.md#two-commands)", "../", "[README](index.md#two-commands)"),
        ("[the README](../README.md)", "../", "[the README](index.md)"),
        ("[CHANGELOG.md](../CHANGELOG.md)", "../", "[CHANGELOG.md](changelog.md)"),
        ("[guide](CASES.md#reports)", "../", "[guide](CASES.md#reports)"),
        ("[x](../README.mdx)", "../", "[x](../README.mdx)"),
        ("[LICENSE](LICENSE) and [c](CITATION.cff)", "", "[LICENSE](../LICENSE) and [c](../CITATION.cff)"),
        ("[CHANGELOG.md](CHANGELOG.md)", "", "[CHANGELOG.md](changelog.md)"),
        ("[docs/CASES.md](docs/CASES.md)", "", "[docs/CASES.md](docs/CASES.md)"),
    ],
)
def test_sphinx_links(text: str, to_root: str, expected: str) -> None:
    assert docs_conf().sphinx_links(text, to_root) == expected

"""A Ctrl-C is reported as a Ctrl-C wherever it lands: in a compiled module's import, or after it was handled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cosim_validation.common.exceptions import MissingDependencyError
from cosim_validation.common.interrupts import interrupted
from cosim_validation.common.optional import require

# what a compiled module's init does with a KeyboardInterrupt (open3d's pybind11 init: "initialization failed")
BROKEN_INIT = """
try:
    raise KeyboardInterrupt
except KeyboardInterrupt as exc:
    raise ImportError("initialization failed") from exc
"""


def _fails_with(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - the test looks at it
        return caught


def _import_error_after_ctrl_c() -> None:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise ImportError("numba._devicearray failed to import")  # noqa: B904 - the context, as numba leaves it


def _import_error_from_another() -> None:
    try:
        raise ValueError("first")
    except ValueError as first:
        raise ImportError("second") from first


def test_an_error_raised_because_of_a_ctrl_c_is_an_interrupt() -> None:
    with pytest.raises(ImportError) as after_ctrl_c:
        _import_error_after_ctrl_c()
    assert interrupted(after_ctrl_c.value)
    with pytest.raises(ImportError) as after_another:
        _import_error_from_another()
    assert not interrupted(after_another.value)
    assert interrupted(_fails_with(KeyboardInterrupt()))
    assert not interrupted(_fails_with(ImportError("no module named x")))


def test_an_import_a_ctrl_c_broke_is_an_interrupt_not_a_missing_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_by_ctrl_c.py").write_text(BROKEN_INIT)
    (tmp_path / "missing_dependency.py").write_text("import a_package_that_is_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        require("broken_by_ctrl_c", "broken", "a test")
    with pytest.raises(MissingDependencyError, match="needs the optional package 'missing'; install it with"):
        require("a_package_that_is_not_installed", "missing", "a test")


def test_an_installed_package_that_fails_to_import_says_why_and_not_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed but not importable (a dependency of its own missing, or a half-imported module another thread was
    importing at the same time): the error names the import's own failure, not a package to install."""
    (tmp_path / "missing_dependency.py").write_text("import a_package_that_is_not_installed\n")
    (tmp_path / "half_imported.py").write_text("raise ImportError('cannot import name x from partially initialized')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingDependencyError) as dependency:
        require("missing_dependency", "missing", "a test")
    assert str(dependency.value) == (
        "a test needs the package 'missing', which is installed but failed to import: "
        "ModuleNotFoundError: No module named 'a_package_that_is_not_installed'"
    )
    with pytest.raises(MissingDependencyError, match="installed but failed to import: ImportError: cannot import"):
        require("half_imported", "half", "a test")


def _exit_status(tmp_path: Path, before: str, body: str) -> int:
    """The exit status of ``body`` run as ``python -m`` (as ``cosim`` runs) after an extension module's PyRun_* call
    let a KeyboardInterrupt escape that the program then handled (``before`` runs first)."""
    (tmp_path / "handled_ctrl_c.py").write_text(
        "import ctypes, sys\n"
        + before
        + "ctypes.pythonapi.PyRun_SimpleString(b'raise KeyboardInterrupt')  # the interpreter notes it as unhandled\n"
        + body
    )
    done = subprocess.run(
        [sys.executable, "-m", "handled_ctrl_c"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    return done.returncode


def test_the_exit_status_after_a_handled_ctrl_c_is_the_programs(tmp_path: Path) -> None:
    # CPython alone: the process dies of SIGINT although nothing left the program unhandled
    assert _exit_status(tmp_path, "", "sys.exit(130)\n") == -2
    # the command line's entry point gives main()'s status: 130 after a Ctrl-C that main() handled
    entry = "import cosim_validation.cli.main as cli\ncli.main = lambda: 130  # a run that handled a Ctrl-C\n"
    assert _exit_status(tmp_path, entry, "cli.entry_point()\n") == 130


def test_a_ctrl_c_while_the_interpreter_ends_changes_nothing(tmp_path: Path) -> None:
    """main() has returned; a background thread still runs (as a session's bag-check world may after an early error),
    and a Ctrl-C comes while the interpreter waits for it: the status stays main()'s, without a traceback."""
    import signal
    import time

    (tmp_path / "ending.py").write_text(
        "import threading, time\n"
        "import cosim_validation.cli.main as cli\n"
        "def main():\n"
        "    threading.Thread(target=time.sleep, args=(2.0,)).start()\n"
        "    print('main done', flush=True)\n"
        "    return 130\n"
        "cli.main = main\n"
        "cli.entry_point()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "ending"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "main done\n"
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "KeyboardInterrupt" not in err

"""Running SPIN on a generated model: ``spin -a``, the C compiler for the ``pan`` verifier, one search per goal.

Each goal is a never claim; ``pan -a -N goal`` searches for a run that violates it (a reachable bad state or
an accepting cycle), exhaustively (partial-order reduction off: one process, and ``X`` needs it off). A
violation leaves a trail that ``spin -t`` replays, printing the model's ``@`` lines (:mod:`.counterexample`).

The compiled verifier is kept in the on-disk cache (:mod:`cosim_validation.common.disk_cache`, entries
``spin-pan-*``), keyed by the generated C source, the compiler (its path, size and time) and its flags: checking
the same model again, with the same goals, skips the compiler (about 2 CPU-s of the 3-4 a check of the shipped
supervisor costs).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosim_validation.common.disk_cache import load_arrays, store_arrays
from cosim_validation.monitor.statechart.counterexample import Trace, parse_spin_replay
from cosim_validation.monitor.statechart.errors import ModelCheckError
from cosim_validation.monitor.statechart.promela import PromelaModel

MAX_DEPTH = 2_000_000  # pan's search depth bound (steps of the atomic blocks); a cut search is an error
_ERROR = re.compile(r"\bError\b|syntax error")
#: the C compiler's options for the verifier: optimised, quiet, no partial-order reduction, room for the state
_CFLAGS = ("-O2", "-w", "-DNOREDUCE", "-DVECTORSZ=4096")


@dataclass(frozen=True)
class GoalResult:
    """SPIN's verdict on one goal.

    Attributes:
        goal: Goal name.
        holds: No run violates it (the search was complete).
        trace: The counterexample when violated (a lasso for a violated liveness goal).
        states: States stored by the search.
        transitions: Transitions explored.
        time_s: Wall time of the search [s].
    """

    goal: str
    holds: bool
    trace: Trace | None
    states: int
    transitions: int
    time_s: float


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ModelCheckError(
            f"{name!r} not found: model checking needs SPIN and a C compiler "
            "(Debian packages spin and gcc; make setup installs them)"
        )
    return path


def _run(cmd: list[str], cwd: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise ModelCheckError(f"{' '.join(cmd)} did not finish within {timeout_s:g} s") from None
    except OSError as exc:
        raise ModelCheckError(f"cannot run {cmd[0]}: {exc}") from None


class SpinSyntaxError(ModelCheckError):
    """``spin -a`` rejected the model text (the message is SPIN's)."""


def spin_syntax(text: str, workdir: Path, timeout_s: float = 60.0) -> str:
    """SPIN's complaint about a model text ("" if ``spin -a`` accepts it); writes ``syntax.pml``.

    Args:
        text: The Promela model text.
        workdir: Folder for ``syntax.pml`` and SPIN's generated files; created if missing.
        timeout_s: Time limit of ``spin -a`` [s].

    Raises:
        ModelCheckError: SPIN is missing, cannot be run or exceeds ``timeout_s``.
    """
    spin = _tool("spin")
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "syntax.pml").write_text(text, encoding="utf-8")
    result = _run([spin, "-a", "syntax.pml"], workdir, timeout_s)
    out = result.stdout + result.stderr
    if result.returncode == 0 and not _ERROR.search(out):
        return ""
    return " ".join(line.strip() for line in out.splitlines() if _ERROR.search(line)) or out.strip()


def compile_model(model: PromelaModel, workdir: Path, timeout_s: float = 300.0) -> Path:
    """Write ``model.pml`` into ``workdir``, generate and compile the verifier; the path of ``pan``.

    Args:
        model: The Promela model (:func:`~cosim_validation.monitor.statechart.promela.to_promela`).
        workdir: Folder for ``model.pml``, ``pan.c`` and ``pan``; created if missing.
        timeout_s: Time limit of each tool run (``spin -a``, then the compiler) [s].

    Raises:
        SpinSyntaxError: SPIN rejects the model (normally a goal's formula in SPIN's syntax).
        ModelCheckError: The tools are missing or fail otherwise.
    """
    spin, gcc = _tool("spin"), _tool("gcc")
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "model.pml").write_text(model.text, encoding="utf-8")
    generated = _run([spin, "-a", "model.pml"], workdir, timeout_s)
    text = generated.stdout + generated.stderr
    if generated.returncode != 0 or _ERROR.search(text):
        message = " ".join(line.strip() for line in text.splitlines() if _ERROR.search(line)) or text.strip()
        raise SpinSyntaxError(f"SPIN rejected the generated model: {message[-2000:]}")
    pan = workdir / "pan"
    key = f"spin-pan-{_verifier_key(gcc, workdir)}"
    cached = load_arrays(key)  # None when absent or damaged (the cache checks its entries)
    if cached is not None and "pan" in cached:
        pan.write_bytes(cached["pan"].tobytes())
        pan.chmod(0o755)
        return pan
    built = _run([gcc, *_CFLAGS, "-o", "pan", "pan.c"], workdir, timeout_s)
    if built.returncode != 0:
        raise ModelCheckError(f"compiling SPIN's verifier failed:\n{built.stderr.strip()[-2000:]}")
    store_arrays(key, {"pan": np.frombuffer(pan.read_bytes(), dtype=np.uint8)})
    return pan


def _verifier_key(gcc: str, workdir: Path) -> str:
    """The cache key of the verifier ``spin -a`` generated in ``workdir``.

    Made of its C sources (``pan.c`` and the files it includes, ``pan.h``, ``pan.m``, ...), the compiler (resolved
    path, size, modification time) and the flags.
    """
    compiler = Path(gcc).resolve()
    stat = compiler.stat()
    digest = hashlib.sha256()
    for source in sorted(workdir.glob("pan.*")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    digest.update(repr((str(compiler), stat.st_size, stat.st_mtime_ns, _CFLAGS)).encode())
    return digest.hexdigest()[:32]


def verify_goal(pan: Path, model: PromelaModel, goal: str, timeout_s: float = 600.0) -> GoalResult:
    """Search for a violation of ``goal`` with the compiled verifier; replay the trail of one found.

    Args:
        pan: The verifier compiled by :func:`compile_model`; its folder holds ``model.pml``.
        model: The model ``pan`` was compiled from (its step table reads the replay).
        goal: Name of the goal's ``ltl`` claim in the model.
        timeout_s: Time limit of the search, and separately of the trail's replay [s].

    Raises:
        ModelCheckError: The search was cut at :data:`MAX_DEPTH`, timed out, or its output is unexpected.
    """
    workdir = pan.parent
    trail = workdir / "model.pml.trail"
    trail.unlink(missing_ok=True)
    start = time.perf_counter()
    result = _run([str(pan), "-a", f"-m{MAX_DEPTH}", "-N", goal], workdir, timeout_s)
    elapsed = time.perf_counter() - start
    out = result.stdout + result.stderr
    if "max search depth too small" in out:
        raise ModelCheckError(f"goal {goal!r}: the search was cut at depth {MAX_DEPTH}; the verdict is incomplete")
    errors = _number(r"errors: (\d+)", out, goal)
    states = _number(r"(\d+) states, stored", out, goal)
    transitions = _number(r"(\d+) transitions", out, goal)
    if errors == 0:
        return GoalResult(goal, True, None, states, transitions, elapsed)
    if not trail.exists():
        raise ModelCheckError(f"goal {goal!r}: SPIN reported a violation but wrote no trail:\n{out[-2000:]}")
    replay = _run([_tool("spin"), "-t", "model.pml"], workdir, timeout_s)
    trace = parse_spin_replay(replay.stdout, model.table)
    trail.rename(workdir / f"{goal}.trail")
    return GoalResult(goal, False, trace, states, transitions, elapsed)


def _number(pattern: str, text: str, goal: str) -> int:
    match = re.search(pattern, text)
    if match is None:
        raise ModelCheckError(f"goal {goal!r}: unexpected output of SPIN's verifier:\n{text[-2000:]}")
    return int(match.group(1))

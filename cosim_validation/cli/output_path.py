"""The one check of every output a ``cosim`` command is asked to write, made before its first write.

An output must not be one of the command's inputs (``cosim errors train ds.parquet -o ds.parquet`` replaced the
user's dataset with the model), nor a file a run directory keeps of its inputs (``cosim testgen -o
RUN/suites/<id>.parquet`` replaced the suite a campaign's report and resume read), and must have the suffix of the
format written (``-o m.txt`` for an npz model).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from cosim_validation.common.exceptions import InputError


def _resolved(option: str, value: str | Path) -> Path:
    if not str(value):  # '' resolved to the working directory: a campaign wrote its run into it
        raise InputError(f"{option}: expected a path, got an empty text")
    try:
        return Path(value).expanduser().resolve()
    except (RuntimeError, OSError) as exc:  # a loop of symbolic links (RuntimeError before Python 3.13)
        if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP:
            raise InputError(f"{option} {str(value)!r}: a loop of symbolic links") from None
        raise InputError(f"{option} {str(value)!r}: cannot be resolved ({exc})") from None


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)  # hard links, bind mounts
    except OSError:
        return False


def _stored_input(out: Path) -> str | None:
    """What ``out`` is to the run directory it lies in, if the run keeps it as a copy of an input; else None.

    Such a copy is a file the run's ``inputs.json`` lists (the case study, properties, graph, supervisor files) or a
    campaign's copy of a suite (``RUN/suites/<suite_id>.parquet``, which ``cosim report`` and ``--resume`` read).
    """
    from cosim_validation.common.config.bounded_file import read_user_text
    from cosim_validation.common.exceptions import ConfigError
    from cosim_validation.runs.run_inputs import MANIFEST

    for run in (out.parent, out.parent.parent):
        try:  # a regular file of bounded size only: a FIFO or a device named so is not a run's manifest
            entries = json.loads(read_user_text(run / MANIFEST, max_bytes=1 << 20))
        except (ConfigError, OSError, ValueError):
            entries = {}
        for role, entry in entries.items() if isinstance(entries, dict) else ():
            copy = entry.get("copy") if isinstance(entry, dict) else None
            if isinstance(copy, str) and copy and _same(out, (run / copy).resolve()):
                return f"the copy of the {role} input the run directory {run} keeps ({MANIFEST})"
    if out.parent.name == "suites" and (out.parent.parent / "results.sqlite").is_file():
        return f"the copy of a suite the run directory {out.parent.parent} keeps (cosim report and --resume read it)"
    return None


def check_namespaces(options: Mapping[str, str]) -> None:
    """Refuse a ROS namespace option that no topic can live under (``--namespace '/a b'``), before any work.

    Args:
        options: The namespace given, by option (``{"--namespace": "/PSM1"}``).

    Raises:
        InputError: Names the option and what is wrong.
    """
    from cosim_validation.live.ros.crtk_topics import namespace_problem

    for option, namespace in options.items():
        problem = namespace_problem(namespace)
        if problem is not None:
            raise InputError(f"{option}: {problem}")


def checked_output(
    option: str,
    value: str | Path,
    inputs: Mapping[str, str | Path | None],
    suffixes: Iterable[str] = (),
    *,
    result: bool = False,
) -> Path:
    """``value`` as the path to write, after refusing an input or a wrong suffix.

    A result (a dataset collected from a robot, a trained model, a suite) is never written over: an existing file
    is refused. A view of results (a PNG, an HTML page, a layout) is written again.

    Args:
        option: The option that names the output (``-o``, ``--html``), for the message.
        value: The path given.
        inputs: The command's input files by option (``{"DATASET": "ds.parquet", "--config": ...}``); None
            entries are skipped.
        suffixes: The suffixes the format allows (``(".npz",)``); empty: any.
        result: The output is a result: refuse a file that exists.

    Raises:
        InputError: The output is one of the inputs (same file once resolved), has another suffix, or is a result
            whose file exists.
    """
    out = _resolved(option, value)
    for name, given in inputs.items():
        if given is not None and str(given) and _same(out, _resolved(name, given)):
            raise InputError(f"{option} {str(value)!r} is the input {name} ({given}); it would be overwritten")
    stored = _stored_input(out)
    if stored is not None:
        raise InputError(f"{option} {str(value)!r} is {stored}; it would be overwritten (write it elsewhere)")
    if str(value).endswith(("/", os.sep)):  # 'model.npz/' wrote the file model.npz and said 'wrote model.npz/'
        raise InputError(f"{option} {str(value)!r}: expected a file name, not a folder (it ends in a separator)")
    allowed = tuple(suffixes)
    if allowed and Path(value).suffix.lower() not in allowed:
        raise InputError(f"{option} {str(value)!r}: expected a file ending in {' or '.join(allowed)}")
    if result and out.is_dir():
        raise InputError(f"{option} {str(value)!r} is a directory; expected a file name")
    if result and out.exists():  # an earlier model or dataset was replaced without a word
        raise InputError(f"{option} {str(value)!r}: already exists; refusing to overwrite it (choose another name)")
    return out


def checked_run_dir(
    option: str,
    value: str | Path,
    inputs: Mapping[str, str | Path | None],
    *,
    may_hold: bool = False,
    resume_flag: str = "",
) -> Path:
    """``value`` as a directory to write into, after refusing an input, a file, or a directory already in use.

    Args:
        option: The option that names the directory (``--out``, ``-o``), for the message.
        value: The path given.
        inputs: The command's inputs by option; None or empty entries are skipped.
        may_hold: The command continues or rewrites what the directory holds (``--resume``, a documented
            overwrite): a directory with files in it is accepted.
        resume_flag: The option that would continue the run in it, named in the message (``--resume``).

    Raises:
        InputError: The directory is one of the inputs or inside an input directory, is a file, or already holds
            files (unless ``may_hold``).
    """
    out = _resolved(option, value)
    sources = {name: _resolved(name, given) for name, given in inputs.items() if given is not None and str(given)}
    for name, source in sources.items():
        if _same(out, source):
            raise InputError(f"{option} {str(value)!r} is the input {name} ({inputs[name]}); it would be overwritten")
    stored = _stored_input(out)
    if stored is not None:
        raise InputError(f"{option} {str(value)!r} is {stored}; it would be overwritten (write it elsewhere)")
    if out.exists() and not out.is_dir():
        raise InputError(f"{option} {str(value)!r} is a file, expected a directory")
    for name, source in sources.items():
        if source.is_dir() and source in out.parents:  # export RUN -o RUN/inputs
            raise InputError(f"{option} {str(value)!r} is inside the input {name} ({inputs[name]}); write it elsewhere")
    if out.is_dir() and not may_hold:
        from cosim_validation.runs.run_lock import LOCK_NAME

        held = sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME)  # a lock alone: RunLock names its holder
        if held:
            shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
            also = f" or add {resume_flag} to continue the run in it" if resume_flag else ""
            raise InputError(f"{option} {str(value)!r} already holds files ({shown}); choose another {option}{also}")
    return out


def check_folder(option: str, value: str | Path) -> None:
    """Refuse an output whose folder does not exist, once the inputs are read.

    A write there failed naming its temporary file (``x.mcap.part: No such file or directory``).

    Args:
        option: The option that names the output, for the message.
        value: The path given.

    Raises:
        InputError: The folder does not exist.
    """
    folder = Path(value).parent
    if not folder.is_dir():
        raise InputError(f"{option} {str(value)!r}: folder {str(folder)!r} does not exist")

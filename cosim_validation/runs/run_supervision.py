"""A supervised run's supervisor files read back from the run directory (docs/SUPERVISOR.md, "Runs").

A supervised campaign or session copies the supervisor's configuration, machine (and its LTL goals), needle force
model, scenario and teleoperation script into ``RUN/inputs/`` (:mod:`~cosim_validation.runs.run_inputs`). The
copies are what the run was made with, so whatever reads the run again reads them: the campaign's workers (a new
run and a resume alike), ``cosim supervisor check|replay|show RUN``. A copy of the configuration names its machine
and force model relative to the original's folder; :class:`StoredSupervision` gives every file by role, and
:class:`~cosim_validation.assembly.supervision.Supervision` takes them as overrides (``files``,
:func:`~cosim_validation.supervisor.supervisor_inputs.supervisor_inputs`), so the run never reads an original
again.

A resume (:func:`check_resume`) must name the run's own supervisor files (compared as absolute paths, so the
working directory does not matter when the path still names the same file); an original edited since the run
started refuses the resume (the same refusal as an edited configuration); an original that is gone (moved,
deleted) is no obstacle: the copy is read, after a warning that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.config import resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.runs.run_inputs import MANIFEST, SUPERVISOR_ROLES, file_sha256, kept_path, read_manifest


@dataclass(frozen=True)
class StoredSupervision:
    """The copies of a run's supervisor files.

    Attributes:
        run_dir: The run directory.
        files: Role (of :data:`SUPERVISOR_ROLES`) -> the copy, for every supervisor file the run kept.
        originals: Role -> the original's absolute path when the run started.
    """

    run_dir: Path
    files: Mapping[str, Path]
    originals: Mapping[str, Path]

    @property
    def config(self) -> Path:
        """The copy of the supervisor configuration."""
        return self.files["supervisor"]

    @property
    def scenario(self) -> Path | None:
        """The copy of the scenario, if the run had one."""
        return self.files.get("supervisor_scenario")

    def role_file(self, role: str, what: str) -> Path:
        """The copy of ``role``.

        Args:
            role: The file's role (one of :data:`~cosim_validation.runs.run_inputs.SUPERVISOR_ROLES`).
            what: The file in words, for the message (``supervisor machine``).

        Raises:
            InputError: The run kept none (``what`` names it in the message).
        """
        if role not in self.files:
            raise InputError(f"{self.run_dir}: the run kept no copy of its {what} ({MANIFEST} has no {role!r})")
        return self.files[role]


def stored_supervision(run_dir: str | Path) -> StoredSupervision | None:
    """The run's copies of its supervisor files; None when it kept none (no supervisor, or made before copies).

    Args:
        run_dir: The run directory.

    Raises:
        InputError: A bad manifest, or a copy that is missing or changed since the run was made.
    """
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if "supervisor" not in manifest:
        return None
    files: dict[str, Path] = {}
    originals: dict[str, Path] = {}
    for role in SUPERVISOR_ROLES:
        entry = manifest.get(role)
        if entry is None:
            continue
        copy = run_dir / entry.copy
        if not copy.is_file():
            raise InputError(f"{copy}: the run's copy of its {role} is missing")
        if file_sha256(copy) != entry.sha256:
            raise InputError(f"{copy}: the run's copy of its {role} changed since the run was made ({MANIFEST})")
        files[role], originals[role] = copy, kept_path(run_dir, entry.original)
    return StoredSupervision(run_dir, files, originals)


def check_resume(
    stored: StoredSupervision,
    config_path: str | Path | None,
    scenario_path: str | Path | None,
    warn: Callable[[str], None],
) -> None:
    """Whether a resume with these supervisor options may continue the run of ``stored``.

    Args:
        stored: The run's copies.
        config_path: The supervisor configuration the resume names (option or ``campaign.supervisor``).
        scenario_path: The scenario option of the resume, or None.
        warn: Told about every original that is gone (its copy is read).

    Raises:
        InputError: The options name other files than the run's, or an original was edited since.
    """
    where = f"{stored.run_dir}: cannot resume"
    for role, given, option in (
        ("supervisor", config_path, "--supervisor"),
        ("supervisor_scenario", scenario_path, "--supervisor-scenario"),
    ):
        if given is None:
            continue  # no supervisor or no scenario: the run's meta says whether it had one
        original = stored.originals.get(role)
        named = resolve_resource(given).resolve()
        if original is None:
            raise InputError(f"{where}, it was made without a {role.replace('_', ' ')} ({option} {given})")
        if named != original:
            raise InputError(
                f"{where}, it was made with another {role.replace('_', ' ')}: {original} ({option} {given} is {named})"
            )
    for role, original in stored.originals.items():
        if not original.is_file():
            warn(f"{original}: gone since the run started; the resume reads the run's copy {stored.files[role]}")
        elif file_sha256(original) != file_sha256(stored.files[role]):
            raise InputError(
                f"{where}, it was made with another config: {original} was edited since the run "
                f"started (the run's copy: {stored.files[role]})"
            )

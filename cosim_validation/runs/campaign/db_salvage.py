"""A damaged results database: find the damage, keep every case that is still whole, run the others again.

A corrupted last page of a finished ``results.sqlite`` made ``--resume`` report "0 cases run, 128 already
stored" and ``cosim report`` end in a traceback. :func:`integrity_problems` runs SQLite's
``PRAGMA quick_check`` (the b-trees and pages, not the index contents). :func:`salvage` copies what can
still be read into a new database and keeps the damaged file beside it.

Which cases survive: every table is read in rowid order; where SQLite cannot read a range of rows (a damaged
page), the rows of that range are lost. A case is written in one transaction, so the rows of consecutive
cases have increasing rowids in every table; the lost rows of a table belong to the cases stored between
the readable rows on either side of the gap, and all of those cases are dropped (they run again on
resume). A case is kept only with its ``cases`` row, its ``timings`` row and no gap that could hold its rows.
"""

from __future__ import annotations

import io
import os
import sqlite3
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim_validation.runs.campaign.stores import BUSY_TIMEOUT_S

#: Tables of a case, with the column naming the case.
CASE_TABLES: tuple[str, ...] = ("cases", "timings", "verdicts", "kpis", "trajectories")
_LARGEST_ROWID = 1 << 62
#: Columns that hold numbers (or NULL) in every run (a text there was put by hand, or is damage SQLite cannot see).
_NUMERIC = {
    "cases": (
        "case_index",
        "source_x_m",
        "source_y_m",
        "source_z_m",
        "target_x_m",
        "target_y_m",
        "target_z_m",
        "granularity_m",
        "target_depth_m",
        "duration_s",
    ),
    "timings": ("wall_s",),
    "verdicts": ("margin", "first_violation_time_s"),
    "kpis": ("value",),
}


@dataclass(frozen=True)
class SalvageReport:
    """What a salvage kept and lost.

    Attributes:
        problems: What ``quick_check`` said (first lines).
        kept_cases: Cases copied whole.
        dropped_cases: Test ids of cases with unreadable rows (to run again).
        damaged_copy: Where the damaged file was moved.
    """

    problems: tuple[str, ...]
    kept_cases: int
    dropped_cases: tuple[str, ...]
    damaged_copy: Path

    def message(self, path: Path) -> str:
        """One line for the user.

        Args:
            path: The database that was salvaged, as the line names it.
        """
        return (
            f"{path} was damaged ({'; '.join(self.problems[:3])}): kept {self.kept_cases} whole cases; "
            f"{len(self.dropped_cases)} stored cases with unreadable rows, and any case whose row is unreadable, "
            f"run again; the damaged file is kept as {self.damaged_copy.name}"
        )


def integrity_problems(connection: sqlite3.Connection, limit: int = 5) -> list[str]:
    """``PRAGMA quick_check``'s findings (empty if the database is sound).

    A database SQLite cannot read at all gives its error as the one finding.

    Args:
        connection: An open connection to the database to check.
        limit: The most findings ``quick_check`` reports.

    Raises:
        sqlite3.DatabaseError: The database is busy or locked (not damage).
    """
    try:
        rows = [str(r[0]) for r in connection.execute(f"PRAGMA quick_check({int(limit)})")]
    except sqlite3.DatabaseError as exc:
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in (5, 6):  # busy, locked: not damage
            raise
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def wrong_types(connection: sqlite3.Connection) -> tuple[str, str, str, Any] | None:
    """The first (table, test id, column, value) whose stored value is not a number where one belongs, or None.

    Args:
        connection: An open connection to a results database (with the ``cases``, ``timings``, ``verdicts`` and
            ``kpis`` tables).
    """
    for table, columns in _NUMERIC.items():
        which = " ".join(f"WHEN typeof({c}) NOT IN ('integer', 'real', 'null') THEN '{c}'" for c in columns)
        value = " ".join(f"WHEN typeof({c}) NOT IN ('integer', 'real', 'null') THEN {c}" for c in columns)
        row = connection.execute(
            f"SELECT test_id, CASE {which} END AS bad, CASE {value} END FROM {table} WHERE bad IS NOT NULL LIMIT 1"
        ).fetchone()
        if row is not None:
            return table, str(row[0]), str(row[1]), row[2]
    return None


def _readable_rows(db: sqlite3.Connection, table: str) -> tuple[list[tuple[Any, ...]], list[tuple[int, int]]]:
    """Every readable row of ``table`` (rowid first) and the rowid gaps (after, before) that could not be read."""
    rows: list[tuple[Any, ...]] = []
    gaps: list[tuple[int, int]] = []
    last = 0
    while True:
        try:
            for row in db.execute(f"SELECT rowid, * FROM {table} WHERE rowid > ? ORDER BY rowid", (last,)):
                rows.append(row)
                last = int(row[0])
            return rows, gaps
        except sqlite3.DatabaseError:
            resume = _next_readable(db, table, last)
            gaps.append((last, resume if resume is not None else _LARGEST_ROWID))
            if resume is None:
                return rows, gaps
            last = resume - 1


def _next_readable(db: sqlite3.Connection, table: str, after: int) -> int | None:
    """The first rowid beyond a damaged range that SQLite can reach, probing further and further away."""
    step = 1
    while after + step < _LARGEST_ROWID:
        try:
            found = db.execute(f"SELECT rowid FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1", (after + step,))
            row = found.fetchone()
            return None if row is None else int(row[0])
        except sqlite3.DatabaseError:
            step *= 2
    return None


def _blob_ok(blob: Any) -> bool:
    """Whether a stored trajectory is an intact npz (zip CRCs checked).

    A damaged page can hand back garbage bytes that SQLite itself reads without complaint.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(blob))) as archive:
            return archive.testzip() is None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error, TypeError):
        return False


def _damaged_cases(
    tables: dict[str, tuple[list[tuple[Any, ...]], list[tuple[int, int]]]], order: dict[str, int]
) -> set[str]:
    """Test ids whose rows may lie in a gap of any table (``order``: test id -> rowid in ``cases``)."""
    damaged: set[str] = set()
    for rows, gaps in tables.values():
        for after, before in gaps:
            lo = max((order.get(str(r[1]), -1) for r in rows if int(r[0]) <= after), default=0)
            hi = min(
                (order.get(str(r[1]), _LARGEST_ROWID) for r in rows if int(r[0]) >= before), default=_LARGEST_ROWID
            )
            damaged |= {t for t, o in order.items() if lo <= o <= hi}
    return damaged


def salvage(path: Path, schema: str) -> SalvageReport:
    """Copy the whole cases of a damaged database into a new one at ``path``; keep the old file beside it.

    Args:
        path: The damaged ``results.sqlite`` (closed).
        schema: The SQL that creates the tables (the results schema).
    """
    source = sqlite3.connect(path)
    try:
        problems = integrity_problems(source)
        tables = {name: _readable_rows(source, name) for name in CASE_TABLES}
        meta, _ = _readable_rows(source, "meta")
    finally:
        source.close()
    order = {str(r[1]): int(r[0]) for r in tables["cases"][0]}
    timed = {str(r[1]) for r in tables["timings"][0]}
    garbled = {str(r[1]) for r in tables["trajectories"][0] if not _blob_ok(r[3])}
    keep = (set(order) & timed) - _damaged_cases(tables, order) - garbled
    fresh = path.with_name(f".{path.name}.salvage")
    fresh.unlink(missing_ok=True)
    target = sqlite3.connect(fresh)
    with target:
        target.executescript(schema)
        target.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [r[1:] for r in meta])
        for name in CASE_TABLES:
            rows = [r[1:] for r in tables[name][0] if str(r[1]) in keep]
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                target.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
    target.close()
    damaged_copy = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, damaged_copy)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    os.replace(fresh, path)
    dropped = tuple(sorted(set(order) - keep))
    return SalvageReport(tuple(problems), len(keep), dropped, damaged_copy)


def salvage_if_damaged(path: Path, schema: str) -> SalvageReport | None:
    """Check a database before it is resumed, and :func:`salvage` it if it is damaged (None if sound).

    Args:
        path: The run's ``results.sqlite`` (closed).
        schema: The SQL that creates the tables (the results schema), for the salvaged copy.

    Raises:
        InputError: The file cannot be opened as SQLite, or is damaged and not a results database.
    """
    from cosim_validation.common.exceptions import InputError

    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
    except sqlite3.DatabaseError as exc:
        raise InputError(f"{path}: cannot open as SQLite ({exc})") from None
    try:
        problems = integrity_problems(connection)
        if problems:
            connection.execute("SELECT COUNT(*) FROM meta").fetchone()  # a results database, if damaged
    except sqlite3.DatabaseError as exc:
        raise InputError(
            f"{path}: cannot open as SQLite ({exc}): not a results database, nothing to resume; move it away to "
            "start the run again"
        ) from None
    finally:
        connection.close()
    return salvage(path, schema) if problems else None

"""The field table of docs/MOVEIT.md ("Request and response fields") against moveit_msgs as built at set-up.

Every field of the table's field column (what the controller fills, the stand-in reads or fills) must be a field of
that message in moveit_msgs, nested paths followed through the message types (``scene.world.collision_objects[]``),
so that the controller, the stand-in and the documentation keep to the interface a real move_group serves. (The
other columns mix sub-fields with values, ``base_link`` or ``SUCCESS``, and are not checked.)
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from cosim_validation.common.config import package_root

#: the table's message names -> (package, kind, name, request or response part)
MESSAGES = {
    "ApplyPlanningScene request": ("moveit_msgs", "srv", "ApplyPlanningScene", "Request"),
    "ApplyPlanningScene response": ("moveit_msgs", "srv", "ApplyPlanningScene", "Response"),
    "GetPlanningScene request": ("moveit_msgs", "srv", "GetPlanningScene", "Request"),
    "GetPlanningScene response": ("moveit_msgs", "srv", "GetPlanningScene", "Response"),
    "MotionPlanRequest": ("moveit_msgs", "msg", "MotionPlanRequest", None),
    "MotionPlanResponse": ("moveit_msgs", "msg", "MotionPlanResponse", None),
    "GetCartesianPath request": ("moveit_msgs", "srv", "GetCartesianPath", "Request"),
    "GetCartesianPath response": ("moveit_msgs", "srv", "GetCartesianPath", "Response"),
}


def _table() -> list[tuple[str, str]]:
    """(message, field path) of every field the table names, in order."""
    text = (package_root() / "docs" / "MOVEIT.md").read_text()
    section = text.split("### Request and response fields", 1)[1].split("\n## ", 1)[0]
    rows, message = [], ""
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or cells[0] in ("message", "---"):
            continue
        message = cells[0] or message
        rows += [(message, field) for field in re.findall(r"`([a-z_][a-z_.\[\]]*)`", cells[1])]
    return rows


def _type(package: str, kind: str, name: str, part: str | None) -> Any:
    module = importlib.import_module(f"{package}.{kind}")
    found = getattr(module, name)
    return getattr(found, part) if part else found


def _follow(message_type: Any, path: str) -> str:
    """The type name of ``path`` in ``message_type`` (raises KeyError naming the missing step)."""
    current, kind = message_type, ""
    for step in path.replace("[]", "").split("."):
        fields = current.get_fields_and_field_types()
        if step not in fields:
            raise KeyError(f"{current.__name__} has no field {step!r} (fields: {', '.join(fields)})")
        kind = fields[step]
        inner = re.sub(r"^sequence<(.*?)(, \d+)?>$", r"\1", kind)
        if "/" in inner:
            package, name = inner.split("/")
            current = _type(package, "msg", name, None)
    return kind


TABLE = _table()


def test_the_table_names_every_message_it_documents() -> None:
    assert {message for message, _ in TABLE} == set(MESSAGES)
    assert len(TABLE) >= 30  # each row's fields, not the header


@pytest.mark.parametrize(("message", "path"), TABLE, ids=[f"{m}:{p}" for m, p in TABLE])
def test_every_documented_field_is_in_moveit_msgs(message: str, path: str) -> None:
    assert _follow(_type(*MESSAGES[message]), path)


def test_a_field_moveit_msgs_does_not_have_is_caught() -> None:
    """The check itself: a misspelt or invented field fails it."""
    with pytest.raises(KeyError, match="has no field 'fractions'"):
        _follow(_type(*MESSAGES["GetCartesianPath response"]), "fractions")
    with pytest.raises(KeyError, match="has no field 'colision_objects'"):
        _follow(_type(*MESSAGES["ApplyPlanningScene request"]), "scene.world.colision_objects[]")

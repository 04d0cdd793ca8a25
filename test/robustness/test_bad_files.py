"""Bad files of every other kind, made from valid ones: meshes (through ``cosim testgen``), suites (``cosim
campaign``, ``cosim session``), trajectory records (``cosim check``), bags (``cosim replay``, ``cosim bag
recover``) and results databases (``cosim report``, ``cosim export``, ``cosim campaign --resume``)."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import trimesh
import yaml

from cosim_validation.anatomy import builtin_mesh
from test.robustness.harness import Builder, Case, Workspace, run_case
from test.runs.campaign.run_fixtures import copy_run


# ---------------------------------------------------------------------------------------------------- meshes
def _heart() -> trimesh.Trimesh:
    mesh = builtin_mesh("heart")
    return trimesh.Trimesh(mesh.vertices_m, mesh.faces, process=False)


def _stl(mesh: trimesh.Trimesh) -> bytes:
    return bytes(mesh.export(file_type="stl"))


def _open(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    mesh.update_faces(np.arange(len(mesh.faces)) != 0)
    return mesh


def _inverted(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    mesh.invert()
    return mesh


def _pocket(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    pocket = trimesh.creation.box(extents=[0.01, 0.01, 0.01]).apply_translation(mesh.bounds[1] + 0.02)
    pocket.invert()
    return trimesh.util.concatenate([mesh, pocket])


def _overlap(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    return trimesh.util.concatenate([mesh, mesh.copy().apply_translation([0.02, 0.0, 0.0])])


def _chamber(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """A second chamber as an open shell beside the heart: repair drops it, more than 5 % of the volume."""
    atrium = trimesh.creation.icosphere(subdivisions=3, radius=0.04)
    atrium.update_faces(atrium.face_normals[:, 1] < 0.95)
    return trimesh.util.concatenate([mesh, atrium.apply_translation(mesh.bounds[1] + 0.05)])


MESHES: dict[str, tuple[str, Callable[[], bytes], str, str]] = {  # name: (file, content, extra keys, message)
    "empty": ("heart.stl", lambda: b"", "", "truncated binary STL: 0 bytes"),
    "truncated": ("heart.stl", lambda: _stl(_heart())[:5000], "", "truncated or damaged binary STL"),
    "ascii_truncated": ("heart.stl", lambda: b"solid h\nfacet normal 0 0 1\n outer loop\n", "", "no 'endsolid'"),
    "garbage_ply": ("heart.ply", lambda: b"\x00\x01 not a ply", "", "cannot parse as PLY"),
    "unknown_format": ("heart.vtk", lambda: b"x", "", "unknown mesh format '.vtk'"),
    "open": ("heart.stl", lambda: _stl(_open(_heart())), "", "not watertight"),
    "inverted": ("heart.stl", lambda: _stl(_inverted(_heart())), "", "inverted: faces are wound inward"),
    "pocket": ("heart.stl", lambda: _stl(_pocket(_heart())), "", "inverted shells: 1 shells"),
    "overlap": ("heart.stl", lambda: _stl(_overlap(_heart())), "", "overlapping shells"),
    "millimetres_as_metres": (
        "heart.stl",
        lambda: _stl(_heart().apply_scale(1000.0)),
        "",
        "implausible size for unit 'm'",
    ),
    "repair_removes_too_much": (
        "heart.stl",
        lambda: _stl(_chamber(_heart())),
        ", repair: true",
        "% of the volume: kept",
    ),
    "missing": ("absent.stl", lambda: b"", "", "mesh file not found"),
    "flat": ("heart.stl", lambda: _stl(_flat()), "", "heart.stl"),
    "flat_repaired": ("heart.stl", lambda: _stl(_flat()), ", repair: true", "repair was tried"),
    "degenerate_only": ("heart.stl", lambda: _stl(_degenerate()), ", repair: true", "heart.stl"),
    "nan_vertices": (
        "heart.stl",
        lambda: (
            b"solid h\nfacet normal 0 0 1\nouter loop\nvertex nan 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
            b"endloop\nendfacet\nendsolid h\n"
        ),
        "",
        "heart.stl",
    ),
}


def _flat() -> trimesh.Trimesh:
    """Four coplanar corners closed as a tetrahedron: watertight, zero volume."""
    corners = [[0, 0, 0.05], [0.05, 0, 0.05], [0, 0.05, 0.05], [0.05, 0.05, 0.05]]
    return trimesh.Trimesh(corners, [[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]], process=False)


def _degenerate() -> trimesh.Trimesh:
    """Triangles of zero area only (every corner on one line)."""
    points = [[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [0.02, 0.0, 0.0], [0.03, 0.0, 0.0]]
    return trimesh.Trimesh(points, [[0, 1, 2], [1, 2, 3], [0, 2, 3], [0, 1, 3]], process=False)


def _mesh_case(name: str, folder: Path, ws: Workspace) -> Case:
    filename, content, extra, message = MESHES[name]
    if name != "missing":
        (folder / filename).write_bytes(content())
    config = yaml.safe_load(ws.config.read_text())
    heart = next(m for m in config["anatomy"]["models"] if m["name"] == "heart")
    heart.pop("builtin")
    heart |= {"file": filename, "unit": "m"} | ({"repair": True} if extra else {})
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = folder / "suite.parquet"
    return Case(
        ["testgen", "--config", str(path), "--granularity-mm", "60", "-o", str(out)], (filename, message), (out,)
    )


# ---------------------------------------------------------------------------------------------------- suites
def _rewrite_suite(ws: Workspace, edit: Callable[[pa.Table], pa.Table]) -> bytes:
    table = edit(pq.read_table(ws.suite))
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _meta(table: pa.Table, change: Callable[[dict[str, object]], object]) -> pa.Table:
    meta = json.loads(table.schema.metadata[b"cosim_validation.suite"])
    changed = change(meta)
    return table.replace_schema_metadata({b"cosim_validation.suite": json.dumps(changed).encode()})


def _drop_key(key: str) -> Callable[[dict[str, object]], object]:
    def change(meta: dict[str, object]) -> object:
        meta.pop(key)
        return meta

    return change


def _moved_target(table: pa.Table) -> pa.Table:
    column = table.column("target_x_m").to_numpy().copy()
    column[0] += 0.001
    return table.set_column(table.column_names.index("target_x_m"), "target_x_m", [column])


SUITES: dict[str, tuple[Callable[[Workspace], bytes], str]] = {
    "text": (lambda ws: b"target,source\n1,2\n", "not a readable Parquet file"),
    "empty": (lambda ws: b"", "not a readable Parquet file"),
    "no_metadata": (lambda ws: _rewrite_suite(ws, lambda t: t.replace_schema_metadata({})), "not a cosim_validation"),
    "metadata_not_json": (
        lambda ws: _rewrite_suite(ws, lambda t: t.replace_schema_metadata({b"cosim_validation.suite": b"{"})),
        "suite metadata is not valid JSON",
    ),
    "metadata_lacks_seed": (lambda ws: _rewrite_suite(ws, lambda t: _meta(t, _drop_key("seed"))), "lacks ['seed']"),
    "format_99": (
        lambda ws: _rewrite_suite(ws, lambda t: _meta(t, lambda m: m | {"format": 99})),
        "suite format 99",
    ),
    "column_missing": (lambda ws: _rewrite_suite(ws, lambda t: t.drop(["target_z_m"])), "missing column 'target_z_m'"),
    "column_type": (
        lambda ws: _rewrite_suite(
            ws, lambda t: t.set_column(t.column_names.index("cube_i"), "cube_i", [t.column("cube_i").cast(pa.string())])
        ),
        "column 'cube_i' has type string",
    ),
    "nulls": (
        lambda ws: _rewrite_suite(
            ws,
            lambda t: t.set_column(
                t.column_names.index("source_x_m"), "source_x_m", [pa.array([None] * t.num_rows, pa.float64())]
            ),
        ),
        "column 'source_x_m' holds",
    ),
    "edited_cases": (lambda ws: _rewrite_suite(ws, _moved_target), "the cases do not match the suite's id"),
}


def _suite_case(name: str, command: str, folder: Path, ws: Workspace) -> Case:
    content, message = SUITES[name]
    path = folder / "bad.parquet"
    path.write_bytes(content(ws))
    out = folder / "run"
    if command == "campaign":
        argv = ["campaign", "--config", str(ws.config), "--suite", str(path), "--workers", "1", "--out", str(out)]
    else:
        argv = ["session", "--suite", str(path), "--cases", "1", "--out", str(out)]
    return Case(argv, ("bad.parquet", message), (out,))


# ---------------------------------------------------------------------------------------------------- records
def _npz(ws: Workspace, edit: Callable[[dict[str, object], dict[str, np.ndarray]], object]) -> bytes:
    with np.load(ws.records["virtual"]) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(arrays.pop("header").tobytes())
    header = edit(header, arrays) or header
    buffer = io.BytesIO()
    np.savez_compressed(buffer, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    return buffer.getvalue()


def _flip(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(flipped) // 3] ^= 0xFF
    return bytes(flipped)


def _backwards(h: dict[str, object], a: dict[str, np.ndarray]) -> None:
    a["t_s"] = a["t_s"][::-1].copy()


def _drop(field: str) -> Callable[[dict[str, object], dict[str, np.ndarray]], None]:
    def edit(h: dict[str, object], a: dict[str, np.ndarray]) -> None:
        (h if field in h else a).pop(field)  # type: ignore[attr-defined]

    return edit


RECORDS: dict[str, tuple[Callable[[Workspace], bytes], str]] = {
    "empty": (lambda ws: b"", "the file is empty"),
    "truncated": (lambda ws: ws.records["virtual"].read_bytes()[:3000], "damaged or not an npz"),
    "bit_flipped": (lambda ws: _flip(ws.records["virtual"].read_bytes()), "damaged or not an npz"),
    "text": (lambda ws: b"t_s,q\n0,0\n", "not an npz archive: no zip signature"),
    # random bytes: numpy's refusal suggested loading the file "unsafely" as a pickle
    "random_bytes": (lambda ws: bytes(range(256)) * 12, "not an npz archive: no zip signature"),
    "header_list": (lambda ws: _npz(ws, lambda h, a: [h]), "header: expected a JSON object, got a JSON list"),
    "no_robot": (lambda ws: _npz(ws, _drop("robot")), "header: 'robot' missing"),
    "needle_long": (lambda ws: _npz(ws, lambda h, a: h | {"needle_length_m": "long"}), "'needle_length_m' must be"),
    "needle_huge": (lambda ws: _npz(ws, lambda h, a: h | {"needle_length_m": 1e300}), "needle_length_m must be 0 to 1"),
    "needle_tiny": (lambda ws: _npz(ws, lambda h, a: h | {"needle_length_m": 1e-9}), "needle_length_m must be"),
    "no_t_s": (lambda ws: _npz(ws, _drop("t_s")), "array 't_s' missing"),
    "robot_unknown": (lambda ws: _npz(ws, lambda h, a: h | {"robot": "hologram"}), "unknown robot 'hologram'"),
    "format_2": (lambda ws: _npz(ws, lambda h, a: h | {"format": "x/2"}), "unsupported trajectory record format"),
    "joint_names_text": (lambda ws: _npz(ws, lambda h, a: h | {"joint_names": "j1"}), "'joint_names' must be"),
    "six_joints": (
        lambda ws: _npz(ws, lambda h, a: a.update(q_measured=a["q_measured"][:, :6]) or None),
        "q_measured has shape",
    ),
    "time_backwards": (lambda ws: _npz(ws, _backwards), "time goes backwards"),
    "strings_array": (
        lambda ws: _npz(ws, lambda h, a: a.update(stage=np.array(["x"] * len(a["stage"]))) or None),
        "array 'stage' holds",
    ),
    "supervisor_mode_unknown": (
        lambda ws: _npz(ws, lambda h, a: a.update(supervisor=np.full(len(a["stage"]), 7, dtype=np.uint8)) or None),
        "supervisor 7 at sample 0 is not a supervisor mode",
    ),
    # a stage of 200 was a ValueError traceback; a NaN time and a tip 1e300 m away were judged (with warnings)
    "stage_unknown": (
        lambda ws: _npz(ws, lambda h, a: a.update(stage=np.full(len(a["stage"]), 200, dtype=np.uint8)) or None),
        "stage 200 at sample 0 is not a stage (0 to 5)",
    ),
    "time_nan": (lambda ws: _npz(ws, lambda h, a: a["t_s"].__setitem__(3, np.nan)), "t_s holds nan at sample 3"),
    "tip_far": (
        lambda ws: _npz(ws, lambda h, a: a.update(tip_pos_m=a["tip_pos_m"] * 1e300) or None),
        "tip_pos_m holds",
    ),
    "joint_infinite": (
        lambda ws: _npz(ws, lambda h, a: a["q_measured"].__setitem__((1, 2), np.inf)),
        "q_measured holds inf at sample 1",
    ),
    # every verdict "unknown (empty trace: no samples)" and exit 0, the code of a pass
    "no_samples": (
        lambda ws: _npz(
            ws, lambda h, a: a.update({k: v[:0] for k, v in a.items() if v.ndim and len(v) == len(a["t_s"])}) or None
        ),
        "the record holds no samples: nothing to check",
    ),
    "supervisor_mode_text": (
        lambda ws: _npz(ws, lambda h, a: a.update(supervisor=np.array(["stopped"] * len(a["stage"]))) or None),
        "array 'supervisor' holds",
    ),
}


# ---------------------------------------------------------------------------------------------------- bags
def _string_on_joint_states(folder: Path, ws: Workspace) -> bytes:
    from cosim_validation.live.ros.bag import BagWriter, project_typestore

    store = project_typestore()
    writer = BagWriter(folder / "string.mcap")
    writer.add_topic("/cosim/virtual/joint_states", "std_msgs/msg/String")
    for k in range(3):
        writer.write_message(
            "/cosim/virtual/joint_states", k, store.types["std_msgs/msg/String"](data="hi"), "std_msgs/msg/String"
        )
    path = writer.close()
    data = path.read_bytes()
    path.unlink()
    return data


BAGS: dict[str, tuple[Callable[[Path, Workspace], bytes], str]] = {
    "empty": (lambda f, ws: b"", "not a readable rosbag2/MCAP file"),
    "text": (lambda f, ws: b"topic,time\n", "not a readable rosbag2/MCAP file"),
    "cut_short": (lambda f, ws: ws.bag.read_bytes()[:-300], "cosim bag recover"),
    "string_on_joint_states": (
        _string_on_joint_states,
        "/cosim/virtual/joint_states: type std_msgs/msg/String, expected sensor_msgs/msg/JointState",
    ),
}


# ---------------------------------------------------------------------------------------------------- databases
def _database(folder: Path, ws: Workspace, kind: str) -> Path:
    run = folder / "run"
    if kind == "no_database":
        run.mkdir()
        return run
    copy_run(ws.run_dir, run)
    db = run / "results.sqlite"
    if kind == "text":
        db.write_text("not a database")
    elif kind == "empty_sqlite":
        db.unlink()
        sqlite3.connect(db).close()
    elif kind == "schema_99":
        with sqlite3.connect(db) as connection:
            connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    elif kind == "swapped_robots":  # the first case's virtual and physical trajectories each under the other's name
        with sqlite3.connect(db) as connection:
            (test_id,) = connection.execute(
                "SELECT test_id FROM cases WHERE test_id IN (SELECT test_id FROM trajectories) ORDER BY case_index"
            ).fetchone()
            sql = "UPDATE trajectories SET robot = ? WHERE test_id = ? AND robot = ?"
            for old, new in (("virtual", "swap"), ("physical", "virtual"), ("swap", "physical")):
                connection.execute(sql, (new, test_id, old))
    elif kind == "damaged":
        with db.open("r+b") as f:
            f.seek(db.stat().st_size - 4096)
            f.write(bytes(range(256)) * 16)
    return run


DATABASES = {
    "text": "cannot open as SQLite or damaged (file is not a database)",
    "empty_sqlite": "not a results database",
    "schema_99": "results schema 99",
    "damaged": "the database is damaged (quick_check:",
    "no_database": "not a run directory (no results.sqlite",
}


# ---------------------------------------------------------------------------------------------------- the corpus
def _corpus() -> dict[str, Builder]:
    cases: dict[str, Builder] = {}
    for name in MESHES:
        cases[f"mesh:{name}"] = lambda f, ws, n=name: _mesh_case(n, f, ws)
    for name in SUITES:
        for command in ("campaign", "session"):
            cases[f"suite:{name}:{command}"] = lambda f, ws, n=name, c=command: _suite_case(n, c, f, ws)
    for name, (content, message) in RECORDS.items():
        cases[f"record:{name}"] = lambda f, ws, c=content, m=message: _record_case(f, ws, c, m)
        if name != "needle_tiny":  # a 1 nm needle is a valid record; only the arm's self-collision model refuses it
            cases[f"record:{name}:expected"] = lambda f, ws, c=content, m=message: _record_case(f, ws, c, m, True)
    for name, (content, message) in BAGS.items():
        cases[f"bag:{name}"] = lambda f, ws, c=content, m=message: _bag_case(f, ws, c, m)
    cases["bag:recover_not_mcap"] = lambda f, ws: _recover_case(f, b"PK\x03\x04", "not an MCAP file")
    cases["bag:recover_only_magic"] = lambda f, ws: _recover_case(f, b"\x89MCAP0\r\n", "nothing to recover")
    cases["bag:recover_missing"] = lambda f, ws: Case(["bag", "recover", str(f / "gone.mcap.part")], ("gone.mcap",))
    cases["bag:recover_into_no_folder"] = lambda f, ws: Case(  # it named its temporary file, not the folder
        ["bag", "recover", str(ws.bag), "-o", str(f / "gone" / "x.mcap")],
        ("folder", "gone' does not exist"),
        (f / "gone",),
    )
    for kind, message in DATABASES.items():
        cases[f"database:{kind}:report"] = lambda f, ws, k=kind, m=message: _report_case(f, ws, k, m)
        cases[f"database:{kind}:export"] = lambda f, ws, k=kind, m=message: _export_case(f, ws, k, m)
    cases["database:swapped_robots:export"] = lambda f, ws: _export_case(f, ws, "swapped_robots", "trajectory of case")
    for kind in ("text", "schema_99"):
        cases[f"database:{kind}:resume"] = lambda f, ws, k=kind: _resume_case(f, ws, k)
    return cases


def _record_case(
    folder: Path, ws: Workspace, content: Callable[[Workspace], bytes], message: str, as_expected: bool = False
) -> Case:
    path = folder / "bad.npz"
    path.write_bytes(content(ws))
    if as_expected:
        return Case(["check", str(ws.records["virtual"]), "--expected", str(path)], ("bad.npz", message))
    return Case(["check", str(path), str(ws.records["expected"])], ("bad.npz", message))


def _bag_case(folder: Path, ws: Workspace, content: Callable[[Path, Workspace], bytes], message: str) -> Case:
    path = folder / "bad.mcap"
    path.write_bytes(content(folder, ws))
    return Case(["replay", str(path)], ("bad.mcap", message))


def _recover_case(folder: Path, content: bytes, message: str) -> Case:
    path = folder / "bad.mcap.part"
    path.write_bytes(content)
    return Case(["bag", "recover", str(path)], ("bad.mcap.part", message), (folder / "bad.mcap",))


def _report_case(folder: Path, ws: Workspace, kind: str, message: str) -> Case:
    run = _database(folder, ws, kind)
    return Case(["report", str(run)], ("results.sqlite" if kind != "no_database" else "run", message))


def _export_case(folder: Path, ws: Workspace, kind: str, message: str) -> Case:
    run = _database(folder, ws, kind)
    out = folder / "records"
    return Case(
        ["export", str(run), "-o", str(out)], ("results.sqlite" if kind != "no_database" else "run", message), (out,)
    )


def _resume_case(folder: Path, ws: Workspace, kind: str) -> Case:
    run = _database(folder, ws, kind)
    before = sorted(p.name for p in run.iterdir())
    argv = ["campaign", "--config", str(ws.config), "--suite", str(ws.suite), "--workers", "1", "--out", str(run)]
    message = "not a results database, nothing to resume" if kind == "text" else "results schema 99"
    del before
    return Case([*argv, "--resume"], ("results.sqlite", message))


CORPUS = _corpus()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_file(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    run_case(CORPUS[name](tmp_path, workspace), sorted(CORPUS).index(name) % 2 == 1, capfd)

"""Bad inputs of learned error injection (issue 18): datasets and error models through ``cosim errors``.

Datasets with a missing column, text in a numeric column, another robot's metadata, a cut-short file, too few rows
to train; models that are truncated, empty, or another robot's. Rows with NaN joints, marker dropouts and
registration errors above the threshold are not errors: they are dropped and counted (test/error_injection).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.error_injection.dataset_io import write_parquet
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.robots.model import RobotConfig
from test.error_injection.synthetic import synthetic_dataset, train_synthetic_model
from test.robots.virtual.plans import CONFIG_PATH
from test.robustness.harness import Case, Workspace, run_case


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A valid dataset, a dataset too small to train on, a valid model and another robot's model."""
    kinematics = RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).kinematics
    folder = tmp_path_factory.mktemp("error_inputs")
    paths = {name: folder / name for name in ("good.parquet", "small.parquet", "model.npz", "foreign.npz")}
    write_parquet(synthetic_dataset(kinematics, 300, 60, seed=1), paths["good.parquet"])
    write_parquet(synthetic_dataset(kinematics, 120, 30, seed=1), paths["small.parquet"])
    model = train_synthetic_model(kinematics, n_rows=400)
    model.save(paths["model.npz"])
    replace(model, robot=RobotIdentity(kinematics.joint_names, "a" * 64)).save(paths["foreign.npz"])
    return paths


def _table_without(good: Path, out: Path, column: str) -> Path:
    table = pq.read_table(good)
    pq.write_table(table.drop([column]), out)
    return out


def _text_column(good: Path, out: Path) -> Path:
    import pyarrow as pa

    table = pq.read_table(good)
    index = table.column_names.index("measured_joint2_rad")
    column = pa.array(["x"] * table.num_rows)
    pq.write_table(table.set_column(index, "measured_joint2_rad", column), out)
    return out


def _foreign_dataset(good: Path, out: Path) -> Path:
    table = pq.read_table(good)
    meta = dict(table.schema.metadata or {})
    meta[b"cosim_validation.error_dataset"] = meta[b"cosim_validation.error_dataset"].replace(
        b'"model_hash": "', b'"model_hash": "00'
    )
    pq.write_table(table.replace_schema_metadata(meta), out)
    return out


def _cut(source: Path, out: Path, share: float) -> Path:
    data = source.read_bytes()
    out.write_bytes(data[: int(share * len(data))])
    return out


def _corpus(inputs: dict[str, Path]) -> dict[str, Callable[[Path], Case]]:
    good, model = inputs["good.parquet"], inputs["model.npz"]

    def evaluate(dataset: Path, model_path: Path, names: tuple[str, ...]) -> Case:
        return Case(["errors", "evaluate", str(dataset), "--model", str(model_path)], names)

    def train(dataset: Path, out: Path, names: tuple[str, ...]) -> Case:
        return Case(["errors", "train", str(dataset), "-o", str(out), "--max-epochs", "5"], names, (out,))

    return {
        "dataset:missing_column": lambda f: train(
            _table_without(good, f / "bad.parquet", "marker_qw"), f / "m.npz", ("bad.parquet", "'marker_qw' missing")
        ),
        "dataset:text_column": lambda f: train(
            _text_column(good, f / "bad.parquet"), f / "m.npz", ("bad.parquet", "measured_joint2_rad")
        ),
        "dataset:another_robot": lambda f: train(
            _foreign_dataset(good, f / "bad.parquet"), f / "m.npz", ("recorded on another robot",)
        ),
        "dataset:cut_short": lambda f: train(
            _cut(good, f / "bad.parquet", 0.6), f / "m.npz", ("bad.parquet", "cannot read an error dataset")
        ),
        "dataset:too_few_rows": lambda f: train(
            inputs["small.parquet"], f / "m.npz", ("NN1 (training rows)", "at least 200")
        ),
        "model:truncated": lambda f: evaluate(
            good, _cut(model, f / "bad.npz", 0.5), ("bad.npz", "not an intact error model")
        ),
        "model:empty": lambda f: evaluate(good, _cut(model, f / "bad.npz", 0.0), ("bad.npz", "empty")),
        "model:another_robot": lambda f: evaluate(
            good, inputs["foreign.npz"], ("foreign.npz", "made for another robot model")
        ),
        "model:missing": lambda f: evaluate(good, f / "gone.npz", ("gone.npz", "cannot read the error model")),
    }


NAMES = sorted(_corpus({k: Path(k) for k in ("good.parquet", "small.parquet", "model.npz", "foreign.npz")}))


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_bad_error_input(
    name: str, as_json: bool, tmp_path: Path, inputs: dict[str, Path], capfd: pytest.CaptureFixture[str]
) -> None:
    case = _corpus(inputs)[name](tmp_path)
    run_case(case, as_json, capfd)


def _from_run(ws: Workspace, out: Path, *extra: str) -> list[str]:
    return ["errors", "collect", "--from-run", str(ws.run_dir), "-o", str(out), *extra]


#: ``cosim errors collect --from-run``: an unknown held-out case, an unknown robot, a folder that is not a run.
FROM_RUN: dict[str, Callable[[Path, Workspace], Case]] = {
    "from_run:unknown_test_case": lambda f, ws: Case(
        _from_run(ws, f / "d.parquet", "--test-cases", "no-such-case"),
        ("--test-cases", "no-such-case"),
        (f / "d.parquet",),
    ),
    "from_run:empty_test_case": lambda f, ws: Case(  # ",," held out nothing without a word
        _from_run(ws, f / "d.parquet", "--test-cases", ",,"),
        ("--test-cases", "',,' holds an empty case id"),
        (f / "d.parquet",),
    ),
    "from_run:unknown_robot": lambda f, ws: Case(
        _from_run(ws, f / "d.parquet", "--robot", "real"), ("'real'", "expected"), (f / "d.parquet",)
    ),
    # options of the other kind of collection were ignored without a word (a full default collection ran)
    "from_run:driving_options": lambda f, ws: Case(
        _from_run(ws, f / "d.parquet", "--goals", "5", "--seed", "3"),
        ("--goals, --seed: not used with --from-run",),
        (f / "d.parquet",),
    ),
    "from_run:test_cases_without_run": lambda f, ws: Case(
        ["errors", "collect", "--test-cases", "x", "-o", str(f / "d.parquet")],
        ("--test-cases: only with --from-run",),
        (f / "d.parquet",),
    ),
    "from_run:not_a_run": lambda f, ws: Case(
        ["errors", "collect", "--from-run", str(f), "-o", str(f / "d.parquet")],
        (str(f), "results.sqlite"),
        (f / "d.parquet",),
    ),
}


@pytest.mark.parametrize("name", sorted(FROM_RUN))
def test_bad_collection_run(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    run_case(FROM_RUN[name](tmp_path, workspace), sorted(FROM_RUN).index(name) % 2 == 1, capfd)


def _collection_config(folder: Path, collection: dict[str, object]) -> Path:
    """The shipped case study with ``controllers.collection`` set to ``collection``."""
    import yaml

    tree = yaml.safe_load(CONFIG_PATH.read_text())
    tree["campaign"]["properties"] = str(CONFIG_PATH.parent / tree["campaign"]["properties"])
    tree["controllers"]["collection"] = collection
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


#: ``controllers.collection`` (the error_collection case; cosim errors collect's defaults): an unknown key, a
#: settle time of zero, a count that is not a whole number.
COLLECTION_CONFIGS: dict[str, tuple[dict[str, object], tuple[str, ...]]] = {
    "collection:unknown_key": ({"goal": 3}, ("case.yaml", "controllers.collection", "goal")),
    "collection:zero_settle": ({"settle_s": 0.0}, ("case.yaml", "controllers.collection", "settle_s out of range")),
    "collection:fractional_goals": ({"goals": 2.5}, ("case.yaml", "controllers.collection.goals")),
    # absurdly large: refused at once (a billion goals never ended; 1e12 s of motion ran out of memory)
    "collection:a_billion_goals": ({"goals": 10**9}, ("controllers.collection", "goals out of range", "1..10000")),
    "collection:huge_test_time": ({"test_s": 1e12}, ("controllers.collection", "test_s out of range", "86400")),
    "collection:huge_repeats": ({"repeats": 10**8}, ("controllers.collection", "repeats out of range", "1..1000")),
}


@pytest.mark.parametrize("name", sorted(COLLECTION_CONFIGS))
def test_bad_collection_settings(name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    collection, says = COLLECTION_CONFIGS[name]
    config = _collection_config(tmp_path, collection)
    argv = ["errors", "collect", "--config", str(config), "-o", str(tmp_path / "d.parquet")]
    run_case(Case(argv, says, (tmp_path / "d.parquet",)), sorted(COLLECTION_CONFIGS).index(name) % 2 == 1, capfd)

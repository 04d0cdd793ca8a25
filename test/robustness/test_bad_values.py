"""Values of the right type that mean nothing physical, each refused where it is read with one ``error:`` line
naming the file and the key (or the option): noise, rates and ranges of the emulated robot, seeds past 32 bits,
a setpoint rate of a nanohertz, a fault delay of 10**12 servo cycles, replay at an infinite rate, CSV imports
whose times are not finite or that hold no row, and ROS namespaces no topic can live under. None needs the
shared workspace; each runs under a time limit."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cosim_validation.common.config import package_root
from test.robustness.harness import Case, run_fast_case

SHIPPED = package_root() / "config"
_RUN_CASE = ["run-case", "--backend", "emulated", "--target", "0.45", "0.0", "0.05"]

#: name: (text in the shipped configuration, its replacement, the key the error must name)
CONFIG_VALUES: dict[str, tuple[str, str, str]] = {
    "encoder_noise_negative": ("noise_std_rad: 1.0e-5", "noise_std_rad: -1.0e-5", "encoder.noise_std_rad"),
    "tracker_noise_negative": ("position_noise_std_m: 2.0e-4", "position_noise_std_m: -2.0e-4", "position_noise"),
    "dropout_rate_negative": ("dropout_rate_hz: 0.05", "dropout_rate_hz: -0.05", "marker.dropout_rate_hz"),
    "dropout_duration_negative": ("dropout_duration_s: 0.5", "dropout_duration_s: -0.5", "dropout_duration_s"),
    "range_reversed": ("range_m: [0.5, 2.0]", "range_m: [2.0, 0.5]", "marker.range_m"),
    "range_negative": ("range_m: [0.5, 2.0]", "range_m: [-1.0, 2.0]", "marker.range_m"),
    "emulated_seed_80_bits": ("    seed: 0\n", f"    seed: {2**80}\n", "backends.emulated.seed"),
    "emulated_seed_negative": ("    seed: 0\n", "    seed: -1\n", "backends.emulated.seed"),
    "ompl_seed_80_bits": ("time_limit_s: 2.0, seed: 0}", f"time_limit_s: 2.0, seed: {2**80}}}", "ompl.seed"),
    "sampling_rate_nanohertz": ("sampling_rate_hz: 10.0", "sampling_rate_hz: 1.0e-9", "planning.sampling_rate_hz"),
    "sampling_rate_zero": ("sampling_rate_hz: 10.0", "sampling_rate_hz: 0.0", "planning.sampling_rate_hz"),
    "sampling_rate_megahertz": ("sampling_rate_hz: 10.0", "sampling_rate_hz: 1.0e6", "planning.sampling_rate_hz"),
    "latency_negative": ("command_latency_s: 0.005", "command_latency_s: -0.005", "command_latency_s"),
    # a picosecond physics step never ended a case (the run hung); an OMPL limit of 1e300 s is no limit
    "physics_step_picosecond": (
        "  physics_timestep_s: 0.002",
        "  physics_timestep_s: 1.0e-12",
        "backends.physics_timestep_s",
    ),
    "physics_step_100ns": (
        "  physics_timestep_s: 0.002",
        "  physics_timestep_s: 1.0e-7",
        "backends.physics_timestep_s",
    ),
    "emulated_physics_step_picosecond": (
        "    physics_timestep_s: 0.001",
        "    physics_timestep_s: 1.0e-12",
        "backends.emulated.physics_timestep_s",
    ),
    "emulated_physics_step_second": (
        "    physics_timestep_s: 0.001",
        "    physics_timestep_s: 1.0",
        "backends.emulated.physics_timestep_s",
    ),
    # a Cartesian tip limit no insertion has: 1e-9 m/s and 1e-15 m/s^3 ended the time scaling in a traceback, 1e9 m/s
    # was taken; a collision step of 1e-12 rad asked for a 368 GiB array
    # a joint jerk limit of 1e-6 rad/s^3 made a 365 s case
    "joint_jerk_micro": ("jerk: [5000.0,", "jerk: [1.0e-6,", "limits.jerk: expected 7 numbers >= 0.001"),
    "injection_velocity_nano": ("injection: {velocity_m_s: 0.02,", "injection: {velocity_m_s: 1.0e-9,", "velocity_m_s"),
    "injection_velocity_giga": ("injection: {velocity_m_s: 0.02,", "injection: {velocity_m_s: 1.0e+9,", "velocity_m_s"),
    "injection_jerk_femto": ("jerk_m_s3: 1.0}", "jerk_m_s3: 1.0e-15}", "planning.injection.jerk_m_s3"),
    "collision_step_pico": ("collision_step_rad: 0.02", "collision_step_rad: 1.0e-12", "planning.collision_step_rad"),
    "ompl_time_limit_1e300": ("time_limit_s: 2.0, seed: 0}", "time_limit_s: 1.0e+300, seed: 0}", "ompl.time_limit_s"),
    "ompl_time_limit_subnormal": (
        "time_limit_s: 2.0, seed: 0}",
        "time_limit_s: 5.0e-324, seed: 0}",
        "ompl.time_limit_s",
    ),
    # a planner scale of a millionth ended the time parametrisation (ruckig) in a traceback
    "joint_velocity_scale_micro": ("joint_velocity_scale: 0.5", "joint_velocity_scale: 1.0e-6", "joint_velocity_scale"),
    "joint_acceleration_scale_nano": (
        "joint_acceleration_scale: 0.5",
        "joint_acceleration_scale: 1.0e-9",
        "planning.joint_acceleration_scale",
    ),
    # a subnormal encoder step overflowed the quantisation: "q[0, 0] (joint1) is not finite", no key named
    "encoder_resolution_subnormal": ("resolution_rad: 6.0e-6", "resolution_rad: 5.0e-324", "encoder.resolution_rad"),
    # a reserve the needle cannot give: every case was refused as too deep, and the campaign exited 0
    # magnitudes no arm has, taken and run (exit 0), or every case refused with a 300-digit distance
    "velocity_limit_1e300": ("velocity: [2.175, 2.175,", "velocity: [1.0e+300, 2.175,", "limits.velocity[0]"),
    "servo_gain_1e300": ("kp_nm_per_rad: [10000.0,", "kp_nm_per_rad: [1.0e+300,", "kp_nm_per_rad[0]"),
    "armature_1e300": ("armature_kg_m2: [0.3,", "armature_kg_m2: [1.0e+300,", "armature_kg_m2[0]"),
    "friction_1e300": ("coulomb_friction_nm: [2.0,", "coulomb_friction_nm: [1.0e+300,", "coulomb_friction_nm[0]"),
    "arm_clearance_1e300": ("  arm_clearance_m: 0.01 ", "  arm_clearance_m: 1.0e+300 ", "planning.arm_clearance_m"),
    "guarded_clearance_1e300": ("    clearance_m: 0.01 ", "    clearance_m: 1.0e+300 ", "guarded.clearance_m"),
    "forbidden_clearance_1e300": (
        "forbidden_clearance_m: 0.005 ",
        "forbidden_clearance_m: 1.0e+300 ",
        "validator.forbidden_clearance_m",
    ),
    "default_source_1e200": ("default_source_m: [0.45,", "default_source_m: [1.0e+200,", "default_source_m[0]"),
    "needle_reserve_past_the_needle": (
        "needle_reserve_m: 0.04 ",
        "needle_reserve_m: 0.5 ",
        "planning.needle_reserve_m",
    ),
    "needle_reserve_the_whole_needle": ("needle_reserve_m: 0.04 ", "needle_reserve_m: 0.3 ", "needle_reserve_m: 0.3 m"),
}


#: The same for the ``testgen`` section, read by ``cosim testgen`` (a suite of sources 1e300 m away was written)
TESTGEN_VALUES: dict[str, tuple[str, str, str]] = {
    "testgen_margin_1e300": ("margin_m: 0.0005 ", "margin_m: 1.0e+300 ", "testgen.margin_m"),
    "source_region_centre_1e300": ("center_m: [0.45, 0.0, 0.30]", "center_m: [1.0e+300, 0.0, 0.30]", "center_m[0]"),
    "source_region_extent_1e300": ("half_extent_m: [0.04,", "half_extent_m: [1.0e+300,", "half_extent_m[0]"),
}


def _config_case(name: str, folder: Path) -> Case:
    if name in TESTGEN_VALUES:
        old, new, key = TESTGEN_VALUES[name]
        config = folder / "case.yaml"
        config.write_text((SHIPPED / "needle_insertion.yaml").read_text().replace(old, new, 1))
        out = folder / "s.parquet"
        return Case(
            ["testgen", "--config", str(config), "--granularity-mm", "40", "-o", str(out)], ("case.yaml", key), (out,)
        )
    old, new, key = CONFIG_VALUES[name]
    text = (SHIPPED / "needle_insertion.yaml").read_text()
    assert old in text, old
    config = folder / "case.yaml"
    config.write_text(text.replace(old, new, 1))
    shutil.copyfile(SHIPPED / "properties.yaml", folder / "properties.yaml")
    return Case([*_RUN_CASE, "--config", str(config)], ("case.yaml", key))


def _fault_value_case(folder: Path) -> Case:
    """A sudden jump of 1e300 rad (relative): taken, and the case ran."""
    text = (SHIPPED / "hazards.yaml").read_text()
    assert "value: 0.05, relative: true" in text
    library = folder / "hazards.yaml"
    library.write_text(text.replace("value: 0.05, relative: true", "value: 1.0e+300, relative: true", 1))
    argv = [*_RUN_CASE, "--config", str(SHIPPED / "needle_insertion.yaml")]
    return Case([*argv, "--filter", f"physical=hazards:sudden_jump@{library}"], ("hazards.yaml", "fault.value"))


def _trigger_sample_case(folder: Path) -> Case:
    """A trigger at control cycle 10**23: taken, a hazard that could never happen."""
    text = (SHIPPED / "hazards.yaml").read_text()
    assert "trigger: {kind: time, at_s: 5.0}" in text
    library = folder / "hazards.yaml"
    never = f"trigger: {{kind: sample, sample: {10**23}}}"
    library.write_text(text.replace("trigger: {kind: time, at_s: 5.0}", never, 1))
    argv = [*_RUN_CASE, "--config", str(SHIPPED / "needle_insertion.yaml")]
    return Case([*argv, "--filter", f"physical=hazards:sudden_jump@{library}"], ("hazards.yaml", "trigger.sample"))


#: Fault delays of the hazard library (``scenarios.command_delay.fault.delay_cycles``).
DELAYS = {"delay_10e12": "1000000000000", "delay_zero": "0", "delay_over_10_s": "10001"}


def _delay_case(cycles: str, folder: Path) -> Case:
    text = (SHIPPED / "hazards.yaml").read_text()
    library = folder / "hazards.yaml"
    library.write_text(text.replace("delay_cycles: 3}", f"delay_cycles: {cycles}}}", 1))
    argv = [*_RUN_CASE, "--config", str(SHIPPED / "needle_insertion.yaml")]
    filter_ = f"physical=hazards:command_delay@{library}"
    return Case([*argv, "--filter", filter_], ("hazards.yaml", "delay_cycles"))


def _csv(folder: Path, time_s: str, rows: int = 3, column_name: str = "time_s") -> Path:
    """A CSV in the documented columns, the first ``rows`` rows holding ``time_s`` in ``column_name``."""
    from cosim_validation.common.config import load_config
    from cosim_validation.error_injection.dataset_io import write_csv
    from cosim_validation.robots.model import RobotConfig
    from test.error_injection.synthetic import synthetic_dataset

    kinematics = RobotConfig.from_config(load_config(SHIPPED / "needle_insertion.yaml")["robot"]).kinematics
    good = folder / "good.csv"
    write_csv(synthetic_dataset(kinematics, 30, 10, seed=1), good)
    header, *lines = good.read_text().splitlines()
    column = header.split(",").index(column_name)
    edited = []
    for line in lines[:rows]:
        cells = line.split(",")
        cells[column] = time_s
        edited.append(",".join(cells))
    path = folder / "theirs.csv"
    path.write_text("\n".join([header, *edited]) + "\n")
    return path


def _import_case(folder: Path, time_s: str, rows: int, says: str, column_name: str = "time_s") -> Case:
    source = _csv(folder, time_s, rows, column_name)
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case(argv, ("theirs.csv", says), (out,))


def _record_case(folder: Path, test_id: str) -> Case:
    """An import of the documented CSV as a trajectory record under the test id ``test_id``."""
    _csv(folder, "0.0", 0)
    source = folder / "good.csv"
    out = folder / "r.npz"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case([*argv, "--test-id", test_id], ("--test-id", repr(test_id)), (out,))  # good.csv itself is fine


def _scaled_case(folder: Path, prefix: str, factor: float, says: str, calibrate: bool = False) -> Case:
    """An import (or ``errors calibrate``) of the documented CSV with every column named ``prefix...`` multiplied by
    ``factor`` (another unit)."""
    _csv(folder, "0.0", 0)
    header, *lines = (folder / "good.csv").read_text().splitlines()
    scaled = [i for i, name in enumerate(header.split(",")) if name.startswith(prefix)]
    rows = []
    for line in lines:
        cells = line.split(",")
        for i in scaled:
            cells[i] = repr(float(cells[i]) * factor) if cells[i] else cells[i]
        rows.append(",".join(cells))
    source = folder / "theirs.csv"
    source.write_text("\n".join([header, *rows]) + "\n")
    if calibrate:
        return Case(["errors", "calibrate", str(source)], ("theirs.csv", says))
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case(argv, ("theirs.csv", says), (out,))


def _extra_columns_case(folder: Path, columns: dict[str, str], says: str) -> Case:
    """An import of the documented CSV with ``columns`` (name: value of every row) appended to it."""
    source = _csv(folder, "0.0", 0)
    header, *lines = (folder / "good.csv").read_text().splitlines()
    added = ",".join(columns.values())
    rows = [f"{line},{added}" for line in lines]
    source.write_text("\n".join([f"{header},{','.join(columns)}", *rows]) + "\n")
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case(argv, ("theirs.csv", says), (out,))


def _rotation_vector_case(folder: Path, vector: dict[str, str]) -> Case:
    """The documented CSV with its marker orientation as a rotation vector, the first row's being ``vector``."""
    source = _csv(folder, "0.0", 0)
    header, *lines = (folder / "good.csv").read_text().splitlines()
    names = header.split(",")
    quaternion = [names.index(c) for c in ("marker_qw", "marker_qx", "marker_qy", "marker_qz")]
    keep = [i for i in range(len(names)) if i not in quaternion]
    rows = [[line.split(",")[i] for i in keep] + ["0.1", "0.0", "0.0"] for line in lines]
    rows[0][-3:] = list(vector.values())
    table = [[names[i] for i in keep] + list(vector), *rows]
    source.write_text("\n".join(",".join(row) for row in table) + "\n")
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case(argv, ("theirs.csv", "data row 1 (line 2): marker rotation vector", "at most 2 pi rad"), (out,))


def _cell_case(folder: Path, column_name: str, row: int, value: str, says: str) -> Case:
    """The documented CSV with ``value`` in ``column_name`` of data row ``row`` (1-based) alone."""
    source = _csv(folder, "0.0", 0)
    header, *lines = (folder / "good.csv").read_text().splitlines()
    column = header.split(",").index(column_name)
    cells = lines[row - 1].split(",")
    cells[column] = value
    lines[row - 1] = ",".join(cells)
    source.write_text("\n".join([header, *lines]) + "\n")
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case(argv, ("theirs.csv", says), (out,))


def _row_length_case(folder: Path, cut: int) -> Case:
    """The documented CSV with row 3 cut before its last ``cut`` cells (a negative ``cut``: that many cells added);
    a short row and a long one are named the same way, by data row and file line."""
    _csv(folder, "0.0", 0)
    header, *lines = (folder / "good.csv").read_text().splitlines()
    cells = lines[2].split(",")
    lines[2] = ",".join(cells[:-cut] if cut > 0 else cells + ["0.0"] * -cut)
    source = folder / "theirs.csv"
    source.write_text("\n".join([header, *lines]) + "\n")
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    width = len(header.split(","))
    return Case(argv, ("theirs.csv", f"data row 3 (line 4) has {width - cut} cells, the header {width}"), (out,))


def _segment_split_case(folder: Path) -> Case:
    """Segment 0's rows, then one row of segment 1, then segment 0 again from its start: its times went back across
    the gap and the import took them."""
    source = _csv(folder, "0.0", 0)
    header, *lines = (folder / "good.csv").read_text().splitlines()
    column = header.split(",").index("segment")
    other = lines[0].split(",")
    other[column] = "1"
    source.write_text("\n".join([header, *lines[:5], ",".join(other), *lines[:5]]) + "\n")
    out = folder / "d.parquet"
    argv = ["import-crtk", str(source), "--config", str(SHIPPED / "needle_insertion.yaml"), "-o", str(out)]
    return Case(argv, ("theirs.csv", "segment 0 starts again in row 7"), (out,))


def _parquet_text_case(folder: Path) -> Case:
    """A dataset in Parquet whose ``time_s`` holds text ("0.5"): numpy read it as a number."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cosim_validation.common.config import load_config
    from cosim_validation.error_injection.dataset_io import write_parquet
    from cosim_validation.robots.model import RobotConfig
    from test.error_injection.synthetic import synthetic_dataset

    kinematics = RobotConfig.from_config(load_config(SHIPPED / "needle_insertion.yaml")["robot"]).kinematics
    path = folder / "theirs.parquet"
    write_parquet(synthetic_dataset(kinematics, 30, 10, seed=1), path)
    table = pq.read_table(path)
    text = pa.array([f"{t:.3f}" for t in table.column("time_s").to_pylist()])
    pq.write_table(table.set_column(table.column_names.index("time_s"), "time_s", text), path)
    return Case(["errors", "calibrate", str(path)], ("theirs.parquet", "column 'time_s'", "found text"))


def _namespace_case(folder: Path, option: str, namespace: str) -> Case:
    out = folder / "e.mcap"
    argv = ["export-crtk", str(folder), "case", "-o", str(out), option, namespace]
    return Case(argv, (option,), (out,))


def _supervisor_case(folder: Path, stage_attribute: str, state: str, says: tuple[str, ...]) -> Case:
    """A run-case under a copy of the shipped supervisor (its ``stage_attribute`` set) and a scenario whose action
    waits in ``state``; a name the machine does not have ran every case to its 600 s limit, or never fired."""
    supervisor = folder / "supervisor"
    shutil.copytree(SHIPPED / "supervisor", supervisor)
    config = supervisor / "supervisor.yaml"
    config.write_text(config.read_text().replace("stage_attribute: stage", f"stage_attribute: {stage_attribute}", 1))
    scenario = folder / "scenario.yaml"
    action = f"{{when: {{state: {state}, after_s: 1.0}}, fault: force, value: 5.0, for_s: 0.3}}"
    scenario.write_text(f"scenario:\n  actions:\n    - {action}\n")
    argv = ["run-case", "--config", str(SHIPPED / "needle_insertion.yaml"), "--target", "0.45", "0.0", "0.05"]
    return Case([*argv, "--supervisor", str(config), "--supervisor-scenario", str(scenario)], says)


def _scenario_case(folder: Path, action: str, says: tuple[str, ...], segment: str = "") -> Case:
    """A run-case under the shipped supervisor and a scenario of one ``action`` (and a teleoperation script of one
    ``segment``, when given): readings, times and twists past physics were taken (a holder force of 1e308 N, a
    tip moving at 1e300 m/s)."""
    scenario = folder / "scenario.yaml"
    text = f"scenario:\n  actions:\n    - {action}\n"
    if segment:
        (folder / "teleop.yaml").write_text(f"teleoperation:\n  segments:\n    - {segment}\n")
        text += "  teleoperation: teleop.yaml\n"
    scenario.write_text(text)
    argv = ["run-case", "--config", str(SHIPPED / "needle_insertion.yaml"), "--target", "0.45", "0.0", "0.05"]
    config = SHIPPED / "supervisor" / "supervisor.yaml"
    return Case([*argv, "--supervisor", str(config), "--supervisor-scenario", str(scenario)], says)


_ACT = "{when: {state: Inject, after_s: 1.0}, %s}"
_TELEOP = "{when: {t_s: 1.0}, request: teleoperation}"
#: A teleoperation segment's key, the bound its error names, and the segment.
TELEOP_SEGMENTS = {
    "speed_1e300": ("tip_linear_m_s", "<= 2", "{duration_s: 1.0, tip_linear_m_s: [0.0, 0.0, 1.0e+300]}"),
    "turn_100_rad_s": ("tip_angular_rad_s", ">= -6.28", "{duration_s: 1.0, tip_angular_rad_s: [-100.0, 0.0, 0.0]}"),
    "duration_1e300": ("duration_s", "<= 3600", "{duration_s: 1.0e+300, tip_linear_m_s: [0.0, 0.0, 0.01]}"),
    "joint_1e300": ("joints", "<= 6.28", "{duration_s: 1.0, joints: [0.0, 0.0, 0.0, 1.0e+300, 0.0, 0.0, 0.0]}"),
}
SCENARIO_VALUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "force_1e308": (_ACT % "fault: force, value: 1.0e+308", ("scenario.yaml", "actions[0].value", "<= 1000")),
    "force_negative": (_ACT % "fault: force, value: -5.0", ("actions[0].value", ">= 0")),
    "clearance_2_m": (_ACT % "fault: clearance, value: 2.0", ("actions[0].value", "<= 1")),
    "tracking_with_value": (_ACT % "fault: tracking, value: 3.0", ("actions[0].value", "takes no value")),
    "request_with_value": (_ACT % "request: abort, value: 3.0", ("actions[0].value", "takes no value")),
    "t_s_1e300": ("{when: {t_s: 1.0e+300}, request: abort}", ("actions[0].when.t_s", "<= 3600")),
    "after_s_1e300": (
        (_ACT % "request: abort").replace("after_s: 1.0", "after_s: 1.0e+300"),
        ("actions[0].when.after_s", "<= 3600"),
    ),
    "for_s_1e300": (_ACT % "fault: force, for_s: 1.0e+300", ("actions[0].for_s", "<= 3600")),
}


def _supervisor_value_case(folder: Path, old: str, new: str, key: str) -> Case:
    """A run-case under a copy of the shipped supervisor with ``old`` replaced by an out-of-range ``new``."""
    return _supervisor_text_case(folder, old, new, ("supervisor.yaml", key, "<= 3600"))


def _supervisor_text_case(folder: Path, old: str, new: str, says: tuple[str, ...]) -> Case:
    """A run-case under a copy of the shipped supervisor with ``old`` replaced by ``new``."""
    supervisor = folder / "supervisor"
    shutil.copytree(SHIPPED / "supervisor", supervisor)
    config = supervisor / "supervisor.yaml"
    text = config.read_text()
    assert old in text, old
    config.write_text(text.replace(old, new, 1))
    argv = ["run-case", "--config", str(SHIPPED / "needle_insertion.yaml"), "--target", "0.45", "0.0", "0.05"]
    return Case([*argv, "--supervisor", str(config)], says)


def _corpus() -> dict[str, Callable[[Path], Case]]:
    cases: dict[str, Callable[[Path], Case]] = {
        f"config:{n}": lambda f, n=n: _config_case(n, f) for n in (*CONFIG_VALUES, *TESTGEN_VALUES)
    }
    cases |= {f"hazards:{n}": lambda f, c=c: _delay_case(c, f) for n, c in DELAYS.items()}
    cases["hazards:value_1e300"] = _fault_value_case
    cases["hazards:trigger_sample_1e23"] = _trigger_sample_case
    for rate in ("inf", "nan", "-1", "1e-300", "1e-6", "1e9"):  # 1e-300 was a traceback, 1e-6 a silent hang
        cases[f"replay_rate:{rate}"] = lambda f, r=rate: Case(["replay", str(f / "b.mcap"), "--rate", r], ("--rate",))
    cases["csv:times_nan"] = lambda f: _import_case(f, "nan", 3, "column 'time_s'")
    # a record's test id names a folder when a run's records are exported: '../x' escaped it, a newline split lines
    for label, test_id in (("up", "../escape"), ("newline", "a\nb"), ("empty_dot", "."), ("empty", "")):
        cases[f"csv:test_id_{label}"] = lambda f, t=test_id: _record_case(f, t)
    cases["csv:one_time_inf"] = lambda f: _import_case(f, "inf", 1, "column 'time_s'")
    cases["csv:header_only"] = lambda f: _import_case(f, "0.0", 0, "no rows")
    # a segment id past 64 bits was wrapped to -2**63 (with a numpy warning); text in one row was quoted as the
    # column's first value, no row named
    cases["csv:segment_1e26"] = lambda f: _import_case(f, "1" + "0" * 26, 30, "expected a whole number 0..", "segment")
    # a fourteenth trial: a fractional segment (or an empty one, a line of commas) did not name its row
    cases["csv:segment_fraction_in_row_5"] = lambda f: _cell_case(f, "segment", 5, "1.5", "'segment': 1.5 in row 5")
    cases["csv:time_hex_in_row_4"] = lambda f: _cell_case(f, "time_s", 4, "0x10", "found text ('0x10' in row 4)")
    # a hostile trial: a registration error of 1e300 m taken; a 2 MB set name echoed whole; a short row's missing
    # quaternion read as a marker not seen
    cases["csv:registration_1e300"] = lambda f: _cell_case(
        f, "marker_registration_error_m", 3, "1e300", "'marker_registration_error_m': 1e+300 in row 3; expected"
    )
    # a thirteenth trial: one empty quaternion cell dropped the row as "not seen"; 1e300 printed numpy warnings
    cases["csv:quaternion_partly_empty"] = lambda f: _cell_case(
        f,
        "marker_qx",
        3,
        "",
        "columns marker_qw, marker_qx, marker_qy, marker_qz: [",
    )
    # a sixteenth trial: the same with the position, one empty marker_x_m cell read as "not seen", exit 0
    cases["csv:position_partly_empty"] = lambda f: _cell_case(
        f, "marker_x_m", 3, "", "columns 'marker_x_m', 'marker_y_m', 'marker_z_m': [nan, "
    )
    cases["csv:quaternion_1e300"] = lambda f: _cell_case(
        f, "marker_qw", 3, "1e300", "norm inf in row 3; expected a unit"
    )
    cases["csv:set_two_megabytes"] = lambda f: _cell_case(f, "set", 2, "x" * 2_000_000, "(2000000 characters)")
    cases["csv:short_row"] = lambda f: _row_length_case(f, 4)
    cases["csv:long_row"] = lambda f: _row_length_case(f, -2)
    cases["csv:time_underscore_in_row_20"] = lambda f: _cell_case(f, "time_s", 20, "1_0", "('1_0' in row 20)")
    cases["csv:joint_true_in_row_8"] = lambda f: _cell_case(
        f,
        "measured_joint1_rad",
        8,
        "True",
        "column 'measured_joint1_rad': expected numbers, found text ('True' in row 8)",
    )
    cases["supervisor:stage_attribute_unknown"] = lambda f: _supervisor_case(
        f, "stagee", "MoveToSource", ("supervisor.yaml", "supervisor.stage_attribute", "stagee")
    )
    cases["supervisor:scenario_state_unknown"] = lambda f: _supervisor_case(
        f, "stage", "Injectt", ("scenario.yaml", "when.state", "Injectt")
    )
    # two stages ending with one event: accepted, then every supervised case ran to its 600 s limit
    cases["supervisor:stage_done_twice"] = lambda f: _supervisor_text_case(
        f,
        "approach: e_EntryReached",
        "approach: e_SourceReached",
        ("supervisor.yaml", "supervisor.events.stage_done.approach", "also the end of initialization"),
    )
    # a dwell and a case limit of 1e300 s ran the case without end
    for key, old in (("dwell_s", "dwell_s: 0.0 "), ("max_case_s", "max_case_s: 600.0 ")):
        cases[f"supervisor:{key}_1e300"] = lambda f, k=key, o=old: _supervisor_value_case(
            f, o, f"{k}: 1.0e+300 ", f"supervisor.{'sources' if k == 'dwell_s' else 'loop'}.{k}"
        )
    for name, (action, says) in SCENARIO_VALUES.items():
        cases[f"scenario:{name}"] = lambda f, a=action, w=says: _scenario_case(f, a, w)
    for name, (key, bound, segment) in TELEOP_SEGMENTS.items():
        says = ("teleop.yaml", f"segments[0].{key}", bound)
        cases[f"scenario:teleop_{name}"] = lambda f, w=says, g=segment: _scenario_case(f, _TELEOP, w, g)
    cases["supervisor:force_limit_1e308"] = lambda f: _supervisor_text_case(
        f, "force_limit_n: 3.5", "force_limit_n: 1.0e+308", ("supervisor.yaml", "sources.force_limit_n", "<= 1000")
    )
    cases["csv:time_repeated"] = lambda f: _import_case(f, "1.0", 3, "expected increasing times")
    # another unit, imported and judged: times in ns (a 500-year run), in ns read as s (1e8 rad/s), joints in degrees
    cases["csv:times_in_ns"] = lambda f: _scaled_case(f, "time_s", 1e9, "expected times in seconds, a segment of")
    cases["csv:times_shrunk"] = lambda f: _scaled_case(f, "time_s", 1e-9, "expected times in seconds, samples at")
    cases["csv:joints_in_degrees"] = lambda f: _scaled_case(f, "setpoint_", 57.29577951308232, "(in degrees?")
    degrees = 57.29577951308232
    cases["calibrate:joints_in_degrees"] = lambda f: _scaled_case(f, "measured_", degrees, "(in degrees?", True)
    for column in ("measured_joint2_rad", "setpoint_joint7_rad"):  # imported, then judged "unknown: NaN" by check
        for value in ("inf", "nan"):
            cases[f"csv:{column}_{value}"] = lambda f, c=column, v=value: _import_case(f, v, 1, c, c)
    # finite but absurd: a joint of 1e300 rad was imported and then judged clear of every obstacle; a quaternion of
    # norm 0 or 5 ended calibrate in a traceback; a negative registration error is no RMS
    absurd = {"measured_joint2_rad": "1e300", "setpoint_joint1_rad": "-2000", "marker_qx": "5"}
    absurd |= {"marker_registration_error_m": "-1.0"}
    for column, value in absurd.items():
        cases[f"csv:{column}_{value}"] = lambda f, c=column, v=value: _import_case(f, v, 1, c, c)
    # pandas renamed a repeated column "name.1" and read the first; both orientations given: the quaternion won
    cases["csv:column_twice"] = lambda f: _extra_columns_case(f, {"measured_joint3_rad": "0.2"}, "given twice")
    cases["csv:time_twice"] = lambda f: _extra_columns_case(f, {"time_s": "0.0"}, "'time_s' given twice")
    rotation = {"marker_rx_rad": "0.1", "marker_ry_rad": "0.0", "marker_rz_rad": "0.0"}
    cases["csv:orientation_twice"] = lambda f: _extra_columns_case(f, rotation, "orientation is given twice")
    cases["parquet:time_text"] = _parquet_text_case
    # a marker 1e200 m away ended the hand-eye calibration in an SVD traceback
    cases["csv:marker_x_m_1e200"] = lambda f: _import_case(f, "1e200", 1, "'marker_x_m'", "marker_x_m")
    cases["csv:segment_split"] = _segment_split_case
    # a rotation vector of 1e300 rad overflowed (two numpy warnings) into a marker "not seen": the row was dropped
    for name, rx in (("huge", "1e300"), ("inf", "inf"), ("seven_rad", "7.0")):
        vector = {"marker_rx_rad": rx, "marker_ry_rad": "0.0", "marker_rz_rad": "0.0"}
        cases[f"csv:rotation_vector_{name}"] = lambda f, v=vector: _rotation_vector_case(f, v)
    # an empty namespace was taken as none given (the arm's default), without a word
    for i, namespace in enumerate(("/a b", "PSM1", "/PSM1/", "//PSM1", "/1arm", "/arm-left", "")):
        cases[f"namespace:{i}"] = lambda f, n=namespace: _namespace_case(f, "--namespace", n)
    cases["namespace:tracker"] = lambda f: _namespace_case(f, "--tracker-namespace", "/tr acker")
    for name, detector in (("twice", "tip_mm=1,tip_mm=2"), ("twice_joint", "joint=0.1,progress=0.2,joint=0.3")):
        cases[f"detector:{name}"] = lambda f, d=detector: Case(
            [
                "campaign",
                "--config",
                str(SHIPPED / "needle_insertion.yaml"),
                "--suite",
                str(f / "s.parquet"),
                "--out",
                str(f / "run"),
                "--detector",
                d,
            ],
            ("--detector", "given twice"),
            (f / "run",),
        )
    return cases


CORPUS = _corpus()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_value(name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run_fast_case(CORPUS[name](tmp_path), sorted(CORPUS).index(name) % 2 == 1, capfd, seconds=60.0)

"""The sections of the report, each from a :class:`RunData`: tables, figures and the numbers behind them."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.runs.report import figures
from cosim_validation.runs.report.coverage_tables import COLUMN_GROUPS, COLUMNS, coverage_tables
from cosim_validation.runs.report.html_page import Section, figure, paragraph, table
from cosim_validation.runs.report.run_data import RunData
from cosim_validation.runs.report.trajectory_stats import (
    PARTS,
    as_dict,
    collision_free,
    cube_frechet,
    deviations,
    record_deviation,
    representative_case,
    stage_spans,
    tip_path_m,
)


def _scaled(value: float | None, unit: str) -> tuple[float | None, str]:
    if value is None:
        return None, unit
    return {"m": (value * 1e3, "mm"), "rad": (float(np.degrees(value)), "deg")}.get(unit, (value, unit))


def overview(run: RunData) -> Section:
    """What ran: the run's settings, outcomes and refusal reasons.

    Args:
        run: The run (campaign or session): its meta, cases and anatomy repairs are shown.
    """
    s = Section("run", "Run")
    m = run.meta
    rows = [
        ("kind", run.kind),
        ("directory", str(run.run_dir)),
        ("configuration", str(m.get("config_path", "-"))),
        ("controller", str(m.get("controller", "-"))),
        ("backends", ", ".join(m.get("backends", [])) or "-"),
        ("safety property", run.safety_property),
        (
            "suites",
            "; ".join(
                f"{x['generator']} {1e3 * float(x['granularity_m']):g} mm, {x.get('cases')} cases" for x in run.suites
            )
            or "-",
        ),
    ]
    s.parts.append(table(["", ""], rows, "run-settings").replace("<table", '<table class="meta"', 1))  # no header
    repairs = _anatomy_repairs(run)
    rows = [_repair_row(r) for r in repairs]
    if rows:
        s.parts.append(paragraph("The anatomy was repaired (anatomy.repair: true); what each repair removed:"))
        s.parts.append(
            table(["model", "kept cm³", "removed cm³", "removed %", "shells dropped", "steps"], rows, "repairs")
        )
    outcomes = Counter(run.cases["outcome"])
    s.parts.append(table(["outcome", "cases"], sorted(outcomes.items()), "outcomes"))
    refused = run.cases.loc[run.cases["outcome"] == "refused", "message"].str.split(":").str[0]
    if len(refused):
        s.parts.append(table(["refusal reason", "cases"], Counter(refused).most_common(), "refusals"))
    stopped = _stopped_cases(run)
    if stopped:
        shown = stopped[:STOPPED_SHOWN]
        more = (
            f" (the first {STOPPED_SHOWN}; the cases table of results.sqlite has every one)"
            if len(shown) < len(stopped)
            else ""
        )
        s.parts.append(paragraph(f"Why {len(stopped)} started cases did not complete{more}:"))
        s.parts.append(table(["case", "outcome", "reason"], [tuple(c.values()) for c in shown], "stopped-cases"))
    s.data = {
        "cases": len(run.cases),
        "outcomes": dict(outcomes),
        "refusals": dict(Counter(refused)),
        "stopped": stopped[:STOPPED_SHOWN],
        "anatomy_repairs": repairs,
    }
    return s


#: Cases aborted or failed that the report lists with their reasons (the first ones, in case order)
STOPPED_SHOWN = 20


def _stopped_cases(run: RunData) -> list[dict[str, str]]:
    """Every aborted or failed case, in case order: its test id, outcome and the stored reason."""
    cases = run.cases.sort_values("case_index") if "case_index" in run.cases else run.cases
    stopped = cases[cases["outcome"].isin(("aborted", "failed"))]
    return [
        {"test_id": str(t), "outcome": str(o), "message": str(m)}
        for t, o, m in zip(stopped["test_id"], stopped["outcome"], stopped["message"], strict=True)
    ]


def _anatomy_repairs(run: RunData) -> list[dict[str, Any]]:
    """What repair: true did: from the run's metadata (campaigns), else from the run's configuration."""
    if "anatomy_repairs" in run.meta:
        return list(run.meta["anatomy_repairs"])
    scene = run.scene
    return [] if scene is None else scene.repairs()


def _repair_row(repair: dict[str, Any]) -> tuple[Any, ...]:
    steps = "; ".join(str(step["action"]) for step in repair["steps"])
    return (
        f"{repair['model']} ({repair['source']})",
        1e6 * float(repair["volume_m3"]),
        1e6 * float(repair["removed_m3"]),
        100.0 * float(repair["removed_share"]),
        int(repair["shells_removed"]),
        steps,
    )


#: The verdict table's columns: over the completed cases, then the verdicts of cases that were stopped (aborted or
#: failed), counted apart: a property that holds over the prefix of a stopped case says less than over a whole case.
VERDICT_COLUMNS = ("property", "robot", "holds", "violated", "unknown", "in stopped cases")


def properties(run: RunData) -> Section:
    """Verdicts per property and robot (of the completed cases; the stopped cases' apart), and whole-case KPIs.

    Args:
        run: The run: its verdicts and whole-case KPIs are counted.
    """
    s = Section("properties", "Properties and KPIs")
    if not len(run.verdicts):
        return s.missing("no verdicts stored")
    completed = run.verdicts["test_id"].map(run.cases["outcome"]).eq("completed").to_numpy()
    whole = run.verdicts[completed].groupby(["property", "robot", "status"], observed=True).size()
    stopped = run.verdicts[~completed].groupby(["property", "robot"], observed=True).size()
    rows = []
    for p, r in run.verdicts.groupby(["property", "robot"], observed=True).size().index:
        counts = [int(whole.get((p, r, k), 0)) for k in ("holds", "violated", "unknown")]
        rows.append((p, r, *counts, int(stopped.get((p, r), 0))))
    if stopped.sum():
        s.parts.append(
            paragraph(
                "Verdicts of the completed cases; those of the cases stopped before their end (aborted or failed) "
                "are counted apart, in the last column: a property that holds over part of a case says less."
            )
        )
    s.parts.append(table(list(VERDICT_COLUMNS), rows, "verdicts"))
    kpis = run.kpis[(run.kpis["stage"] == "case") & run.kpis["value"].notna()]
    by_kpi = kpis.groupby(["name", "robot", "unit"], observed=True)["value"]
    stats = by_kpi.agg(["count", "mean", "median", "max"]).reset_index()
    kpi_rows = []
    for r in stats.itertuples(index=False):
        mean, unit = _scaled(float(r.mean), str(r.unit))
        kpi_rows.append(
            (
                r.name,
                r.robot,
                int(r.count),
                mean,
                _scaled(float(r.median), str(r.unit))[0],
                _scaled(float(r.max), str(r.unit))[0],
                unit,
            )
        )
    s.parts.append(table(["KPI", "robot", "cases", "mean", "median", "max", "unit"], kpi_rows, "kpis"))
    keys = ("property", "robot", "holds", "violated", "unknown", "stopped")
    s.data = {"verdicts": [dict(zip(keys, r, strict=True)) for r in rows]}
    return s


def coverage(run: RunData) -> Section:
    """Tables 2 and 3.

    Args:
        run: The run; a campaign with grid or random suites gets the tables (see :func:`coverage_tables`).
    """
    s = Section("tables-2-3", "Tables 2 and 3: coverage and error-triggering, grid vs random")
    tables = coverage_tables(run)
    if not tables:
        return s.missing(_no_coverage_reason(run))
    s.parts.append(
        paragraph(
            f"Error-triggering: the safety property {run.safety_property} is violated on the {run.primary_robot} "
            "robot; shares are of the cases that ran to the end. Points generated: candidates drawn to obtain the "
            "valid cases."
        )
    )
    for t in tables:
        s.parts.append(f"<h3>{t.region}</h3>")
        body = [[r[k] for k, _ in COLUMNS] for r in t.rows]
        grid = table([label for _, label in COLUMNS], body, f"coverage-{t.region}", COLUMN_GROUPS)
        s.parts.append(f'<div class="wide">{grid}</div>')
    s.data = {"robot": run.primary_robot, "tables": [{"region": t.region, "rows": t.rows} for t in tables]}
    return s


def _no_coverage_reason(run: RunData) -> str:
    """Why Tables 2 and 3 are empty: no generated suites, or no verdict of the safety property to count."""
    if not any(suite.get("generator") in ("grid", "random") for suite in run.suites):
        return "no grid or random suites in this run (a campaign over `cosim testgen` suites makes them)"
    return (
        f"the run's safety property {run.safety_property!r} has no verdict on any robot, so no case can be counted "
        "as error-triggering (is it a property of the run's property file?)"
    )


def frechet_cubes(run: RunData, max_cubes: int) -> Section:
    """Figure 6.

    Args:
        run: The run; the tip paths of its virtual robot (else its plans) in the grid suites' cubes are compared.
        max_cubes: At most this many cubes per granularity are measured, evenly spaced in cube order.
    """
    s = Section("figure-6", "Figure 6: Fréchet distance between trajectories within each cube, by granularity")
    robot = "virtual" if "virtual" in run.robots() else "expected"
    cubes, eligible = cube_frechet(run, robot, max_cubes)
    if not cubes:
        return s.missing("no grid cube holds two completed cases with stored trajectories")
    caption = (
        f"Discrete Fréchet distance between the needle-tip paths ({robot} robot) of the cases in one cube: min, mean "
        f"and max per cube, up to {max_cubes} cubes per granularity; left from the source to the target (approach "
        "and injection, as [Actuators 2025]), right the injection only (each case has its own source)."
    )
    s.parts.append(figure(figures.cube_frechet_figure(cubes), caption, "figure-6-img"))
    rows = []
    for part in PARTS:
        for g in sorted(eligible, reverse=True):
            mine = [c for c in cubes if c.granularity_m == g and c.part == part]
            means = [1e3 * float(np.mean([getattr(c, f"{k}_m") for c in mine])) for k in ("min", "mean", "max")]
            rows.append((part.replace("_", " "), 1e3 * g, eligible[g], len(mine), *means))
    headers = ["part", "granularity [mm]", "cubes with >= 2 cases", "cubes measured"]
    headers += ["mean of min [mm]", "mean of mean [mm]", "mean of max [mm]"]
    s.parts.append(table(headers, rows, "figure-6-table"))
    keys = ("part", "granularity_mm", "eligible", "measured", "min_mm", "mean_mm", "max_mm")
    s.data = {"robot": robot, "by_granularity": [dict(zip(keys, r, strict=True)) for r in rows]}
    return s


def _meshes(run: RunData) -> tuple[dict[str, figures.MeshArrays], dict[str, figures.MeshArrays]]:
    scene = run.scene
    if scene is None:
        return {}, {}
    obstacles = {m.name: (m.vertices_m, m.faces) for m in scene.obstacles}
    return obstacles, {m.name: (m.vertices_m, m.faces) for m in scene.targets}


def targets_by_verdict(run: RunData) -> Section:
    """Figure 7 (targets coloured by verdict, with the heart) and Figure 8 (grid vs random targets).

    Args:
        run: The run: its cases' targets [m] in base_link, coloured by the primary robot's safety verdict; the
            anatomy comes from its configuration.
    """
    s = Section("figures-7-8", "Figures 7 and 8: targets by verdict and by generator, with the forbidden region")
    if not len(run.cases):
        return s.missing("no cases")
    obstacles, targets = _meshes(run)
    violated = run.violated() if run.primary_robot else None
    done = run.cases["outcome"] == "completed"
    bad = done & violated if violated is not None else done & False
    classes = {
        "violating": (run.points_m("target", run.cases.index[bad]), figures.RED),
        "normal": (run.points_m("target", run.cases.index[done & ~bad]), figures.GREEN),
        "not run (refused / failed)": (run.points_m("target", run.cases.index[~done]), figures.GREY),
    }
    title = f"Targets coloured by {run.safety_property} on the {run.primary_robot} robot; heart red, lung green"
    s.parts.append(figure(figures.targets_3d(classes, obstacles, targets, title), "Figure 7: " + title, "figure-7-img"))
    generators = {g: run.cases.index[run.cases["generator"] == g] for g in ("grid", "random")}
    if all(len(ids) for ids in generators.values()):
        finest = float(run.cases["granularity_m"].min())
        at = run.cases["granularity_m"] == finest
        points = {
            f"{g}": (run.points_m("target", run.cases.index[at & (run.cases["generator"] == g)]), c)
            for g, c in (("random", figures.GREEN), ("grid", figures.RED))
        }
        title8 = f"Targets of the grid (red) and random (green) generators at {1e3 * finest:g} mm"
        s.parts.append(
            figure(figures.targets_3d(points, obstacles, targets, title8), "Figure 8: " + title8, "figure-8-img")
        )
    else:
        present = ", ".join(g for g, ids in generators.items() if len(ids)) or "neither"
        s.parts.append(paragraph(f"Figure 8 needs both grid and random suites; this run has {present}.", missing=True))
    s.data = {k: len(v[0]) for k, v in classes.items()}
    return s


def depth(run: RunData) -> Section:
    """Figure 9.

    Args:
        run: The run: the target depths of its completed cases, per generator, split by the primary robot's
            safety verdict.
    """
    s = Section("figure-9", "Figure 9: distance to the model boundary of violating vs normal cases")
    done = run.completed()
    if not len(done) or run.primary_robot is None:
        return s.missing("no completed case with a safety verdict")
    violated = run.violated().loc[done.index]
    groups = {}
    for generator, rows in done.groupby("generator"):
        bad = violated.loc[rows.index]
        groups[str(generator)] = (
            rows.loc[bad, "target_depth_m"].to_numpy(),
            rows.loc[~bad, "target_depth_m"].to_numpy(),
        )
    caption = (
        "Figure 9: target depth (distance to the target model's boundary) of error-triggering (red) and normal "
        "(green) cases, per generator."
    )
    s.parts.append(figure(figures.depth_histograms(groups), caption, "figure-9-img"))
    s.data = {
        g: {
            "violating_median_mm": 1e3 * float(np.median(v)) if len(v) else None,
            "normal_median_mm": 1e3 * float(np.median(n)) if len(n) else None,
            "violating": len(v),
            "normal": len(n),
        }
        for g, (v, n) in groups.items()
    }
    return s


def tip_deviation(run: RunData) -> Section:
    """Figure 10.

    Args:
        run: The run; its whole-case targeting-error KPIs of the virtual and physical robots are drawn.
    """
    s = Section("figure-10", "Figure 10: needle-tip deviation per case")
    rows = run.kpis[(run.kpis["stage"] == "case") & run.kpis["value"].notna() & (run.kpis["robot"] != "expected")]
    series = {}
    for robot in ("virtual", "physical"):
        mine = rows[rows["robot"] == robot]
        name = "actual_targeting_error" if (mine["name"] == "actual_targeting_error").any() else "targeting_error"
        values = mine[mine["name"] == name].set_index("test_id")["value"]
        if len(values):
            index = run.cases.loc[values.index, "case_index"].to_numpy()
            series[f"{robot} ({name})"] = (index, values.to_numpy(dtype=float))
    if not series:
        return s.missing("no targeting-error KPI of an executed robot")
    caption = "Distance of the needle tip at the end of injection to the target, per case (actual tip where known)."
    s.parts.append(
        figure(figures.tip_deviation_figure(series, "tip to target at end of injection [mm]"), caption, "figure-10-img")
    )
    s.data = {
        k: {"n": len(v), "mean_mm": 1e3 * float(v.mean()), "max_mm": 1e3 * float(v.max())}
        for k, (_, v) in series.items()
    }
    return s


def virtual_vs_physical(run: RunData, max_cases: int) -> Section:
    """Figure 11 and Table 4 (over at most ``max_cases`` collision-free cases, evenly spaced).

    Args:
        run: The run; its stored expected, virtual and physical trajectories are compared.
        max_cases: At most this many collision-free cases are pooled, evenly spaced in case order.
    """
    s = Section("figure-11-table-4", "Figure 11 and Table 4: expected vs virtual vs physical")
    ids = collision_free(run)
    if len(ids) > max_cases:
        ids = [ids[i] for i in np.linspace(0, len(ids) - 1, max_cases).astype(int)]
        s.parts.append(paragraph(f"Table 4 pools {max_cases} collision-free cases, evenly spaced in case order."))
    stats = deviations(run, ids)
    if not stats:
        return s.missing("no collision-free completed case with stored expected and executed trajectories")
    rows = []
    for d in stats:
        rows.append((d.robot, "revolute joint |q - q_expected| [deg]", d.n_cases, *d.joint_deg.values()))
        if d.prismatic_mm is not None:  # a prismatic joint's deviation is a length: mm, never degrees
            rows.append((d.robot, "prismatic joint |q - q_expected| [mm]", d.n_cases, *d.prismatic_mm.values()))
        rows.append((d.robot, f"needle-tip position ({d.tip_source}) to expected [mm]", d.n_cases, *d.tip_mm.values()))
    s.parts.append(table(["robot", "deviation", "cases", "mean", "std", "median", "p95", "max"], rows, "table-4"))
    robot = "physical" if any(d.robot == "physical" for d in stats) else stats[0].robot
    case = representative_case(run, [t for t in ids if robot in run.trajectory_robots.get(t, ())], robot)
    if case is not None:
        stored = run.trajectory_robots.get(case, [])
        records: dict[str, TrajectoryRecord] = {
            r: run.trajectory(case, r) for r in ("expected", "virtual", "physical") if r in stored
        }
        paths: dict[str, np.ndarray] = {r: tip_path_m(rec, None) for r, rec in records.items()}
        devs: dict[str, tuple[np.ndarray, np.ndarray]] = {
            r: (rec.t_s, record_deviation(rec, records["expected"])[1]) for r, rec in records.items() if r != "expected"
        }
        title = f"case {case}: needle-tip paths and deviation from the expected trajectory"
        spans = stage_spans(records["expected"])
        s.parts.append(
            figure(
                figures.trajectories_figure(paths, devs, spans, title),
                "Figure 11: " + title + f" (median {robot} deviation of the {len(ids)} collision-free cases).",
                "figure-11-img",
            )
        )
    s.data = {"cases": len(ids), "table_4": [as_dict(d) for d in stats], "figure_11_case": case}
    return s

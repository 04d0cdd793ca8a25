"""The Foxglove layout of a session, made from the graph YAML so it names the topics the graph publishes.

Panels (built with the SDK's ``foxglove.layouts``): a 3D view (anatomy and target markers, each robot's
actual tip pose, and the bridge's scene: arm, tip paths); the tip deviation of each robot (bridge channel);
state transitions of the stage, the case events and each robot's verdicts; tables of the last case report's
verdicts and of every verdict so far (bridge channel), the alerts and the diagnostics. Robots come from
the monitor's ``robots`` parameter and topic names go through the graph's remappings. Panels on session
topics work on the recorded ``session.mcap`` too; the bridge channels (``/cosim/dashboard/...``) exist only
live (``cosim session --foxglove``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cosim_validation.live.session.graph import GraphSpec

SCENE_TOPIC = "/cosim/dashboard/scene"  # foxglove.SceneUpdate: arm of each robot, tip paths, target
VERDICTS_TOPIC = "/cosim/dashboard/verdicts"  # JSON: {"rows": [...]}, every verdict of the session so far
ROBOT_COLORS_HEX = {"expected": "#282828", "virtual": "#1f77b4", "physical": "#e67814"}


def deviation_topic(robot: str) -> str:
    """The bridge's JSON channel of ``robot``'s tip deviation from the plan.

    Args:
        robot: Robot name: ``virtual`` or ``physical``.
    """
    return f"/cosim/dashboard/{robot}/tip_deviation"


def session_robots(graph: GraphSpec) -> list[str]:
    """The robots the session monitors (the monitor's ``robots``; the controller's if there is no monitor).

    Args:
        graph: The session graph; without a monitor or controller node, ``["virtual", "physical"]`` is returned.
    """
    for executable in ("monitor", "controller"):
        for node in graph.nodes:
            if node.executable == executable:
                return [str(r) for r in node.parameters["robots"]]
    return ["virtual", "physical"]


def topic_name(graph: GraphSpec, topic: str) -> str:
    """``topic`` after the graph's remappings (the first node remapping it wins).

    Args:
        graph: The session graph whose node remappings are searched.
        topic: The topic's default name, e.g. ``/cosim/alerts``.
    """
    for node in graph.nodes:
        for source, target in node.remappings:
            if source == topic:
                return target
    return topic


def build_layout(graph: GraphSpec) -> Any:
    """The session's ``foxglove.layouts.Layout``.

    Args:
        graph: The session graph: its monitor's robots and its remappings name the panels' topics.
    """
    import foxglove.layouts as fl

    robots = session_robots(graph)
    content = fl.SplitContainer(
        direction="row",
        items=[
            fl.SplitItem(proportion=0.45, content=_three_d(fl, graph, robots)),
            fl.SplitItem(
                proportion=0.55,
                content=fl.SplitContainer(
                    direction="column",
                    items=[
                        fl.SplitItem(proportion=0.35, content=_deviation_plot(fl, robots)),
                        fl.SplitItem(proportion=0.25, content=_transitions(fl, graph, robots)),
                        fl.SplitItem(proportion=0.40, content=_tables(fl, graph)),
                    ],
                ),
            ),
        ],
    )
    return fl.Layout(content=content)


def _three_d(fl: Any, graph: GraphSpec, robots: list[str]) -> Any:
    markers = fl.BaseRendererRosMarkerTopicSettings(visible=True)
    topics: dict[str, Any] = {
        topic_name(graph, "/cosim/markers/anatomy"): markers,
        topic_name(graph, "/cosim/markers/targets"): fl.BaseRendererRosMarkerTopicSettings(visible=True),
        SCENE_TOPIC: fl.BaseRendererSceneUpdateTopicSettings(visible=True),
    }
    for robot in robots:
        topics[topic_name(graph, f"/cosim/{robot}/tip_pose")] = fl.BaseRendererPoseTopicSettings(
            visible=True, type="axis", axis_scale=0.5, color=ROBOT_COLORS_HEX.get(robot)
        )
    return fl.ThreeDeePanel(
        title="anatomy, robots and tip paths (base_link)",
        config=fl.ThreeDeeConfig(follow_tf="base_link", topics=topics),
    )


def _deviation_plot(fl: Any, robots: list[str]) -> Any:
    series = [
        fl.PlotSeries(
            value=f"{deviation_topic(r)}.deviation_mm", label=f"{r} tip deviation [mm]", color=ROBOT_COLORS_HEX.get(r)
        )
        for r in robots
    ]
    return fl.PlotPanel(title="tip deviation from the plan [mm]", config=fl.PlotConfig(paths=series, show_legend=True))


def _transitions(fl: Any, graph: GraphSpec, robots: list[str]) -> Any:
    expected, status = topic_name(graph, "/cosim/expected"), topic_name(graph, "/cosim/case_status")
    verdicts = topic_name(graph, "/cosim/verdicts")
    series = [
        fl.StateTransitionsSeries(value=f"{expected}.stage", label="stage (1 init .. 5 reset)"),
        fl.StateTransitionsSeries(
            value=f"{status}.event", label="case event (0 started, 1 stage, 2 completed, 3 refused, 4 aborted)"
        ),
    ]
    codes = {"expected": 0, "virtual": 1, "physical": 2}
    for robot in ["expected", *robots]:
        series.append(
            fl.StateTransitionsSeries(
                value=f"{verdicts}{{robot=={codes[robot]}}}.verdict",
                label=f"{robot} verdicts (0 unknown, 1 holds, 2 violated)",
            )
        )
    return fl.StateTransitionsPanel(
        title="stage and verdict transitions", config=fl.StateTransitionsConfig(paths=series)
    )


def _tables(fl: Any, graph: GraphSpec) -> Any:
    reports, alerts = topic_name(graph, "/cosim/case_reports"), topic_name(graph, "/cosim/alerts")
    tabs = [
        fl.TabItem(
            title="verdicts (last case report)",
            content=fl.TablePanel(config=fl.TableConfig(topic_path=f"{reports}.verdicts")),
        ),
        fl.TabItem(
            title="verdicts (live)", content=fl.TablePanel(config=fl.TableConfig(topic_path=f"{VERDICTS_TOPIC}.rows"))
        ),
        fl.TabItem(title="alerts", content=fl.RawMessagesPanel(config=fl.RawMessagesConfig(topic_path=alerts))),
        fl.TabItem(
            title="diagnostics",
            content=fl.DiagnosticsSummaryPanel(config=fl.DiagnosticsSummaryConfig(topic_to_render="/diagnostics")),
        ),
    ]
    return fl.TabContainer(selected_tab_index=0, tabs=tabs)


def layout_json(graph: GraphSpec) -> str:
    """The layout as indented JSON (what Foxglove's "Import layout" reads).

    Args:
        graph: The session graph the layout is built from.
    """
    return json.dumps(json.loads(build_layout(graph).to_json()), indent=2) + "\n"


def write_layout(graph: GraphSpec, path: Path) -> Path:
    """Write the layout of ``graph`` to ``path`` and return it.

    Args:
        graph: The session graph the layout is built from.
        path: The JSON file to write (overwritten); its folder must exist.
    """
    from cosim_validation.common.exceptions import InputError

    if not path.parent.is_dir():
        raise InputError(f"{path}: folder {path.parent} does not exist")
    path.write_text(layout_json(graph))
    return path

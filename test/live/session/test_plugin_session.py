"""A user's closed-loop controller live under the task supervisor: ``cosim session`` and ``cosim campaign`` with the
same plugin give the same outcomes, verdicts, KPIs and supervisor modes on both robots (the controller node runs the
one lockstep loop with the plugin and the supervisor in it). The unsupervised closed loop runs live in the external
node's sessions (its adapter is a closed-loop controller too)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from test.assembly.test_plugin_campaigns import write_config
from test.live.session.test_live_equals_batch import _both, _close, _supervisor_modes, suite_file

__all__ = ["suite_file"]
pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_a_supervised_closed_loop_plugin_is_the_same_live_and_in_batch(
    tmp_path: Path,
    suite_file: Path,
    node_env: dict[str, str],
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the nodes are processes of their own: the plugin's module must be on their path
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, (str(repo_root), os.environ.get("PYTHONPATH")))))
    folder = tmp_path / "study"
    case_config = write_config(folder, {"plugin": "test.controllers.plugin_samples:make_follower"})
    graph = yaml.safe_load((repo_root / "config" / "digital_twin.yaml").read_text())
    for node in graph["nodes"]:
        if "config" in node.get("parameters", {}):
            node["parameters"]["config"] = str(case_config)
    graph_path = folder / "twin.yaml"
    graph_path.write_text(yaml.safe_dump(graph, sort_keys=False))

    live, batch = _both(tmp_path, suite_file, "0", "--supervisor", configs=(str(graph_path), str(case_config)))
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = live, batch
    assert live_cases == batch_cases
    done = "the controller is done: plan followed; every stage executed under the supervisor"
    stopped = [m for o, m in live_cases.values() if o == "aborted"]
    assert [m for o, m in live_cases.values() if o == "completed"] == [done] * (4 - len(stopped))
    assert 0 < len(stopped) < 4  # the cases whose needle comes within 5 mm of the heart are stopped
    for message in stopped:
        assert message.startswith("the supervisor stopped the task in AutonomousMode.TaskStopped")
        assert "e_FRTooClose" in message
    assert live_verdicts.keys() == batch_verdicts.keys()
    for key, verdict in live_verdicts.items():
        assert verdict.status == batch_verdicts[key].status, key
        assert _close(verdict.margin, batch_verdicts[key].margin), key
    assert live_kpis.keys() == batch_kpis.keys()
    assert any(k[2] == "physical" for k in live_kpis)
    for key, kpi in live_kpis.items():
        assert _close(kpi.value, batch_kpis[key].value), (key, kpi.value, batch_kpis[key].value)
    live_modes, batch_modes = (_supervisor_modes(tmp_path / d / "results.sqlite") for d in ("session", "campaign"))
    assert live_modes == batch_modes
    assert {m for modes in live_modes.values() for m in modes.values()} >= {1, 2}  # autonomous and holding

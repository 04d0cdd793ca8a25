"""Issue 15, item 11: a session whose recorded bag, replayed into the monitor, gives other verdicts than the live
monitor gave fails (exit 1, status ``failed``) and says which verdicts differ; it never reports success."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_a_session_whose_replay_disagrees_fails(
    tmp_path: Path, node_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cosim_validation.runs.run_inputs as run_inputs

    # the bag check judges the recorded samples with a 1 nm tip bound: the virtual robot's tip_follows_plan, which
    # holds live (2 mm), is violated on replay
    strict = yaml.safe_load((package_root() / "config" / "properties.yaml").read_text())
    strict["constants"]["tip_deviation_bound_m"] = 1e-9
    strict_file = tmp_path / "strict_properties.yaml"
    strict_file.write_text(yaml.safe_dump(strict, sort_keys=False))
    original = run_inputs.monitor_world

    def replay_world(config: Any, properties: Any) -> Any:
        return original(config, strict_file)

    monkeypatch.setattr(run_inputs, "monitor_world", replay_world)
    run = tmp_path / "run"
    assert main(["session", "--cases", "1", "--out", str(run)]) == 1
    out = capsys.readouterr().out
    assert "session failed" in out
    assert "differ from the live monitor's" in out
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["bag_check"]["replay_equals_live"] is False
    assert any("tip_follows_plan" in d for d in summary["bag_check"]["replay_differences"])

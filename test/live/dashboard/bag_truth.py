"""What a recorded session holds, read straight from the bag's messages (not through the dashboard), so
tests compare the dashboard with an independent reading."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cosim_validation.live.ros.bag import read_messages

NS = 1_000_000_000


class CaseTruth(NamedTuple):
    test_id: str
    start_ns: int
    expected: dict[int, tuple[np.ndarray, int]]  # stamp -> (tip position, stage)
    actual: dict[str, dict[int, np.ndarray]]  # robot label -> stamp -> tip position (stamps of the plan)
    report: Any  # the CaseReport message


def read_truth(bag: Path) -> dict[str, CaseTruth]:
    """Per case: the expected tips, each robot's actual tips (by the case's time range) and its report."""
    starts: dict[str, int] = {}
    expected: dict[str, dict[int, tuple[np.ndarray, int]]] = {}
    tips: dict[str, list[tuple[int, np.ndarray]]] = {"virtual": [], "physical": []}
    reports: dict[str, Any] = {}
    for m in read_messages(bag):
        msg = m.message
        if m.topic == "/cosim/case_status" and msg.event == 0:
            starts[msg.test_case.test_id] = msg.header.stamp.sec * NS + msg.header.stamp.nanosec
        elif m.topic == "/cosim/expected":
            p = msg.tip_pose.position
            t = msg.header.stamp.sec * NS + msg.header.stamp.nanosec
            expected.setdefault(msg.test_id, {})[t] = (np.array([p.x, p.y, p.z]), int(msg.stage))
        elif m.topic.endswith("/tip_pose"):
            p = msg.pose.position
            tips[m.topic.split("/")[2]].append(
                (msg.header.stamp.sec * NS + msg.header.stamp.nanosec, np.array([p.x, p.y, p.z]))
            )
        elif m.topic == "/cosim/case_reports":
            reports[msg.test_id] = msg
    order = sorted(starts, key=starts.__getitem__)
    truth = {}
    for i, test_id in enumerate(order):
        end = starts[order[i + 1]] if i + 1 < len(order) else 2**63 - 1
        planned = expected.get(test_id, {})
        actual = {
            r: {t: p for t, p in samples if starts[test_id] <= t < end and t in planned} for r, samples in tips.items()
        }
        truth[test_id] = CaseTruth(test_id, starts[test_id], expected.get(test_id, {}), actual, reports.get(test_id))
    return truth


def deviation_truth(case: CaseTruth, robot: str) -> tuple[np.ndarray, np.ndarray]:
    """(t_s since case start, deviation [m]) of ``robot`` at every stamp both it and the plan have."""
    stamps = sorted(t for t in case.actual[robot] if t in case.expected)
    t_s = np.array([(t - case.start_ns) / NS for t in stamps])
    dev = np.array([np.linalg.norm(case.actual[robot][t] - case.expected[t][0]) for t in stamps])
    return t_s, dev

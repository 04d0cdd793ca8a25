"""The lockstep loop without ROS: what it sends, when it stops, what it tells the listener, and its clock."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from cosim_validation.assembly import (
    CaseEvent,
    CaseListener,
    CaseRun,
    Lockstep,
    LockstepSettings,
    RobotLostError,
    SessionClock,
    case_seed,
)
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.controllers.planning import InsertionLine, Plan, PlanningError
from cosim_validation.controllers.planning.state_validator import SetpointVerdict
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.testgen import TestCase
from test.controllers.planning.setup_fixtures import CONFIG_PATH

N = 12  # samples of the fake plan (10 Hz)


@pytest.fixture(scope="module")
def kinematics() -> Kinematics:
    from cosim_validation.common.config import load_config

    return RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).kinematics


def make_case(test_id: str = "suite-0000001", seed: int = 7) -> TestCase:
    z = np.zeros(3)
    return TestCase(test_id, "suite", "base_link", z, z, np.full(3, -1), 0.0, "manual", seed, 0.0)


class FakeController:
    """Plans a fixed joint motion (two stages), or refuses."""

    name = "fake"

    def __init__(self, home: np.ndarray, refuse: bool = False) -> None:
        self.home, self.refuse = home, refuse

    def plan_case(self, source: Any, target: Any, seed: int = 0) -> Plan:
        if self.refuse:
            raise PlanningError("no needle keeps the clearance", "clearance")
        q = self.home + np.linspace(0.0, 0.1, N)[:, None]
        stage = np.array([int(Stage.INITIALIZATION)] * 6 + [int(Stage.APPROACH)] * (N - 6), dtype=np.uint8)
        line = InsertionLine(np.zeros(3), np.array([0.0, 0.0, -1.0]), np.zeros(3))
        return Plan(np.arange(N) / 10.0, stage, q, np.zeros(3), line, self.name)


@dataclass
class FakePort:
    """A robot that records what it got; ``lose_at`` makes it stop answering at that sample."""

    role: RobotRole
    lose_at: int | None = None
    resets: list[tuple[str, int]] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    answered_at: float = -1.0  # time.monotonic() of its last answer (a frozen robot that runs again answers late)

    def reset(self, test_id: str, q0: np.ndarray, case_seed: int) -> None:
        self.resets.append((test_id, case_seed))
        self.sent.clear()

    def send(self, stamp_ns: int, q: np.ndarray) -> None:
        self.sent.append(stamp_ns)

    def wait(self, stamp_ns: int) -> None:
        if self.lose_at is not None and len(self.sent) > self.lose_at:
            raise RobotLostError(f"{self.role.label} robot is stale")
        self.answered_at = time.monotonic()

    def answered_since(self, monotonic_s: float) -> bool:
        return self.answered_at > monotonic_s


class StopAt:
    """A state validator that refuses setpoint ``k`` (and everything after it)."""

    def __init__(self, k: int) -> None:
        self.k, self.seen = k, 0

    def reset(self, q: np.ndarray) -> None:
        self.seen = 0

    def check(self, q: np.ndarray) -> SetpointVerdict:
        self.seen += 1
        if self.seen > self.k:
            return SetpointVerdict(False, "forbidden_region", "needle 4.2 mm from 'heart'")
        return SetpointVerdict(True, "ok", "")


class Heard(CaseListener):
    """Everything the loop said."""

    def __init__(self, cancel_at: int | None = None) -> None:
        self.events: list[tuple[CaseEvent, Stage, str, int]] = []
        self.setpoints: list[tuple[int, int]] = []
        self.cancel_at = cancel_at

    def status(self, event: CaseEvent, stage: Stage, message: str, run: CaseRun) -> None:
        self.events.append((event, stage, message, run.executed))

    def setpoint(
        self, k: int, stamp_ns: int, stage: Stage, q: np.ndarray, tip: np.ndarray, quat: np.ndarray, mode: object = 0
    ) -> None:
        assert tip.shape == (3,)
        assert quat.shape == (4,)
        self.setpoints.append((k, stamp_ns))

    def cancel_requested(self) -> bool:
        return self.cancel_at is not None and len(self.setpoints) >= self.cancel_at


def loop(kinematics: Kinematics, *ports: FakePort, validate: int | None = None, drop: bool = True) -> Lockstep:
    settings = LockstepSettings(validate=validate is not None, drop_lost_robots=drop)
    validator = (lambda: StopAt(validate)) if validate is not None else None
    return Lockstep(kinematics, {p.role: p for p in ports}, settings, validator, SessionClock())  # type: ignore[arg-type]


def test_a_completed_case_streams_every_setpoint_to_every_robot(kinematics: Kinematics) -> None:
    virtual, physical = FakePort(RobotRole.VIRTUAL), FakePort(RobotRole.PHYSICAL)
    lockstep, heard, case = loop(kinematics, virtual, physical), Heard(), make_case()
    home = RobotConfig.from_config(_config()["robot"]).home_q
    run = lockstep.run(case, FakeController(home), heard)
    assert (run.outcome, run.message, run.executed, run.started) == ("completed", "every stage executed", N, True)
    stamps = [1_000_000_000 + k * 100_000_000 for k in range(N)]
    assert virtual.sent == physical.sent == stamps == [s for _, s in heard.setpoints]
    assert virtual.resets == physical.resets == [(case.test_id, case_seed(case.seed, case.test_id))]
    events = [e for e, *_ in heard.events]
    assert events == [CaseEvent.STARTED, CaseEvent.STAGE, CaseEvent.COMPLETED]
    assert heard.events[1][1] is Stage.APPROACH
    assert heard.events[1][3] == 7
    np.testing.assert_allclose(run.t_s, np.arange(N) / 10.0, atol=1e-15)
    assert run.duration_s == pytest.approx(1.1)
    assert lockstep.clock.now_ns == stamps[-1] + 100_000_000  # the next case starts one period later
    second = lockstep.run(make_case("suite-0000002"), FakeController(home), Heard())
    assert second.stamps_ns[0] == lockstep.clock.now_ns - N * 100_000_000


def test_a_refused_setpoint_aborts_before_it_is_sent(kinematics: Kinematics) -> None:
    port, heard = FakePort(RobotRole.VIRTUAL), Heard()
    lockstep = loop(kinematics, port, validate=5)
    home = RobotConfig.from_config(_config()["robot"]).home_q
    run = lockstep.run(make_case(), FakeController(home), heard)
    assert run.outcome == "aborted"
    assert run.stopped_by == "validator"
    assert run.message == "the state validator refused setpoint 5 (initialization): needle 4.2 mm from 'heart'"
    assert run.executed == 5
    assert len(port.sent) == 5
    assert len(heard.setpoints) == 5
    assert heard.events[-1][:2] == (CaseEvent.ABORTED, Stage.INITIALIZATION)
    assert heard.events[-1][3] == 5  # the status says how many samples were streamed
    assert lockstep.clock.now_ns == 1_000_000_000 + round(1.1 * 1e9) + 100_000_000  # past the whole planned case


def test_a_lost_robot_aborts_the_case_and_is_left_out_of_the_next(kinematics: Kinematics) -> None:
    virtual, physical = FakePort(RobotRole.VIRTUAL), FakePort(RobotRole.PHYSICAL, lose_at=3)
    lockstep = loop(kinematics, virtual, physical)
    home = RobotConfig.from_config(_config()["robot"]).home_q
    run = lockstep.run(make_case(), FakeController(home), Heard())
    assert (run.outcome, run.message, run.executed) == ("aborted", "physical robot is stale", 3)
    assert set(lockstep.lost) == {RobotRole.PHYSICAL}
    after = lockstep.run(make_case("suite-0000002"), FakeController(home), Heard())
    assert after.outcome == "completed"
    assert after.robots == (RobotRole.VIRTUAL,)
    assert after.left_out == (RobotRole.PHYSICAL,)
    assert after.message == "every stage executed without the physical robot (it stopped answering in an earlier case)"
    virtual.lose_at = 0
    lockstep.run(make_case("suite-0000003"), FakeController(home), Heard())
    gone = lockstep.run(make_case("suite-0000004"), FakeController(home), Heard())
    assert (gone.outcome, gone.message) == ("aborted", "no robot left: virtual, physical stopped answering")


def test_without_dropping_a_lost_robot_every_case_tries_it_again(kinematics: Kinematics) -> None:
    physical = FakePort(RobotRole.PHYSICAL, lose_at=0)
    lockstep = loop(kinematics, physical, drop=False)
    home = RobotConfig.from_config(_config()["robot"]).home_q
    for test_id in ("a-1", "a-2"):
        assert lockstep.run(make_case(test_id), FakeController(home), Heard()).outcome == "aborted"
    assert lockstep.lost == {}
    assert [r for r, _ in physical.resets] == ["a-1", "a-2"]


def test_a_lost_robot_that_answers_again_drives_the_next_case(kinematics: Kinematics) -> None:
    """A driver frozen for a while (SIGSTOP) answers its backlog when it runs again: it is back."""
    virtual, physical = FakePort(RobotRole.VIRTUAL), FakePort(RobotRole.PHYSICAL, lose_at=2)
    lockstep = loop(kinematics, virtual, physical)
    home = RobotConfig.from_config(_config()["robot"]).home_q
    first = lockstep.run(make_case("a-1"), FakeController(home), Heard())
    assert (first.outcome, first.stopped_by) == ("aborted", "robot")
    assert lockstep.run(make_case("a-2"), FakeController(home), Heard()).left_out == (RobotRole.PHYSICAL,)
    physical.lose_at = None
    physical.answered_at = time.monotonic() + 1.0  # its late answers came
    back = lockstep.run(make_case("a-3"), FakeController(home), Heard())
    assert (back.outcome, back.robots, back.left_out) == ("completed", (RobotRole.VIRTUAL, RobotRole.PHYSICAL), ())
    assert lockstep.lost == {}


def test_a_refusal_moves_nothing(kinematics: Kinematics) -> None:
    port, heard = FakePort(RobotRole.VIRTUAL), Heard()
    home = RobotConfig.from_config(_config()["robot"]).home_q
    run = loop(kinematics, port).run(make_case(), FakeController(home, refuse=True), heard)
    assert (run.outcome, run.message, run.started) == ("refused", "clearance: no needle keeps the clearance", False)
    assert port.resets == []
    assert port.sent == []
    assert [e for e, *_ in heard.events] == [CaseEvent.REFUSED]


def test_a_cancel_stops_at_the_next_setpoint(kinematics: Kinematics) -> None:
    port = FakePort(RobotRole.VIRTUAL)
    home = RobotConfig.from_config(_config()["robot"]).home_q
    run = loop(kinematics, port).run(make_case(), FakeController(home), Heard(cancel_at=4))
    assert (run.outcome, run.message, run.executed) == ("aborted", "canceled by the client", 4)


def test_bad_requests(kinematics: Kinematics) -> None:
    home = RobotConfig.from_config(_config()["robot"]).home_q
    with pytest.raises(InputError, match=r"robots \['physical'\] are not driven here \(robots: \['virtual'\]\)"):
        loop(kinematics, FakePort(RobotRole.VIRTUAL)).run(
            make_case(), FakeController(home), robots=[RobotRole.PHYSICAL]
        )
    with pytest.raises(InputError, match="validation asked for but no state validator given"):
        Lockstep(kinematics, {}, LockstepSettings(validate=True))


def _config() -> Any:
    from cosim_validation.common.config import load_config

    return load_config(CONFIG_PATH)

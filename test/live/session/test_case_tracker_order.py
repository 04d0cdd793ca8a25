"""The case a message belongs to does not depend on how the topics interleave (a monitor or a recorder under
load receives a case's first samples before its STARTED status, or the next case's STARTED before this case's
last tip pose): every interleaving that keeps each topic's own order gives the same conclusions."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import MonitorWorld, load_monitor_world
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.session.case_tracker import CaseEnd, CaseInfo, CaseTracker
from test.live.session.test_stream_assembler import DT_NS, make_record

REPO = Path(__file__).resolve().parents[3]
N = 30  # samples per case
ROBOTS = (RobotRole.VIRTUAL, RobotRole.PHYSICAL)


@pytest.fixture(scope="module")
def world() -> MonitorWorld:
    return load_monitor_world(REPO / "config" / "needle_insertion.yaml", REPO / "config" / "properties.yaml")


@dataclass(frozen=True)
class Message:
    topic: str
    feed: Callable[[CaseTracker], object]


def session_messages(world: MonitorWorld, cases: int, announced: int = N) -> list[Message]:
    """The messages of ``cases`` consecutive cases in the order the controller and the robots send them.

    ``announced``: the sample count the STARTED status announces (a closed-loop controller without a reference
    announces 1, its start pose: how long it streams is known only when it ends, from COMPLETED's samples sent).
    """
    kin = world.kinematics
    out: list[Message] = []
    for c in range(cases):
        start = (1 + c * (N + 1)) * DT_NS  # the next case starts one period after this one's last sample
        expected = make_record(kin, RobotRole.EXPECTED, N, seed=c, with_tip=False)
        records = {r: make_record(kin, r, N, seed=10 * c + int(r), with_tip=True) for r in ROBOTS}
        info = CaseInfo(f"case-{c}", expected.tip_pos_m[-1], ROBOTS, kin.needle_length_m, announced, start_ns=start)
        out.append(Message("status", lambda t, i=info: t.start(i)))
        for k in range(N):
            stamp = start + k * DT_NS
            stage, q_plan = Stage(int(expected.stage[k])), expected.q_setpoint[k]
            out.append(
                Message("expected", lambda t, s=stamp, st=stage, q=q_plan, c=c: t.expected(s, st, q, f"case-{c}"))
            )
            for role, rec in records.items():
                q, tip, quat = rec.q_measured[k], rec.actual_tip_pos_m[k], rec.actual_tip_quat_wxyz[k]
                out.append(Message(f"{role.label}/joints", lambda t, r=role, s=stamp, q=q: t.joints(r, s, q)))
                out.append(Message(f"{role.label}/tip", lambda t, r=role, s=stamp, p=tip, w=quat: t.tip(r, s, p, w)))
        out.append(Message("status", lambda t: t.end("completed", "", N)))
    return out


def interleaved(messages: list[Message], seed: int, lag: float) -> list[Message]:
    """Each message delayed by up to ``lag`` positions, every topic keeping its own order."""
    rng = random.Random(seed)
    last: dict[str, float] = {}
    keyed = []
    for i, m in enumerate(messages):
        key = max(i + rng.uniform(0, lag), last.get(m.topic, -1.0) + 1e-6)
        last[m.topic] = key
        keyed.append((key, m))
    return [m for _, m in sorted(keyed, key=lambda p: p[0])]


def conclude(world: MonitorWorld, messages: list[Message]) -> list[CaseEnd]:
    ends: list[CaseEnd] = []
    tracker = CaseTracker(world, set(ROBOTS), ends.append)
    for m in messages:
        m.feed(tracker)
    tracker.conclude_pending()
    return ends


def outcome(ends: list[CaseEnd]) -> list[tuple[str, str, dict[RobotRole, int], list[tuple[str, str, float]]]]:
    return [
        (
            e.info.test_id,
            e.outcome,
            e.conclusion.samples,
            [
                (v.property, v.status.value, round(float(np.nan_to_num(v.margin, nan=-9)), 12))
                for v in e.conclusion.verdicts
            ],
        )
        for e in ends
    ]


def test_the_natural_order_concludes_every_sample(world: MonitorWorld) -> None:
    ends = conclude(world, session_messages(world, 3))
    assert [e.info.test_id for e in ends] == ["case-0", "case-1", "case-2"]
    assert all(e.outcome == "completed" for e in ends)
    assert all(e.conclusion.samples == {RobotRole.EXPECTED: N, **dict.fromkeys(ROBOTS, N)} for e in ends)


@pytest.mark.parametrize("seed", range(6))
def test_any_interleaving_of_the_topics_gives_the_same_conclusions(world: MonitorWorld, seed: int) -> None:
    messages = session_messages(world, 3)
    reference = outcome(conclude(world, messages))
    shuffled = interleaved(messages, seed, lag=40.0)  # up to about 8 samples of lag between topics
    assert shuffled != messages
    assert outcome(conclude(world, shuffled)) == reference


def test_a_case_whose_first_samples_came_before_its_start(world: MonitorWorld) -> None:
    messages = session_messages(world, 2)
    second = [i for i, m in enumerate(messages) if m.topic == "status"][2]  # case-1 STARTED
    moved = messages[:second] + messages[second + 1 : second + 12] + [messages[second]] + messages[second + 12 :]
    assert outcome(conclude(world, moved)) == outcome(conclude(world, messages))


def test_a_late_tip_of_the_previous_case_after_the_next_start(world: MonitorWorld) -> None:
    messages = session_messages(world, 2)
    start_1 = [i for i, m in enumerate(messages) if m.topic == "status"][2]
    last_tip = max(i for i, m in enumerate(messages[:start_1]) if m.topic == "physical/tip")
    moved = messages[:last_tip] + messages[last_tip + 1 : start_1 + 5] + [messages[last_tip]] + messages[start_1 + 5 :]
    assert outcome(conclude(world, moved)) == outcome(conclude(world, messages))


@pytest.mark.parametrize("seed", range(4))
def test_a_closed_loop_case_of_unknown_length_under_any_interleaving(world: MonitorWorld, seed: int) -> None:
    """A robot message that arrives before the expected state of its stamp is still the running case's, also when
    the STARTED status could not say how many samples the case will have (it was taken for the next case's and
    lost, so live and replay, which see other interleavings, concluded on different samples)."""
    messages = session_messages(world, 3, announced=1)
    natural = conclude(world, messages)
    assert all(e.conclusion.samples == {RobotRole.EXPECTED: N, **dict.fromkeys(ROBOTS, N)} for e in natural)
    shuffled = interleaved(messages, seed, lag=40.0)
    assert outcome(conclude(world, shuffled)) == outcome(natural)


def test_a_joint_state_before_the_expected_state_of_its_stamp_in_a_closed_loop_case(world: MonitorWorld) -> None:
    messages = session_messages(world, 2, announced=1)
    fifth = [i for i, m in enumerate(messages) if m.topic == "expected"][5]
    # the robots' answers to sample 5 reach the monitor before the expected state of sample 5 does
    moved = messages[:fifth] + messages[fifth + 1 : fifth + 5] + [messages[fifth]] + messages[fifth + 5 :]
    assert [m.topic for m in moved[fifth : fifth + 5]] == [
        "virtual/joints",
        "virtual/tip",
        "physical/joints",
        "physical/tip",
        "expected",
    ]
    assert outcome(conclude(world, moved)) == outcome(conclude(world, messages))


def test_a_case_concluded_at_the_timeout_replays_to_the_same_samples(world: MonitorWorld) -> None:
    """The physical driver froze between a sample's joint state and its tip pose: the live monitor concluded the
    case at its timeout with that sample's tip unknown (CaseReport.timed_out); the frozen driver's late tip pose,
    recorded after the live report, is not taken by the replay, which concludes where the report is in the bag."""
    messages = session_messages(world, 1)[:-1]  # without its end
    joints = [i for i, m in enumerate(messages) if m.topic == "physical/joints"]
    frozen = joints[N // 2]
    tip = next(i for i in range(frozen, len(messages)) if messages[i].topic == "physical/tip")
    late_tip = messages[tip]
    sent = [m for i, m in enumerate(messages) if i != tip and not (i > tip and m.topic.startswith("physical/"))]
    end = Message("status", lambda t: t.end("aborted", "the physical robot is stale", N))

    live: list[CaseEnd] = []
    tracker = CaseTracker(world, set(ROBOTS), live.append)
    for m in [*sent, end]:
        m.feed(tracker)
    assert live == []  # the physical robot owes samples: the case waits
    tracker.conclude_ending()  # the live timeout
    assert len(live) == 1
    assert live[0].timed_out
    late_tip.feed(tracker)  # after the conclusion: dropped
    assert live[0].conclusion.samples[RobotRole.PHYSICAL] == N // 2 + 1  # the last one without its tip

    def replay(at_report: bool) -> list[CaseEnd]:
        ends: list[CaseEnd] = []
        tracker = CaseTracker(world, set(ROBOTS), ends.append)
        for m in sent:
            m.feed(tracker)
        tracker.end("aborted", "the physical robot is stale", N, live[0].conclusion.samples, at_report)
        tracker.reported("case-0")  # the live report, recorded before the late tip
        late_tip.feed(tracker)
        tracker.conclude_pending()
        return ends

    assert outcome(replay(at_report=True)) == outcome(live)
    assert outcome(replay(at_report=False)) != outcome(live)  # concluded once caught up: the late tip was taken

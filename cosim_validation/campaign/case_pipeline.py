"""One test case from input to stored result: plan, execute on the robots, monitor.

This is the one place the project assembles its parts for a case; the batch runner, the session's
nodes and ``cosim run-case`` all use it::

    world = build_world(WorldSpec("config/needle_insertion.yaml", engines=("mujoco", "emulated")))
    result = run_case(world, case, case_index=0, seed=case_seed(suite_seed, case.test_id))
    world.close()

:func:`build_world` loads the configuration once (per worker process): the anatomy, the robot, the
five-stage planner and the controller under test, the backends, the property set and the obstacles
the monitor measures. :func:`run_case` then plans the case (the expected trajectory), executes the
plan on every backend, evaluates every property and KPI offline on each robot's record, and returns
a :class:`~cosim_validation.campaign.results_db.CaseResult`.

A case's result depends only on the configuration, the case and its seed: backends are reset and
reseeded per case, and the seed comes from the suite's seed and the test id (:func:`case_seed`), never
from the worker or the order, so local and Ray runs, and resumed and uninterrupted runs, store the
same rows.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.campaign.campaign_config import CampaignConfig
from cosim_validation.campaign.case_monitor import monitor_case
from cosim_validation.campaign.results_db import CaseResult, CaseRow
from cosim_validation.config import ConfigNode, load_case_config
from cosim_validation.controllers import CONTROLLER_NAMES, Controller, ControllersConfig, InsertionSetup
from cosim_validation.coverage import TestCase
from cosim_validation.exceptions import InputError
from cosim_validation.planning import Plan, PlanningError
from cosim_validation.properties import DistanceField, MonitorContext, PropertySet
from cosim_validation.properties.context import SelfCollisionCheck
from cosim_validation.properties.scene_context import scene_obstacles
from cosim_validation.record import TrajectoryRecord
from cosim_validation.robot import Kinematics
from cosim_validation.robot.self_distance import SelfDistance
from cosim_validation.sim import RobotBackend, execute_trajectory, make_backend


def case_seed(suite_seed: int, test_id: str) -> int:
    """The seed of one case: a 63-bit hash of the suite's seed and the test id (not of order or worker)."""
    digest = hashlib.blake2b(f"{int(suite_seed)}/{test_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


@dataclass(frozen=True)
class WorldSpec:
    """What a worker builds; small and picklable (sent to every worker process or Ray actor).

    Attributes:
        config_path: The configuration file.
        engines: Backends to execute on: ``mujoco`` / ``pybullet`` (virtual), ``emulated`` (physical).
        controller: Controller under test; None for ``controllers.default``.
        trajectories: Whether results carry the trajectory records (expected and one per backend).
    """

    config_path: str
    engines: tuple[str, ...] = ("mujoco",)
    controller: str | None = None
    trajectories: bool = True


@dataclass
class CaseWorld:
    """Everything a case needs, built once by :func:`build_world`.

    Attributes:
        spec: What was built.
        config: The configuration.
        campaign: Its ``campaign`` section (property file, robots, safety property).
        setup: The case study of the configuration: robot, anatomy, planner, controllers.
        controller: The controller under test.
        backends: The robots the plan runs on, in :attr:`WorldSpec.engines` order.
        properties: The property set, KPIs and machines checked on every robot.
        obstacles: The forbidden regions the monitor measures (the scene's obstacles), by name.
        self_collision: The robot's self-collision check (the planner's), for ``self_collision`` in properties.
        self_distance: The smallest distance between non-adjacent parts of the arm, for ``self_distance``.
    """

    spec: WorldSpec
    config: ConfigNode
    campaign: CampaignConfig
    setup: InsertionSetup
    controller: Controller
    backends: tuple[RobotBackend, ...]
    properties: PropertySet
    obstacles: dict[str, DistanceField]
    self_collision: SelfCollisionCheck | None = None
    self_distance: SelfDistance | None = None

    @property
    def kinematics(self) -> Kinematics:
        """The nominal arm and needle."""
        return self.setup.robot.kinematics

    @property
    def scene(self) -> AnatomyScene:
        """The anatomy, placed in base_link."""
        return self.setup.scene

    def context(self, target_m: np.ndarray | None = None) -> MonitorContext:
        """What the monitor knows about a case besides the samples (target in base_link [m])."""
        return MonitorContext(
            joint_names=self.kinematics.joint_names,
            needle_length_m=self.kinematics.needle_length_m,
            obstacles=self.obstacles,
            target_m=target_m,
            self_collision=self.self_collision,
            self_distance=self.self_distance,
        )

    def close(self) -> None:
        """Release the backends."""
        for backend in self.backends:
            backend.close()


def build_world(spec: WorldSpec) -> CaseWorld:
    """Load the configuration and build the world of ``spec`` (seconds: meshes, models, engines).

    Raises:
        ConfigError, InputError: Bad configuration or request (naming file and key).
    """
    config = load_case_config(spec.config_path)
    campaign = CampaignConfig.from_config(config["campaign"])
    controller_name(spec.controller, ControllersConfig.from_config(config["controllers"]))  # fail before the build
    setup = InsertionSetup.from_config(config)
    backends = tuple(make_backend(name, config, setup.robot.kinematics) for name in spec.engines)
    properties = PropertySet.load(campaign.properties_path)
    collision = setup.planner.checker.self_collision  # the planner's model of the arm, for the monitor too
    controller = setup.controller(spec.controller)
    obstacles = scene_obstacles(setup.scene)
    return CaseWorld(
        spec, config, campaign, setup, controller, backends, properties, obstacles,
        collision.in_collision, SelfDistance(collision),
    )  # fmt: skip


_SHARED: dict[tuple[WorldSpec, str], CaseWorld] = {}


def shared_world(spec: WorldSpec) -> CaseWorld:
    """The world of ``spec``, built once per process and reused while the configuration files are unchanged.

    A world gives the same results whatever ran on it before (backends are reset and reseeded per case),
    so one process running several campaigns one after the other (a test session, ``make demo``) builds it
    once. At most one world is kept.
    """
    config = load_case_config(spec.config_path)
    key = (spec, config_digest(spec.config_path, CampaignConfig.from_config(config["campaign"]).properties_path))
    if key not in _SHARED:
        for old in _SHARED.values():
            old.close()
        _SHARED.clear()
        _SHARED[key] = build_world(spec)
    return _SHARED[key]


def controller_name(name: str | None, config: ControllersConfig) -> str:
    """The controller to test: ``name``, or the configuration's default.

    Raises:
        InputError: An unknown name (the message lists the controllers).
    """
    chosen = config.default if name is None else name
    if chosen not in CONTROLLER_NAMES:
        raise InputError(f"unknown controller {name!r}; expected one of: {', '.join(CONTROLLER_NAMES)}")
    return chosen


def case_row(
    case: TestCase, case_index: int, controller: str, outcome: str, message: str, duration_s: float
) -> CaseRow:
    """The ``cases`` row of a test case and its outcome (completed | refused | failed)."""
    (sx, sy, sz), (tx, ty, tz) = (float(v) for v in case.source_m), (float(v) for v in case.target_m)
    ci, cj, ck = (int(v) for v in case.cube_index)
    return CaseRow(
        test_id=case.test_id,
        case_index=case_index,
        source_x_m=sx,
        source_y_m=sy,
        source_z_m=sz,
        target_x_m=tx,
        target_y_m=ty,
        target_z_m=tz,
        cube_i=ci,
        cube_j=cj,
        cube_k=ck,
        granularity_m=float(case.granularity_m),
        generator=case.generator,
        target_depth_m=float(case.target_depth_m),
        controller=controller,
        outcome=outcome,
        message=message,
        duration_s=float(duration_s),
    )


def worker_name() -> str:
    """``host:pid`` of this process (kept in the timings table, never in result rows)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _execute(world: CaseWorld, plan: Plan, test_id: str, seed: int) -> list[TrajectoryRecord]:
    records = [plan.to_record(world.kinematics, test_id)]
    for backend in world.backends:
        reseed = getattr(backend, "reseed", None)
        if reseed is not None:
            reseed(seed)  # noise of this case only: the same whatever ran before on this backend
        records.append(
            execute_trajectory(
                backend, world.kinematics, plan.t_s, plan.stage, plan.q_rad, test_id=test_id, meta={"seed": seed}
            )
        )
    return records


def run_case(world: CaseWorld, case: TestCase, case_index: int, seed: int) -> CaseResult:
    """Plan, execute and monitor one case.

    A controller that refuses (or cannot plan) gives outcome ``refused`` with its reason and no
    trajectory; any other error propagates (the executor records it as ``failed``).

    Args:
        world: From :func:`build_world`.
        case: The test case (source and target in base_link [m]).
        case_index: Position of the case in its campaign.
        seed: From :func:`case_seed`.
    """
    started = time.perf_counter()
    name = world.controller.name
    try:
        plan = world.controller.plan_case(case.source_m, case.target_m)
    except PlanningError as exc:
        row = case_row(case, case_index, name, "refused", f"{exc.reason}: {exc}", 0.0)
        return CaseResult(row, wall_s=time.perf_counter() - started, worker=worker_name())
    records = _execute(world, plan, case.test_id, seed)
    verdicts, kpis = monitor_case(world.properties, records, world.context(case.target_m), case.test_id)
    row = case_row(case, case_index, name, "completed", "", plan.duration_s)
    stored = tuple(records) if world.spec.trajectories else ()
    return CaseResult(row, verdicts, kpis, stored, wall_s=time.perf_counter() - started, worker=worker_name())


def config_digest(config_path: str | Path, *extra: str | Path) -> str:
    """SHA-256 (16 hex) of the configuration file and any extra files (e.g. the property file)."""
    digest = hashlib.sha256()
    for path in (config_path, *extra):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]

"""``cosim doctor``: what the environment holds, and what is missing."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import format_table, print_json
from cosim_validation.common.optional import quiet_stdout

if TYPE_CHECKING:
    from cosim_validation.common.config import ConfigNode
    from cosim_validation.controllers.moveit_spec import MoveItSettings
    from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig

HELP = "check that ROS 2, the interfaces and every library the project needs are importable"


@dataclass(frozen=True)
class Finding:
    """One component: whether it was found, its version and where it lives (or why not)."""

    name: str
    found: bool
    required: bool
    version: str
    detail: str


# (name shown, module to import, distribution for the version, required)
LIBRARIES: tuple[tuple[str, str, str, bool], ...] = (
    ("numpy", "numpy", "numpy", True),
    ("scipy", "scipy", "scipy", True),
    ("numba", "numba", "numba", True),
    ("mujoco", "mujoco", "mujoco", True),
    ("pybullet", "pybullet", "pybullet", True),
    ("open3d", "open3d", "open3d", True),
    ("trimesh", "trimesh", "trimesh", True),
    ("pinocchio", "pinocchio", "pin", True),
    ("ompl", "ompl", "ompl", True),
    ("coal", "coal", "coal", True),
    ("ruckig", "ruckig", "ruckig", True),
    ("toppra", "toppra", "toppra", True),
    ("rosbags", "rosbags", "rosbags", True),
    ("mcap", "mcap", "mcap", True),
    ("pyarrow", "pyarrow", "pyarrow", True),
    ("pandas", "pandas", "pandas", True),
    ("matplotlib", "matplotlib", "matplotlib", True),
    ("ray", "ray", "ray", False),
    ("rtamt", "rtamt", "rtamt", False),
)


def _version(distribution: str, module: object) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "unknown"))


def _where(module: object) -> str:
    path = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", [])), "")
    return str(Path(path).parent) if path else ""


def check_library(name: str, module_name: str, distribution: str, required: bool) -> Finding:
    """Import ``module_name`` and report its version, or the reason it failed.

    Args:
        name: The component's name in the table (``pinocchio``).
        module_name: The module to import (``pinocchio``).
        distribution: The installed distribution whose version is reported (``pin``); if it is not installed
            as one, the module's ``__version__``.
        required: Whether ``cosim doctor`` fails (exit code 1) when the import fails.
    """
    try:
        with quiet_stdout():
            module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - ImportError, OSError from a missing shared library, ...
        return Finding(name, False, required, "", f"{type(exc).__name__}: {exc}")
    return Finding(name, True, required, _version(distribution, module), _where(module))


def check_python() -> Finding:
    """The interpreter; the ROS 2 Kilted wheels need CPython 3.11."""
    ok = sys.version_info >= (3, 10)
    return Finding("python", ok, True, platform.python_version(), sys.executable)


def check_ros_source() -> Finding:
    """Where ROS 2 comes from: a sourced distribution or the PyPI wheels in the venv."""
    root = os.environ.get("COSIM_ROOT")
    mode_file = Path(root, ".ros", "mode") if root else None
    mode = mode_file.read_text().strip() if mode_file and mode_file.is_file() else ""
    distro = os.environ.get("ROS_DISTRO", "")
    if mode.startswith("wheels:"):
        return Finding("ros2", True, True, mode.split(":", 1)[1], "ROS 2 core wheels from PyPI in .venv")
    if mode.startswith("system:") or distro:
        return Finding("ros2", True, True, distro or mode.split(":", 1)[1], "sourced ROS 2 distribution")
    return Finding("ros2", True, True, "unknown", "environment not set up by scripts/env.sh")


def check_rclpy() -> list[Finding]:
    """Rclpy and the RMW implementation it will use."""
    try:
        import rclpy  # noqa: F401 - the CLI layer may import ROS
        from rclpy.utilities import get_rmw_implementation_identifier
    except Exception as exc:  # noqa: BLE001
        reason = f"{type(exc).__name__}: {exc}"
        return [
            Finding("rclpy", False, True, "", reason),
            Finding("rmw", False, True, "", "rclpy is not importable"),
        ]
    module = sys.modules["rclpy"]
    found = [Finding("rclpy", True, True, _version("ros-rclpy", module), _where(module))]
    try:
        rmw = get_rmw_implementation_identifier()
        found.append(Finding("rmw", True, True, rmw, f"RMW_IMPLEMENTATION={os.environ.get('RMW_IMPLEMENTATION', '')}"))
    except Exception as exc:  # noqa: BLE001
        found.append(Finding("rmw", False, True, "", f"{type(exc).__name__}: {exc}"))
    return found


def check_interfaces() -> Finding:
    """cosim_validation_interfaces: messages and the RunTestCase action, importable and usable."""
    name = "cosim_validation_interfaces"
    try:
        msg = importlib.import_module(f"{name}.msg")
        action = importlib.import_module(f"{name}.action")
        msg.Verdict()  # loads the C type support, not only the Python files
        action.RunTestCase.Goal()
    except Exception as exc:  # noqa: BLE001
        return Finding(
            name,
            False,
            True,
            "",
            f"{type(exc).__name__}: {exc} (run 'make setup', then 'source scripts/env.sh')",
        )
    return Finding(name, True, True, _version(name, msg), _where(sys.modules[name]))


def check_ament_index() -> Finding:
    """cosim_validation in the ament index: what ``ros2 launch`` and ``get_package_share_directory`` find."""
    try:
        from ament_index_python.packages import get_package_share_directory

        share = Path(get_package_share_directory("cosim_validation"))
    except Exception as exc:  # noqa: BLE001 - not installed, or the package is not registered
        return Finding("ament index", False, True, "", f"{type(exc).__name__}: {exc} (run 'make setup')")
    missing = [d for d in ("config", "launch", "urdf", "meshes") if not (share / d).is_dir()]
    detail = f"{share}" + (f"; missing {', '.join(missing)}" if missing else "")
    return Finding("ament index", not missing, True, "cosim_validation", detail)


def check_session_scope() -> list[Finding]:
    """The DDS scope a ``cosim session`` started now would get (its own domain, localhost discovery)."""
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.live.session.discovery_scope import SESSION_DOMAINS, caller_domain, next_scope

    own = caller_domain()
    try:
        scope = next_scope()
    except CosimError as exc:
        return [Finding("session domain", False, False, "", str(exc))]
    where = f"free of {SESSION_DOMAINS.start}-{SESSION_DOMAINS.stop - 1}, not this shell's {own}"
    return [
        Finding("session domain", True, False, str(scope.domain_id), f"ROS_DOMAIN_ID ({where}); --domain-id N"),
        Finding(
            "session discovery",
            True,
            False,
            scope.discovery_range.upper(),
            "ROS_AUTOMATIC_DISCOVERY_RANGE of the nodes; --discovery-range subnet to be seen on the network",
        ),
    ]


def check_controller_manager(timeout_s: float | None = None) -> Finding:
    """Whether a ros2_control controller manager answers on this shell's ROS domain within ``timeout_s`` [s].

    The manager is rokae_ros2's on the real ER3 Pro. ``timeout_s`` None: a second and a half. When none answers, only
    the stand-in is available (docs/ROBOTS.md, "The ER3 Pro through rokae_ros2").

    Args:
        timeout_s: Longest wait for an answer [s]; None: 1.5 s.
    """
    from cosim_validation.live.ros.controller_manager_probe import PROBE_TIMEOUT_S, probe_controller_manager

    name, domain = "controller manager", os.environ.get("ROS_DOMAIN_ID", "0")
    try:
        wait_s = PROBE_TIMEOUT_S if timeout_s is None else timeout_s
        listed = probe_controller_manager(timeout_s=wait_s)
    except Exception as exc:  # noqa: BLE001 - rclpy or controller_manager_msgs missing
        return Finding(name, False, False, "", f"{type(exc).__name__}: {exc}")
    if listed is None:
        return Finding(
            name,
            False,
            False,
            "",
            f"no /controller_manager/list_controllers answered on ROS_DOMAIN_ID {domain} within {wait_s:g} s: "
            "only the stand-in (controller_manager_emulator, config/er3pro_ros2_control.yaml)",
        )
    states = ", ".join(f"{c.name} {c.state}" for c in listed.controllers) or "no controllers"
    which = " (the project's stand-in, controller_manager_emulator: not rokae_ros2)" if listed.stand_in else ""
    return Finding(name, True, False, "/controller_manager", f"ROS_DOMAIN_ID {domain}: {states}{which}")


def check_move_group(settings: MoveItSettings | None = None) -> Finding:
    """Whether move_group serves the four services the ``moveit`` controller calls on this shell's ROS domain.

    It must answer within a second and a half. ``settings``: namespace and domain; default the controller's defaults.

    Args:
        settings: Namespace and ROS domain of move_group (its ``service_timeout_s`` is replaced by 1.5 s);
            None: the defaults of :class:`~cosim_validation.controllers.moveit_spec.MoveItSettings`.
    """
    from cosim_validation.controllers.moveit_spec import MoveItSettings
    from cosim_validation.controllers.planning.errors import PlanningError
    from cosim_validation.live.ros.controller_manager_probe import PROBE_TIMEOUT_S

    name = "move_group"
    settings = replace(settings or MoveItSettings(), service_timeout_s=PROBE_TIMEOUT_S)
    try:
        from cosim_validation.live.moveit.move_group_client import MoveGroupClient

        client = MoveGroupClient(settings)
    except Exception as exc:  # noqa: BLE001 - rclpy or moveit_msgs missing
        return Finding(name, False, False, "", f"{type(exc).__name__}: {exc}")
    try:
        client.wait()
        stand_in = client.is_stand_in()
    except PlanningError as exc:
        standin = "python -m cosim_validation.live.moveit.standin_node --ros-args -p config:=case.yaml"
        return Finding(name, False, False, "", f"{exc}: the moveit controller needs one (the stand-in: {standin})")
    finally:
        client.close()
    services = ", ".join(settings.service(n) for n in ("plan_kinematic_path", "compute_cartesian_path"))
    which = " (the project's stand-in, cosim_validation.live.moveit.standin_node: not MoveIt)" if stand_in else ""
    return Finding(name, True, False, "", f"ROS_DOMAIN_ID {client.domain_id}: {services}, ...{which}")


def check_ros2_control_arm(config: ConfigNode) -> Finding:
    """The ``ros2_control`` robot of ``config`` as a campaign's worker starts it: its start check, then closed.

    The configured controller manager must list the controller active over the arm's joints, the controller must
    hear commands, ``/joint_states`` must name the joints and the tracker (if configured) must publish.

    Args:
        config: The case-study configuration (its ``robot`` and ``backends.ros2_control``).
    """
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.live.session.node_parameters import ros2_control_settings
    from cosim_validation.robots.model import RobotConfig
    from cosim_validation.robots.registry import make_backend

    name = "ros2_control arm"
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    try:
        make_backend("ros2_control", config, kinematics).close()
    except CosimError as exc:
        return Finding(name, False, True, "", str(exc))
    p = ros2_control_settings(config["backends"].get("ros2_control"))
    tracker = f", tracker {p.tracker_namespace}" if p.tracker_namespace else ", no tracker"
    return Finding(
        name,
        True,
        True,
        "",
        f"{p.controller} of {p.controller_manager} active over {', '.join(kinematics.joint_names)}; "
        f"{p.joint_states_topic} names them{tracker}",
    )


def check_coppeliasim(config: CoppeliaSimConfig | None = None) -> Finding:
    """Whether CoppeliaSim's ZeroMQ remote API answers within a second and a half, through the official client.

    ``config``: host and port; default localhost:23000.

    Args:
        config: Host and port of the remote API (its ``connect_timeout_s`` is replaced by 1.5 s); None:
            localhost:23000.
    """
    from cosim_validation.live.ros.controller_manager_probe import PROBE_TIMEOUT_S
    from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
    from cosim_validation.robots.virtual.errors import BackendConnectionError

    name = "CoppeliaSim"
    config = replace(config or CoppeliaSimConfig(), connect_timeout_s=PROBE_TIMEOUT_S)
    try:
        from cosim_validation.robots.virtual.coppeliasim_link import CoppeliaSimLink

        link = CoppeliaSimLink(config)
    except BackendConnectionError as exc:
        return Finding(name, False, False, "", f"{exc} (needed by the coppeliasim backend only)")
    except Exception as exc:  # noqa: BLE001 - the client library missing
        return Finding(name, False, False, "", f"{type(exc).__name__}: {exc}")
    stand_in = link.stand_in
    link.close()
    if stand_in is not None:  # as the controller manager's and move_group's stand-ins are named
        return Finding(
            name, True, False, "", f"{config.endpoint}: the remote API answers; it is {stand_in}, not CoppeliaSim"
        )
    return Finding(name, True, False, "", f"{config.endpoint}: the remote API answers")


def collect() -> list[Finding]:
    """Every finding, in the order shown."""
    findings = [check_python(), check_ros_source(), *check_rclpy(), check_interfaces(), check_ament_index()]
    findings += [*check_session_scope(), check_controller_manager(), check_move_group(), check_coppeliasim()]
    findings += [check_library(*lib) for lib in LIBRARIES]
    return findings


def robots() -> list[dict[str, Any]]:
    """The robots of the registry (``robot: {model: NAME}``).

    Joints with their types and units, the URDF and the tool frame; ``error`` names a model that does not load.
    """
    from cosim_validation.common.config import package_root
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.robots.model import JOINT_TYPE_NAMES, ROBOT_MODELS, Kinematics

    out: list[dict[str, Any]] = []
    for model in ROBOT_MODELS.values():
        entry: dict[str, Any] = {"name": model.name, "title": model.title, "urdf": model.urdf}
        entry["tool_frame"] = model.mount_frame
        try:
            chain = Kinematics.from_urdf(package_root() / model.urdf, model.needle_length_m, model.mount_frame).chain
        except CosimError as exc:
            out.append(entry | {"error": str(exc)})
            continue
        kinds = [JOINT_TYPE_NAMES[int(k)] for k in chain.joint_type]
        entry["joints"] = [
            {"name": name, "type": kinds[j], "unit": chain.joint_unit(j)} for j, name in enumerate(chain.joint_names)
        ]
        out.append(entry)
    return out


def controllers() -> list[dict[str, Any]]:
    """The controllers a case study can name, each with whether its factory loads.

    The built-in ones and the entry points of installed packages (group ``cosim_validation.controllers``).
    """
    from cosim_validation.controllers import CONTROLLER_NAMES
    from cosim_validation.controllers.plugin_controllers import import_factory
    from cosim_validation.controllers.plugin_loader import catalogue

    return [asdict(entry) for entry in catalogue(CONTROLLER_NAMES, check=import_factory)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config`` (a case study to check as a campaign would), with ``--controller`` and ``--backends``.

    Args:
        parser: The ``cosim doctor`` subcommand's parser.
    """
    parser.add_argument(
        "--config",
        type=arg_types.path,
        help="also check this case study as cosim campaign would before its first case: every section, the "
        "anatomy, the properties, the supervisor, and the controller under test built once (a plugin's factory "
        "runs; an external node's program is found; moveit: move_group answers)",
    )
    parser.add_argument("--controller", help="with --config: the controller to check (default: controllers.default)")
    parser.add_argument(
        "--backends",
        default="virtual",
        help="with --config: the robots a campaign would run, comma-separated (default: virtual)",
    )


def case_study(config: str, controller: str | None, backends: str) -> list[Finding]:
    """Check a case study as ``cosim campaign`` does before its first case; one finding per part.

    Args:
        config: The case-study configuration file.
        controller: The controller to check; None: ``controllers.default``.
        backends: Robots or engines, comma-separated, as ``cosim campaign --backends`` takes them.

    Raises:
        CosimError: The first thing a run would refuse, naming the file and key.
    """
    from cosim_validation.assembly import AssemblySpec
    from cosim_validation.assembly.campaign_config import ENGINE_ROLES, CampaignConfig
    from cosim_validation.assembly.spec_check import check_spec
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.controllers import ControllersConfig
    from cosim_validation.monitor.properties import PropertySet
    from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
    from cosim_validation.testgen import load_testgen_config
    from cosim_validation.testgen.region_builder import check_region_names

    path = resolve_resource(config)
    case_config = load_case_config(path)
    campaign = CampaignConfig.from_config(case_config["campaign"])
    engines = campaign.engines(tuple(n.strip() for n in backends.split(",") if n.strip()))
    checked = check_spec(AssemblySpec(str(path), engines, controller), config=case_config)
    properties = checked.properties if checked.properties is not None else PropertySet.load(campaign.properties_path)
    robots = ", ".join(f"{ENGINE_ROLES[e].label}: {e}" for e in engines)
    models = ", ".join(f"{m.name} ({m.role})" for m in checked.scene.models)
    repaired = [m.name for m in checked.scene.models if m.repair is not None]
    supervisor = campaign.supervisor_path
    # test generation (cosim testgen, a session without --suite) reads the testgen section: its names too
    regions = check_region_names(checked.scene, load_testgen_config(case_config["testgen"]))
    findings = [
        Finding("configuration", True, True, "", f"{_shown(path)}: every section as a campaign reads it"),
        Finding("controller", True, True, checked.controller, checked.controller_kind),
        Finding("robots", True, True, "", robots),
        Finding("anatomy", True, True, "", models + (f"; repaired: {', '.join(repaired)}" if repaired else "")),
        Finding("test generation", True, True, "", regions),
        Finding(
            "properties",
            True,
            True,
            "",
            f"{_shown(campaign.properties_path)}: {len(properties.properties)} properties, "
            f"{len(properties.kpis)} KPIs, {len(properties.machines)} behaviour machines",
        ),
        Finding(
            "supervisor", True, False, "", str(supervisor) if supervisor is not None else "none (plans run as planned)"
        ),
    ]
    if checked.controller == "moveit":
        findings.append(check_move_group(ControllersConfig.from_config(checked.config["controllers"]).moveit))
    if "coppeliasim" in engines:
        findings.append(check_coppeliasim(CoppeliaSimConfig.from_config(checked.config["backends"].get("coppeliasim"))))
    if "ros2_control" in engines:
        findings.append(check_ros2_control_arm(checked.config))
    return findings


def run(args: argparse.Namespace) -> int:
    """Print the findings; exit 1 naming what required component is missing.

    Args:
        args: The parsed command line of ``cosim doctor`` (``--json``, ``--config``, ``--controller``,
            ``--backends``).
    """
    from cosim_validation.live.session.discovery_scope import caller_domain

    caller_domain()  # a ROS_DOMAIN_ID that is no domain id: one error line before any probe joins DDS with it
    findings = collect()
    study = case_study(args.config, args.controller, args.backends) if args.config is not None else []
    missing = [f.name for f in [*findings, *study] if f.required and not f.found]
    if args.json:
        components = [asdict(f) for f in findings]
        found = {"components": components, "robots": robots(), "controllers": controllers()}
        if args.config is not None:
            found["case_study"] = [asdict(f) for f in study]
        print_json({"ok": not missing, "missing": missing, **found})
    else:
        rows = [
            (f.name, "ok" if f.found else ("MISSING" if f.required else "absent (optional)"), f.version, f.detail)
            for f in findings
        ]
        print(format_table(["component", "status", "version", "where / why"], rows))
        robot_rows = [
            (r["name"], len(r.get("joints", [])), _joint_kinds(r), r["urdf"], r.get("error", "ok")) for r in robots()
        ]
        print()
        print(format_table(["robot", "joints", "types", "urdf", "status"], robot_rows))
        controller_rows = [
            (c["name"], c["kind"], c["target"] or "-", "ok" if c["loadable"] else "BROKEN", c["detail"])
            for c in controllers()
        ]
        print()
        print(format_table(["controller", "kind", "factory", "status", "from / why"], controller_rows))
        if args.config is not None:
            study_rows = [(f.name, "ok" if f.found else "not answering", f.version, f.detail) for f in study]
            print()
            print(format_table(["case study", "status", "name", "what was checked"], study_rows))
    if missing:
        print(f"error: missing required components: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


def _shown(path: str | Path) -> str:
    """``path`` relative to the working folder when it lies below it, as a user typed it."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _joint_kinds(robot: dict[str, Any]) -> str:
    """``R R P R R R``: the joint types of a robot entry, base to tool (R revolute, P prismatic)."""
    return " ".join(j["type"][0].upper() for j in robot.get("joints", []))

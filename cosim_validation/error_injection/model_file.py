"""The error model file: both networks, their normalisers and feature sets, and whose robot they are.

A model is an ``.npz`` archive of plain arrays (no pickle) with a JSON ``header`` entry::

    header: {"format": "cosim-error-model", "version": 3,
             "robot": {"joint_names": [...], "model_hash": "<sha256>"},
             "training_data_hash": "<sha256 of the training rows>",
             "networks": {"nn1": {"features": {"kind": "CPE", "n_joints": 7, "deadband": 5e-05}, "layers": 3,
                                  "guard": {"radius": 0.8, "width": 1.0, "mask": [true, ...]}},
                          "nn2": {...}},
             "kinematic": {"offset": [...], "scale": [...], "coupled": [[4, 5]], "coupling": [...]},  # or absent
             "meta": {...}}                      # hyper-parameters, training losses, dataset, time
    nn1.w0, nn1.b0, ... nn1.w2, nn1.b2           # (n_in, n_out), (n_out,) per layer
    nn1.x_mean, nn1.x_std, nn1.y_mean, nn1.y_std # z-score normalisers of inputs (F,) and outputs (J,)
    nn1.support_{lower,upper}, nn1.support_points  # the guard's training support (F,), (F,), (m, F), z-scored
    nn2.*                                        # the same for NN2

NN1 predicts the controller error (measured - setpoint) from the setpoint, NN2 the kinematic and non-kinematic
error (actual - measured) from the measured joints; both as joint offsets [rad, or m for a prismatic joint].
Reading checks every entry (a cut-short or edited file is one :class:`ModelFileError` naming the entry), and
:meth:`ErrorModel.check_robot` refuses a model made for another robot. The guard of a network (:mod:`~.support`:
offsets shrink to zero away from the training data, and joints that did not help are not injected) is new in
version 2; a version-1 file (no guards) still loads and injects its networks' offsets everywhere, as it did
(:attr:`ErrorModel.guarded` is False; ``cosim errors train`` makes a guarded one). Version 3 adds the kinematic
calibration (:mod:`~.joint_map`): NN2 then learns actual - m(measured), m the calibrated joints, and the injector
adds m(q) - q to NN2's offsets; a version-1 or -2 file, or one without ``kinematic``, has none (the nominal model).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from cosim_validation.common.atomic_file import write_atomic
from cosim_validation.common.config.bounded_file import MAX_ARCHIVE_BYTES, parse_json, read_user_bytes
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.features import FeatureSpec
from cosim_validation.error_injection.joint_map import JointMap
from cosim_validation.error_injection.mlp import Network
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.support import Guard, Spread

FORMAT = "cosim-error-model"
VERSION = 3
#: Versions this software reads (1: without guards; 2: without a kinematic calibration).
READABLE_VERSIONS = (1, 2, 3)
NETWORKS = ("nn1", "nn2")
_NORMALISERS = ("x_mean", "x_std", "y_mean", "y_std")


@dataclass(frozen=True)
class ErrorModel:
    """The two error networks of one robot.

    Attributes:
        robot: The robot they were learned on.
        nn1: Controller error: setpoint [+ history] -> measured - setpoint.
        nn2: Kinematic and non-kinematic error: measured [+ history] -> actual - measured.
        training_data_hash: SHA-256 of the rows they were trained on.
        meta: Hyper-parameters, losses, the dataset's name, when (JSON values).
        guards: ``nn1`` / ``nn2`` -> the network's training support and joint mask; a network without one
            (a version-1 file, or trained with ``plain``) injects its offsets everywhere.
        joint_map: The kinematic calibration NN2's offsets are relative to (None: the nominal model).
    """

    robot: RobotIdentity
    nn1: Network
    nn2: Network
    training_data_hash: str
    meta: dict[str, Any] = field(default_factory=dict)
    guards: dict[str, Guard] = field(default_factory=dict)
    joint_map: JointMap | None = None

    def kinematic_offsets(self, q: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """(J,) m(q, d) - q, the calibrated model's joint offsets; 0 without a kinematic calibration.

        Args:
            q: Measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            directions: The joints' last moves (+1, -1, 0), shape (J,).
        """
        q = np.asarray(q, dtype=np.float64)
        if self.joint_map is None:
            return np.zeros_like(q)
        return self.joint_map.apply(q, directions)[0] - q  # type: ignore[no-any-return]

    @property
    def guarded(self) -> bool:
        """Both networks limited to their training support."""
        return all(key in self.guards for key in NETWORKS)

    def offsets(self, key: str, x: np.ndarray, residual: np.ndarray | None = None) -> np.ndarray:
        """(n, J) offsets of network ``key`` for features ``x`` (n, F), or (J,) of one (F,) row.

        When the network has a guard, the offsets are shrunk away from its training support and zero on its masked
        joints (:mod:`~.support`); a sampled ``residual`` is added to the network's offset before that, so it too is
        injected only where the data is.

        Args:
            key: ``nn1`` (the controller error) or ``nn2`` (the kinematic and non-kinematic error).
            x: Features of the network's feature set (:mod:`~.features`), shape (n, F) or (F,).
            residual: A draw of the network's :class:`~.support.Spread`, shape (J,), in the joints' units; None: none.

        Returns:
            Joint offsets, shape (n, J) or (J,), in [rad] (or [m] for a prismatic joint).
        """
        net = self.nn1 if key == "nn1" else self.nn2
        raw = net.predict(x)
        if residual is not None:
            raw = raw + residual
        guard = self.guards.get(key)
        if guard is None:
            return raw
        z = (np.atleast_2d(np.asarray(x, dtype=np.float64)) - net.x_mean) / net.x_std
        scaled = guard.weight(z)[:, None] * np.atleast_2d(raw) * guard.mask
        return scaled if raw.ndim == 2 else scaled[0]  # type: ignore[no-any-return]

    def spread(self, key: str) -> Spread | None:
        """The residual spread of network ``key`` (None: the model stores none: plain, or made before spreads).

        Args:
            key: ``nn1`` or ``nn2``.
        """
        guard = self.guards.get(key)
        return None if guard is None else guard.spread

    def check_robot(self, robot: RobotIdentity, source: str = "error model") -> None:
        """Refuse to drive ``robot`` with a model made for another.

        Args:
            robot: The identity of the robot to drive.
            source: The model's file or name, for the message.

        Raises:
            ModelFileError: Other joints, or the same joints of another kinematic model.
        """
        if robot.joint_names != self.robot.joint_names:
            raise ModelFileError(
                f"{source}: made for a robot with joints {list(self.robot.joint_names)}, "
                f"not this one ({list(robot.joint_names)})"
            )
        if robot.model_hash != self.robot.model_hash:
            raise ModelFileError(
                f"{source}: made for another robot model (hash {self.robot.model_hash[:12]}..., this robot "
                f"{robot.model_hash[:12]}...): its joint offsets do not apply to this arm or tool"
            )

    def to_bytes(self) -> bytes:
        """The ``.npz`` archive."""
        header = {
            "format": FORMAT,
            "version": VERSION,
            "robot": self.robot.to_json(),
            "training_data_hash": self.training_data_hash,
            "networks": {k: self._network_header(k, n) for k, n in self._nets()},
            "meta": self.meta,
        }
        if self.joint_map is not None:
            header["kinematic"] = self.joint_map.to_json(self.robot.joint_names)
        arrays: dict[str, np.ndarray] = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
        for key, net in self._nets():
            for i, (w, b) in enumerate(zip(net.weights, net.biases, strict=True)):
                arrays[f"{key}.w{i}"], arrays[f"{key}.b{i}"] = w, b
            arrays |= {f"{key}.{name}": getattr(net, name) for name in _NORMALISERS}
            if key in self.guards:
                guard = self.guards[key]
                arrays |= {
                    f"{key}.support_lower": guard.lower,
                    f"{key}.support_upper": guard.upper,
                    f"{key}.support_points": guard.points,
                }
        buffer = io.BytesIO()
        np.savez_compressed(buffer, allow_pickle=False, **arrays)
        return buffer.getvalue()

    def save(self, path: str | Path) -> None:
        """Write atomically to ``path`` (never half a file).

        Args:
            path: The model file (replaced if it exists).
        """
        data = self.to_bytes()

        def write(tmp: Path) -> None:
            tmp.write_bytes(data)

        write_atomic(Path(path), write, "an error model")

    @classmethod
    def load(cls, path: str | Path) -> ErrorModel:
        """Read a model file.

        Args:
            path: The model file (``.npz``).

        Raises:
            ModelFileError: Unreadable, empty, truncated or not a model (naming the file and the entry).
        """
        try:
            data = read_user_bytes(path, MAX_ARCHIVE_BYTES)
        except ConfigError as exc:
            raise ModelFileError(f"{path}: cannot read the error model ({exc.message})") from None
        return cls.from_bytes(data, str(path))

    @classmethod
    def from_bytes(cls, data: bytes, source: str) -> ErrorModel:
        """Inverse of :meth:`to_bytes`; see :meth:`load`.

        Args:
            data: The ``.npz`` archive's bytes.
            source: Where the bytes come from, for the messages.
        """
        header, arrays = _read_archive(data, source)
        try:
            robot = _robot(header)
            nets = {key: _network(header, arrays, key) for key in NETWORKS}
            for key, net in nets.items():
                if net.features.n_joints != robot.n_joints:
                    raise ModelFileError(f"{key}: {net.features.n_joints} joints, the robot has {robot.n_joints}")
            guards = {key: g for key in NETWORKS if (g := _guard(header, arrays, key, nets[key])) is not None}
            joint_map = _joint_map(header, robot.n_joints)
            return cls(
                robot, nets["nn1"], nets["nn2"], _text(header, "training_data_hash"), _meta(header), guards, joint_map
            )
        except InputError as exc:
            raise ModelFileError(f"{source}: {exc}") from None

    def _network_header(self, key: str, net: Network) -> dict[str, Any]:
        out: dict[str, Any] = {"features": net.features.to_json(), "layers": len(net.weights)}
        if key in self.guards:
            g = self.guards[key]
            out["guard"] = {"radius": g.radius, "width": g.width, "mask": [bool(m) for m in g.mask]}
            if g.spread is not None:
                out["guard"]["spread"] = g.spread.to_json()
        return out

    def _nets(self) -> tuple[tuple[str, Network], ...]:
        return (("nn1", self.nn1), ("nn2", self.nn2))


def _read_archive(data: bytes, source: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if not data:
        raise ModelFileError(f"{source}: not an error model (the file is empty)")
    if not data.startswith(b"PK"):
        raise ModelFileError(f"{source}: not an error model (not an .npz archive; make one with cosim errors train)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            if "header" not in npz.files:
                raise ModelFileError(f"{source}: not an error model (no 'header' entry; entries: {npz.files})")
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        why = "an entry holds pickled objects, which are never loaded" if "allow_pickle" in str(exc) else exc
        raise ModelFileError(f"{source}: not an intact error model, truncated or damaged ({why})") from None
    try:
        header = parse_json(arrays.pop("header").tobytes(), source, "header")
    except ConfigError as exc:
        raise ModelFileError(f"{source}: header: not valid JSON ({exc.message})") from None
    if not isinstance(header, dict):
        raise ModelFileError(f"{source}: header: expected a JSON object, got {type(header).__name__}")
    if header.get("format") != FORMAT:
        raise ModelFileError(f"{source}: header: format {header.get('format')!r}, expected {FORMAT!r}")
    if header.get("version") not in READABLE_VERSIONS:
        raise ModelFileError(
            f"{source}: header: version {header.get('version')!r}, this software reads "
            f"{' and '.join(map(str, READABLE_VERSIONS))}; make the model again with cosim errors train"
        )
    return header, arrays


def _text(header: dict[str, Any], key: str) -> str:
    value = header.get(key)
    if not isinstance(value, str) or not value:
        raise ModelFileError(f"header: {key!r}: expected a non-empty string, got {value!r}")
    return value


def _robot(header: dict[str, Any]) -> RobotIdentity:
    robot = header.get("robot")
    if not isinstance(robot, dict):
        raise ModelFileError(f"header: 'robot': expected an object, got {robot!r}")
    names = robot.get("joint_names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ModelFileError(f"header: robot.joint_names: expected a list of names, got {names!r}")
    return RobotIdentity(tuple(names), _text(robot, "model_hash"))


def _meta(header: dict[str, Any]) -> dict[str, Any]:
    meta = header.get("meta", {})
    if not isinstance(meta, dict):
        raise ModelFileError(f"header: 'meta': expected an object, got {meta!r}")
    return meta


def _array(arrays: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in arrays:
        raise ModelFileError(f"entry {name!r} missing (entries: {', '.join(sorted(arrays))})")
    value = arrays[name]
    if value.dtype.kind != "f":
        raise ModelFileError(f"entry {name!r}: {value.dtype.name} values, expected floats")
    return np.asarray(value, dtype=np.float64)


def _network(header: dict[str, Any], arrays: dict[str, np.ndarray], key: str) -> Network:
    spec = header.get("networks", {}).get(key) if isinstance(header.get("networks"), dict) else None
    if not isinstance(spec, dict):
        raise ModelFileError(f"header: networks.{key}: missing")
    features, layers = spec.get("features"), spec.get("layers")
    if not isinstance(features, dict) or not isinstance(layers, int) or isinstance(layers, bool) or layers < 1:
        raise ModelFileError(f"header: networks.{key}: expected features (object) and layers (>= 1)")
    try:
        feature_spec = FeatureSpec(str(features["kind"]), int(features["n_joints"]), float(features["deadband"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"header: networks.{key}.features: {exc!r}") from None
    weights = tuple(_array(arrays, f"{key}.w{i}") for i in range(layers))
    biases = tuple(_array(arrays, f"{key}.b{i}") for i in range(layers))
    normalisers = [_array(arrays, f"{key}.{name}") for name in _NORMALISERS]
    try:
        net = Network(feature_spec, weights, biases, *normalisers)
    except ModelFileError as exc:
        raise ModelFileError(f"{key}: {exc}") from None
    _check_offsets(key, net)
    return net


#: the largest offset a network of an error model may predict on its own training data (rad or m): a joint error of
#: a radian is no arm's error but a broken model's
MAX_OFFSET = 1.0


def _check_offsets(key: str, net: Network) -> None:
    """Raise unless the offsets at the training data's mean, and one std either side, are finite and small.

    A model whose weights were scaled by 1e200 was taken, and every case run with it failed on joint values of
    1e192 rad.
    """
    probe = np.vstack([net.x_mean, net.x_mean - net.x_std, net.x_mean + net.x_std])
    with np.errstate(all="ignore"):
        offsets = np.abs(net.predict(probe))
    worst = float(np.max(offsets)) if np.isfinite(offsets).all() else math.inf
    if not worst <= MAX_OFFSET:
        raise ModelFileError(
            f"{key}: offsets of {worst:.3g} (rad or m) on its own training data, where an arm's errors are at most "
            f"{MAX_OFFSET:g}: not an error model of an arm"
        )


def _guard(header: dict[str, Any], arrays: dict[str, np.ndarray], key: str, net: Network) -> Guard | None:
    """The guard of network ``key`` (None: the file has none, a version-1 file or a plain one)."""
    spec = header["networks"][key].get("guard")
    if spec is None:
        return None
    if header.get("version") == 1 or not isinstance(spec, dict):
        raise ModelFileError(f"header: networks.{key}.guard: expected an object in a version-2 file")
    mask = spec.get("mask")
    if not isinstance(mask, list) or len(mask) != net.features.n_joints or not all(isinstance(m, bool) for m in mask):
        raise ModelFileError(f"header: networks.{key}.guard.mask: expected {net.features.n_joints} true/false")
    radius, width = (_number(spec, name, f"networks.{key}.guard") for name in ("radius", "width"))
    box = [_array(arrays, f"{key}.support_{name}") for name in ("lower", "upper", "points")]
    if box[0].shape != (net.features.n_features,):
        raise ModelFileError(f"entry {key}.support_lower: shape {box[0].shape}, expected ({net.features.n_features},)")
    try:
        return Guard(box[0], box[1], box[2], radius, width, np.array(mask, dtype=bool), _spread(spec, key, len(mask)))
    except ModelFileError as exc:
        raise ModelFileError(f"{key}: {exc}") from None


def _spread(spec: dict[str, Any], key: str, n_joints: int) -> Spread | None:
    """The guard's residual spread (None: a file made before spreads were stored)."""
    spread = spec.get("spread")
    if spread is None:
        return None
    where = f"header: networks.{key}.guard.spread"
    if not isinstance(spread, dict):
        raise ModelFileError(f"{where}: expected an object with sigma and phi")
    values = []
    for name in ("sigma", "phi"):
        items = spread.get(name)
        if not isinstance(items, list) or len(items) != n_joints or not all(_is_number(v) for v in items):
            raise ModelFileError(f"{where}.{name}: expected {n_joints} numbers")
        values.append(np.array(items, dtype=np.float64))
    return Spread(values[0], values[1])


def _is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number (a bool is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(spec: dict[str, Any], name: str, where: str) -> float:
    value = spec.get(name)
    if not _is_number(value):
        raise ModelFileError(f"header: {where}.{name}: expected a number, got {value!r}")
    return float(value)


def _joint_map(header: dict[str, Any], n_joints: int) -> JointMap | None:
    """The kinematic calibration of a version-3 file (None: absent, the nominal model)."""
    value = header.get("kinematic")
    if value is None:
        return None
    if header.get("version") != VERSION:
        raise ModelFileError(f"header: 'kinematic' in a version-{header.get('version')} file (expected version 3)")
    return JointMap.from_json(value, n_joints, "header: kinematic")

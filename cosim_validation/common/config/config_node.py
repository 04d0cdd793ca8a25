"""A value read from a configuration file, that knows where it came from."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.config.bounded_file import regular_file_problem
from cosim_validation.common.exceptions import ConfigError

#: Largest random seed a configuration may give (numpy and OMPL take 32-bit unsigned seeds everywhere).
MAX_SEED = 2**32 - 1
#: The longest case time any setting or plan may name [s]: an hour (the shipped limit of a case is 600 s); a dwell
#: and a case limit of 1e300 s, or a plan that long, ran a case without end
MAX_CASE_TIME_S = 3600.0
#: The largest clearance or margin a case study may ask for [m]: a metre is already more than any anatomy here (1e300
#: was taken, and every case was refused with a 300-digit distance)
MAX_CLEARANCE_M = 1.0
#: The largest force a setting or scripted reading may name [N]: more than any arm here exerts (the ER3 Pro carries 3
#: kg; a needle meets a few newtons); 1e308 was taken as a holder force
MAX_FORCE_N = 1000.0
#: The fastest a scripted tip may move [m/s] and turn [rad/s] (a teleoperation twist of 1e300 m/s was taken)
MAX_TIP_SPEED_M_S = 2.0
MAX_TIP_RATE_RAD_S = 2.0 * math.pi
#: The farthest a scripted joint target may be from zero [rad or m]: a turn, past every joint's range here
MAX_JOINT_TARGET = 2.0 * math.pi
#: The farthest a configured point (a source, a source region's centre or extent) may be from the robot's base [m]
MAX_POINT_M = 10.0


@dataclass(frozen=True)
class ConfigNode:
    """One value of a parsed configuration with its origin, for error messages.

    Attributes:
        value: The raw value from YAML (mapping, list, str, number, bool or None).
        source: The file the value came from.
        key: Dotted key path of the value, "" for the document root.
        base_dir: The folder relative paths are taken from; "" for the source file's folder (a run directory's
            copy of a configuration resolves them from the original's folder).
    """

    value: Any
    source: str
    key: str = ""
    base_dir: str = ""

    # ------------------------------------------------------------------ navigation
    def error(self, message: str) -> ConfigError:
        """A :class:`ConfigError` located at this node.

        Args:
            message: What is wrong with the value, e.g. ``expected a number, got 'x'``.
        """
        return ConfigError(self.source, self.key, message)

    def _mapping(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.error(f"expected a mapping, got {type(self.value).__name__} {self.value!r}")
        return self.value

    def _child_key(self, name: str | int) -> str:
        if isinstance(name, int):
            return f"{self.key}[{name}]"
        return f"{self.key}.{name}" if self.key else name

    def has(self, name: str) -> bool:
        """Whether this mapping holds ``name``.

        Args:
            name: The key looked for; this node must be a mapping (else ``ConfigError``).
        """
        return name in self._mapping()

    def __getitem__(self, name: str) -> ConfigNode:
        mapping = self._mapping()
        if name not in mapping:
            known = ", ".join(sorted(map(str, mapping))) or "none"
            raise ConfigError(self.source, self._child_key(name), f"missing required key (keys here: {known})")
        return ConfigNode(mapping[name], self.source, self._child_key(name), self.base_dir)

    def get(self, name: str) -> ConfigNode | None:
        """The child ``name``, or None if absent (or null).

        Args:
            name: The key looked for; this node must be a mapping (else ``ConfigError``).
        """
        mapping = self._mapping()
        if mapping.get(name) is None:
            return None
        return ConfigNode(mapping[name], self.source, self._child_key(name), self.base_dir)

    def keys(self) -> list[str]:
        """Keys of this mapping, in file order.

        Raises:
            ConfigError: A key that is not text (a state named ``true`` is the boolean True to YAML, and was then
                "missing" under the name 'True').
        """
        mapping = self._mapping()
        found: list[object] = list(mapping)  # YAML's keys, whatever the mapping's annotation says
        for key in found:
            if not isinstance(key, str):
                why = (
                    "YAML reads an unquoted true, false, yes, no, on or off as a boolean"
                    if isinstance(key, bool)
                    else ""
                )
                raise ConfigError(
                    self.source,
                    self._child_key(str(key)),
                    f"expected a name, got {key!r} ({why or 'not text'}: quote it)",
                )
        return list(mapping)

    def items(self) -> Iterator[tuple[str, ConfigNode]]:
        """(key, child) pairs of this mapping, in file order."""
        for name in self.keys():
            yield name, self[name]

    def elements(self) -> list[ConfigNode]:
        """Children of this list."""
        if not isinstance(self.value, list):
            raise self.error(f"expected a list, got {type(self.value).__name__} {self.value!r}")
        return [ConfigNode(v, self.source, self._child_key(i), self.base_dir) for i, v in enumerate(self.value)]

    def reject_unknown(self, allowed: Iterable[str]) -> None:
        """Raise if this mapping holds a key outside ``allowed`` (catches typos).

        Args:
            allowed: The keys this mapping may hold.
        """
        allowed_set = set(allowed)
        for name in self.keys():
            if name not in allowed_set:
                raise ConfigError(
                    self.source,
                    self._child_key(name),
                    f"unknown key; expected one of: {', '.join(sorted(allowed_set))}",
                )

    def with_renamed_keys(self, renamed: dict[str, str]) -> ConfigNode:
        """This mapping with the keys of an older release read under their current names (``old -> new``).

        So a run directory's copy of an older configuration still loads; both spellings at once is an error.

        Args:
            renamed: Old key to current key; keys not in it are kept as they are.
        """
        mapping = self._mapping()
        if not any(old in mapping for old in renamed):
            return self
        out: dict[str, Any] = {}
        for name, value in mapping.items():
            new = renamed.get(name, name)
            if new != name and new in mapping:
                raise ConfigError(self.source, self._child_key(name), f"give {new!r} only ({name!r} is its old name)")
            out[new] = value
        return ConfigNode(out, self.source, self.key, self.base_dir)

    # ------------------------------------------------------------------ scalars
    def to_float(
        self,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        exclusive_minimum: float | None = None,
    ) -> float:
        """The value as a finite float within the given bounds.

        Args:
            minimum: The smallest value allowed (inclusive); None for no lower bound.
            maximum: The largest value allowed (inclusive); None for no upper bound.
            exclusive_minimum: A bound the value must be above (exclusive); None for none.
        """
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(f"expected a number, got {v!r}{text_number_hint(v)}")
        f = float(v)
        if not math.isfinite(f):
            raise self.error(f"expected a finite number, got {v!r}")
        if minimum is not None and f < minimum:
            raise self.error(f"expected a number >= {minimum}, got {v!r}")
        if exclusive_minimum is not None and f <= exclusive_minimum:
            raise self.error(f"expected a number > {exclusive_minimum}, got {v!r}")
        if maximum is not None and f > maximum:
            raise self.error(f"expected a number <= {maximum}, got {v!r}")
        return f

    def to_int(self, *, minimum: int | None = None, maximum: int | None = None) -> int:
        """The value as an int within the given bounds.

        Args:
            minimum: The smallest value allowed (inclusive); None for no lower bound.
            maximum: The largest value allowed (inclusive); None for no upper bound.
        """
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(f"expected an integer, got {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(f"expected an integer >= {minimum}, got {v!r}")
        if maximum is not None and v > maximum:
            raise self.error(f"expected an integer <= {maximum}, got {v!r}")
        return int(v)

    def to_str(self, *, choices: Iterable[str] | None = None) -> str:
        """The value as a string, one of ``choices`` if given.

        Args:
            choices: The accepted strings; None accepts any string.
        """
        v = self.value
        if not isinstance(v, str):
            raise self.error(f"expected a string, got {v!r}")
        if choices is not None:
            options = list(choices)
            if v not in options:
                raise self.error(f"expected one of {', '.join(map(repr, options))}, got {v!r}")
        return v

    def to_bool(self) -> bool:
        """The value as a bool (YAML true/false only)."""
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {self.value!r}")
        return self.value

    def to_vector(
        self, length: int | None = None, *, minimum: float | None = None, maximum: float | None = None
    ) -> np.ndarray:
        """The value as a finite float vector, of ``length`` elements if given, each within the bounds.

        Args:
            length: The number of elements the list must have; None accepts any length.
            minimum: The smallest value of an element (inclusive); None for no lower bound.
            maximum: The largest value of an element (inclusive); None for no upper bound.

        Returns:
            (length,) float64 array.
        """
        items = self.elements()
        if length is not None and len(items) != length:
            raise self.error(f"expected a list of {length} numbers, got {len(items)}: {self.value!r}")
        return np.array([item.to_float(minimum=minimum, maximum=maximum) for item in items], dtype=np.float64)

    def to_path(self) -> Path:
        """The value as a path; relative paths are taken from the configuration file's folder (``base_dir``)."""
        text = self.to_str()
        if not text:
            raise self.error("expected a file path, got an empty string")
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = Path(self.base_dir or Path(self.source).parent) / path
        if regular_file_problem(path) == "a loop of symbolic links":  # Path.resolve() would raise RuntimeError
            raise self.error(f"{str(path)!r} is a loop of symbolic links")
        return path

    def to_file(self, what: str = "file") -> Path:
        """:meth:`to_path`, which must name an existing regular file (not a FIFO, device or folder).

        Args:
            what: What the file is, for the message (``property file``).
        """
        path = self.to_path()
        problem = regular_file_problem(path)
        if problem == "not found":
            raise self.error(f"{what} not found: {str(path)!r}")
        if problem is not None:
            raise self.error(f"{what} {str(path)!r} is {problem}")
        return path


def text_number_hint(value: object) -> str:
    """Why a number came as text, if it did.

    YAML 1.1 (PyYAML) reads ``5e-1`` or ``1e300`` as text (its floats need a dot and a signed exponent), and a
    quoted number is text.

    Args:
        value: A value that should have been a number.

    Returns:
        `` (YAML reads ... as text: ...)`` for a text Python reads as a number, else "".
    """
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    written = _yaml_float(value.strip())
    if written == value.strip():
        return " (a number in quotes is text: write it without them)"
    return f" (YAML reads {value} as text: write {written})"


def _yaml_float(text: str) -> str:
    """``5e-1`` -> ``5.0e-1``, ``1e300`` -> ``1.0e+300``: a number with an exponent as YAML 1.1 reads it."""
    mantissa, sep, exponent = text.lower().partition("e")
    if not sep:
        return text
    if "." not in mantissa:
        mantissa += ".0"
    if exponent[:1] not in "+-":
        exponent = "+" + exponent
    return f"{mantissa}e{exponent}"

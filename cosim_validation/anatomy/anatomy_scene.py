"""All anatomical models of one case, in the robot base frame."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.anatomy.anatomy_model import AnatomyModel
from cosim_validation.common.exceptions import InputError


@dataclass(frozen=True, eq=False)
class AnatomyScene:
    """The target, obstacle and skin models placed in ``base_link``.

    Attributes:
        models: Every model, in configuration order; names are unique.
        T_base_patient: (4, 4) float64 pose of the patient frame in ``base_link``.
        source: The configuration file the scene was loaded from ("" if built in code).
    """

    models: tuple[AnatomyModel, ...]
    T_base_patient: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        names = [m.name for m in self.models]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InputError(f"anatomy scene: model names must be unique, repeated: {duplicates!r}")
        T = np.array(self.T_base_patient, dtype=np.float64, copy=True)
        if T.shape != (4, 4):
            raise InputError(f"anatomy scene: T_base_patient must be (4, 4), got shape {T.shape!r}")
        T.setflags(write=False)
        object.__setattr__(self, "T_base_patient", T)

    @property
    def names(self) -> tuple[str, ...]:
        """Model names in configuration order."""
        return tuple(m.name for m in self.models)

    def model(self, name: str) -> AnatomyModel:
        """The model called ``name``.

        Args:
            name: The model's name, as in the configuration (e.g. ``heart``).

        Raises:
            InputError: No such model; the message lists the existing names.
        """
        for m in self.models:
            if m.name == name:
                return m
        raise InputError(f"no anatomy model named {name!r}; models: {', '.join(self.names) or 'none'}")

    def with_role(self, role: str) -> tuple[AnatomyModel, ...]:
        """Models of one role (``target``, ``obstacle`` or ``skin``), in configuration order.

        Args:
            role: ``target``, ``obstacle`` or ``skin``; any other value gives an empty tuple.
        """
        return tuple(m for m in self.models if m.role == role)

    @property
    def targets(self) -> tuple[AnatomyModel, ...]:
        """Models test targets may lie in."""
        return self.with_role("target")

    @property
    def obstacles(self) -> tuple[AnatomyModel, ...]:
        """Forbidden regions (the heart, vessels)."""
        return self.with_role("obstacle")

    @property
    def skins(self) -> tuple[AnatomyModel, ...]:
        """Closed body surfaces the needle enters through."""
        return self.with_role("skin")

    @property
    def target(self) -> AnatomyModel:
        """The primary target: the first model with role ``target``."""
        if not self.targets:
            raise InputError(f"anatomy scene has no target model; models: {', '.join(self.names) or 'none'}")
        return self.targets[0]

    @property
    def skin(self) -> AnatomyModel | None:
        """The first skin model, or None if the scene has none."""
        return self.skins[0] if self.skins else None

    def repairs(self) -> list[dict[str, Any]]:
        """What ``repair: true`` did to each repaired model, for JSON and run metadata (empty if nothing)."""
        return [{"model": m.name, "source": m.source} | m.repair.to_dict() for m in self.models if m.repair is not None]

    def repair_lines(self) -> list[str]:
        """What ``repair: true`` did, as text: one line per repaired model, then one per step (indented)."""
        lines = []
        for m in self.models:
            if m.repair is not None:
                lines.append(f"anatomy: {m.name} ({m.source}) was repaired: {m.repair.summary()}")
                lines += [f"  - {line}" for line in m.repair.lines()]
        return lines

    def __iter__(self) -> Iterator[AnatomyModel]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def __contains__(self, name: object) -> bool:
        return name in self.names

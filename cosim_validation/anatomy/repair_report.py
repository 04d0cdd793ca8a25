"""What ``repair: true`` did to a mesh: every step, the shells and the volume it removed.

A repair that removes anatomy is not a detail: the real heart mesh lost its right atrium (an open shell
that hole filling could not close) and nothing said so. The report travels with the model
(:attr:`AnatomyModel.repair`) and is printed by every command that loads the anatomy, stored in run
metadata and shown in the report; a repair that removes more than the allowed share of the volume is
refused by the loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RepairStep:
    """One change made by the repair.

    Attributes:
        action: What was done, e.g. ``dropped open shells that hole filling could not close``.
        shells: Shells (connected bodies) concerned.
        faces: Triangles concerned.
        removed_m3: Volume the step removed from the solid [m^3] (0 if it removed none). For open shells,
            which enclose no volume of their own, an estimate: the volume with their holes capped by cones
            to their centroid.
        dropped: Whether the step removed its shells from the model.
        note: Details (surface, largest shell, volumes before and after).
    """

    action: str
    shells: int = 0
    faces: int = 0
    removed_m3: float = 0.0
    dropped: bool = False
    note: str = ""

    def line(self) -> str:
        """One human line: action, counts, removed volume, note."""
        counts = [_count(self.shells, "shell"), _count(self.faces, "face")]
        text = self.action + "".join(f", {c}" for c in counts if c)
        if self.removed_m3 > 0:
            text += f", removed {self.removed_m3 * 1e6:.4g} cm^3"
        return text + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class RepairReport:
    """Every step of one model's repair and its balance.

    Attributes:
        steps: The steps that changed something, in order.
        volume_m3: Volume of the repaired solid [m^3].
    """

    steps: tuple[RepairStep, ...]
    volume_m3: float

    @property
    def removed_m3(self) -> float:
        """Volume removed by all steps together [m^3]."""
        return float(sum(step.removed_m3 for step in self.steps))

    @property
    def shells_removed(self) -> int:
        """Shells dropped by all steps together."""
        return sum(step.shells for step in self.steps if step.dropped)

    @property
    def removed_share(self) -> float:
        """Removed volume as a share of the volume before the repair (kept + removed), in [0, 1]."""
        total = self.volume_m3 + self.removed_m3
        return self.removed_m3 / total if total > 0 else 0.0

    def lines(self) -> tuple[str, ...]:
        """One line per step."""
        return tuple(step.line() for step in self.steps)

    def summary(self) -> str:
        """One line: the balance of the repair."""
        shells = _count(self.shells_removed, "shell") or "0 shells"
        return (
            f"kept {self.volume_m3 * 1e6:.4g} cm^3, removed {self.removed_m3 * 1e6:.4g} cm^3 "
            f"({100.0 * self.removed_share:.2f} % of the volume) in {shells}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON and run metadata."""
        return {
            "volume_m3": self.volume_m3,
            "removed_m3": self.removed_m3,
            "removed_share": self.removed_share,
            "shells_removed": self.shells_removed,
            "steps": [
                {
                    "action": s.action,
                    "shells": s.shells,
                    "faces": s.faces,
                    "removed_m3": s.removed_m3,
                    "dropped": s.dropped,
                    "note": s.note,
                }
                for s in self.steps
            ],
        }


def _count(n: int, noun: str) -> str:
    """``3 shells``, ``1 shell``, or "" for none."""
    return "" if n == 0 else f"{n} {noun}" + ("" if n == 1 else "s")

"""Reading a shipped configuration: the project's bounded YAML reader against PyYAML's pure-Python safe loader.

Every node of a session, every campaign worker and every command reads its case-study configuration (and its
property file) through :func:`~cosim_validation.common.config.bounded_file.parse_yaml`, which bounds nesting, alias
expansion and keys. It parses with libyaml's C parser where PyYAML has it; the named alternative is
``yaml.load(text, Loader=yaml.SafeLoader)``, the pure-Python parser, without the bounds. Printed per file: the
best of 5 rounds of 20 reads each, per read, and the ratio (alternative / ours); the values read are compared.

Run: ``python benchmarks/bench_config_read.py`` (use ``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import yaml

from cosim_validation.common.config import package_root
from cosim_validation.common.config.bounded_file import parse_yaml

FILES = ("needle_insertion.yaml", "properties.yaml", "hazards.yaml", "digital_twin.yaml")
ROUNDS, READS = 5, 20


def per_read_s(read: Callable[[], object]) -> float:
    """The best of :data:`ROUNDS` rounds of :data:`READS` calls of ``read``, per call [s]."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(READS):
            read()
        best = min(best, (time.perf_counter() - start) / READS)
    return best


def main() -> None:
    """Print the table."""
    print(f"libyaml in PyYAML {yaml.__version__}: {yaml.__with_libyaml__}")
    print(f"{'file':<24} {'bytes':>7} {'ours [ms]':>10} {'pure Python [ms]':>17} {'ratio':>7}")
    for name in FILES:
        text = (package_root() / "config" / name).read_text()
        ours = parse_yaml(text, name)
        theirs = yaml.load(text, Loader=yaml.SafeLoader)  # the pure-Python safe loader, the named alternative
        assert ours == theirs, f"{name}: the two readers disagree"
        ours_s = per_read_s(lambda text=text, name=name: parse_yaml(text, name))
        theirs_s = per_read_s(lambda text=text: yaml.load(text, Loader=yaml.SafeLoader))
        print(f"{name:<24} {len(text):>7} {ours_s * 1e3:>10.2f} {theirs_s * 1e3:>17.2f} {theirs_s / ours_s:>6.1f}x")


if __name__ == "__main__":
    main()

"""Write the package's meshes: ``robot`` (link visuals, shipped) or ``anatomy`` (built-in models, made at set-up).

python scripts/make_meshes.py robot      # meshes/robot/<link>.stl from urdf/xmate_er3_pro.urdf
python scripts/make_meshes.py anatomy    # meshes/anatomy/<name>.stl, patient frame (not committed)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    """Write the requested meshes under the package root and list them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["robot", "anatomy"])
    parser.add_argument("--package-dir", type=Path, default=ROOT, help="package root (default: this checkout)")
    args = parser.parse_args(argv)
    if args.kind == "robot":
        from cosim_validation.robots.visuals.link_visuals import write_link_visuals

        written = write_link_visuals(args.package_dir / "urdf" / "xmate_er3_pro.urdf", args.package_dir)
    else:
        from cosim_validation.robots.visuals.anatomy_meshes import export_builtin_anatomy

        written = export_builtin_anatomy(args.package_dir)
    total_kb = sum(p.stat().st_size for p in written) / 1000
    print(f"wrote {len(written)} {args.kind} meshes ({total_kb:.0f} kB) to {written[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

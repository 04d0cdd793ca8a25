"""Serve a stand-in for CoppeliaSim: its ZeroMQ remote API (protocol 2) with the project's MuJoCo arm behind it.

python scripts/coppeliasim_standin.py --config config/needle_insertion.yaml            # port 23000
python scripts/coppeliasim_standin.py --config config/needle_insertion.yaml --port 0   # a free port

Prints one line ``listening on tcp://HOST:PORT`` once it accepts requests; stops on Ctrl-C or SIGTERM.
It serves only the ``sim`` functions the CoppeliaSim backend calls (docs/COPPELIASIM.md).
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Serve until stopped; 0 on a clean stop, 1 with one ``error:`` line on bad input."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="config/needle_insertion.yaml", help="case-study configuration (robot)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    parser.add_argument("--port", type=int, default=23000, help="TCP port, 0 for a free one (default 23000)")
    args = parser.parse_args(argv)
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.robots.virtual.coppeliasim_standin import serve

    if not 0 <= args.port <= 65535:
        print(f"error: --port: expected 0..65535, got {args.port}", file=sys.stderr)
        return 1
    try:
        count = serve(args.config, args.host, args.port, lambda endpoint: print(f"listening on {endpoint}", flush=True))
    except (CosimError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"stopped after {count} requests", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

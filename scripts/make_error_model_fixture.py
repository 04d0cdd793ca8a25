"""Make the shipped error model of the emulated ER3 Pro (test/error_injection/data/er3_emulated.npz) from scratch.

The session test of the error injector (test/live/session/test_live_equals_batch.py) injects a model learned from the
emulated physical arm. Learning it takes minutes, so the model is shipped; this script makes it, with the
documented pipeline (docs/ERRORS.md, "Results"): ``cosim errors collect`` (200 goals, 120 s held out, 600 s of
continuous training motion, seed 0) on the arm of config/needle_insertion.yaml, then ``cosim errors train`` with
the defaults (NN1 CS, NN2 CPE, seed 0). Run it again when the arm, its URDF, the needle or the emulator change (the
model is refused for another robot model, so the test says so):

    scripts/with_env.sh python scripts/make_error_model_fixture.py      # about 2-3 minutes
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from cosim_validation.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "test" / "error_injection" / "data" / "er3_emulated.npz"
CONFIG = ROOT / "config" / "needle_insertion.yaml"


def make() -> int:
    """Collect, train, write :data:`FIXTURE`; the exit code of the first step that failed."""
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # the model's metadata names its dataset as given: "er3.parquet", no path of this machine
        dataset = "er3.parquet"
        collect = [
            "errors",
            "collect",
            "--config",
            str(CONFIG),
            "-o",
            dataset,
            "--goals",
            "200",
            "--test-s",
            "120",
            "--motion-s",
            "600",
            "--seed",
            "0",
        ]
        code = main(collect)
        if code != 0:
            return code
        return main(["errors", "train", "--config", str(CONFIG), dataset, "-o", str(FIXTURE), "--seed", "0"])


if __name__ == "__main__":
    sys.exit(make())

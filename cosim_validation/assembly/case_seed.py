"""The seed of one case, the same in every mode: a hash of the suite's seed and the test id."""

from __future__ import annotations

import hashlib


def case_seed(suite_seed: int, test_id: str) -> int:
    """A 63-bit hash of the suite's seed and the test id (never of the order, the worker or the mode).

    Every random stream of a case (the emulated arm's encoder and tracker noise, injected faults) starts
    from it, so a case gives the same samples in a campaign, in a live session and on a resumed run.

    Args:
        suite_seed: The suite's seed.
        test_id: The case's test id.
    """
    digest = hashlib.blake2b(f"{int(suite_seed)}/{test_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1

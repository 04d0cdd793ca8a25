"""The case seed from which a run made before filter events were stored draws its fault windows again."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.runs.campaign.hazard_tables import _case_seed
from test.common.record.test_trajectory_record import make_record


def test_the_case_seed_is_read_from_the_record() -> None:
    assert _case_seed(replace(make_record(), meta={"seed": 7})) == 7
    assert _case_seed(replace(make_record(), meta={"seed": 10**30})) == 10**30  # numpy's seed sequences take it


@pytest.mark.parametrize("meta", [{}, {"seed": -1}, {"seed": "7"}, {"seed": True}, {"seed": 7.0}, {"seed": None}])
def test_a_record_without_a_usable_seed_is_one_error_naming_the_case(meta: dict[str, object]) -> None:
    """It was a KeyError or ValueError traceback of ``cosim hazards run --reanalyse``."""
    record = replace(make_record(), test_id="case-9", meta=meta)
    with pytest.raises(InputError, match=r"case 'case-9', physical record: meta 'seed' must be .* an integer >= 0"):
        _case_seed(record)

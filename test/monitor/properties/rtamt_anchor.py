"""The property shared with rtamt (an STL library) for the anchor test and the benchmark."""

from __future__ import annotations

import numpy as np

from cosim_validation.monitor.properties import PropertySpec

#: "Every excursion of the tip beyond 2 mm from the plan is corrected below 1 mm within 0.5 s."
OURS = PropertySpec(
    "excursions_corrected",
    "always (dist(tip, expected.tip) > 0.002 -> eventually[0, 0.5] dist(tip, expected.tip) < 0.001)",
)
RTAMT = "always((dev > 0.002) implies (eventually[0:500ms](dev < 0.001)))"


def rtamt_robustness(t_s: np.ndarray, dev_m: np.ndarray) -> float:
    """rtamt's robustness at the first sample (discrete-time offline STL, sampling period 100 ms)."""
    import rtamt

    spec = rtamt.StlDiscreteTimeOfflineSpecification()
    spec.declare_var("dev", "float")
    spec.set_sampling_period(100, "ms", 0.1)
    spec.spec = RTAMT
    spec.parse()
    return float(spec.evaluate({"time": t_s.tolist(), "dev": dev_m.tolist()})[0][1])

"""Properties and the runtime monitor: [Actuators 2025]'s predicates in temporal logic on finite traces, KPIs.

Public API::

    PropertySet.load(path) / PropertySet.parse(text) / PropertySet((PropertySpec(name, expression), ...))
    MonitorContext(joint_names, needle_length_m, obstacles=..., self_distance=..., target_m=..., constants=...)
    evaluate(properties, record, context, expected=None) -> list[Verdict]           # offline, whole trace
    OnlineMonitor(properties, context, robot).push(sample) -> list[Verdict]          # online, changes
    OnlineMonitor.finish() -> list[Verdict]                                          # final verdicts
    SessionMonitor(properties, context).push(sample)                                 # every robot of a session
    Verdict, Kpi, Status                                                             # results (Verdict.msg, Kpi.msg)

The language is described in docs/PROPERTIES.md.
"""

from cosim_validation.monitor.properties.context import DistanceField, MonitorContext
from cosim_validation.monitor.properties.errors import PropertyError, TraceError
from cosim_validation.monitor.properties.offline.evaluation import evaluate
from cosim_validation.monitor.properties.online.monitor import OnlineMonitor, replay
from cosim_validation.monitor.properties.online.session_monitor import SessionMonitor
from cosim_validation.monitor.properties.property_set import CompiledProperty, PropertySet, PropertySpec
from cosim_validation.monitor.properties.sample import Sample, record_samples
from cosim_validation.monitor.properties.verdict import Kpi, Status, Verdict

__all__ = [
    "CompiledProperty",
    "DistanceField",
    "Kpi",
    "MonitorContext",
    "OnlineMonitor",
    "PropertyError",
    "PropertySet",
    "PropertySpec",
    "Sample",
    "SessionMonitor",
    "Status",
    "TraceError",
    "Verdict",
    "evaluate",
    "record_samples",
    "replay",
]

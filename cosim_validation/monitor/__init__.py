"""The runtime monitor: distance kernels, the property language and KPIs, behaviour machines."""

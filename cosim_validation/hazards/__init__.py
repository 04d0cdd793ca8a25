"""Safety hazard injection and detection ([Li et al. 2016]): scenarios, the injector filter, the detector."""

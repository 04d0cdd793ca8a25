"""Safety hazard injection and detection (issue 19, seed 003): scenarios, the injector filter, the detector."""

"""Physical robots behind the sim protocol; here the emulated ER3 Pro (a perturbed twin with real errors)."""

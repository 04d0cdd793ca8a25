"""The registry of robots a case runs on (virtual engines and physical arms), above ``sim`` and ``hardware``."""

from cosim_validation.backends.registry import BACKEND_NAMES, ENGINES, Engine, default_backend, engine, make_backend

__all__ = ["BACKEND_NAMES", "ENGINES", "Engine", "default_backend", "engine", "make_backend"]

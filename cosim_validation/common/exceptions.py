"""The one base error of the project and the errors shared by every area.

Areas add their own subclasses in their own ``errors.py``. Messages say what was expected,
what came (quoted with ``!r``) and, where it helps, what exists.
"""

from __future__ import annotations

from pathlib import Path


class CosimError(Exception):
    """Base of every error raised on purpose by cosim_validation."""


class ConfigError(CosimError):
    """A configuration file or value is missing or malformed.

    Args:
        source: The file (or other origin) the value came from.
        key: Dotted key path of the offending value, e.g. ``anatomy.models[1].unit``; "" for the file.
        message: What was expected and what came.
    """

    def __init__(self, source: str | Path, key: str, message: str) -> None:
        self.source = str(source)
        self.key = key
        self.message = message
        where = f"{self.source}: {key}" if key else self.source
        super().__init__(f"{where}: {message}")


class InputError(CosimError):
    """A user-supplied value (argument, file content, test case) is not acceptable."""


class MissingDependencyError(CosimError):
    """An optional dependency needed by the requested feature is not installed.

    Args:
        package: The distribution to install.
        feature: What needs it.
        failure: Why importing it failed when it is installed (then no install is suggested); None: not installed.
    """

    def __init__(self, package: str, feature: str, failure: str | None = None) -> None:
        self.package = package
        self.feature = feature
        if failure is None:
            message = f"{feature} needs the optional package {package!r}; install it with: pip install {package}"
        else:
            message = f"{feature} needs the package {package!r}, which is installed but failed to import: {failure}"
        super().__init__(message)

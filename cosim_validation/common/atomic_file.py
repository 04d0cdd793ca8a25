"""Writing a file whole or not at all: a temporary file beside it, renamed into place.

The temporary file is made private (``tempfile.mkstemp``: mode 0600); before it takes the file's name it gets the
mode any new file of the user's gets (0666 less the umask), so a suite, dataset or recovered bag is as readable as
the user's other files (a hostile trial found them all 0600).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from cosim_validation.common.exceptions import InputError

_UMASK_FALLBACK = 0o022
#: What ``os.link`` fails with where the file system has no hard links
_NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS)


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it, a race with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return _UMASK_FALLBACK


def put_in_place(tmp: str | Path, path: Path, *, overwrite: bool = True) -> None:
    """Give the finished temporary file ``tmp`` the mode of a new file and rename it to ``path``.

    Args:
        tmp: The temporary file, in ``path``'s folder.
        path: The file to make.
        overwrite: Replace ``path`` if it exists; False: fail if it exists, also when another process makes it
            meanwhile (a hard link is made, which never replaces a file; where the file system has none, the name is
            claimed with an exclusive create and the file put over that claim; ``tmp`` stays for the caller to
            remove).

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is False.
        OSError: The mode cannot be set or the file cannot be renamed.
    """
    os.chmod(tmp, 0o666 & ~_umask())
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        # a file system without hard links (FAT, some network mounts): claim the name, then put the file over it
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        try:
            os.replace(tmp, path)
        except BaseException:
            Path(path).unlink(missing_ok=True)  # our empty claim, nobody else's file
            raise


def write_atomic(path: Path, write: Callable[[Path], object], what: str, *, overwrite: bool = True) -> None:
    """Call ``write(tmp)`` on a temporary file in ``path``'s folder, then rename it to ``path``.

    Args:
        path: The file to make.
        write: Writes the content to the path it is given.
        what: What the file is, for the error message (``an error model``).
        overwrite: Replace ``path`` if it exists; False: refuse to, also when another process made it meanwhile.

    Raises:
        InputError: The folder or file cannot be written (naming the path and why), or ``path`` exists and
            ``overwrite`` is False; nothing is left behind.
    """
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write {what} ({exc.strerror or exc})") from None
    os.close(fd)
    try:
        write(Path(tmp))
        put_in_place(tmp, path, overwrite=overwrite)
    except FileExistsError:
        raise InputError(f"{path}: already exists; refusing to overwrite it") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot write {what} ({exc.strerror or exc})") from None
    finally:
        Path(tmp).unlink(missing_ok=True)

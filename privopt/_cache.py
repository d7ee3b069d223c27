"""privopt's on-disk cache of results that depend on public quantities only.

Some public computations are slow and give the same answer in every process:
the privacy accounting of the baselines (a noise scale as a function of
epsilon, delta and the schedule: up to minutes for
:class:`~privopt.baselines.NoisySGDClassifier`).  They are stored here, so a
fresh process does not repeat them.  Nothing derived from the records is ever
stored: every key and value is a function of public parameters and of the
code that computed it.

Where: ``$PRIVOPT_CACHE_DIR`` when set, else the user cache directory of
``platformdirs`` (``~/.cache/privopt`` on Linux, ``~/Library/Caches/privopt``
on macOS, ``%LOCALAPPDATA%\\privopt\\Cache`` on Windows) when it is installed,
else ``~/.cache/privopt``.  Deleting the directory is always safe.  A cache
that cannot be read or written is skipped silently: it never fails a fit.

The cache is never trusted.  Anyone who can write the directory (a shared
``$PRIVOPT_CACHE_DIR``, a cache copied between CI runs or containers) can
plant values in it, so a value is used only through
:meth:`JsonCache.get_verified`, with a check that recomputes the claim it
stands for (for a noise scale: the privacy it gives); a value that fails is
discarded with a :class:`~privopt.exceptions.CacheRejectedWarning` naming the
file, and the caller computes and overwrites it.
numba's compiled kernels have their own cache (see :mod:`privopt._numba`).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import warnings
from collections.abc import Callable

from .exceptions import CacheRejectedWarning

__all__ = ["CACHE_DIR_ENV", "cache_dir", "JsonCache"]

#: The environment variable that overrides the cache directory.
CACHE_DIR_ENV = "PRIVOPT_CACHE_DIR"

#: A file holding more entries than this is started afresh on the next write.
MAX_ENTRIES = 20_000


def cache_dir() -> str:
    """The directory of privopt's on-disk cache (it may not exist yet): see the module docstring."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return os.path.abspath(os.path.expanduser(env))
    try:
        import platformdirs
    except ImportError:
        return os.path.join(os.path.expanduser("~"), ".cache", "privopt")
    return str(platformdirs.user_cache_dir("privopt", appauthor=False))


class JsonCache:
    """A small persistent map from string keys to finite floats, one JSON file
    ``<cache_dir()>/<name>.json``.  Reads and writes never raise: an
    unreadable, corrupt or unwritable file behaves as an empty cache.  Writes
    replace the file atomically (a temporary file and ``os.replace``), so
    concurrent processes never see a half-written file; one may drop another's
    new entry, which is then computed again."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        """The file, under the cache directory in effect now."""
        return os.path.join(cache_dir(), self.name + ".json")

    def _read(self) -> dict:
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> float | None:
        """The value stored under ``key``, or None (absent, unreadable, or not a finite float)."""
        value = self._read().get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return float(value)

    def get_verified(self, key: str, check: Callable[[float], bool], what: str = "value") -> float | None:
        """The value under ``key`` if ``check(value)`` holds, else None.  A
        value present but failing its check (or making it raise
        ``ValueError`` / ``ArithmeticError``) is never returned: a
        :class:`~privopt.exceptions.CacheRejectedWarning` names ``what`` and
        the file, and the caller recomputes the value and overwrites it with
        :meth:`put`."""
        value = self.get(key)
        if value is None:
            return None
        try:
            holds = bool(check(value))
        except (ValueError, ArithmeticError):
            holds = False
        if holds:
            return value
        warnings.warn(
            f"privopt's cache file {self.path} holds {what} = {value!r}, which fails its check "
            "(a forward computation of the privacy it claims): it was discarded, is recomputed and "
            "will be overwritten. Someone or something wrote that file; if the cache folder is "
            f"shared, check who can write it (it is ${CACHE_DIR_ENV} or the user cache folder).",
            CacheRejectedWarning, stacklevel=3)
        return None

    def put(self, key: str, value: float) -> bool:
        """Store ``value`` under ``key``; False (and nothing raised) when the cache cannot be written."""
        if not math.isfinite(value):
            return False
        with self._lock:
            try:
                path = self.path
                os.makedirs(os.path.dirname(path), exist_ok=True)
                data = self._read()
                if len(data) >= MAX_ENTRIES:
                    data = {}
                data[key] = float(value)
                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f".{self.name}-",
                                           suffix=".tmp")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as fh:
                        json.dump(data, fh, sort_keys=True)
                    os.replace(tmp, path)
                except BaseException:
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass
                    raise
            except (OSError, TypeError, ValueError):
                return False
        return True

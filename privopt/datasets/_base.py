"""Where data sets live, how they are fetched and checked.

A data set is a fixed list of files with known SHA-256 checksums.  privopt
looks for them, in this order, in

1. ``data_home/<name>`` when the caller passes ``data_home``;
   otherwise
2. ``$PRIVOPT_DATA_HOME/<name>`` when that environment variable is set and
   not empty, and
3. ``<user cache>/<name>`` (see :func:`get_cache_home`).

The first folder holding *all* the files is used.  If none does, the files
are downloaded (with :mod:`urllib`, nothing else) into the folder of step 1
or, without ``data_home``, into the user cache.  Every file is checked
against its SHA-256 before it is read and before a download is kept; a
mismatch is an error, never a silent fallback.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Mapping

from ..exceptions import PrivoptError

__all__ = [
    "Bunch",
    "DatasetError",
    "DatasetNotFoundError",
    "DatasetChecksumError",
    "ENV_DATA_HOME",
    "get_cache_home",
    "get_data_home",
    "sha256_file",
]

#: Environment variable naming a folder that holds ``adult/`` (and future data sets).
ENV_DATA_HOME = "PRIVOPT_DATA_HOME"

# urllib's opener, looked up at call time so that tests can replace it
# (``monkeypatch.setattr(privopt.datasets._base, "_urlopen", fake)``).
_urlopen = urllib.request.urlopen

_CHUNK = 1 << 16


class DatasetError(PrivoptError, RuntimeError):
    """A data set could not be found, fetched, verified or parsed."""


class DatasetNotFoundError(DatasetError):
    """The files are not on this machine and could not be downloaded.

    ``searched`` lists the folders looked in; ``missing`` the file names that
    were not found.
    """

    def __init__(self, message: str, searched=(), missing=()):
        super().__init__(message)
        self.searched = [Path(p) for p in searched]
        self.missing = list(missing)


class DatasetChecksumError(DatasetError):
    """A file's SHA-256 differs from the published one.

    ``path``, ``expected`` and ``actual`` say which file and both hashes.
    """

    def __init__(self, message: str, path, expected: str, actual: str):
        super().__init__(message)
        self.path = Path(path)
        self.expected = expected
        self.actual = actual


class Bunch(dict):
    """A dict whose keys are also attributes (``b.X_train is b["X_train"]``).

    The same idea as :class:`sklearn.utils.Bunch`, without importing
    scikit-learn (an optional dependency of privopt).
    """

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value

    def __delattr__(self, key):
        try:
            del self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self):
        return list(self.keys()) + list(super().__dir__())

    def __getstate__(self):
        return dict(self)

    def __setstate__(self, state):
        self.update(state)


def get_cache_home() -> Path:
    """The user cache folder privopt downloads into.

    ``$XDG_CACHE_HOME/privopt`` when ``XDG_CACHE_HOME`` is set to an absolute
    path (on any platform); otherwise ``%LOCALAPPDATA%\\privopt\\Cache`` on
    Windows, ``~/Library/Caches/privopt`` on macOS and ``~/.cache/privopt``
    elsewhere.  The folder is not created here.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "privopt"
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA")
        if base:
            return Path(base) / "privopt" / "Cache"
        return Path.home() / "AppData" / "Local" / "privopt" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "privopt"
    return Path.home() / ".cache" / "privopt"


def get_data_home(data_home=None) -> Path:
    """The folder a download goes to: ``data_home`` if given, else the user cache.

    (``$PRIVOPT_DATA_HOME`` is searched for files but never written to; point
    it at a read-only copy if you like.)
    """
    if data_home is not None:
        return Path(os.path.expanduser(os.fspath(data_home)))
    return get_cache_home()


def _search_homes(data_home) -> list[Path]:
    if data_home is not None:
        return [get_data_home(data_home)]
    homes = []
    env = os.environ.get(ENV_DATA_HOME, "")
    if env:
        homes.append(Path(os.path.expanduser(env)))
    homes.append(get_cache_home())
    return homes


def sha256_file(path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(path: Path, expected: str, *, origin: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise DatasetChecksumError(
            f"{path.name} at {path} has sha256 {actual}, expected {expected} ({origin}). "
            f"The file is damaged or is not the original; delete it (privopt will then "
            f"download it again) or replace it with the original file.",
            path,
            expected,
            actual,
        )


def _download(url: str, target: Path, expected: str, timeout: float) -> None:
    """Fetch ``url`` into ``target`` atomically, keeping it only if its hash matches."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, _urlopen(url, timeout=timeout) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
        actual = digest.hexdigest()
        if actual != expected:
            raise DatasetChecksumError(
                f"{target.name} downloaded from {url} has sha256 {actual}, expected "
                f"{expected}; it was not kept. The server may have changed the file or the "
                f"download was corrupted: try again, or provide the original file yourself.",
                tmp,
                expected,
                actual,
            )
        os.replace(tmp, target)  # atomic: concurrent downloads cannot leave half a file
    finally:
        if tmp.exists():
            tmp.unlink()


def fetch_files(
    name: str,
    files: Mapping[str, str],
    *,
    base_url: str,
    data_home=None,
    download: bool = True,
    timeout: float = 60.0,
    how_to_provide: str = "",
) -> dict[str, Path]:
    """Paths of the verified files of data set ``name`` (see the module docstring).

    ``files`` maps each file name to its expected SHA-256.  Raises
    :class:`DatasetChecksumError` when a file found or downloaded has another
    hash and :class:`DatasetNotFoundError` when the files are absent and
    cannot be downloaded (``download=False``, offline, server error,
    unwritable folder).
    """
    searched = [home / name for home in _search_homes(data_home)]
    for folder in searched:
        if all((folder / f).is_file() for f in files):
            paths = {f: folder / f for f in files}
            for f, p in paths.items():
                _verify(p, files[f], origin=f"the published checksum of {name}/{f}")
            return paths

    target = get_data_home(data_home) / name
    missing = [f for f in files if not (target / f).is_file()]
    where = ", ".join(str(p) for p in searched)
    if not download:
        raise DatasetNotFoundError(
            f"The {name} files ({', '.join(files)}) were not found in {where}, and "
            f"download=False. {how_to_provide}",
            searched,
            missing,
        )
    # Files already present in the target folder are checked, then kept.
    for f in files:
        if f not in missing:
            _verify(target / f, files[f], origin=f"the published checksum of {name}/{f}")
    base = base_url if base_url.endswith("/") else base_url + "/"
    for f in missing:
        url = base + f
        try:
            _download(url, target / f, files[f], timeout)
        except DatasetChecksumError:
            raise
        except (urllib.error.URLError, OSError, ValueError) as exc:
            # URLError (offline, DNS, HTTP errors), timeouts, unwritable folder.
            reason = getattr(exc, "reason", None) or exc
            raise DatasetNotFoundError(
                f"The {name} files were not found in {where}, and downloading {url} into "
                f"{target} failed ({type(exc).__name__}: {reason}). {how_to_provide}",
                searched,
                missing,
            ) from exc
    return {f: target / f for f in files}

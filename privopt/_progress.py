"""Progress bars: tqdm's notebook bar where ipywidgets is installed, its
plain text bar elsewhere (tqdm.auto warns in Jupyter without ipywidgets).

The bars refresh on every update (``miniters=1``) and start no monitor thread
(``monitor_interval = 0``): tqdm's monitor only lowers a bar's dynamic
``miniters`` when updates slow down, and a thread left alive makes every later
fork of the process unsafe (Python 3.12 and later warn of it).  privopt's bars
count W's, shards and oracle calls, a few hundred updates at most."""

from __future__ import annotations

import functools

__all__ = ["progress_bar"]


def progress_bar(total: int, *, desc: str, unit: str = "it", disable: bool = False):
    """A tqdm bar (:class:`_NoBar`, which draws nothing, when ``disable``: a disabled tqdm
    still takes its locks and a screen position, per bar, which a fit's many draws pay)."""
    if disable:
        return _NoBar()
    try:
        import ipywidgets  # noqa: F401

        from tqdm.auto import tqdm
    except ImportError:
        from tqdm.std import tqdm
    return _without_monitor(tqdm)(total=total, desc=desc, unit=unit, disable=disable, miniters=1)


class _NoBar:
    """What a disabled bar is used for: a context manager whose updates do nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: float = 1) -> None:
        return None

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        return None

    def close(self) -> None:
        return None


@functools.cache
def _without_monitor(bar: type) -> type:
    """``bar`` (a tqdm class) that starts no monitor thread."""
    return type(bar.__name__, (bar,), {"monitor_interval": 0})

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
    """A tqdm bar (a no-op object when ``disable``)."""
    if not disable:
        try:
            import ipywidgets  # noqa: F401

            from tqdm.auto import tqdm
        except ImportError:
            from tqdm.std import tqdm
    else:
        from tqdm.std import tqdm
    return _without_monitor(tqdm)(total=total, desc=desc, unit=unit, disable=disable, miniters=1)


@functools.cache
def _without_monitor(bar: type) -> type:
    """``bar`` (a tqdm class) that starts no monitor thread."""
    return type(bar.__name__, (bar,), {"monitor_interval": 0})

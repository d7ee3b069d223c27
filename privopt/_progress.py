"""Progress bars: tqdm's notebook bar where ipywidgets is installed, its
plain text bar elsewhere (tqdm.auto warns in Jupyter without ipywidgets)."""

from __future__ import annotations

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
    return tqdm(total=total, desc=desc, unit=unit, disable=disable)

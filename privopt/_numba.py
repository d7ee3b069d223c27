"""Compiled kernels that fall back to numpy without numba (the ``fast`` extra)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["lazy_kernel"]


def lazy_kernel(build: Callable) -> Callable:
    """A getter for a kernel compiled on first use: ``build(numba)`` returns the
    compiled function; the getter returns it, or None when numba is not
    installed (the caller then takes its numpy path)."""
    state: dict = {}

    def get():
        if "kernel" not in state:
            try:
                import numba
            except ImportError:
                state["kernel"] = None
            else:
                state["kernel"] = build(numba)
        return state["kernel"]

    return get

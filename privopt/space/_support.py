"""W_tau split by support: when the exact search engine may list W region by region.

A point's support is the set of its nonzero coordinates.  With one grid shared by every
coordinate, 0 in it and squared norms in integer units, the points of one support of size
k are the same list of k-vectors for every support (so region sizes are public), and the
search engine (:mod:`privopt.search`) tabulates each support's row patterns instead of
enumerating W point by point.  :func:`split_support_count` is the one rule for when that
applies: the mechanisms' engine, ``solver="enumerate"`` and the estimator's
``mechanism="auto"`` prediction all call it, on public quantities only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from .._limits import MAX_REGION_PATTERNS, MAX_REGION_POINTS
from ._points import prefix_counts

__all__ = ["split_support_count", "split_support_work", "SupportWork"]


def split_support_count(d: int, coef: Sequence[int], bound: int, n_values: int) -> int | None:
    """The number of supports of W_tau (sizes 0..kmax, kmax the most nonzero
    coordinates a point of the ball can have) when W_tau can be split by
    support, else None.  Computed without listing anything.

    ``d``: coordinates of w (an intercept counts); ``coef``: the squared-norm
    units of the values of the grid every coordinate shares
    (``NormLevels.coef[0]`` of exact levels: ``coef[k] = (grid[k] / h)^2``);
    ``bound``: the ball in those units (``NormLevels.bound``); ``n_values``:
    how many distinct values a record's entries take (the base of its row
    patterns).  The caller checks that the levels are exact and that every
    coordinate has the same grid.

    The split applies when the grid holds 0 and another value, a support's row
    patterns (``max(n_values, 2) ** kmax``) are at most
    :data:`privopt._limits.MAX_REGION_PATTERNS`, and the points of one support
    of each size, summed over the sizes, at most
    :data:`privopt._limits.MAX_REGION_POINTS`.
    """
    work = split_support_work(d, coef, bound, n_values)
    return None if work is None else work.regions


@dataclass(frozen=True)
class SupportWork:
    """What the top-down engine visits per record on W_tau split by support, from public
    sizes only: ``regions``, the supports (sizes 0..kmax), ``point_work``, the sum over
    them of (points of the region) x (support size), ``d``, W's coordinates, ``sizes``, the
    points of one support of each size 1..kmax, and ``values``, the most values a record's
    coordinate takes as declared in public (the base of a support's row patterns: at most
    ``values ** k`` on a support of size k); None where nothing is declared.
    ``coordinate_values``: the values each coordinate of a record takes (the intercept's:
    1), where declared per coordinate (a discretized feature levels + 1, a 0/1 column 2:
    the distinct rows are at most their product); None otherwise."""

    regions: int
    point_work: int
    d: int
    sizes: tuple[int, ...] = ()
    values: int | None = None
    coordinate_values: tuple[int, ...] | None = None


def split_support_work(d: int, coef: Sequence[int], bound: int, n_values: int) -> SupportWork | None:
    """The :class:`SupportWork` of W_tau where :func:`split_support_count`'s rule lets it be
    split by support (same arguments; ``n_values`` is its ``values``), else None.  Public
    whole numbers only, so worked out once per process for each (d, coef, bound, n_values):
    every W of a ladder and every fit on it asks again (the record is frozen)."""
    return _kept_support_work(int(d), tuple(int(c) for c in coef), int(bound), int(n_values))


@functools.lru_cache(maxsize=1024)
def _kept_support_work(d: int, coef: tuple, bound: int, n_values: int) -> SupportWork | None:
    if 0 not in coef:
        return None
    units = [c for c in coef if c != 0]
    if not units or min(units) <= 0:
        return None
    bound = int(bound)
    kmax = min(int(d), bound // min(units))
    if max(int(n_values), 2) ** kmax > MAX_REGION_PATTERNS:
        return None
    counts = prefix_counts([units] * kmax, bound)     # counts[k][bound]: points of a support of size k
    if sum(int(c[bound]) for c in counts[1:]) > MAX_REGION_POINTS:
        return None
    regions = sum(math.comb(int(d), k) for k in range(kmax + 1))
    sizes = tuple(int(counts[k][bound]) for k in range(1, kmax + 1))
    work = sum(math.comb(int(d), k) * sizes[k - 1] * k for k in range(1, kmax + 1))
    return SupportWork(regions, work, int(d), sizes, int(n_values))

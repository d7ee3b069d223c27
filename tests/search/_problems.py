"""Small region problems for the top-down sampler's tests (tests/search): distinct rows of a
few levels, a noisy linear label, W the grid -2..2 in the ball 2."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from privopt.models import ENUMERATION_ATTR, zero_one_halfspace
from privopt.search import halfspace_problem

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="numba (the 'fast' extra) is not installed")


def region_problem(seed: int, n: int = 300, d: int = 6, levels: int = 4):
    """The region problem of n distinct rows of ``levels`` values on d features (seeded)."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(levels ** d, size=n, replace=False)        # n distinct rows
    X = (codes[:, None] // levels ** np.arange(d) % levels).astype(float)
    y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1, n) > 0, 1, -1)
    data = getattr(zero_one_halfspace(X, y, grid=2, norm_bound=2.0), ENUMERATION_ATTR)
    problem = halfspace_problem(data)
    assert problem is not None
    return problem

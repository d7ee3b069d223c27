"""The chi-square test the distribution tests share: observed releases against an
exact law, cells with an expected count below 5 pooled into one."""

from __future__ import annotations

import numpy as np
from scipy import stats


def pooled_chi_square_pvalue(counts, probs) -> float:
    """p-value of the counts of each cell against ``probs`` (their sum is the number
    of draws), the cells expected below 5 pooled."""
    counts = np.asarray(counts, dtype=float)
    expected = np.asarray(probs, dtype=float) * counts.sum()
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp).pvalue)


def chi_square_pvalue(outputs, candidates, probs) -> float:
    """:func:`pooled_chi_square_pvalue` of the released points ``outputs`` (rows)
    counted on ``candidates`` (rows, in the order of ``probs``); every output must be
    a candidate."""
    counts = np.array([np.sum(np.all(outputs == c, axis=1)) for c in candidates])
    assert counts.sum() == len(outputs), "an output outside W"
    return pooled_chi_square_pvalue(counts, probs)

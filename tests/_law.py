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


def direct_and_real_agree_pvalue(target, n_direct: int, n_real: int, seed: int = 1) -> float:
    """An audit target's direct law (``outputs_from_noise`` of its drawn noise, what the
    audit samples) against its real mechanism (``run_mechanism``), both on the first data
    set: the p-value of the chi-square test of homogeneity of their counts on the target's
    support (cells neither side hit left out)."""
    rng = np.random.default_rng(seed)
    direct = target.outputs_from_noise(0, target.draw_noise(rng, size=n_direct))
    real = np.array([target.run_mechanism(0, rng) for _ in range(n_real)])
    cells = [tuple(c) for c in target.support]
    a = np.array([np.sum(np.all(direct == c, axis=1)) for c in cells])
    b = np.array([np.sum(np.all(real == c, axis=1)) for c in cells])
    table = np.vstack([a, b])[:, (a + b) > 0]
    return float(stats.chi2_contingency(table).pvalue)


def shipped_and_broken(target, *args, broken: dict, n_samples: int = 20_000, selection_fraction: float = 0.5,
                       **kwargs):
    """The audits of ``target(*args, **kwargs)`` (the shipped mechanism) and of the same
    target with the deliberately broken settings ``broken`` added, each on ``n_samples``
    draws per neighbour from the same seed, ``selection_fraction`` of them choosing the
    event: ``(shipped, broken)`` audit results."""
    from privopt import audit

    kw = dict(n_samples=n_samples, random_state=0, selection_fraction=selection_fraction)
    return audit.audit(target(*args, **kwargs), **kw), audit.audit(target(*args, **kwargs, **broken), **kw)


def holds_on_a_fresh_sample(pvalue_of_a_fresh_sample, alpha: float = 1e-3) -> bool:
    """A goodness-of-fit test of a generator that cannot be seeded (the secure source):
    ``pvalue_of_a_fresh_sample()`` draws a new sample and tests it; the law holds when
    one sample passes at ``alpha`` or, after a failure, a second independent one does.
    Under the right law both fail with probability ``alpha ** 2`` (a run of the suite
    is not red one time in a thousand by chance); a wrong law the single test rejects
    fails both samples."""
    return pvalue_of_a_fresh_sample() > alpha or pvalue_of_a_fresh_sample() > alpha

"""benchmarks/bench_top_r.py, the top-R comparator of issue #41, on a choose-2-of-6 siting
model whose W (15 points) is listed: the MIP with no-good cuts finds the points in order of
loss, the comparator's law (candidates + block) is the exponential mechanism of the
clipped loss min(L, L_(R)), its expected loss is never below the exponential mechanism's,
and its release probabilities move by at most e^eps between neighbouring data sets."""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys

import numpy as np
import pytest

from .conftest import require_solver

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, BENCH)    # the script imports _common and bench_bounded_selection
    try:
        spec = importlib.util.spec_from_file_location("bench_top_r", os.path.join(BENCH, "bench_top_r.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(BENCH)
    return module


@pytest.fixture(scope="module")
def small(bench):
    model = bench.siting(6, 12, 5, k=2)
    closed = bench.SitingLoss(model)
    subsets = np.array(list(itertools.combinations(range(6), 2)))
    rows = np.zeros((len(subsets), 6), dtype=np.int8)
    np.put_along_axis(rows, subsets, 1, axis=1)
    return model, closed, subsets, rows, closed(rows)


def test_no_good_cuts_list_w_in_order_of_loss(bench, small):
    require_solver("highs")
    model, closed, _, rows, losses = small
    top = bench.TopR(model)
    for _ in range(len(losses)):
        top.next()
    assert np.allclose(top.losses, np.sort(losses), atol=1e-6)
    found = {tuple(p) for p in top.points}
    assert found == {tuple(r) for r in rows}           # every point once
    assert np.allclose(closed(np.array(top.points)), top.losses, atol=1e-6)


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_law_is_the_exponential_mechanism_of_the_clipped_loss(bench, small, eps):
    _, _, _, _, losses = small
    order = np.argsort(losses, kind="stable")
    em = bench.em_law(losses, eps)
    for r in range(1, len(losses) + 1):
        p_top, p_block = bench.top_r_law(losses[order[:r]], len(losses), eps)
        spread = np.empty(len(losses))
        spread[order[:r]] = p_top
        spread[order[r:]] = p_block / max(len(losses) - r, 1)
        clipped = bench.clipped_law(losses, r, eps)
        assert np.allclose(spread, clipped, rtol=1e-10, atol=1e-15)
        assert np.allclose(bench.top_r_points_law(losses, order[:r], eps), clipped, rtol=1e-10, atol=1e-15)
        assert clipped @ losses >= em @ losses - 1e-12          # never more accurate than the exp. mechanism
    assert np.allclose(bench.clipped_law(losses, len(losses), eps), em)


@pytest.mark.parametrize("r", [1, 3, 8])
def test_neighbours_move_release_probabilities_by_at_most_e_eps(bench, small, r):
    _, closed, subsets, _, losses = small
    eps = 2.0
    law = np.log(bench.clipped_law(losses, r, eps))
    contrib = closed.c[:, subsets].min(axis=2)
    repl = np.vstack([np.array(list(itertools.product([0.0, 1.0], repeat=6))),
                      np.random.default_rng(0).random((50, 6))])
    worst = 0.0
    for i in range(len(contrib)):
        for row in repl:
            neigh = losses - contrib[i] + row[subsets].min(axis=1)
            worst = max(worst, float(np.abs(np.log(bench.clipped_law(neigh, r, eps)) - law).max()))
    assert worst <= eps + 1e-9
    assert (worst > 0.0) == (r > 1)       # R = 1 clips every loss to the minimum: uniform on W

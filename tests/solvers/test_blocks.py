"""The closed form of models that fall apart into choose-one blocks once the decision is
fixed (privopt.solvers._blocks): detection from the model's rows, the losses against
HiGHS's fix-and-solve, point by point, the infeasible point, the released point, and the
models that must fall back to one LP per point.

The references share no code with what they check: the LP path is HighsFixedSession's
warm re-solves (the same model, solved), brute force where a formula is plain."""

from __future__ import annotations

import functools

import math

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import NotCertifiedError
from privopt.mechanisms.selection import _evaluate
from privopt.mechanisms.selection._evaluate import FixAndSolveEvaluator
from privopt.perturbation import resolve_grids
from privopt.solvers import BLOCKS_ENGINE, ChooseOneBlocks, HighsFixedSession, closed_form_blocks
from privopt.solvers._blocks import connected_blocks, lp_arrays

from tests._models import pmedian

pytest.importorskip("highspy", reason="the HiGHS solver (highspy) reads the model's rows")


_pmedian = functools.partial(pmedian, n_sites=20, n_customers=200)


def _capacitated(n_sites=6, n_customers=15, k=3, seed=3, *, integer=False):
    """Each customer i has a demand q_i met from open sites, site j delivering e_ij per
    unit of x_ij (sum_j e_ij x_ij == q_i; e = 1 with ``integer``, x then integer), a
    per-customer capacity at each site that grows with the site's level y_j in {0, 1, 2}
    (x_ij <= a_ij y_j + b_ij, b_ij >= 0 a small public allowance), costs of either sign
    on the assignment, fixed opening costs f . y in the objective, and a constant."""
    rng = np.random.default_rng(seed)
    q = rng.integers(1, 4, size=n_customers).astype(float)
    a = rng.uniform(0.3, 1.5, size=(n_customers, n_sites)) * (2.0 if integer else 1.0)
    b = np.where(rng.random((n_customers, n_sites)) < 0.3, 0.2, 0.0)
    c = rng.uniform(-0.2, 1.0, size=(n_customers, n_sites))
    f = rng.uniform(0.0, 2.0, size=n_sites)
    e = np.ones((n_customers, n_sites)) if integer else rng.uniform(0.5, 2.0, size=(n_customers, n_sites))
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n_customers - 1), pyo.RangeSet(0, n_sites - 1)
    m.y = pyo.Var(m.J, domain=pyo.Integers, bounds=(0, 2))
    m.x = pyo.Var(m.I, m.J, domain=pyo.NonNegativeIntegers if integer else pyo.NonNegativeReals)
    m.p = pyo.Constraint(expr=sum(m.y[j] for j in m.J) == k)
    m.demand = pyo.Constraint(m.I, rule=lambda m, i: sum(float(e[i, j]) * m.x[i, j] for j in m.J) == float(q[i]))
    # written both ways round: x <= a y + b, and a y + b - x >= 0
    m.cap = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: (m.x[i, j] <= float(a[i, j]) * m.y[j] + float(b[i, j])
                                                            if (i + j) % 2 else
                                                            float(a[i, j]) * m.y[j] + float(b[i, j]) - m.x[i, j] >= 0))
    m.cost = pyo.Objective(expr=sum(float(c[i, j]) * m.x[i, j] for i in m.I for j in m.J)
                           + sum(float(f[j]) * m.y[j] for j in m.J) + 3.5)
    return m, (q, a, b, c, f, e)


def _scorer(m, w, cons):
    return FixAndSolveEvaluator(m, w, resolve_grids(w), solver="highs", public_constraints=cons)


def _session(m, w, cons):
    return HighsFixedSession.build(m, w, relax=cons)


def _lp_losses(m, w, cons, points):
    """L(w) at each point by HiGHS (the certified fix-and-solve path); None where a solve
    did not end optimal."""
    session = _session(m, w, cons)
    out = []
    for p in points:
        rep = session.solve_at(p)
        out.append(rep.objective if rep.certified_optimal else None)
    return out


def _closed_losses(m, w, cons, points):
    ev, why = closed_form_blocks(_session(m, w, cons))
    assert ev is not None, why
    return ev.losses(points)


# --- detection -------------------------------------------------------------------------

def test_pmedian_falls_apart_into_one_block_per_customer():
    m, _ = _pmedian(n_sites=20, n_customers=200)
    w = [m.open[j] for j in m.J]
    arrays = lp_arrays(_session(m, w, [m.p]))
    label, count = connected_blocks(arrays.n_rows, arrays.n_cols, arrays.rows, arrays.cols, arrays.decision)
    assert count == 200
    assert np.all(label[arrays.decision] == -1)
    # each block is one customer's 20 assignment columns
    free = np.flatnonzero(label >= 0)
    assert np.array_equal(np.bincount(label[free]), np.full(200, 20))
    ev, why = ChooseOneBlocks.detect(arrays)
    assert ev is not None and ev.n_blocks == 200 and "200" in why


def test_connected_blocks_on_a_small_graph():
    # columns 0..5, 5 is the decision; rows: {0,1}, {1,2,5}, {3}, {3,5}, {4,5}
    rows = np.array([0, 0, 1, 1, 1, 2, 3, 3, 4, 4])
    cols = np.array([0, 1, 1, 2, 5, 3, 3, 5, 4, 5])
    label, count = connected_blocks(5, 6, rows, cols, [5])
    assert count == 3 and label.tolist() == [0, 0, 0, 1, 2, -1]


def test_a_coupling_capacity_row_does_not_decompose_and_falls_back():
    m, _ = _pmedian(n_sites=5, n_customers=12, k=2, seed=1)
    m.site_cap = pyo.Constraint(m.J, rule=lambda m, j: sum(m.assign[i, j] for i in m.I) <= 9 * m.open[j])
    w = [m.open[j] for j in m.J]
    arrays = lp_arrays(_session(m, w, [m.p]))
    _, count = connected_blocks(arrays.n_rows, arrays.n_cols, arrays.rows, arrays.cols, arrays.decision)
    assert count == 1                       # every customer is linked through the sites' rows
    ev, why = ChooseOneBlocks.detect(arrays)
    assert ev is None and why
    scorer = _scorer(m, w, [m.p])
    losses = np.concatenate([loss for _, loss in scorer.blocks()])
    assert scorer.engine == "highs_fixed" and scorer.solves == math.comb(5, 2) and len(losses) == 10
    assert scorer.blocks_reason == why


@pytest.mark.parametrize("second_row", ["pair_cap", "second_choose", "lower_bound", "decision_pair"])
def test_a_block_of_a_similar_shape_that_is_not_recognised_falls_back(second_row):
    m, _ = _pmedian(n_sites=5, n_customers=8, k=2, seed=2)
    if second_row == "pair_cap":            # a second row in each block: x_i0 + x_i1 <= 0.7
        m.extra = pyo.Constraint(m.I, rule=lambda m, i: m.assign[i, 0] + m.assign[i, 1] <= 0.7)
    elif second_row == "second_choose":     # a second choose row in one block
        m.extra = pyo.Constraint(expr=m.assign[0, 0] + m.assign[0, 2] >= 0.2)
    elif second_row == "lower_bound":       # a lower bound on a variable that depends on the decision
        m.extra = pyo.Constraint(expr=m.assign[0, 0] >= 0.1 * m.open[0])
    else:                                   # a bound row holding two variables and the decision
        m.extra = pyo.Constraint(expr=m.assign[0, 0] + m.assign[0, 1] <= m.open[0])
    w = [m.open[j] for j in m.J]
    ev, why = closed_form_blocks(_session(m, w, [m.p]))
    assert ev is None and why
    scorer = _scorer(m, w, [m.p])
    try:
        list(scorer.blocks())
    except NotCertifiedError:               # an infeasible point for some shapes: the LP path said so
        pass
    assert scorer.engine == "highs_fixed" and scorer.solves > 0


def test_a_ge_row_with_a_negative_cost_falls_back_and_with_nonnegative_costs_is_recognised():
    def model(sign):
        m, _ = _pmedian(n_sites=4, n_customers=5, k=2, seed=3)
        m.served.deactivate()
        m.served_ge = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) >= 1)
        m.cost.set_value(m.cost.expr + sign * 0.5 * m.assign[0, 0])
        return m
    for sign, recognised in ((1, True), (-3, False)):
        m = model(sign)
        w = [m.open[j] for j in m.J]
        ev, why = closed_form_blocks(_session(m, w, [m.p]))
        assert (ev is not None) == recognised, why


def test_a_block_without_a_choose_row_falls_back():
    # one more variable per customer, bounded by the decision, in the objective, in no choose row
    m, _ = _pmedian(n_sites=4, n_customers=5, k=2, seed=3)
    m.slack = pyo.Var(m.I, bounds=(0, None))
    m.slack_cap = pyo.Constraint(m.I, rule=lambda m, i: m.slack[i] <= m.open[0] + 0.5)
    m.cost.set_value(m.cost.expr - 0.01 * sum(m.slack[i] for i in m.I))
    w = [m.open[j] for j in m.J]
    ev, why = closed_form_blocks(_session(m, w, [m.p]))
    assert ev is None and "no choose row" in why


def test_a_row_on_the_decision_alone_left_in_the_model_falls_back():
    m, _ = _pmedian(n_sites=4, n_customers=5, k=2, seed=3)
    m.not_declared = pyo.Constraint(expr=m.open[0] + m.open[1] <= 2)
    w = [m.open[j] for j in m.J]
    ev, why = closed_form_blocks(_session(m, w, [m.p]))      # the row is not relaxed
    assert ev is None and "decision alone" in why


# --- the losses: the closed form against HiGHS -------------------------------------------

def test_pmedian_losses_equal_highs_fix_and_solve():
    m, dist = _pmedian(n_sites=20, n_customers=200, seed=5)
    w = [m.open[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    assert len(pts) == 190
    sub = pts[::7]                                            # 28 points: the LP path is the slow one
    lp = np.array(_lp_losses(m, w, [m.p], sub))
    got, bad = _closed_losses(m, w, [m.p], pts)
    assert not bad.any()
    assert np.allclose(got[::7], lp, rtol=1e-9, atol=0)
    brute = np.array([dist[:, np.flatnonzero(p > 0.5)].min(axis=1).sum() for p in pts])
    assert np.allclose(got, brute, rtol=1e-12, atol=0)


def test_the_scorer_yields_the_closed_forms_losses_in_ws_order_without_a_solve(monkeypatch):
    m, dist = _pmedian(n_sites=8, n_customers=30, k=3, seed=6)
    w = [m.open[j] for j in m.J]
    monkeypatch.setattr(HighsFixedSession, "solve_at", lambda *a, **k: pytest.fail("a solve ran"))
    scorer = _scorer(m, w, [m.p])
    blocks = list(scorer.blocks(block_points=11))
    pts = np.vstack([p for p, _ in blocks])
    losses = np.concatenate([loss for _, loss in blocks])
    assert scorer.engine == BLOCKS_ENGINE and scorer.solves == 0 and scorer.points_scored == math.comb(8, 3)
    assert [len(p) for p, _ in blocks][:2] == [11, 11] and np.array_equal(pts, scorer.points)
    brute = np.array([dist[:, np.flatnonzero(p > 0.5)].min(axis=1).sum() for p in pts])
    assert np.allclose(losses, brute, rtol=1e-12, atol=0)


def test_capacitated_variant_losses_equal_highs_fix_and_solve():
    m, (q, a, b, c, f, e) = _capacitated()
    w = [m.y[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    lp = _lp_losses(m, w, [m.p], pts)
    got, bad = _closed_losses(m, w, [m.p], pts)
    feasible = np.array([v is not None for v in lp])
    assert feasible.any() and (~feasible).any()               # both kinds of point are in W
    assert np.array_equal(bad, ~feasible)
    assert np.allclose(got[feasible], np.array([v for v in lp if v is not None]), rtol=1e-9, atol=0)
    assert np.all(np.isnan(got[bad]))
    # a wrong fill order (most expensive first) would differ: the costs make the order matter
    p = pts[np.flatnonzero(feasible)[0]]
    worst = sum(_greedy(q[i], np.minimum(e[i] * (a[i] * p + b[i]), q[i]), -c[i] / e[i]) for i in range(len(q)))
    assert not np.isclose(-worst + f @ p + 3.5, got[np.flatnonzero(feasible)[0]], rtol=1e-6)


def test_integer_assignments_with_fractional_capacities_give_the_integer_optimum():
    # x integer, x_ij <= a_ij y_j + b_ij fractional: the integer optimum (x_ij <= floor(cap)), not the LP's
    m, _ = _capacitated(n_sites=5, n_customers=10, k=3, seed=11, integer=True)
    w = [m.y[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    lp = _lp_losses(m, w, [m.p], pts)
    got, bad = _closed_losses(m, w, [m.p], pts)
    feasible = np.array([v is not None for v in lp])
    assert feasible.any() and np.array_equal(bad, ~feasible)
    assert np.allclose(got[feasible], np.array([v for v in lp if v is not None]), rtol=1e-9, atol=0)
    relaxed = HighsFixedSession.build(m, w, relax=[m.p], relax_integers=True)   # the LP relaxation differs
    lower = [relaxed.solve_at(p).objective for p in pts[feasible]]
    assert np.any(np.array(lower) < got[feasible] - 1e-6)


def _greedy(need, cap, cost):
    out, left = 0.0, need
    for j in np.argsort(cost, kind="stable"):
        take = min(cap[j], left)
        out += take * cost[j]
        left -= take
    return out


def test_a_maximized_utility_is_the_negated_minimum():
    m, dist = _pmedian(n_sites=6, n_customers=15, k=2, seed=5)
    m.cost.deactivate()
    m.gain = pyo.Objective(expr=sum((1 - float(dist[i, j])) * m.assign[i, j] for i in m.I for j in m.J),
                           sense=pyo.maximize)
    w = [m.open[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    got, bad = _closed_losses(m, w, [m.p], pts)
    assert not bad.any()
    assert np.allclose(got, np.array(_lp_losses(m, w, [m.p], pts)), rtol=1e-9, atol=0)
    brute = np.array([(1 - dist[:, np.flatnonzero(p > 0.5)]).max(axis=1).sum() for p in pts])
    assert np.allclose(got, brute, rtol=1e-12, atol=0)


def test_integer_assignment_variables_give_the_integer_optimum():
    m, dist = _pmedian(n_sites=6, n_customers=12, k=2, seed=8, binary_assign=True)
    w = [m.open[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    got, bad = _closed_losses(m, w, [m.p], pts)
    assert not bad.any()
    assert np.allclose(got, np.array(_lp_losses(m, w, [m.p], pts)), rtol=1e-9, atol=0)


def test_an_infeasible_point_is_refused_like_the_lp_path(monkeypatch):
    # customer 0 may be served by sites 0 and 1 only: every w opening neither is infeasible
    m, _ = _pmedian(n_sites=5, n_customers=6, k=1, seed=1)
    m.only01 = pyo.Constraint(m.J, rule=lambda m, j: m.assign[0, j] <= 0 if j >= 2 else pyo.Constraint.Skip)
    w = [m.open[j] for j in m.J]
    kw = dict(weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=6, public_constraints=["p"],
              random_state=0)
    with pytest.raises(NotCertifiedError) as closed:
        privopt.exponential_mechanism(m, **kw)
    with monkeypatch.context() as mp:
        mp.setattr(_evaluate, "closed_form_blocks", lambda *a, **k: (None, "off"))
        with pytest.raises(NotCertifiedError) as lp:
            privopt.exponential_mechanism(m, **kw)
    assert str(closed.value) == str(lp.value) and "Not certified" in str(closed.value)
    assert closed.value.report is None
    got, bad = _closed_losses(m, w, [m.p], _scorer(m, w, [m.p]).points)
    assert bad.tolist() == [False, False, True, True, True]


# --- the release -----------------------------------------------------------------------

@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_the_same_released_point_as_the_lp_path_for_the_same_seed(method, monkeypatch):
    m, _ = _pmedian(n_sites=10, n_customers=40, k=2, seed=9)
    kw = dict(weights="open", epsilon=2.0, loss_range=(0, 1), n_samples=40, method=method,
              public_constraints=["p"], path="score", keep_report=True)
    for seed in range(4):
        fast = privopt.exponential_mechanism(m, random_state=seed, **kw)
        with monkeypatch.context() as mp:
            mp.setattr(_evaluate, "closed_form_blocks", lambda *a, **k: (None, "off"))
            slow = privopt.exponential_mechanism(m, random_state=seed, **kw)
        assert fast.report.engine == BLOCKS_ENGINE and fast.report.solves == 0
        assert fast.report.points_scored == 45 and "closed form" in fast.report.reason
        assert slow.report.engine == "highs_fixed" and slow.report.solves == 45
        assert np.array_equal(fast.weights, slow.weights)


def test_on_the_closed_form_each_customers_term_is_clipped_into_the_range(monkeypatch):
    # 20 customers' distances, each far above b = 0.05: with one block per customer the closed
    # form sees every record's term and clips it (the release says so); the LP path reads each
    # customer's term from each solve's solution and clips the same terms
    import privopt.mechanisms.selection.exponential as sel

    m, dist = _pmedian(n_sites=6, n_customers=20, k=1, seed=4)
    seen: list = []
    keys = sel.selection_keys
    monkeypatch.setattr(sel, "selection_keys", lambda lo, *a: seen.append(np.array(lo)) or keys(lo, *a))
    kw = dict(weights="open", epsilon=1.0, loss_range=(0, 0.05), n_samples=20, public_constraints=["p"],
              keep_report=True)
    res = privopt.exponential_mechanism(m, random_state=0, **kw)
    # one site open: L(e_j) = sum_i clip(dist_ij, 0, 0.05), computed here independently (W in any order)
    exact = np.sort(np.clip(dist, 0.0, 0.05).sum(axis=0))
    assert np.allclose(np.sort(np.concatenate(seen)), exact, atol=1e-9) and np.any(dist > 0.05)
    assert res.report.engine == BLOCKS_ENGINE and res.parameters["record_terms"] == "clipped"
    m.second = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) <= 1)   # not closed form
    lp = privopt.exponential_mechanism(m, random_state=0, **kw)
    assert lp.report.engine == "highs_fixed" and lp.parameters["record_terms"] == "clipped"
    assert np.array_equal(lp.weights, res.weights)


def test_a_public_term_on_the_decision_is_added_exactly_and_left_out_of_the_range_check():
    m, dist = _pmedian(n_sites=6, n_customers=20, k=2, seed=4)
    fees = np.linspace(1.0, 6.0, 6)
    m.fees = pyo.Expression(expr=sum(float(fees[j]) * m.open[j] for j in m.J))
    m.cost.set_value(m.cost.expr + m.fees)
    w = [m.open[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    got, _ = _closed_losses(m, w, [m.p], pts)
    brute = np.array([dist[:, np.flatnonzero(p > 0.5)].min(axis=1).sum() for p in pts]) + pts @ fees
    assert np.allclose(got, brute, rtol=1e-12, atol=0)
    res = privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=20,
                                        public_constraints=["p"], public_term="fees", random_state=0,
                                        keep_report=True)
    assert res.report.engine == BLOCKS_ENGINE


def test_a_capacity_below_zero_makes_the_point_infeasible_as_in_the_lp():
    # x_00 <= open_0 - 0.5: with site 0 closed x_00 >= 0 cannot hold, whoever serves customer 0
    m, _ = _pmedian(n_sites=5, n_customers=6, k=2, seed=1)
    m.neg = pyo.Constraint(expr=m.assign[0, 0] <= m.open[0] - 0.5)
    w = [m.open[j] for j in m.J]
    pts = _scorer(m, w, [m.p]).points
    lp = _lp_losses(m, w, [m.p], pts)
    got, bad = _closed_losses(m, w, [m.p], pts)
    assert bad.tolist() == [v is None for v in lp] == (pts[:, 0] < 0.5).tolist()
    assert np.allclose(got[~bad], np.array([v for v in lp if v is not None]), rtol=1e-9, atol=0)

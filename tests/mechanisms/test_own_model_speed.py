"""Private selection on a user's own Pyomo model: W listed through the model's declared
linear constraints on the decision (never the product grid first), and every point scored
by one HiGHS model re-solved warm with the decision fixed, with the same released law as
the old path (product then filter, Pyomo's fix and solve).

The references share no code with what they check: W by itertools over the product with
a plain filter, losses by brute force (each customer's nearest open site), the law by the
softmax / permute-and-flip formulas of privopt.calibration."""

from __future__ import annotations

import functools

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.calibration import exponential_mechanism_probabilities, permute_and_flip_probabilities
from privopt.exceptions import ModelError, NotCertifiedError, ParameterError
from privopt.mechanisms.selection import _evaluate
from privopt.mechanisms.selection._evaluate import FixAndSolveEvaluator
from privopt.perturbation import resolve_grids
from privopt.solvers import HighsFixedSession, solver_availability
from privopt.space import (SeparableConstraints, constrained_points, count_constrained_points, linear_tables,
                           partial_feasible)
from privopt.space import _w as space_w

from tests._law import chi_square_pvalue
from tests._models import pmedian

highs = pytest.importorskip("highspy", reason="the HiGHS solver (highspy) is needed for fix-and-solve")


# --- the pure enumeration (privopt.space) ------------------------------------------

def _product_then_filter(grids, A, lower, upper, offset=None):
    """The reference: every point of the product (last coordinate most significant),
    kept when each row passes the test of the module's docstring."""
    prod = np.array([p[::-1] for p in itertools.product(*grids[::-1])], dtype=float)
    val = prod @ np.asarray(A, dtype=float).T + (0.0 if offset is None else np.asarray(offset))
    tol = 1e-9 * (1 + np.abs(val))
    keep = ((val >= np.asarray(lower) - tol) & (val <= np.asarray(upper) + tol)).all(axis=1)
    return prod[keep]


@pytest.mark.parametrize("seed", range(12))
def test_listing_equals_the_filtered_product_in_its_order(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    grids = [sorted(set(rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0], size=int(rng.integers(1, 5)))))
             for _ in range(d)]
    rows = int(rng.integers(1, 4))
    A = rng.integers(-3, 4, size=(rows, d)).astype(float)
    kind = rng.integers(0, 3, size=rows)           # == , <= , >=
    target = rng.integers(-3, 5, size=rows).astype(float)
    lower = np.where(kind == 1, -np.inf, target)
    upper = np.where(kind == 2, np.inf, target)
    offset = rng.integers(-1, 2, size=rows).astype(float)
    cons = SeparableConstraints(linear_tables(grids, A), lower, upper, offset)
    expected = _product_then_filter(grids, A, lower, upper, offset)
    listed = constrained_points(grids, cons)
    assert listed.shape == expected.shape and np.array_equal(listed, expected)
    assert count_constrained_points(cons) == len(expected)


def test_cardinality_and_knapsack_are_counted_without_the_product():
    grids = [[0.0, 1.0]] * 40                                  # 2^40 points in the product
    choose = SeparableConstraints(linear_tables(grids, [[1.0] * 40]), 3, 3)
    assert count_constrained_points(choose) == math.comb(40, 3)
    at_most = SeparableConstraints(linear_tables(grids, [[1.0] * 40]), -np.inf, 2)
    assert count_constrained_points(at_most) == 1 + 40 + math.comb(40, 2)
    small = [[0.0, 1.0]] * 20
    pts = constrained_points(small, SeparableConstraints(linear_tables(small, [[1.0] * 20]), 2, 2))
    assert pts.shape == (190, 20) and set(pts.sum(axis=1)) == {2.0}
    assert len({tuple(p) for p in pts}) == 190
    # a knapsack with public weights: brute force on 12 items
    rng = np.random.default_rng(3)
    a = rng.integers(1, 10, size=12).astype(float)
    g12 = [[0.0, 1.0]] * 12
    knap = SeparableConstraints(linear_tables(g12, [a]), -np.inf, 20)
    brute = sum(1 for p in itertools.product((0, 1), repeat=12) if np.dot(p, a) <= 20 + 1e-9)
    assert count_constrained_points(knap) == brute == len(constrained_points(g12, knap))


def test_weak_bounds_do_not_make_the_listing_explore_dead_prefixes():
    # 22 items of weights 1000 + j, an exact total only indices 0..10 reach: one point of W.
    # Bounds on partial sums alone keep ~C(22, 11) prefixes alive; the listing keeps only
    # the prefixes of that point (the count's states that have a completion).
    d = 22
    grids = [[0.0, 1.0]] * d
    a = 1000.0 + np.arange(d)
    cons = SeparableConstraints(linear_tables(grids, [a]), 11 * 1000 + 55, 11 * 1000 + 55)
    assert count_constrained_points(cons) == 1
    pts = constrained_points(grids, cons)
    assert pts.tolist() == [[1.0] * 11 + [0.0] * 11]
    empty = SeparableConstraints(linear_tables(grids, [a]), 7, 7)      # no point at all
    assert count_constrained_points(empty) == 0 and constrained_points(grids, empty).shape == (0, d)


def test_partial_assignments_that_cannot_be_completed_are_recognised():
    grids = [[0.0, 1.0]] * 5
    cons = SeparableConstraints(linear_tables(grids, [[1.0] * 5]), 2, 2)
    # coordinates 3 and 4 fixed: both open (sum 2) can be completed, none open too; the
    # regions below fix coordinates 2..4 with 3 open (sum 3): impossible
    assert partial_feasible(cons, [[2.0]], 3).tolist() == [True]
    assert partial_feasible(cons, [[0.0]], 3).tolist() == [True]
    assert partial_feasible(cons, [[3.0]], 2).tolist() == [False]
    assert partial_feasible(cons, [[0.0]], 0).tolist() == [False]   # nothing left to open


# --- a p-median model: W from its own constraint -----------------------------------

_pmedian = functools.partial(pmedian, n_sites=20, n_customers=30)


def test_pmedian_w_is_listed_through_its_cardinality_constraint_without_a_norm_bound():
    m, dist = _pmedian()
    res = privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=30,
                                        method="permute_and_flip", random_state=0, public_constraints=["p"],
                                        keep_report=True)
    assert res.parameters["n_points"] == math.comb(20, 2)
    assert res.weights.sum() == 2
    rep = res.report
    assert rep.listing == "constraints" and rep.engine == "blocks (closed form)"   # tests/solvers/test_blocks.py
    assert rep.solves == 0 and rep.points_scored == 190 and "linear constraint" in rep.reason
    # |W| is counted before anything is listed or solved, and refused with its count (path="score";
    # path="auto" takes the bounded sampler above max_points)
    with pytest.raises(ParameterError, match="190 points") as err:
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=30,
                                      public_constraints=["p"], max_points=100, path="score")
    assert err.value.parameter == "max_points"


def test_choose_k_beyond_the_product_limit_is_listed():
    # 30 sites: the product (2^30) is far beyond the old listing limit, C(30, 2) = 435 is not
    m, _ = _pmedian(n_sites=30, n_customers=3, seed=2)
    w = [m.open[j] for j in m.J]
    scorer = FixAndSolveEvaluator(m, w, resolve_grids(w), solver="highs", public_constraints=[m.p])
    assert scorer.n_points == math.comb(30, 2) and scorer.listing == "constraints"


def _scores(m, w, *, old, monkeypatch, **kw):
    with monkeypatch.context() as mp:
        if old:   # product then filter, and Pyomo's Var.fix and persistent solve
            mp.setattr(space_w, "count_constrained_points", lambda *a, **k: None)   # W counted once, there
            mp.setattr(HighsFixedSession, "build", classmethod(lambda cls, *a, **k: None))
        else:     # the HiGHS session's solves, not the closed form of the blocks (tests/solvers/test_blocks.py)
            mp.setattr(_evaluate, "closed_form_blocks", lambda *a, **k: (None, "off"))
        scorer = FixAndSolveEvaluator(m, w, resolve_grids(w), solver="highs", public_constraints=[m.p], **kw)
        blocks = list(scorer.blocks(block_points=7))
    pts = np.vstack([p for p, _ in blocks])
    losses = np.concatenate([loss for _, loss in blocks])
    return scorer, pts, losses


@pytest.mark.slow
def test_new_path_scores_the_same_points_in_the_same_order_with_the_same_exact_losses(monkeypatch):
    m, dist = _pmedian(n_sites=7, n_customers=25, k=3, seed=4)
    w = [m.open[j] for j in m.J]
    old, old_pts, old_losses = _scores(m, w, old=True, monkeypatch=monkeypatch)
    new, new_pts, new_losses = _scores(m, w, old=False, monkeypatch=monkeypatch)
    assert old.listing == "product" and old.engine == "pyomo_persistent"
    assert new.listing == "constraints" and new.engine == "highs_fixed"
    assert np.array_equal(old_pts, new_pts) and len(new_pts) == math.comb(7, 3)
    brute = np.array([dist[:, np.flatnonzero(p > 0.5)].min(axis=1).sum() for p in new_pts])
    assert np.allclose(new_losses, brute, atol=1e-6) and np.allclose(old_losses, new_losses, atol=1e-6)
    # and the same release for the same seed, both methods
    for method in ("exponential", "permute_and_flip"):
        for seed in range(4):
            kw = dict(weights="open", epsilon=2.0, loss_range=(0, 1), n_samples=25, method=method,
                      random_state=seed, public_constraints=["p"])
            a = privopt.exponential_mechanism(m, **kw).weights
            with monkeypatch.context() as mp:
                mp.setattr(space_w, "count_constrained_points", lambda *a, **k: None)   # W counted once, there
                mp.setattr(HighsFixedSession, "build", classmethod(lambda cls, *a, **k: None))
                b = privopt.exponential_mechanism(m, **kw, keep_report=True)
            assert b.report.listing == "product" and np.array_equal(a, b.weights)


def test_an_infeasible_decision_is_refused_not_released():
    # a customer who may only be served by site 0: every w without site 0 is infeasible
    m, _ = _pmedian(n_sites=4, n_customers=5, k=1, seed=1)
    m.only0 = pyo.Constraint(expr=m.assign[0, 0] == 1)
    with pytest.raises(NotCertifiedError, match="Not certified"):
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=5,
                                      public_constraints=["p"], random_state=0)


def test_the_users_model_is_untouched():
    m, _ = _pmedian(n_sites=5, n_customers=6)
    before = [(c.name, c.active) for c in m.component_data_objects(pyo.Constraint)]
    privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=6,
                                  public_constraints=["p"], random_state=0)
    assert [(c.name, c.active) for c in m.component_data_objects(pyo.Constraint)] == before
    assert not any(v.fixed for v in m.open.values())


# --- the released law on the listed W ------------------------------------------------

def _knapsack_choice():
    """x in {0, 1}^4 with 2 x_0 + x_1 + x_2 + 3 x_3 <= 3 (public: 8 of the 16 points),
    L(x) = sum_i (x . c_i + 0.5), an objective of the weights alone (each term in [0, 1])."""
    c = np.array([[0.1, -0.05, 0.02, 0.0], [0.0, 0.04, -0.08, 0.03], [-0.02, 0.0, 0.05, -0.06]])
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=2 * m.x[0] + m.x[1] + m.x[2] + 3 * m.x[3] <= 3)
    m.loss = pyo.Objective(expr=sum(sum(float(ci[j]) * m.x[j] for j in range(4)) + 0.5 for ci in c))
    W = _product_then_filter([[0.0, 1.0]] * 4, [[2, 1, 1, 3]], [-np.inf], [3])
    assert len(W) == 8
    losses = (W @ c.T + 0.5).sum(axis=1)
    return m, W, losses


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
@pytest.mark.slow
def test_released_law_on_the_listed_w_is_the_exact_one(method):
    m, W, losses = _knapsack_choice()
    exact = (exponential_mechanism_probabilities(losses, 3.0, 1.0) if method == "exponential"
             else permute_and_flip_probabilities(losses, 3.0, 1.0))
    rng = np.random.default_rng(5)
    outs = []
    for _ in range(3000):
        res = privopt.exponential_mechanism(m, weights="x", epsilon=3.0, loss_range=(0, 1), n_samples=3,
                                            method=method, random_state=rng, public_constraints=["cap"],
                                            keep_report=True)
        outs.append(res.weights)
    assert res.report.listing == "constraints" and res.parameters["n_points"] == len(W)
    assert chi_square_pvalue(np.array(outs), W, exact) > 1e-3


# --- adapting a model without rewriting it -------------------------------------------

def test_an_abstract_model_not_instantiated_is_refused_naming_create_instance():
    m = pyo.AbstractModel()
    m.J = pyo.RangeSet(0, 2)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.cost = pyo.Objective(rule=lambda m: sum(m.open[j] for j in m.J))
    with pytest.raises(ModelError, match=r"create_instance") as err:
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=3)
    assert err.value.parameter == "model" and "found 0" not in str(err.value)
    # the instance goes through
    res = privopt.exponential_mechanism(m.create_instance(), weights="open", epsilon=1.0, loss_range=(0, 1),
                                        n_samples=3, random_state=0)
    assert res.parameters["n_points"] == 8


def _utility_pmedian(seed=5):
    """The p-median written as a utility: each customer's gain 1 - distance (in [0, 1]),
    maximized; the same decisions as the cost model."""
    m, dist = _pmedian(n_sites=6, n_customers=15, k=2, seed=seed)
    m.cost.deactivate()
    m.gain = pyo.Objective(expr=sum((1 - float(dist[i, j])) * m.assign[i, j] for i in m.I for j in m.J),
                           sense=pyo.maximize)
    return m, dist


def test_a_maximized_objective_needs_an_explicit_sense_and_is_then_the_negated_loss():
    m, dist = _utility_pmedian()
    with pytest.raises(ModelError, match="sense='maximize'"):
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=15,
                                      public_constraints=["p"])
    cost, _ = _pmedian(n_sites=6, n_customers=15, k=2, seed=5)
    with pytest.raises(ModelError, match="minimized") as err:
        privopt.exponential_mechanism(cost, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=15,
                                      public_constraints=["p"], sense="maximize")
    assert err.value.parameter == "sense"
    with pytest.raises(ParameterError, match="sense"):
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=15,
                                      public_constraints=["p"], sense="max")
    # U(w) = n - cost(w): the utility's release is the cost model's release, seed by seed
    for seed in range(5):
        kw = dict(weights="open", epsilon=3.0, loss_range=(0, 1), n_samples=15, public_constraints=["p"],
                  random_state=seed, method="permute_and_flip")
        u = privopt.exponential_mechanism(m, sense="maximize", **kw)
        c = privopt.exponential_mechanism(cost, **kw)
        assert np.array_equal(u.weights, c.weights) and u.parameters["sense"] == "maximize"


def test_scoring_time_is_predicted_from_public_sizes_and_time_limit_refuses_up_front(monkeypatch):
    m, _ = _pmedian(n_sites=20, n_customers=30)
    res = privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=30,
                                        public_constraints=["p"], random_state=0, keep_report=True)
    pred = res.report.predicted_time
    assert np.isfinite(pred) and pred > 0
    # twice the customers: a larger prediction, before any solve
    big, _ = _pmedian(n_sites=20, n_customers=60)
    w = [big.open[j] for j in big.J]
    scorer = FixAndSolveEvaluator(big, w, resolve_grids(w), solver="highs", public_constraints=[big.p])
    assert scorer.predicted_seconds() > pred
    # refused up front: no solve runs
    monkeypatch.setattr(HighsFixedSession, "solve_at", lambda *a, **k: pytest.fail("a solve ran"))
    with pytest.raises(ParameterError, match="predicted") as err:
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=30,
                                      public_constraints=["p"], time_limit=pred / 10)
    assert err.value.parameter == "time_limit"


def test_a_set_built_from_dict_keys_prints_no_clone_error(caplog):
    sites = {"a": (0.1, 0.2), "b": (0.8, 0.3), "c": (0.4, 0.9)}
    cust = np.random.default_rng(0).random((8, 2))

    def build():
        m = pyo.ConcreteModel()
        m.J = pyo.Set(initialize=sites.keys())                    # Pyomo cannot clone this initializer
        m.I = pyo.RangeSet(0, len(cust) - 1)
        m.open = pyo.Var(m.J, domain=pyo.Binary)
        m.assign = pyo.Var(m.I, m.J, bounds=(0, 1))
        m.p = pyo.Constraint(expr=sum(m.open[j] for j in m.J) == 1)
        m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) == 1)
        m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.assign[i, j] <= m.open[j])
        m.cost = pyo.Objective(expr=sum(min(1.0, float(np.hypot(*(cust[i] - sites[j])))) * m.assign[i, j]
                                        for i in m.I for j in m.J))
        return m

    m = build()
    with caplog.at_level("WARNING", logger="pyomo"):
        m.clone()                                                 # the message this test is about
    assert "Unable to clone" in caplog.text
    caplog.clear()
    kw = dict(weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=8, public_constraints=["p"], random_state=0)
    with caplog.at_level("WARNING", logger="pyomo"):
        fast = privopt.exponential_mechanism(m, **kw, keep_report=True)   # the HiGHS session: no clone at all
        slow = privopt.exponential_mechanism(m, solver="glpk", **kw) if solver_availability(
            "glpk")[0] else fast                                  # Pyomo's path: a quiet clone
        w = [m.open[j] for j in m.J]
        clone = FixAndSolveEvaluator(m, w, resolve_grids(w), public_constraints=[m.p]).clone
    assert "Unable to clone" not in caplog.text
    assert fast.report.engine == "blocks (closed form)" and fast.weights.sum() == 1
    assert clone is not m and len(clone.J) == 3 and not clone.p.active and m.p.active
    assert np.array_equal(fast.weights, slow.weights)


def test_every_scored_path_says_which_engine_ran_and_why():
    from privopt import audit
    from privopt.models import zero_one_halfspace

    model = zero_one_halfspace(*audit.selection_instance().data(0))
    res = privopt.exponential_mechanism(model, epsilon=1.0, random_state=0, keep_report=True)
    rep = res.report
    assert rep.engine == rep.path and rep.path in ("topdown", "enumerate") and rep.reason
    assert rep.listing is None and rep.solves == 0
    m, _, _ = _knapsack_choice()  # an objective of the weights alone: evaluated, no solver
    rep = privopt.exponential_mechanism(m, weights="x", epsilon=1.0, loss_range=(0, 1), n_samples=3,
                                        public_constraints=["cap"], random_state=0, keep_report=True).report
    assert rep.engine == "direct" and rep.solves == 0 and rep.points_scored == 8 and rep.listing == "constraints"
    assert "fixing the decision" in rep.reason and "linear constraint" in rep.reason


def test_a_model_highs_cannot_read_with_the_decision_free_falls_back_to_pyomo():
    # w0 * w1 is bilinear with the decision free, linear once it is fixed: Pyomo's path scores it
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), domain=pyo.Integers, bounds=(0, 2))
    m.y = pyo.Var(range(3), bounds=(0, 1))
    a = [0.2, 0.5, 0.9]
    m.c = pyo.Constraint(range(3), rule=lambda m, i: m.y[i] >= a[i] * m.w[0] * m.w[1] / 4 - 0.1 * m.w[0])
    m.obj = pyo.Objective(expr=sum(m.y[i] for i in range(3)))
    w = [m.w[0], m.w[1]]
    scorer = FixAndSolveEvaluator(m, w, resolve_grids(w), solver="highs")
    pts, losses = map(np.concatenate, zip(*scorer.blocks()))
    assert scorer.engine == "pyomo_persistent" and scorer.solves == 9
    brute = np.array([sum(max(0.0, ai * p[0] * p[1] / 4 - 0.1 * p[0]) for ai in a) for p in pts.reshape(-1, 2)])
    assert np.allclose(losses, brute, atol=1e-7)

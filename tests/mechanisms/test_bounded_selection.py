"""Bounded private selection: A* sampling over prefixes of the decision, each region
bounded by a certified LP relaxation (privopt.search.sample_prefix,
privopt.mechanisms.selection._bounded, exponential_mechanism(path="bounded")).

The released law is checked against the exact softmax / permute-and-flip law computed by
brute force over W (chi-square), with HiGHS, GLPK and CBC as the bounding solver."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.calibration import exponential_mechanism_probabilities, permute_and_flip_probabilities
from privopt.exceptions import ParameterError
from privopt.mechanisms.selection._bounded import PyomoBoundOracle, prefix_space
from privopt.search import KeyedStreams, PrefixSpace, sample_prefix
from privopt.space import SeparableConstraints, linear_tables

from tests._law import chi_square_pvalue, shipped_and_broken
from tests.conftest import require_solver

METHODS = ["exponential", "permute_and_flip"]


def facility_model(n_sites=4, n_cust=6, seed=0, cmax=10.0, k=None):
    """Uncapacitated facility location: open sites y (binary, the decision), assign
    each customer to an open site (x continuous); fixed costs a public term; each
    customer's cost in [0, cmax]; at least one site open (or exactly k)."""
    rng = np.random.default_rng(seed)
    c = np.round(rng.uniform(0, cmax, size=(n_cust, n_sites)), 2)
    f = np.round(rng.uniform(1, 5, size=n_sites), 2)
    m = pyo.ConcreteModel()
    m.J = pyo.RangeSet(0, n_sites - 1)
    m.I = pyo.RangeSet(0, n_cust - 1)
    m.y = pyo.Var(m.J, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.fixed = pyo.Expression(expr=sum(float(f[j]) * m.y[j] for j in m.J))
    m.obj = pyo.Objective(expr=sum(float(c[i, j]) * m.x[i, j] for i in m.I for j in m.J) + m.fixed)
    m.assign = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == 1)
    m.link = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.y[j])
    if k is None:
        m.open = pyo.Constraint(expr=sum(m.y[j] for j in m.J) >= 1)
    else:
        m.open = pyo.Constraint(expr=sum(m.y[j] for j in m.J) == k)
    return m, c, f


def brute_force(c, f, k=None):
    """W and L(w) = f.w + sum_i min over open sites of c_ij, by enumeration."""
    W, L = [], []
    for w in itertools.product((0.0, 1.0), repeat=len(f)):
        w = np.array(w)
        if (k is None and w.sum() < 1) or (k is not None and w.sum() != k):
            continue
        W.append(w)
        L.append(float(f @ w + c[:, w > 0].min(axis=1).sum()))
    return np.array(W), np.array(L)


def noisy_max_exponential_law(L, epsilon, sensitivity):
    """P(argmax_w -L_w/s + E_w = w) with E_w iid Exponential(1), s = 2 Delta / epsilon, by
    numerical integration: int_{q_w}^inf e^{-(x - q_w)} prod_{v != w} (1 - e^{-(x - q_v)})_+ dx
    (permute-and-flip's law [DKSSWXZ21], for W too large to average over orders)."""
    from scipy import integrate

    q = -np.asarray(L, dtype=float) * epsilon / (2 * sensitivity)
    top = q.max()
    out = np.empty(len(q))
    for w in range(len(q)):
        others = np.delete(q, w)

        def dens(x, w=w, others=others):
            return math.exp(-(x - q[w])) * np.prod(np.clip(-np.expm1(-(x - others)), 0.0, None))

        lo = max(q[w], top)
        points = sorted(set(float(v) for v in others if v > lo))
        out[w] = integrate.quad(dens, lo, lo + 60.0, points=points or None, limit=200, epsabs=1e-13)[0]
    return out


def exact_law(method, L, epsilon, sensitivity):
    if method == "exponential":
        return exponential_mechanism_probabilities(L, epsilon, sensitivity)
    if len(L) <= 8:
        return permute_and_flip_probabilities(L, epsilon, sensitivity)
    return noisy_max_exponential_law(L, epsilon, sensitivity)


def test_the_integrated_permute_and_flip_law_matches_the_algorithm():
    L = np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6])
    law = noisy_max_exponential_law(L, 1.0, 1.0)
    assert law.sum() == pytest.approx(1.0, abs=1e-9)
    assert np.allclose(law, permute_and_flip_probabilities(L, 1.0, 1.0), atol=1e-8)


def _oracle_and_space(model, solver):
    w = list(model.y.values())
    grids = [(0.0, 1.0)] * len(w)
    space, _ = prefix_space(grids, None, [model.open], w)
    oracle = PyomoBoundOracle(model, w, solver=solver, weight_cons=[model.open], public_term=model.fixed,
                              n_samples=len(model.I), loss_range=(0.0, 10.0))
    return space, oracle


# --- the law, with each bounding solver ------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("solver", ["highs", "glpk", "cbc"])
@pytest.mark.slow
def test_released_law_matches_brute_force(solver, method):
    require_solver(solver)
    model, c, f = facility_model()
    W, L = brute_force(c, f)
    space, oracle = _oracle_and_space(model, solver)
    assert space.size(()) == len(W) == 15
    epsilon, delta = 1.0, 10.0
    scale = 2 * delta / epsilon
    outs = np.array([sample_prefix(space, oracle, KeyedStreams(np.random.default_rng(seed)), method, scale)[0]
                     for seed in range(4000)])
    # the oracle's exact losses agree with the brute force (each point solved and certified)
    for key, loss in oracle._losses.items():
        i = int(np.flatnonzero(np.all(W == np.array(key), axis=1))[0])
        assert loss == pytest.approx(L[i], abs=1e-6)
    assert chi_square_pvalue(outs, W, exact_law(method, L, epsilon, delta)) > 1e-3


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.slow
def test_sampler_law_with_a_knapsack_and_three_values(method):
    # engine only (no Pyomo): a 3-valued grid, a knapsack row, a valid but loose bound
    rng = np.random.default_rng(5)
    grids = [(0.0, 1.0, 2.0)] * 4
    a = np.array([1.0, 2.0, 1.0, 3.0])
    cons = SeparableConstraints(linear_tables(grids, a[None, :]), [-np.inf], [6.0])
    W = np.array([w for w in itertools.product(*grids) if a @ np.array(w) <= 6])
    target = rng.normal(1.0, 0.7, size=4)
    loss = lambda w: float(3.0 * np.sum((np.asarray(w) - target) ** 2))   # noqa: E731

    class Oracle:
        def lower_bound(self, lower, upper):   # the box's closest point to the target: a valid bound
            return loss(np.clip(target, lower, upper)) - 0.5

        def loss(self, point):
            return loss(point)

    space = PrefixSpace(grids, cons)
    assert space.size(()) == len(W)
    L = np.array([loss(w) for w in W])
    outs = np.array([sample_prefix(space, Oracle(), KeyedStreams(np.random.default_rng(s)), method, 2.0)[0]
                     for s in range(5000)])
    assert chi_square_pvalue(outs, W, exact_law(method, L, 1.0, 1.0)) > 1e-3


def test_an_inflated_bound_changes_the_law():
    # the bounds must be valid: with every bound tripled the sampler prunes regions that
    # hold the winner, and the law is visibly wrong
    model, c, f = facility_model()
    W, L = brute_force(c, f)
    space, oracle = _oracle_and_space(model, "highs")
    oracle.inflate = 3.0
    outs = np.array([sample_prefix(space, oracle, KeyedStreams(np.random.default_rng(s)), "exponential", 20.0)[0]
                     for s in range(3000)])
    assert chi_square_pvalue(outs, W, exact_law("exponential", L, 1.0, 10.0)) < 1e-6


# --- exponential_mechanism -------------------------------------------------------------

def _release(model, **kw):
    kw.setdefault("weights", "y")
    kw.setdefault("keep_report", True)      # the tests read the sampler's diagnostics
    return privopt.exponential_mechanism(model, epsilon=1.0, loss_range=(0, 10), n_samples=len(model.I),
                                         public_constraints="open", public_term="fixed", **kw)


def test_path_bounded_equals_the_sampler_for_the_same_seed_and_reports():
    model, c, f = facility_model(n_sites=6, n_cust=10, seed=3)
    space, oracle = _oracle_and_space(model, "highs")
    for seed in range(5):
        r = _release(model, path="bounded", random_state=seed)
        ref = sample_prefix(space, oracle, KeyedStreams(np.random.default_rng(seed)), "exponential", 20.0)[0]
        assert np.array_equal(r.weights, ref)
    rep = r.report
    assert rep.path == "bounded" and r.parameters["path"] == "bounded"
    assert rep.n_points == 63 and rep.listing == "prefixes" and rep.engine == "highs_fixed"
    assert rep.regions_solved >= 1 and rep.points_scored >= 1 and rep.points_scored < 63
    assert rep.solves == rep.regions_solved + rep.points_scored
    assert "path='bounded' was asked" in rep.reason
    assert math.isfinite(rep.predicted_time) and rep.predicted_time > 0 and rep.wall_time > 0


def test_auto_takes_the_bounded_path_above_max_points_only():
    model, _, _ = facility_model(n_sites=6, n_cust=10, seed=3)
    small = _release(model, random_state=0)
    assert small.report.path == "fix_and_solve"
    big = _release(model, random_state=0, max_points=20)
    assert big.report.path == "bounded"
    assert "above max_points=20" in big.report.reason
    with pytest.raises(ParameterError, match="max_points"):
        _release(model, random_state=0, max_points=20, path="score")


def test_choose_k_beyond_enumeration_releases_a_point_of_w():
    # 30 sites, choose 3: |W| = 4060 regions counted exactly, few of them solved
    model, c, f = facility_model(n_sites=30, n_cust=40, seed=1, k=3)
    r = _release(model, path="bounded", random_state=7)
    assert r.weights.sum() == 3 and set(r.weights) <= {0.0, 1.0}
    assert r.report.n_points == math.comb(30, 3)
    assert r.report.points_scored < 200


def test_maximized_utility_is_selected_as_minus_the_utility():
    model, c, f = facility_model(n_sites=4, n_cust=6, seed=2)
    W, L = brute_force(c, f)
    model.obj.deactivate()
    model.util = pyo.Objective(expr=-model.obj.expr, sense=pyo.maximize)
    w = list(model.y.values())
    space, _ = prefix_space([(0.0, 1.0)] * 4, None, [model.open], w)
    oracle = PyomoBoundOracle(model, w, solver="highs", weight_cons=[model.open], sense="maximize")
    for wi, li in zip(W, L):
        assert oracle.loss(wi) == pytest.approx(li, abs=1e-6)
        assert oracle.lower_bound(wi, wi) <= li
    r = privopt.exponential_mechanism(model, weights="y", epsilon=1.0, loss_range=(-100, 0), sense="maximize",
                                      n_samples=6, public_constraints=["open", "fixed"], path="bounded",
                                      random_state=1, keep_report=True)
    assert r.report.path == "bounded" and any(np.array_equal(r.weights, wi) for wi in W)


def test_bad_path_and_enumerate_are_refused_before_any_solve():
    model, _, _ = facility_model()
    with pytest.raises(ParameterError, match="path"):
        _release(model, path="fast")
    with pytest.raises(ParameterError, match="path"):
        _release(model, path="bounded", solver="enumerate")


# --- the audit entry -------------------------------------------------------------------

@pytest.mark.slow
def test_audit_passes_the_shipped_bounds_and_flags_inflated_ones():
    from privopt import audit

    # 12,500 runs per data set, 2,500 choosing the event among the 4 outputs and 10,000 counting it
    # (as many as an even split of 20,000): on the sampled laws, over 300 seeds, eps_lb's 1% quantile
    # and median 1.51 / 1.61 with the bounds inflated (1.53 / 1.61 with 20,000 split evenly)
    shipped, broken = shipped_and_broken(audit.BoundedSelectionTarget, epsilon=1.0, broken={"inflate": 5.0},
                                         n_samples=12_500, selection_fraction=0.2)
    assert not shipped.violation and shipped.epsilon_lower_bound <= 1.0
    assert broken.violation and broken.epsilon_lower_bound > 1.2


@pytest.mark.parametrize("inflate", [1.0, 5.0])
def test_audit_paths_agree_run_by_run(inflate):
    # the fast path (exact box minima) and the real one (exponential_mechanism, or the
    # Pyomo oracle with inflated bounds) give the same output for the same seed
    from privopt import audit

    target = audit.BoundedSelectionTarget(epsilon=1.0, inflate=inflate)
    for which in (0, 1):
        fast = audit.sample_outputs(target, which, 1, oracle="enumerate", seeds=range(30))
        real = audit.sample_outputs(target, which, 1, oracle="solver", seeds=range(30))
        assert np.array_equal(fast, real)
    # the model's losses are the ones the fast path uses
    m = audit.bounded_model(target.pair.data(0)[1])
    w = list(m.w.values())
    oracle = PyomoBoundOracle(m, w)
    for point, loss in zip(target.support, target.losses[0]):
        assert oracle.loss(point) == pytest.approx(loss, abs=1e-7)


# --- the ball, time_limit ----------------------------------------------------------------

def _integer_model():
    """Three integer weights in [-2, 2], each record's loss |w_j - t_ij| / 4 summed through
    auxiliary variables (an LP once w is fixed); each record's three pieces summed into its
    own r_i, so that the model falls into one block per record, as the contract asks."""
    rng = np.random.default_rng(4)
    t = rng.integers(-2, 3, size=(8, 3))
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, 7), pyo.RangeSet(0, 2)
    m.w = pyo.Var(m.J, domain=pyo.Integers, bounds=(-2, 2))
    m.e = pyo.Var(m.I, m.J, bounds=(0, None))
    m.up = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.e[i, j] >= m.w[j] - int(t[i, j]))
    m.dn = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.e[i, j] >= int(t[i, j]) - m.w[j])
    m.r = pyo.Var(m.I)
    m.tot = pyo.Constraint(m.I, rule=lambda m, i: m.r[i] == sum(m.e[i, j] for j in m.J))
    m.obj = pyo.Objective(expr=sum(m.r.values()) / 12)
    return m, t


def test_the_ball_is_counted_like_the_scored_path_and_the_law_holds():
    m, t = _integer_model()
    kw = dict(weights="w", epsilon=2.0, loss_range=(0, 1), n_samples=8, norm_bound=2.0, public_constraints="w",
              keep_report=True)
    scored = privopt.exponential_mechanism(m, path="score", random_state=0, **kw)
    bounded = privopt.exponential_mechanism(m, path="bounded", random_state=0, **kw)
    assert bounded.report.n_points == scored.report.n_points == 33     # integer points with ||w|| <= 2
    assert float(np.linalg.norm(bounded.weights)) <= 2.0
    W = np.array([w for w in itertools.product(range(-2, 3), repeat=3) if sum(x * x for x in w) <= 4], float)
    L = np.array([np.abs(w[None, :] - t).sum() / 12 for w in W])
    w_vars = list(m.w.values())
    space, _ = prefix_space([tuple(range(-2, 3))] * 3, 2.0, [], w_vars)
    oracle = PyomoBoundOracle(m, w_vars)
    outs = np.array([sample_prefix(space, oracle, KeyedStreams(np.random.default_rng(s)), "exponential", 1.0)[0]
                     for s in range(3000)])
    assert chi_square_pvalue(outs, W, exact_law("exponential", L, 2.0, 1.0)) > 1e-3


@pytest.mark.parametrize("solver", ["highs", "glpk", "cbc"])
def test_a_time_limit_below_the_predicted_lower_bound_is_refused_before_any_solve(solver, monkeypatch):
    # a tiny time_limit: refused up front from public sizes, no solve runs, nothing released
    import privopt.mechanisms.selection._bounded as bounded
    from privopt.solvers import HighsFixedSession

    require_solver(solver)
    model, _, _ = facility_model(n_sites=12, n_cust=30, seed=1)
    monkeypatch.setattr(HighsFixedSession, "build", classmethod(lambda *a, **k: pytest.fail("the model was read")))
    monkeypatch.setattr(bounded, "certified_solve", lambda *a, **k: pytest.fail("a solve ran"))
    with pytest.raises(ParameterError, match="time_limit=1e-09") as err:
        _release(model, path="bounded", random_state=0, time_limit=1e-9, solver=solver)
    assert err.value.parameter == "time_limit" and "Raise time_limit" in str(err.value)


@pytest.mark.parametrize("solver", ["highs", "glpk"])
def test_an_uncertified_bound_releases_nothing(solver, monkeypatch):
    """A region's bound must come from a certified solve: when the bounding solve is not
    certified (simulated on the HiGHS session and on Pyomo's path), the call raises
    NotCertifiedError and releases nothing, rather than using the bound."""
    import dataclasses

    import privopt.mechanisms.selection._bounded as bounded
    from privopt.exceptions import NotCertifiedError
    from privopt.solvers import HighsFixedSession

    require_solver(solver)

    def uncertified(report):
        return dataclasses.replace(report, certified_optimal=False)

    if solver == "highs":
        real = HighsFixedSession.solve_within
        monkeypatch.setattr(HighsFixedSession, "solve_within",
                            lambda self, *a, **k: uncertified(real(self, *a, **k)))
    else:
        def refuse(*a, **k):
            raise NotCertifiedError("Not certified: simulated", None)

        monkeypatch.setattr(bounded, "certified_solve", refuse)
    model, _, _ = facility_model(n_sites=6, n_cust=10, seed=3)
    with pytest.raises(NotCertifiedError, match="[Nn]ot certified"):
        _release(model, path="bounded", random_state=0, solver=solver)

"""The models of the review (issue 48), small: each as its authors wrote it, refused (or
warned) with a message that names the fix, then run with only the edits the messages name.

Pyomo's p-median; MO-book facility location (weak and strong); a capacitated facility
location; MO-book LAD regression; MO-book MAD portfolio; MO-book pop-up shop; a unit-commitment
toy.  The edits each needed are in each test's docstring."""

from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import ModelError, NotCertifiedError, ParameterError

from tests.conftest import require_solver

_KW = dict(epsilon=1.0, random_state=0)


def _fixed(m, expr, named):
    """The fixed cost as written (a plain sum in the objective), or as the named Expression
    ``fixed_cost`` the refusal asks for."""
    if not named:
        return expr
    m.fixed_cost = pyo.Expression(expr=expr)
    return m.fixed_cost


def pmedian_pyomo(n=30, n_sites=6, p=2, seed=0):
    """Pyomo's examples/pyomo/p-median as a ConcreteModel: d[i, j] uniform in [1, 2]."""
    d = np.random.default_rng(seed).uniform(1.0, 2.0, size=(n, n_sites))
    m = pyo.ConcreteModel()
    m.N, m.M = pyo.RangeSet(1, n), pyo.RangeSet(1, n_sites)
    m.d = pyo.Param(m.N, m.M, initialize=lambda m, i, j: float(d[i - 1, j - 1]))
    m.x = pyo.Var(m.N, m.M, bounds=(0.0, 1.0))
    m.y = pyo.Var(m.M, within=pyo.Binary)
    m.obj = pyo.Objective(expr=sum(m.d[i, j] * m.x[i, j] for i in m.N for j in m.M))
    m.single_x = pyo.Constraint(m.N, rule=lambda m, i: sum(m.x[i, j] for j in m.M) == 1.0)
    m.bound_y = pyo.Constraint(m.N, m.M, rule=lambda m, i, j: m.x[i, j] <= m.y[j])
    m.num_facilities = pyo.Constraint(expr=sum(m.y[j] for j in m.M) == p)
    return m


def facility_location(strong, *, named=False, some_open=False, n=20, sites=5, seed=1):
    """MO-book facility location: open sites y (fixed costs), serve each customer (x_ij, a
    share) at cost c_ij in [0, 1]; weak: sum_i x_ij <= n y_j, strong: x_ij <= y_j."""
    c = np.random.default_rng(seed).uniform(0.0, 1.0, size=(n, sites))
    f = np.linspace(1.0, 3.0, sites)
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, sites - 1)
    m.x = pyo.Var(m.I, m.J, within=pyo.NonNegativeReals)
    m.y = pyo.Var(m.J, within=pyo.Binary)
    fixed = _fixed(m, sum(float(f[j]) * m.y[j] for j in m.J), named)
    m.obj = pyo.Objective(expr=fixed + sum(float(c[i, j]) * m.x[i, j] for i in m.I for j in m.J))
    m.demand = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == 1)
    if strong:
        m.link = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.y[j])
    else:
        m.link = pyo.Constraint(m.J, rule=lambda m, j: sum(m.x[i, j] for i in m.I) <= n * m.y[j])
    if some_open:
        m.some_open = pyo.Constraint(expr=sum(m.y[j] for j in m.J) >= 1)
    return m


def capacitated_facility_location(*, named=False, min_open=False, n=16, sites=4, seed=2):
    """Demand q_i in [0.5, 1], capacity 8 per site: sum_i q_i x_ij <= 8 y_j joins the customers."""
    rng = np.random.default_rng(seed)
    c, q = rng.uniform(0.0, 1.0, size=(n, sites)), rng.uniform(0.5, 1.0, size=n)
    f = np.linspace(1.0, 2.0, sites)
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, sites - 1)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.y = pyo.Var(m.J, within=pyo.Binary)
    fixed = _fixed(m, sum(float(f[j]) * m.y[j] for j in m.J), named)
    m.obj = pyo.Objective(expr=fixed + sum(float(c[i, j]) * m.x[i, j] for i in m.I for j in m.J))
    m.demand = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == 1)
    m.capacity = pyo.Constraint(m.J, rule=lambda m, j: sum(float(q[i]) * m.x[i, j] for i in m.I) <= 8 * m.y[j])
    m.link = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.y[j])
    if min_open:     # public: 16 customers of demand at most 1 need 2 sites of capacity 8
        m.min_open = pyo.Constraint(expr=sum(m.y[j] for j in m.J) >= 2)
    return m


def lad_regression(n=30, seed=3):
    """MO-book LAD regression: y_i = m x_i + b + e_pos_i - e_neg_i, minimize sum of |e|."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=n)
    y = 0.5 * x + 0.2 + rng.normal(0, 0.05, size=n)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.e_pos = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.e_neg = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.m, m.b = pyo.Var(), pyo.Var()
    m.sum_of_abs_errors = pyo.Objective(expr=sum(m.e_pos[i] + m.e_neg[i] for i in m.I))
    m.prediction = pyo.Constraint(m.I, rule=lambda m, i: m.e_pos[i] - m.e_neg[i] == float(y[i]) - m.m * float(x[i])
                                  - m.b)
    return m


def mad_portfolio(T=40, seed=4):
    """MO-book MAD portfolio: returns centred on their mean, a mean-return target, weight bounds
    by mutable Params, the objective divided by T."""
    r = np.random.default_rng(seed).normal([0.003, 0.001, 0.002], 0.01, size=(T, 3))
    mean = r.mean(axis=0)
    m = pyo.ConcreteModel()
    m.R = pyo.Param(mutable=True, initialize=0.0015)
    m.w_lb = pyo.Param(mutable=True, initialize=0.0)
    m.w_ub = pyo.Param(mutable=True, initialize=1.0)
    m.ASSETS, m.TIME = pyo.RangeSet(0, 2), pyo.RangeSet(0, T - 1)
    m.w = pyo.Var(m.ASSETS)
    m.u = pyo.Var(m.TIME, domain=pyo.NonNegativeReals)
    m.v = pyo.Var(m.TIME, domain=pyo.NonNegativeReals)
    m.MAD = pyo.Objective(expr=sum(m.u[t] + m.v[t] for t in m.TIME) / len(m.TIME))
    m.portfolio_returns = pyo.Constraint(m.TIME, rule=lambda m, t: m.u[t] - m.v[t] == sum(
        m.w[j] * float(r[t, j] - mean[j]) for j in m.ASSETS))
    m.sum_of_weights = pyo.Constraint(expr=sum(m.w[j] for j in m.ASSETS) == 1)
    m.mean_portfolio_return = pyo.Constraint(expr=sum(m.w[j] * float(mean[j]) for j in m.ASSETS) >= m.R)
    m.no_short = pyo.Constraint(m.ASSETS, rule=lambda m, j: m.w[j] >= m.w_lb)
    m.diversify = pyo.Constraint(m.ASSETS, rule=lambda m, j: m.w[j] <= m.w_ub)
    return m


def popup_shop(*, rewritten=False, n=12, seed=5):
    """MO-book pop-up shop: order x shirts at c = 12; in scenario s (probability 1/n) sell y_s <=
    demand_s at r = 40 and salvage the rest at w = 5; maximize the expected profit.
    ``rewritten``: the profit as the refusals ask, (w - c) x (public, named) plus the sum over
    scenarios of (r - w) y_s (no 1/n)."""
    demand = np.random.default_rng(seed).integers(50, 150, size=n).astype(float)
    c, r, w = 12.0, 40.0, 5.0
    m = pyo.ConcreteModel()
    m.S = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(m.S, within=pyo.NonNegativeReals)
    if rewritten:
        m.order_cost = pyo.Expression(expr=n * (w - c) * m.x)
        m.profit = pyo.Objective(expr=m.order_cost + sum((r - w) * m.y[s] for s in m.S), sense=pyo.maximize)
    else:
        m.profit = pyo.Objective(expr=-c * m.x + sum((1 / n) * (r * m.y[s] + w * (m.x - m.y[s])) for s in m.S),
                                 sense=pyo.maximize)
    m.sales_less_than_demand = pyo.Constraint(m.S, rule=lambda m, s: m.y[s] <= float(demand[s]))
    m.sales_less_than_order = pyo.Constraint(m.S, rule=lambda m, s: m.y[s] <= m.x)
    return m


def unit_commitment(*, named=False, reserve=False, hours=12, seed=6):
    """Commit generators u_g (fixed costs), dispatch p_gt to meet each hour's demand D_t in
    [20, 80] (the records) at marginal costs, p_gt <= Pmax_g u_g."""
    demand = np.random.default_rng(seed).uniform(20, 80, size=hours)
    pmax, mc, fixed = np.array([50.0, 40.0, 30.0]), np.array([1.0, 2.0, 4.0]), np.array([30.0, 20.0, 10.0])
    m = pyo.ConcreteModel()
    m.G, m.T = pyo.RangeSet(0, 2), pyo.RangeSet(0, hours - 1)
    m.u = pyo.Var(m.G, within=pyo.Binary)
    m.p = pyo.Var(m.G, m.T, within=pyo.NonNegativeReals)
    commit = _fixed(m, sum(float(fixed[g]) * m.u[g] for g in m.G), named)
    m.cost = pyo.Objective(expr=commit + sum(float(mc[g]) * m.p[g, t] for g in m.G for t in m.T))
    m.balance = pyo.Constraint(m.T, rule=lambda m, t: sum(m.p[g, t] for g in m.G) == float(demand[t]))
    m.limit = pyo.Constraint(m.G, m.T, rule=lambda m, g, t: m.p[g, t] <= float(pmax[g]) * m.u[g])
    if reserve:      # public: the design peak of 80 must be coverable
        m.reserve = pyo.Constraint(expr=sum(float(pmax[g]) * m.u[g] for g in m.G) >= 80)
    return m


def test_pmedian_needs_its_cardinality_named():
    """Edit: public_constraints=['num_facilities'] (named by the refusal)."""
    require_solver("highs")
    with pytest.raises(ModelError, match=r"public_constraints=\['num_facilities'\]"):
        privopt.exponential_mechanism(pmedian_pyomo(), weights="y", loss_range=(1, 2), n_samples=30, **_KW)
    res = privopt.exponential_mechanism(pmedian_pyomo(), weights="y", loss_range=(1, 2), n_samples=30,
                                        public_constraints=["num_facilities"], **_KW)
    assert res.parameters["n_points"] == 15 and res.parameters["record_terms"] == "clipped"


@pytest.mark.parametrize("strong", [False, True])
def test_facility_location(strong):
    """Edits: the fixed cost as a named Expression declared public_term (refusal 1); the
    all-closed decision left out by a public constraint sum(y) >= 1 (refusal 2, infeasible);
    weak only: its aggregated row sum_i x_ij <= n y_j joins the customers (refusal 3, naming
    link): with y fixed it allows exactly what x_ij <= y_j does, so the strong row (or
    sensitivity=1, the width, which that argument proves) is the fix."""
    require_solver("highs")
    kw = dict(weights="y", loss_range=(0, 1), n_samples=20, **_KW)
    with pytest.raises(ModelError, match="public_term='fixed_cost'"):
        privopt.exponential_mechanism(facility_location(strong), **kw)
    kw["public_term"] = "fixed_cost"
    if not strong:
        with pytest.raises(ModelError, match="joined by link"):
            privopt.exponential_mechanism(facility_location(strong, named=True), **kw)
        kw["sensitivity"] = 1.0
    with pytest.raises(NotCertifiedError, match="sum\\(open\\) >= 1"):
        privopt.exponential_mechanism(facility_location(strong, named=True), **kw)
    res = privopt.exponential_mechanism(facility_location(strong, named=True, some_open=True),
                                        public_constraints=["some_open"], **kw)
    assert res.parameters["n_points"] == 31
    assert res.parameters["record_terms"] == ("clipped" if strong else "assumed")


def test_capacitated_facility_location_needs_a_declared_sensitivity():
    """Edits: the fixed cost named (public_term); the capacity rows join the customers (refused,
    naming capacity): sensitivity= with the user's own bound (here 2, an assumption privopt
    cannot check); a public minimum of sites open (sum(y) >= 2) for feasibility."""
    require_solver("highs")
    kw = dict(weights="y", loss_range=(0, 1), n_samples=16, public_term="fixed_cost", **_KW)
    with pytest.raises(ModelError, match="joined by capacity"):
        privopt.exponential_mechanism(capacitated_facility_location(named=True), **kw)
    res = privopt.exponential_mechanism(capacitated_facility_location(named=True, min_open=True), sensitivity=2.0,
                                        public_constraints=["min_open"], **kw)
    assert res.parameters["sensitivity"] == 2.0 and res.parameters["n_points"] == 11


def test_lad_regression_needs_a_grid():
    """Edits: the weights as the variables themselves (a list of names is refused, naming the
    fix) and a grid= for the continuous slope and intercept; each record's term is then read
    from each LP solve and clipped into loss_range."""
    require_solver("highs")
    m = lad_regression()
    with pytest.raises(privopt.exceptions.ParameterTypeError, match=r"weights=\[model.m, ...\]"):
        privopt.exponential_mechanism(m, weights=["m", "b"], loss_range=(0, 1), n_samples=30, **_KW)
    with pytest.raises(ModelError, match="grid="):
        privopt.exponential_mechanism(m, weights=[m.m, m.b], loss_range=(0, 1), n_samples=30, **_KW)
    res = privopt.exponential_mechanism(m, weights=[m.m, m.b], grid=[[0, 0.25, 0.5, 0.75, 1], [0, 0.1, 0.2, 0.3]],
                                        loss_range=(0, 1), n_samples=30, **_KW)
    assert res.parameters["n_points"] == 20 and res.parameters["record_terms"] == "clipped"


def test_mad_portfolio():
    """Edits: a grid= for the weights; the data-built return target deactivated and the public
    rows named (sum_of_weights, no_short, diversify: the refusal lists all four); the mean over
    T draws a LossContractWarning (the sum is the fix).  The centring on the data's mean is in
    every day's numbers: not separable, and not seen by privopt (docs/own_model.md)."""
    require_solver("highs")
    kw = dict(weights="w", grid=[0, 0.5, 1], loss_range=(0, 0.1), n_samples=40, **_KW)
    with pytest.raises(ModelError) as err:
        privopt.exponential_mechanism(mad_portfolio(), **kw)
    assert ("public_constraints=['sum_of_weights', 'mean_portfolio_return', 'no_short', 'diversify']"
            in str(err.value))
    m = mad_portfolio()
    m.mean_portfolio_return.deactivate()
    with pytest.warns(privopt.LossContractWarning):
        res = privopt.exponential_mechanism(m, public_constraints=["sum_of_weights", "no_short", "diversify"], **kw)
    assert res.parameters["n_points"] == 6


def test_popup_shop():
    """Edits: sense='maximize' (refusal 1); the salvage x inside every scenario's term and the
    order cost are terms on the decision alone (refusal 2): rewritten as the public (w - c) x
    summed over the scenarios, named, declared public_term, and the sum over scenarios without
    1/n; a grid= for the order."""
    require_solver("highs")
    kw = dict(weights="x", loss_range=(0, 35 * 150), n_samples=12, **_KW)
    with pytest.raises(ParameterError, match="sense='maximize'"):
        privopt.exponential_mechanism(popup_shop(), **kw)
    with pytest.raises(ModelError, match=r"a term in x \(13 times, scaled\)"):   # by name: no coefficient shown
        privopt.exponential_mechanism(popup_shop(), sense="maximize", grid=[0, 50, 100, 150], **kw)
    res = privopt.exponential_mechanism(popup_shop(rewritten=True), sense="maximize", grid=[0, 50, 100, 150],
                                        public_term="order_cost", **kw)
    assert res.parameters["n_points"] == 4 and res.parameters["record_terms"] == "clipped"


def test_unit_commitment():
    """Edits: the commitment costs named (public_term); the all-off decision left out by a
    public reserve constraint (sum Pmax u >= 80, the design peak)."""
    require_solver("highs")
    kw = dict(weights="u", loss_range=(0, 400), n_samples=12, **_KW)
    with pytest.raises(ModelError, match="public_term='fixed_cost'"):
        privopt.exponential_mechanism(unit_commitment(), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", privopt.LossContractWarning)
        res = privopt.exponential_mechanism(unit_commitment(named=True, reserve=True), public_term="fixed_cost",
                                            public_constraints=["reserve"], **kw)
    assert res.parameters["n_points"] == 3 and res.parameters["record_terms"] == "clipped"

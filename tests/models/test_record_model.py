"""privopt.RecordModel: seven model types written record by record, each released by private
selection (and some by OPDisc or OPSamp), each shorter than by hand and with the same optimum
as its hand-written equivalent; the leaks the construction refuses; the clipping encoding
against min(max(t, a), b); a distribution test of the private median against exact
probabilities computed from the records in Fractions."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import NoiseDominatesWarning, ModelError, ParameterError, ParameterTypeError
from privopt.models import check_record_blocks, get_info
from privopt.solvers import solve

from tests._law import chi_square_pvalue, shipped_and_broken
from tests._models import pmedian
from tests.conftest import require_solver

_KW = dict(epsilon=1.0, random_state=0)


# ---------------------------------------------------------------- the seven models, record by record

def pmedian_records(customers, sites, k=2):
    """Open k sites; each customer (a record: its point) pays the distance to the site it is assigned to."""
    def record(b, y, c):
        b.x = pyo.Var(range(len(sites)), bounds=(0, 1))
        b.one = pyo.Constraint(expr=sum(b.x.values()) == 1)
        b.open = pyo.Constraint(range(len(sites)), rule=lambda b, j: b.x[j] <= y[j])
        return sum(min(1.0, float(np.linalg.norm(c - s))) * b.x[j] for j, s in enumerate(sites))
    return privopt.RecordModel(decision=pyo.Var(range(len(sites)), domain=pyo.Binary), record=record,
                               records=customers, loss_range=(0, 1),
                               public=lambda m, y: m.add_component("p", pyo.Constraint(expr=sum(y.values()) == k)))


def facility_records(cost, fixed, cap=8.0):
    """Capacitated facility location: a record is one customer's costs to the sites (demand at most 1);
    the capacity is public, on the decision: open enough capacity for n customers of demand 1."""
    def public(m, y):
        m.enough = pyo.Constraint(expr=sum(cap * y[j] for j in y) >= len(cost))
        return sum(float(fixed[j]) * y[j] for j in y)

    def record(b, y, c):
        b.x = pyo.Var(y.index_set(), bounds=(0, 1))
        b.served = pyo.Constraint(expr=sum(b.x.values()) == 1)
        b.link = pyo.Constraint(y.index_set(), rule=lambda b, j: b.x[j] <= y[j])
        return sum(float(c[j]) * b.x[j] for j in y)
    return privopt.RecordModel(decision=pyo.Var(range(len(fixed)), domain=pyo.Binary), public=public,
                               record=record, records=cost, loss_range=(0, 1))


def lad_records(points, clip=True):
    """LAD regression: decision (slope, intercept) in [0, 1]^2; a record (x, y) pays |y - slope x - intercept|."""
    def record(b, w, p):
        b.pos, b.neg = pyo.Var(bounds=(0, 2)), pyo.Var(bounds=(0, 2))
        b.fit = pyo.Constraint(expr=b.pos - b.neg == float(p[1]) - w[0] * float(p[0]) - w[1])
        return b.pos + b.neg
    return privopt.RecordModel(decision=pyo.Var(range(2), bounds=(0, 1)), record=record, records=points,
                               loss_range=(0, 1), clip=clip)


def mad_records(returns, target=0.002):
    """MAD portfolio: weights on a public grid summing to 1; a day pays |w . r_t - target| (a public target)."""
    def record(b, w, r):
        b.up, b.down = pyo.Var(bounds=(0, 0.1)), pyo.Var(bounds=(0, 0.1))
        b.dev = pyo.Constraint(expr=b.up - b.down == sum(float(r[j]) * w[j] for j in w) - target)
        return b.up + b.down
    return privopt.RecordModel(decision=pyo.Var(range(returns.shape[1]), bounds=(0, 1)), records=returns,
                               record=record, loss_range=(0, 0.1), grid=[0, 0.5, 1],
                               public=lambda m, w: m.add_component("budget", pyo.Constraint(expr=sum(w.values()) == 1)))


def svm_records(X, y, lam=0.5):
    """L1 hinge SVM: w on {-1, 0, 1}^d, a record pays its hinge loss clipped into [0, 2]; the public cost is
    lam ||w||_1, through public variables a_j >= |w_j|."""
    def public(m, w):
        m.a = pyo.Var(w.index_set(), bounds=(0, 1))
        m.abs = pyo.Constraint(w.index_set(), [1, -1], rule=lambda m, j, s: m.a[j] >= s * w[j])
        return lam * sum(m.a.values())

    def record(b, w, row):
        b.xi = pyo.Var(bounds=(0, 1 + float(np.abs(row[0]).sum())))
        b.margin = pyo.Constraint(expr=b.xi >= 1 - float(row[1]) * sum(float(row[0][j]) * w[j] for j in w))
        return b.xi
    return privopt.RecordModel(decision=pyo.Var(range(X.shape[1]), domain=pyo.Integers, bounds=(-1, 1)),
                               public=public, record=record, records=list(zip(X, y)), loss_range=(0, 2), clip=True)


def newsvendor_records(demand, price=2.0, cost=1.0):
    """Newsvendor: order Q in 0..8; a day (its demand, a mutable Param of its block) sells min(Q, D); the
    shortage is charged by a Piecewise tiered penalty; each day's term, scaled by 1/16, clipped into [0, 1]."""
    def record(b, q, d):
        b.d = pyo.Param(mutable=True, initialize=float(d))
        b.sold, b.short = pyo.Var(bounds=(0, 8)), pyo.Var(bounds=(0, 8))
        b.penalty = pyo.Var(bounds=(0, 12))
        b.by_order = pyo.Constraint(expr=b.sold <= q)
        b.by_demand = pyo.Constraint(expr=b.sold <= b.d)
        b.shortage = pyo.Constraint(expr=b.short >= b.d - q)
        b.tiers = pyo.Piecewise(b.penalty, b.short, pw_pts=[0, 2, 8], f_rule=[0, 1, 12], pw_constr_type="LB",
                                pw_repn="INC")
        return (cost * q - price * b.sold + 2 * price * 0 + b.penalty + 16) / 32
    return privopt.RecordModel(decision=pyo.Var(domain=pyo.Integers, bounds=(0, 8)), record=record,
                               records=demand, loss_range=(0, 1), clip=True)


def staffing_records(demand, wage=(1.0, 1.0, 1.5), per_staff=4.0):
    """Staffing: staff per shift in 0..3 with a public headcount cap; a day pays the unmet demand of its
    shifts (each in [0, 12]); the public cost is the wages, summed over the n days."""
    def public(m, s):
        m.headcount = pyo.Constraint(expr=sum(s.values()) <= 6)
        return len(demand) * sum(wage[j] * s[j] for j in s) / 36

    def record(b, s, day):
        b.unmet = pyo.Var(s.index_set(), bounds=(0, 12))
        b.cover = pyo.Constraint(s.index_set(), rule=lambda b, j: b.unmet[j] >= float(day[j]) - per_staff * s[j])
        return sum(b.unmet.values()) / 36
    return privopt.RecordModel(decision=pyo.Var(range(3), domain=pyo.Integers, bounds=(0, 3)), public=public,
                               record=record, records=demand, loss_range=(0, 1))


# ---------------------------------------------------------------- the same models by hand

def pmedian_hand(customers, sites, k=2):
    dist = np.minimum(1.0, np.linalg.norm(customers[:, None] - sites[None], axis=2))
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, len(customers) - 1), pyo.RangeSet(0, len(sites) - 1)
    m.w = pyo.Var(m.J, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.p = pyo.Constraint(expr=sum(m.w[j] for j in m.J) == k)
    m.one = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == 1)
    m.open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.w[j])
    m.loss = pyo.Objective(expr=sum(float(dist[i, j]) * m.x[i, j] for i in m.I for j in m.J))
    return m


def facility_hand(cost, fixed, cap=8.0):
    n, sites = cost.shape
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, sites - 1)
    m.w = pyo.Var(m.J, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.enough = pyo.Constraint(expr=sum(cap * m.w[j] for j in m.J) >= n)
    m.public_cost = pyo.Expression(expr=sum(float(fixed[j]) * m.w[j] for j in m.J))
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == 1)
    m.link = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.w[j])
    m.loss = pyo.Objective(expr=m.public_cost + sum(float(cost[i, j]) * m.x[i, j] for i in m.I for j in m.J))
    return m


def _clip_hand(m, terms, n, a, b, hi):
    """The clipping of each of n terms into [a, b] by hand (the same encoding as RecordModel's)."""
    m.low = pyo.Var(range(n), bounds=(a, max(hi, a)))
    m.low_ge = pyo.Constraint(range(n), rule=lambda m, i: m.low[i] >= terms[i])
    m.z = pyo.Var(range(n), domain=pyo.Binary)
    m.c = pyo.Var(range(n), bounds=(a, b))
    m.c_below = pyo.Constraint(range(n), rule=lambda m, i: m.c[i] >= m.low[i] - (max(hi, a) - b) * m.z[i])
    m.c_top = pyo.Constraint(range(n), rule=lambda m, i: m.c[i] >= b - (b - a) * (1 - m.z[i]))
    return sum(m.c.values())


def lad_hand(points):
    n = len(points)
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(0, 1))
    m.pos = pyo.Var(range(n), bounds=(0, 2))
    m.neg = pyo.Var(range(n), bounds=(0, 2))
    m.fit = pyo.Constraint(range(n), rule=lambda m, i: m.pos[i] - m.neg[i] == float(points[i][1])
                           - m.w[0] * float(points[i][0]) - m.w[1])
    m.loss = pyo.Objective(expr=_clip_hand(m, [m.pos[i] + m.neg[i] for i in range(n)], n, 0.0, 1.0, 4.0))
    return m


def mad_hand(returns, target=0.002):
    T, k = returns.shape
    m = pyo.ConcreteModel()
    m.T, m.J = pyo.RangeSet(0, T - 1), pyo.RangeSet(0, k - 1)
    m.w = pyo.Var(m.J, bounds=(0, 1))
    m.up = pyo.Var(m.T, bounds=(0, 0.1))
    m.down = pyo.Var(m.T, bounds=(0, 0.1))
    m.budget = pyo.Constraint(expr=sum(m.w[j] for j in m.J) == 1)
    m.dev = pyo.Constraint(m.T, rule=lambda m, t: m.up[t] - m.down[t] == sum(
        float(returns[t, j]) * m.w[j] for j in m.J) - target)
    m.loss = pyo.Objective(expr=sum(m.up[t] + m.down[t] for t in m.T))
    return m


def svm_hand(X, y, lam=0.5):
    n, d = X.shape
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), domain=pyo.Integers, bounds=(-1, 1))
    m.a = pyo.Var(range(d), bounds=(0, 1))
    m.abs = pyo.Constraint(range(d), [1, -1], rule=lambda m, j, s: m.a[j] >= s * m.w[j])
    m.public_cost = pyo.Expression(expr=lam * sum(m.a.values()))
    m.xi = pyo.Var(range(n), bounds=lambda m, i: (0, 1 + float(np.abs(X[i]).sum())))
    m.margin = pyo.Constraint(range(n), rule=lambda m, i: m.xi[i] >= 1 - float(y[i]) * sum(
        float(X[i, j]) * m.w[j] for j in range(d)))
    hi = 1 + float(np.abs(X).sum(axis=1).max())
    m.loss = pyo.Objective(expr=m.public_cost + _clip_hand(m, [m.xi[i] for i in range(n)], n, 0.0, 2.0, hi))
    return m


def newsvendor_hand(demand, price=2.0, cost=1.0):
    n = len(demand)
    m = pyo.ConcreteModel()
    m.S = pyo.RangeSet(0, n - 1)
    m.w = pyo.Var(domain=pyo.Integers, bounds=(0, 8))
    m.d = pyo.Param(m.S, mutable=True, initialize=lambda m, s: float(demand[s]))
    m.sold = pyo.Var(m.S, bounds=(0, 8))
    m.short = pyo.Var(m.S, bounds=(0, 8))
    m.penalty = pyo.Var(m.S, bounds=(0, 12))
    m.by_order = pyo.Constraint(m.S, rule=lambda m, s: m.sold[s] <= m.w)
    m.by_demand = pyo.Constraint(m.S, rule=lambda m, s: m.sold[s] <= m.d[s])
    m.shortage = pyo.Constraint(m.S, rule=lambda m, s: m.short[s] >= m.d[s] - m.w)
    m.tiers = pyo.Piecewise(m.S, m.penalty, m.short, pw_pts=[0, 2, 8], f_rule=[0, 1, 12], pw_constr_type="LB",
                            pw_repn="INC")
    terms = [(cost * m.w - price * m.sold[s] + m.penalty[s] + 16) / 32 for s in m.S]
    m.loss = pyo.Objective(expr=_clip_hand(m, terms, n, 0.0, 1.0, (8 + 12 + 16) / 32))
    return m


def staffing_hand(demand, wage=(1.0, 1.0, 1.5), per_staff=4.0):
    n = len(demand)
    m = pyo.ConcreteModel()
    m.D, m.J = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, 2)
    m.w = pyo.Var(m.J, domain=pyo.Integers, bounds=(0, 3))
    m.unmet = pyo.Var(m.D, m.J, bounds=(0, 12))
    m.headcount = pyo.Constraint(expr=sum(m.w[j] for j in m.J) <= 6)
    m.cover = pyo.Constraint(m.D, m.J, rule=lambda m, t, j: m.unmet[t, j] >= float(demand[t][j])
                             - per_staff * m.w[j])
    m.public_cost = pyo.Expression(expr=n * sum(wage[j] * m.w[j] for j in m.J) / 36)
    m.loss = pyo.Objective(expr=m.public_cost + sum(m.unmet[t, j] for t in m.D for j in m.J) / 36)
    return m


# ---------------------------------------------------------------- data

def _data(seed=0):
    rng = np.random.default_rng(seed)
    return dict(
        customers=rng.random((20, 2)), sites=rng.random((5, 2)),
        cost=rng.uniform(0, 1, size=(16, 4)), fixed=np.linspace(1.0, 2.0, 4),
        points=[(x, 0.5 * x + 0.2 + e) for x, e in zip(rng.uniform(0, 1, 20), rng.normal(0, 0.05, 20))],
        returns=np.clip(rng.normal([0.004, 0.002, 0.001], 0.01, size=(30, 3)), -0.05, 0.05),
        X=rng.choice([-1.0, 0.0, 1.0], size=(24, 2)), y=None,
        demand=rng.integers(0, 9, size=15).tolist(),
        shifts=rng.integers(0, 13, size=(12, 3)).tolist(),
    )


_D = _data()
_D["y"] = np.where(_D["X"] @ np.array([1.0, -1.0]) >= 0, 1.0, -1.0)

#: (record version, hand version, the selection keywords beyond the ModelInfo: a grid where the decision
#: is continuous and the grid was not given to RecordModel).
_MODELS = {
    "p-median": (lambda: pmedian_records(_D["customers"], _D["sites"]),
                 lambda: pmedian_hand(_D["customers"], _D["sites"]), {}),
    "facility": (lambda: facility_records(_D["cost"], _D["fixed"]), lambda: facility_hand(_D["cost"], _D["fixed"]),
                 {}),
    "lad": (lambda: lad_records(_D["points"]), lambda: lad_hand(_D["points"]),
            {"grid": [[0, 0.25, 0.5, 0.75, 1], [0, 0.1, 0.2, 0.3]]}),
    "mad": (lambda: mad_records(_D["returns"]), lambda: mad_hand(_D["returns"]),
            {"grid": [0, 0.5, 1]}),
    "svm": (lambda: svm_records(_D["X"], _D["y"]), lambda: svm_hand(_D["X"], _D["y"]),
            {}),
    "newsvendor": (lambda: newsvendor_records(_D["demand"]), lambda: newsvendor_hand(_D["demand"]), {}),
    "staffing": (lambda: staffing_records(_D["shifts"]), lambda: staffing_hand(_D["shifts"]),
                 {}),
}

_PAIRS = [(pmedian_records, pmedian_hand), (facility_records, facility_hand), (lad_records, lad_hand),
          (mad_records, mad_hand), (svm_records, svm_hand), (newsvendor_records, newsvendor_hand),
          (staffing_records, staffing_hand)]


def _lines(fn) -> int:
    """Lines of code of a builder (and of the helpers it calls from this file): its source without
    docstrings, blank lines and comments."""
    src = textwrap.dedent(inspect.getsource(fn))
    docs = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)) and isinstance(node.body, list) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            docs.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    own = sum(1 for k, line in enumerate(src.splitlines(), 1)
              if k not in docs and line.strip() and not line.strip().startswith("#"))
    return own + (_lines(_clip_hand) if "_clip_hand(" in src and fn is not _clip_hand else 0)


@pytest.mark.parametrize("records, hand", _PAIRS, ids=list(_MODELS))
def test_each_model_is_shorter_written_record_by_record(records, hand):
    """The record version takes fewer lines than the hand-written one with the same optimum
    (below); the hand-written p-median of the other tests (tests/_models.py) is longer too."""
    assert _lines(records) < _lines(hand), (_lines(records), _lines(hand))
    assert _lines(pmedian_records) < _lines(pmedian) - 2


def _optimum(m) -> tuple[float, np.ndarray]:
    report = solve(m, "highs")
    assert report.certified_optimal, report
    w = m.component(get_info(m).weights if get_info(m) else "w")
    return report.objective, np.array([pyo.value(v) for v in w.values()])


@pytest.mark.parametrize("name", list(_MODELS))
def test_each_model_solves_to_the_hand_written_optimum(name):
    """The built model is an ordinary Pyomo model (solved by name) with the optimum of the
    model written by hand; a wrong sum, a lost public cost or a wrong clip would change it."""
    require_solver("highs")
    build, by_hand, _ = _MODELS[name]
    value, _ = _optimum(build())
    expected, _ = _optimum(by_hand())
    assert value == pytest.approx(expected, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("name", list(_MODELS))
def test_each_model_releases_by_private_selection(name):
    """Every model is released by the exponential mechanism with its declared ModelInfo alone: no
    weights=, n_samples=, loss_range=, public_constraints= or public_term= repeated."""
    require_solver("highs")
    build, _, kw = _MODELS[name]
    m = build()
    info = get_info(m)
    assert info.record_blocks == "records" and info.n_samples == len(m.records)
    res = privopt.exponential_mechanism(m, method="permute_and_flip", **kw, **_KW)
    assert res.parameters["n_points"] >= 3
    assert res.parameters["record_terms"] in ("clipped", "assumed")


def test_declared_public_part():
    """What the public builder added is declared public (and nothing else)."""
    m = svm_records(_D["X"], _D["y"])
    assert get_info(m).public_constraints == ("w", "a", "abs", "public_cost")
    m = pmedian_records(_D["customers"], _D["sites"])
    assert get_info(m).public_constraints == ("w", "p")


def test_median_by_opdisc_and_svm_by_opdisc():
    """OPDisc on two models built with the API (the decision's grid from the ModelInfo)."""
    require_solver("highs")
    med = privopt.opdisc(median_records(_Y), delta=1e-4, lipschitz=1.0, norm_bound=1.0, **_KW)
    assert med.certified and 0 <= med.weights[0] <= 1
    svm = privopt.opdisc(svm_records(_D["X"], _D["y"]), delta=1e-3, lipschitz=np.sqrt(2),
                         norm_bound=np.sqrt(2), **_KW)
    assert svm.certified and set(svm.weights) <= {-1.0, 0.0, 1.0}


def test_lad_by_opsamp():
    """OPSamp on the LAD model (continuous box, each clipped term 1-Lipschitz in l1 as |x| <= 1)."""
    require_solver("highs")
    with pytest.warns(NoiseDominatesWarning):      # n = 12: the Laplace noise dominates, as it says
        res = privopt.opsamp(lad_records(_D["points"][:12]), delta=1e-3, lipschitz_l1=1.0, n_oracle_calls=2, **_KW)
    assert np.all((0 <= res.weights) & (res.weights <= 1))


# ---------------------------------------------------------------- what the construction refuses

def _med_record(b, w, r):
    b.t = pyo.Var(bounds=(0, 1))
    b.above = pyo.Constraint(expr=b.t >= w - r)
    b.below = pyo.Constraint(expr=b.t >= r - w)
    return b.t


def median_records(y):
    return privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=_med_record, records=list(map(float, y)),
                               loss_range=(0, 1), grid=[g / 10 for g in range(11)])


_Y = np.clip(np.random.default_rng(7).normal(0.4, 0.15, size=25), 0, 1)


def test_a_record_reading_another_records_variable_is_refused():
    def record(b, w, r):
        b.t = pyo.Var(bounds=(0, 1))
        b.above = pyo.Constraint(expr=b.t >= w - r)
        if b.index() > 0:      # the previous record's variable
            b.peek = pyo.Constraint(expr=b.t >= b.parent_component()[b.index() - 1].t)
        return b.t
    with pytest.raises(ModelError, match=r"records\[1\]\.peek .*records\[0\]\.t.*record block records\[0\]"):
        privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=record, records=[0.1, 0.2, 0.3])


def test_a_shared_auxiliary_variable_is_refused():
    """One variable shared by every record's term (made in the decision builder, outside any block)."""
    def decision(m):
        m.shared = pyo.Var(bounds=(0, 1))
        return pyo.Var(bounds=(0, 1))

    def record(b, w, r):
        b.t = pyo.Var(bounds=(0, 1))
        b.above = pyo.Constraint(expr=b.t >= w - r + b.model().shared)
        return b.t
    with pytest.raises(ModelError, match=r"records\[0\]\.above .* variable shared \(outside the record blocks\)"):
        privopt.RecordModel(decision=decision, record=record, records=[0.1, 0.2])


def test_a_record_adding_to_the_model_outside_its_block_is_refused():
    def record(b, w, r):
        b.model().add_component(f"cap{b.index()}", pyo.Constraint(expr=w <= r))
        return w
    with pytest.raises(ModelError, match="cap0 to the model, outside the record's block"):
        privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=record, records=[0.5, 0.7])


def test_a_record_row_on_the_decision_alone_is_refused_even_with_a_zero_coefficient():
    """The leak `Q + 0*h[0] <= 1.2 mean(D)` written inside a record's block: a row that restricts the
    decision with the record's number, a record variable present with coefficient 0."""
    def record(b, q, d):
        b.h = pyo.Var(bounds=(0, 10))
        b.cut = pyo.Constraint(expr=q + 0 * b.h <= 1.2 * d)
        return b.h
    with pytest.raises(ModelError, match=r"records\[0\]\.cut .*coefficient 0"):
        privopt.RecordModel(decision=pyo.Var(domain=pyo.Integers, bounds=(0, 20)), record=record, records=[5, 9])


def test_a_record_changing_the_decisions_bound_or_a_public_row_is_refused():
    """bounds=(0, max(D)) set by the records' builders: refused, the decision's bounds are fixed before."""
    def record(b, q, d):
        q.setub(max(q.ub, d))
        b.h = pyo.Var(bounds=(0, 10))
        b.row = pyo.Constraint(expr=b.h >= d - q)
        return b.h
    with pytest.raises(ModelError, match="changed the decision or the public part"):
        privopt.RecordModel(decision=pyo.Var(domain=pyo.Integers, bounds=(0, 4)), record=record, records=[5, 9])


def test_an_outside_mutable_param_is_refused():
    def decision(m):
        m.level = pyo.Param(mutable=True, initialize=0.0)
        return pyo.Var(bounds=(0, 1))

    def record(b, w, r):
        b.model().level = r                    # the record's value written into a shared Param
        b.t = pyo.Var(bounds=(0, 1))
        b.row = pyo.Constraint(expr=b.t >= w - b.model().level)
        return b.t
    with pytest.raises(ModelError, match=r"records\[0\]\.row .*mutable Param level"):
        privopt.RecordModel(decision=decision, record=record, records=[0.3, 0.4])


def test_the_public_builder_sees_no_record():
    """By construction: the public builder runs before the records are read (a generator of records
    is not advanced yet), is given the model and the decision only, and the model has no records yet."""
    seen = []

    def records():
        seen.append("read")
        yield from (0.2, 0.4, 0.6)

    def public(m, w):
        assert seen == [] and m.component("records") is None
        assert [c.local_name for c in m.component_objects()] == ["w"]
        seen.append("public")
        m.cap = pyo.Constraint(expr=w <= 0.9)

    m = privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), public=public, record=_med_record, records=records())
    assert seen == ["public", "read"] and len(m.records) == 3
    assert inspect.signature(public).parameters.keys() == {"m", "w"}


def test_check_record_blocks_on_a_built_and_a_tampered_model():
    """The check the mechanisms run on a model declaring record_blocks: the count of blocks, and a
    refusal once a row outside the blocks joins two records."""
    m = median_records(_Y)
    assert check_record_blocks(m, list(m.w.values()), "records") == len(_Y)
    m.join = pyo.Constraint(expr=m.records[0].t + m.records[1].t <= 1)
    with pytest.raises(ModelError, match=r"join, outside the record blocks, references records\[0\]\.t"):
        check_record_blocks(m, list(m.w.values()), "records")
    with pytest.raises(ModelError, match="no indexed Block named 'blocks'"):
        check_record_blocks(m, list(m.w.values()), "blocks")


def test_bad_arguments_are_named():
    with pytest.raises(ParameterError, match="clip=True needs loss_range"):
        privopt.RecordModel(decision=pyo.Var(), record=_med_record, records=[0.1], clip=True)
    with pytest.raises(ParameterTypeError, match="decision must be a Pyomo Var"):
        privopt.RecordModel(decision=3, record=_med_record, records=[0.1])
    with pytest.raises(ParameterTypeError, match="returned NoneType"):
        privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=lambda b, w, r: None, records=[0.1])
    with pytest.raises(ModelError, match="no finite upper bound"):
        privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=lambda b, w, r: _unbounded(b, w, r),
                            records=[0.1], loss_range=(0, 1), clip=True)


def _unbounded(b, w, r):
    b.t = pyo.Var(within=pyo.NonNegativeReals)
    b.row = pyo.Constraint(expr=b.t >= w - r)
    return b.t


# ---------------------------------------------------------------- the clipping, against its closed form

@pytest.mark.parametrize("a, b", [(0.0, 1.0), (0.5, 1.5), (-1.0, 0.25)])
def test_clipping_equals_the_closed_form_at_fixed_decisions(a, b):
    """Each record's term t = |w - r| * 3 on [0, 3]: with w fixed, the model's optimum is
    sum_i min(max(t_i, a), b), computed here in Fractions from the records."""
    require_solver("highs")
    recs = [0.0, 0.1, 0.45, 0.8, 1.0]

    def record(blk, w, r):
        blk.t = pyo.Var(bounds=(0, 3))
        blk.up = pyo.Constraint(expr=blk.t >= 3 * (w - r))
        blk.down = pyo.Constraint(expr=blk.t >= 3 * (r - w))
        return blk.t
    m = privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=record, records=recs, loss_range=(a, b),
                            clip=True)
    for w in (0.0, 0.3, 0.55, 1.0):
        m.w.fix(w)
        report = solve(m, "highs")
        fa, fb = Fraction(a), Fraction(b)
        exact = sum(min(max(3 * abs(Fraction(w) - Fraction(r)), fa), fb) for r in recs)
        assert report.objective == pytest.approx(float(exact), abs=1e-7), (w, a, b)
    m.w.unfix()


def test_no_clip_is_added_where_the_bounds_already_hold():
    m = median_records(_Y[:3])
    assert m.records[0].component("clip") is None
    clipped = privopt.RecordModel(decision=pyo.Var(bounds=(0, 1)), record=_med_record, records=[0.2],
                                  loss_range=(0, 0.5), clip=True)
    assert clipped.records[0].component("clip_high") is not None           # t in [0, 1] may exceed 0.5
    assert clipped.records[0].component("clip_low") is None                # t >= 0 = a already


# ---------------------------------------------------------------- the law of a release, exactly

def _pf_probs(u):
    """Permute-and-flip's exact law: a uniformly random order, each w accepted with probability
    q_w = exp(u_w - max u); P(w) = q_w * E[prod over w' before w of (1 - q_w')] summed over the
    position, which for a random order is q_w * mean over subsets S of the others by size."""
    q = np.exp(u - u.max())
    k = len(q)
    out = np.zeros(k)
    for i in range(k):
        others = np.delete(q, i)
        # e_s: elementary symmetric sums of (1 - q_j) over the others; P(i) = q_i sum_s e_s s!(k-1-s)!/k!
        e = np.zeros(k)
        e[0] = 1.0
        for x in 1 - others:
            e[1:] = e[1:] + x * e[:-1]
        weights = np.array([math.factorial(s) * math.factorial(k - 1 - s) for s in range(k)], dtype=float)
        out[i] = q[i] * float(np.sum(e * weights)) / math.factorial(k)
    return out


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_median_release_follows_the_exact_law(method):
    """1,000 releases of the private median built with RecordModel against the law computed from
    the records (chi-square, fixed seed): a wrong sensitivity, a lost record or a wrong sign of the
    objective would be rejected."""
    require_solver("highs")
    y = np.clip(np.random.default_rng(3).normal(0.5, 0.2, size=6), 0, 1)
    grid = [g / 10 for g in range(11)]
    m = median_records(y)
    epsilon = 2.0
    losses = [float(sum(abs(Fraction(g) - Fraction(float(v))) for v in y)) for g in grid]
    u = -epsilon * np.array(losses) / 2.0
    probs = np.exp(u - u.max()) / np.exp(u - u.max()).sum() if method == "exponential" else _pf_probs(u)
    assert probs.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(12345)
    draws = 1000
    out = np.array([privopt.exponential_mechanism(m, epsilon=epsilon, method=method, random_state=rng).weights
                    for _ in range(draws)])
    assert chi_square_pvalue(out, np.array(grid)[:, None], probs) > 1e-3


# ---------------------------------------------------------------- the audit of the clip by construction

def test_audit_passes_the_clip_by_construction_and_flags_the_model_built_without_it():
    """A record 10 times the width, scored where privopt does not read the terms (GLPK through Pyomo):
    the law moves by at most e^eps only because RecordModel clipped the term."""
    require_solver("highs")
    from privopt import audit

    shipped, broken = shipped_and_broken(audit.RecordModelClipTarget, epsilon=1.0, broken={"clip": False})
    assert not shipped.violation
    assert broken.violation and broken.epsilon_lower_bound > 2.0


def test_record_model_clip_target_is_the_mechanism_run_by_run():
    require_solver("highs")
    require_solver("glpk")
    from privopt import audit

    target = audit.RecordModelClipTarget(epsilon=1.0)
    assert [list(lo) for lo in target.losses] == [[0.5, 1.5], [0.5, 0.5]]      # the far term clipped to 1
    res = privopt.exponential_mechanism(target.models[0], epsilon=1.0, solver="glpk", random_state=0)
    assert res.parameters["record_terms"] == "clipped"   # the mechanism reads each term from the solve too
    seeds = list(range(8))
    for which in (0, 1):
        fast = audit.sample_outputs(target, which, len(seeds), seeds=seeds)
        real = audit.sample_outputs(target, which, len(seeds), oracle="solver", seeds=seeds)
        assert np.array_equal(fast, real)

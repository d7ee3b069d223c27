"""Private data must never shape W silently: a constraint on the decision alone (or a
Param bound of the decision) is public only when the user declares it.

The leak this guards against: a return target whose coefficients are the mean returns
of the private days cuts W, so one record changes |W| and the released law."""

from __future__ import annotations

import importlib

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt import audit
from privopt.calibration import selection_noise_scale
from privopt.exceptions import ModelError, ParameterError
from privopt.models import ModelInfo, attach_info, hinge_halfspace, rspm_halfspace, zero_one_halfspace
from privopt.models._contract import check_public_constraints, decision_constraints, param_bounds

from tests.conftest import require_solver
from tests._law import shipped_and_broken

RANGE = (0.0, 0.05)


def _returns(n_days=60, seed=1):
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal([0.004, 0.002, 0.001, 0.003], 0.01, size=(n_days, 4)), -0.05, 0.05)


def portfolio(returns, target=0.0025):
    """Tenths x_j of a budget in four assets; each day's shortfall max(0, -w . r_t) in [0, 0.05];
    a public budget and a return target built from the private mean returns."""
    mean = returns.mean(axis=0)
    m = pyo.ConcreteModel()
    m.T, m.J = pyo.RangeSet(0, len(returns) - 1), pyo.RangeSet(0, returns.shape[1] - 1)
    m.x = pyo.Var(m.J, domain=pyo.Integers, bounds=(0, 4))
    m.short = pyo.Var(m.T, bounds=(0, 0.05))
    m.budget = pyo.Constraint(expr=sum(m.x[j] for j in m.J) == 10)
    m.target = pyo.Constraint(expr=sum(float(mean[j]) * m.x[j] for j in m.J) / 10 >= target)
    m.day = pyo.Constraint(m.T, rule=lambda m, t: m.short[t] >= -sum(
        float(returns[t, j]) * m.x[j] for j in m.J) / 10)
    m.loss = pyo.Objective(expr=sum(m.short[t] for t in m.T))
    return m


def _neighbours():
    r = _returns()
    r2 = r.copy()
    r2[0] = 0.05           # one day replaced
    return r, r2


def _state(m):
    return ([(c.name, c.active) for c in m.component_data_objects(pyo.Constraint)],
            [(v.name, v.value, v.fixed, v.bounds) for v in m.component_data_objects(pyo.Var)])


# --- the leak, and its refusal ------------------------------------------------------

def test_a_data_built_constraint_declared_public_changes_w_with_one_record():
    """What happened before the fix (every decision constraint read as public; now: the data-built
    target declared anyway, by name): one replaced day changes the published |W| and alpha, and
    the released law."""
    require_solver("highs")
    results = [privopt.exponential_mechanism(portfolio(r), weights="x", epsilon=1.0, loss_range=RANGE,
                                             n_samples=60, public_constraints=["budget", "target", "x"],
                                             random_state=0)
               for r in _neighbours()]
    sizes = [res.parameters["n_points"] for res in results]
    assert sizes[0] != sizes[1]
    assert results[0].parameters["alpha"] != results[1].parameters["alpha"]


def test_the_same_model_is_refused_naming_the_constraint_and_both_fixes(monkeypatch):
    plan = importlib.import_module("privopt.mechanisms.selection._plan")   # where a user's W is planned and scored

    def boom(*a, **k):
        raise AssertionError("W was scored before the model's contract was checked")

    monkeypatch.setattr(plan, "FixAndSolveEvaluator", boom)
    m = portfolio(_returns())
    before = _state(m)
    with pytest.raises(ModelError) as err:
        privopt.exponential_mechanism(m, weights="x", epsilon=1.0, loss_range=RANGE, n_samples=60)
    msg = str(err.value)
    assert err.value.parameter == "public_constraints"
    assert "budget" in msg and "target" in msg and "deactivate" in msg and "public_constraints=" in msg
    with pytest.raises(ModelError) as err:   # the budget declared: only the target is named
        privopt.exponential_mechanism(m, weights="x", epsilon=1.0, loss_range=RANGE, n_samples=60,
                                      public_constraints=["budget"])
    assert str(err.value).split(". ")[0] == "model: constraints on the decision alone: target"
    assert _state(m) == before               # nothing of the user's model changed


def test_after_the_fix_w_no_longer_depends_on_the_records():
    require_solver("highs")
    sizes = []
    for r in _neighbours():
        m = portfolio(r)
        m.target.deactivate()
        res = privopt.exponential_mechanism(m, weights="x", epsilon=1.0, loss_range=RANGE, n_samples=60,
                                            public_constraints=["budget", "x"], random_state=0)
        sizes.append(res.parameters["n_points"])
    assert sizes[0] == sizes[1] == 68         # x in {0..4}^4 with sum 10


@pytest.mark.parametrize("mechanism", ["opdisc", "rspm", "opsamp"])
def test_every_mechanism_refuses_an_undeclared_decision_constraint_before_any_noise(monkeypatch, mechanism):
    mod = importlib.import_module(f"privopt.mechanisms.{mechanism}")
    draw = {"opdisc": "draw_opdisc_noise", "rspm": "draw_rspm_noise", "opsamp": "draw_opsamp_noise"}[mechanism]

    def boom(*a, **k):
        raise AssertionError("noise was drawn before the model's contract was checked")

    monkeypatch.setattr(mod, draw, boom)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]])
    y = np.array([1, -1, 1, -1])
    if mechanism == "opdisc":
        m = zero_one_halfspace(X, y, grid=1, norm_bound=1.0)
        run = dict(epsilon=1.0, delta=1e-3)
    elif mechanism == "rspm":
        m = rspm_halfspace(X, y)
        run = dict(epsilon=1.0)
    else:
        m = hinge_halfspace(X, y, x_bound=1.0)
        run = dict(epsilon=1.0, delta=1e-3, n_oracle_calls=2, progress=False)
    # privopt's own model declares its constraints: nothing to refuse up to the noise
    with pytest.raises(AssertionError, match="noise was drawn"):
        getattr(privopt, mechanism)(m, **run)
    # a constraint the user adds, e.g. from the data, must be declared
    m.from_data = pyo.Constraint(expr=m.w[0] >= float(X[:, 0].mean()) - 1)
    with pytest.raises(ModelError, match="from_data") as err:
        getattr(privopt, mechanism)(m, **run)
    assert err.value.parameter == "public_constraints"
    with pytest.raises(AssertionError, match="noise was drawn"):
        getattr(privopt, mechanism)(m, **run, public_constraints=["from_data"])


def test_a_weight_bound_given_by_a_mutable_param_must_be_declared():
    require_solver("highs")
    m = pyo.ConcreteModel()
    m.cap = pyo.Param(mutable=True, initialize=3)            # e.g. computed from the data
    m.w = pyo.Var(domain=pyo.Integers, bounds=(0, m.cap))
    m.y = [0.5, 2.5, 3.0]
    m.t = pyo.Var(range(3), bounds=(0, 4))
    m.up = pyo.Constraint(range(3), rule=lambda m, i: m.t[i] >= m.w - m.y[i])
    m.down = pyo.Constraint(range(3), rule=lambda m, i: m.t[i] >= m.y[i] - m.w)
    m.loss = pyo.Objective(expr=sum(m.t.values()))
    assert [(v.name, side) for v, side in param_bounds([m.w])] == [("w", "upper")]
    with pytest.raises(ModelError, match=r"mutable Params: w\.up"):
        privopt.exponential_mechanism(m, weights="w", epsilon=1.0, loss_range=(0, 4), n_samples=3)
    res = privopt.exponential_mechanism(m, weights="w", epsilon=1.0, loss_range=(0, 4), public_constraints="w",
                                        n_samples=3, random_state=0)
    assert res.parameters["n_points"] == 4


def test_which_constraints_are_decision_constraints_is_read_from_the_structure():
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(-1, 1))
    m.r = pyo.Var(range(2), range(3), domain=pyo.Binary)                 # grid binaries encoding w
    m.one = pyo.Constraint(range(2), rule=lambda m, j: sum(m.r[j, k] for k in range(3)) == 1)
    m.link = pyo.Constraint(range(2), rule=lambda m, j: m.w[j] == sum((k - 1) * m.r[j, k] for k in range(3)))
    m.on_r = pyo.Constraint(expr=0.3 * m.r[0, 2] + 0.7 * m.r[1, 0] <= 0.9)   # data on the encoding
    m.v = pyo.Var(range(3))                                               # per-record, not in the objective
    m.u = pyo.Var(range(3), bounds=(0, None))
    m.score = pyo.Constraint(range(3), rule=lambda m, t: m.v[t] == (t + 1) * m.w[0] - m.w[1])
    m.up = pyo.Constraint(range(3), rule=lambda m, t: m.u[t] >= m.v[t])
    m.down = pyo.Constraint(range(3), rule=lambda m, t: m.u[t] >= -m.v[t])
    m.loss = pyo.Objective(expr=sum(m.u.values()))
    names = {c.parent_component().name for c in decision_constraints(m, list(m.w.values()))}
    assert names == {"one", "link", "on_r"}           # score/up/down are the records' side
    with pytest.raises(ModelError, match="on_r"):
        check_public_constraints(m, list(m.w.values()), ["one", "link"])
    declared = check_public_constraints(m, list(m.w.values()), ["one", "link", "on_r"])
    assert len(declared) == 5


def test_declared_names_must_exist():
    m = portfolio(_returns(10))
    with pytest.raises(ParameterError, match="Did you mean 'budget'") as err:
        privopt.exponential_mechanism(m, weights="x", epsilon=1.0, loss_range=RANGE, public_constraints=["budgte"])
    assert err.value.parameter == "public_constraints"


def test_a_models_info_declares_its_own_constraints():
    m = portfolio(_returns(10))
    m.target.deactivate()
    attach_info(m, ModelInfo(weights="x", loss_range=RANGE, public_constraints=("budget",)))
    assert [c.name for c in check_public_constraints(m, list(m.x.values()), None, privopt.models.get_info(m))] \
        == ["budget"]


# --- a public term of the objective ----------------------------------------------------

def _sites_with_fee(fee):
    rng = np.random.default_rng(4)
    cust, sites = rng.random((10, 2)), rng.random((4, 2))
    dist = np.minimum(1.0, np.linalg.norm(cust[:, None] - sites[None], axis=2))
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, 9), pyo.RangeSet(0, 3)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.assign = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.budget = pyo.Constraint(expr=sum(m.open[j] for j in m.J) == 2)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.assign[i, j] <= m.open[j])
    m.fixed = pyo.Expression(expr=sum(fee[j] * m.open[j] for j in m.J))
    m.cost = pyo.Objective(expr=sum(float(dist[i, j]) * m.assign[i, j] for i in m.I for j in m.J) + m.fixed)
    return m, dist


def test_a_public_term_is_kept_out_of_the_range_check_and_in_the_law():
    require_solver("highs")
    fee = [9.0, 0.0, 4.0, 1.0]                       # public; 9 + 4 = 13 > n b = 10
    m, dist = _sites_with_fee(fee)
    kw = dict(weights="open", epsilon=0.8, loss_range=(0, 1), n_samples=10, public_constraints="budget")
    with pytest.raises(ModelError, match="public_term"):
        privopt.exponential_mechanism(m, random_state=0, **kw)
    subsets = sorted((w for w in np.ndindex(2, 2, 2, 2) if sum(w) == 2), key=lambda w: tuple(reversed(w)))
    L = np.array([dist[:, [j for j in range(4) if w[j]]].min(axis=1).sum() + np.dot(fee, w) for w in subsets])
    for seed in range(6):
        res = privopt.exponential_mechanism(m, random_state=seed, public_term="fixed", **kw)
        g = -np.log(np.random.default_rng(seed).standard_exponential(len(subsets)))
        assert tuple(res.weights) == subsets[int(np.argmax(g - L / selection_noise_scale(0.8, 1.0)))]


def test_a_public_term_must_be_a_decision_only_summand():
    m, _ = _sites_with_fee([1.0, 0.0, 0.0, 0.0])
    kw = dict(weights="open", epsilon=1.0, loss_range=(0, 1), public_constraints="budget")
    with pytest.raises(ParameterError, match="named Expression"):
        privopt.exponential_mechanism(m, public_term="nosuch", **kw)
    m.other = pyo.Expression(expr=m.assign[0, 0])
    with pytest.raises(ModelError, match="not weights"):
        privopt.exponential_mechanism(m, public_term="other", **kw)
    m.unused = pyo.Expression(expr=2 * m.open[0])
    with pytest.raises(ModelError, match="not a summand"):
        privopt.exponential_mechanism(m, public_term="unused", **kw)


# --- the audit -------------------------------------------------------------------------

def test_audit_flags_a_data_constraint_declared_public_and_passes_the_fix():
    require_solver("highs")
    pair = audit.data_constraint_instance()
    shipped, broken = shipped_and_broken(audit.ConstrainedSelectionTarget, pair, epsilon=1.0,
                                         broken={"declare_data_constraint": True})
    assert not shipped.violation
    assert broken.violation and broken.epsilon_lower_bound > 3.0


@pytest.mark.parametrize("declared", [False, True])
def test_constrained_selection_target_is_the_mechanism_run_by_run(declared):
    require_solver("highs")
    target = audit.ConstrainedSelectionTarget(audit.data_constraint_instance(), epsilon=1.0,
                                              declare_data_constraint=declared)
    seeds = list(range(12))
    for which in (0, 1):
        fast = audit.sample_outputs(target, which, len(seeds), seeds=seeds)
        real = audit.sample_outputs(target, which, len(seeds), oracle="solver", seeds=seeds)
        assert np.array_equal(fast, real)

"""What privopt can check of a user's model, it checks: W read from a decision's bounds
only when declared, decision-only costs, records coupled by a row, each record's term
against loss_range.

Each check comes with the leak it closes, shown on two neighbouring data sets (one record
replaced): the published |W|, or the exact released law, differing by more than e^eps."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import ModelError
from privopt.models import _contract

from tests.conftest import require_solver
from tests._law import shipped_and_broken


# --- W read from the decision's bounds ---------------------------------------------------

def _level_model(y):
    """x in {0, ..., hi} with hi = floor(max(y)) computed from the records (the leak);
    each record's term |x - y_t| in [0, 5]."""
    m = pyo.ConcreteModel()
    m.T = pyo.RangeSet(0, len(y) - 1)
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, int(np.floor(max(y)))))   # from the data!
    m.u = pyo.Var(m.T, bounds=(0, 5))
    m.up = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= m.x - float(y[t]))
    m.down = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= float(y[t]) - m.x)
    m.loss = pyo.Objective(expr=sum(m.u[t] for t in m.T))
    return m


def _level_neighbours():
    y = np.array([0.5, 1.2, 3.1, 2.0, 0.3, 1.7])
    y2 = y.copy()
    y2[2] = 4.6                                      # one record replaced
    return y, y2


def test_bounds_from_the_data_change_w_with_one_record_when_read_as_public():
    """The leak: read as public (declared anyway), the bounds give |W| = 4 on one data set
    and 5 on its neighbour, so the published |W| and the released law depend on one record."""
    require_solver("highs")
    sizes = [privopt.exponential_mechanism(_level_model(y), weights="x", epsilon=1.0, loss_range=(0, 5),
                                           n_samples=6, public_constraints="x", random_state=0
                                           ).parameters["n_points"] for y in _level_neighbours()]
    assert sizes == [4, 5]


@pytest.mark.parametrize("mechanism", ["exponential_mechanism", "opdisc"])
def test_bounds_of_the_decision_are_refused_unless_declared(mechanism):
    """Undeclared (the model as the user wrote it, no grid=), the call is refused before any
    work, naming the variable and both fixes; it used to release over the data's W."""
    y, _ = _level_neighbours()
    kw = (dict(loss_range=(0, 5)) if mechanism == "exponential_mechanism"
          else dict(delta=1e-3, lipschitz=1.0, norm_bound=5.0))
    with pytest.raises(ModelError) as err:
        getattr(privopt, mechanism)(_level_model(y), weights="x", epsilon=1.0, n_samples=6, **kw)
    msg = str(err.value)
    assert err.value.parameter == "public_constraints"
    assert "public_constraints=['x']" in msg and "grid=" in msg
    assert "[0, 3]" not in msg      # the bounds are not shown: until declared they may come from the data


def test_a_grid_or_a_binary_domain_needs_no_declaration():
    require_solver("highs")
    y, _ = _level_neighbours()
    res = privopt.exponential_mechanism(_level_model(y), weights="x", epsilon=1.0, loss_range=(0, 5), n_samples=6,
                                        grid=[0, 1, 2], random_state=0)
    assert res.parameters["n_points"] == 3
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(2), domain=pyo.Binary)
    m.c = pyo.Var(range(2), domain=pyo.Binary, bounds=(0, 1))
    assert _contract.bounded_by_own_bounds(list(m.b.values()) + list(m.c.values())) == []


def test_a_bound_written_as_a_number_is_not_a_param_bound():
    """Pyomo's ``x.lower`` of ``Var(domain=NonNegativeIntegers, bounds=(0, 4))`` is the
    expression max(0, 0): it was read as a mutable-Param bound."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 4))
    m.p = pyo.Param(mutable=True, initialize=3)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, m.p))
    m.q = pyo.Param(initialize=2)                    # immutable: folded into a number
    m.z = pyo.Var(domain=pyo.Integers, bounds=(m.q, 2 * m.p))
    assert [(v.name, side) for v, side in _contract.param_bounds([m.x, m.y, m.z])] == [("y", "upper"), ("z", "upper")]
    assert [v.name for v in _contract.bounded_by_own_bounds([m.x, m.y, m.z])] == ["x", "y", "z"]


# --- the exact released law of private selection -----------------------------------------

def _law(model, monkeypatch, **kw):
    """The exact law of ``privopt.exponential_mechanism(model, **kw)`` (the exponential
    mechanism) over W in W's order: the losses the release is drawn from are read where
    the noise is added, and P(w) is proportional to exp(-L(w) / s), s = 2 Delta / eps."""
    import privopt.mechanisms.selection.exponential as sel

    seen = []
    keys = sel.selection_keys

    def spy(losses, noise_scale, method, rng):
        seen.append((np.array(losses, dtype=float), noise_scale))
        return keys(losses, noise_scale, method, rng)

    monkeypatch.setattr(sel, "selection_keys", spy)
    privopt.exponential_mechanism(model, method="exponential", random_state=0, **kw)
    losses = np.concatenate([lo for lo, _ in seen])
    z = -losses / seen[0][1]
    p = np.exp(z - z.max())
    return p / p.sum()


def _log_ratio(p, q) -> float:
    """max over w of |ln p(w) / q(w)|: the privacy loss of one release between the two data sets."""
    return float(np.max(np.abs(np.log(p) - np.log(q))))


# --- a cost on the decision alone ---------------------------------------------------------

def _fee_model(y, *, named=True):
    """x in {0, 1, 2}; each record's term |x / 2 - y_t| in [0, 1]; a "fee" 5 y_0 x on the
    decision alone, computed from the first record (the leak)."""
    m = pyo.ConcreteModel()
    m.T = pyo.RangeSet(0, len(y) - 1)
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 2))
    m.u = pyo.Var(m.T, bounds=(0, 1))
    m.up = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= m.x / 2 - float(y[t]))
    m.down = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= float(y[t]) - m.x / 2)
    fee = 5.0 * float(y[0]) * m.x
    if named:
        m.fee = pyo.Expression(expr=fee)
        m.loss = pyo.Objective(expr=sum(m.u[t] for t in m.T) + m.fee)
    else:
        m.loss = pyo.Objective(expr=sum(m.u[t] for t in m.T) + fee)
    return m


_FEE_DATA = (np.array([0.0, 0.4, 0.6, 0.5, 0.5, 0.6]), np.array([1.0, 0.4, 0.6, 0.5, 0.5, 0.6]))
_FEE_KW = dict(weights="x", epsilon=1.0, loss_range=(0, 1), public_constraints="x", n_samples=6)


def test_a_data_built_cost_declared_public_moves_the_law_beyond_e_eps(monkeypatch):
    """The leak: a cost computed from a record, declared as public_term (or, before, not
    declared at all), moves the released law by more than e^eps between neighbours."""
    require_solver("highs")
    p, q = (_law(_fee_model(y), monkeypatch, public_term="fee", **_FEE_KW) for y in _FEE_DATA)
    assert _log_ratio(p, q) > 2.5                    # eps = 1: 2.88


@pytest.mark.parametrize("named", [True, False])
def test_an_undeclared_cost_on_the_decision_alone_is_refused_naming_it(named):
    with pytest.raises(ModelError) as err:
        privopt.exponential_mechanism(_fee_model(_FEE_DATA[0], named=named), **_FEE_KW)
    msg = str(err.value)
    assert err.value.parameter == "public_term"
    assert "on the decision alone" in msg and "x" in msg and "public_term=" in msg
    with pytest.raises(ModelError, match="on the decision alone"):     # OPDisc reads it too
        privopt.opdisc(_fee_model(_FEE_DATA[0], named=named), weights="x", epsilon=1.0, delta=1e-3, lipschitz=2.0,
                       norm_bound=2.0, public_constraints="x", n_samples=6)


def test_a_declared_public_cost_is_accepted_by_every_channel():
    require_solver("highs")
    m = _fee_model(_FEE_DATA[0])
    res = privopt.exponential_mechanism(m, public_term="fee", random_state=0, **_FEE_KW)
    assert res.parameters["n_points"] == 3
    kw = dict(_FEE_KW, public_constraints=["x", "fee"])
    assert privopt.exponential_mechanism(m, random_state=0, **kw).parameters["n_points"] == 3


def test_a_loss_written_in_the_decision_itself_is_not_a_decision_only_cost():
    """sum_t (x - a_t)^2 / 9: every summand is on the decision alone, and each is a record's
    term; with no record-side variable in the objective nothing can be told apart."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.obj = pyo.Objective(expr=sum((m.x - a) ** 2 for a in [0, 1, 3, 3, 2]) / 9)
    sides = _contract.model_sides(m, [m.x])
    assert _contract.decision_only_terms(m, sides) == []


# --- records coupled by a row ---------------------------------------------------------------

def _min_load_model(q, d):
    """Sites A, B (the decision ``open``, at least one open: public); each customer i
    goes to open sites (sum_j x_ij == 1), its term sum_j d_ij x_ij in [0, 1]; site B, when
    open, must carry a load of at least 1: sum_i q_i x_iB >= open_B, a row over every
    customer's demand (the coupling)."""
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, len(q) - 1), pyo.RangeSet(0, 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.some = pyo.Constraint(expr=m.open[0] + m.open[1] >= 1)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: m.x[i, 0] + m.x[i, 1] == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.open[j])
    m.min_load = pyo.Constraint(expr=sum(float(q[i]) * m.x[i, 1] for i in m.I) >= m.open[1])
    m.cost = pyo.Objective(expr=sum(float(d[i][j]) * m.x[i, j] for i in m.I for j in m.J))
    return m


def _min_load_neighbours():
    """Customer 0 carries B's load on D (demand 1) and none on D' (demand 0); six small
    customers (demand 1/6, at A for free, at B for 1) must then fill B: L(1, 1) moves by 6."""
    small = [(1 / 6, (0.0, 1.0))] * 6
    data = [[(1.0, (1.0, 0.0))] + small, [(0.0, (1.0, 0.0))] + small]
    return [([r[0] for r in rows], [r[1] for r in rows]) for rows in data]


_LOAD_KW = dict(weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=7, public_constraints="some")


def test_a_row_coupling_the_records_moves_the_law_beyond_e_eps_when_not_declared(monkeypatch):
    """The leak: calibrated to the per-record width 1 while one record moves L(1, 1) by 6."""
    require_solver("highs")
    p, q = (_law(_min_load_model(*data), monkeypatch, sensitivity=1.0, **_LOAD_KW)
            for data in _min_load_neighbours())
    assert _log_ratio(p, q) > 2.0                    # eps = 1


def test_a_row_coupling_the_records_is_refused_naming_it():
    m = _min_load_model(*_min_load_neighbours()[0])
    with pytest.raises(ModelError) as err:
        privopt.exponential_mechanism(m, **_LOAD_KW)
    msg = str(err.value)
    assert err.value.parameter == "sensitivity"
    assert "joined by min_load." in msg and "1 independent block(s) for n = 7" in msg and "sensitivity=" in msg


def test_a_declared_sensitivity_calibrates_the_noise_to_the_coupling(monkeypatch):
    require_solver("highs")
    p, q = (_law(_min_load_model(*data), monkeypatch, sensitivity=6.0, **_LOAD_KW)
            for data in _min_load_neighbours())
    assert _log_ratio(p, q) <= 1.0 + 1e-9
    with pytest.raises(privopt.exceptions.ParameterError, match="below the width"):
        privopt.exponential_mechanism(_min_load_model(*_min_load_neighbours()[0]), sensitivity=0.5, **_LOAD_KW)


def _min_load_for(mechanism, declared=False, coupled=True):
    """The min-load model through OPDisc, OPSamp or RSPM (n = 7 known): their guarantees are
    for sums of per-record terms, as private selection's is."""
    from privopt.models import ModelInfo, attach_info

    m = _min_load_model(*_min_load_neighbours()[0])
    if not coupled:
        m.min_load.deactivate()
    kw = dict(weights="open", epsilon=1.0, public_constraints="some", random_state=0)
    if mechanism == "opdisc":
        return lambda: privopt.opdisc(m, delta=1e-3, lipschitz=1.0, norm_bound=1.5, n_samples=7, **kw)
    if mechanism == "opsamp":
        return lambda: privopt.opsamp(m, delta=1e-3, lipschitz_l1=1.0, n_samples=7, n_oracle_calls=2,
                                      progress=False, **kw)
    m.p, m.n = pyo.Var(m.J, domain=pyo.Binary), pyo.Var(m.J, domain=pyo.Binary)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), n_samples=7))
    extra = dict(sensitivity=6.0) if declared else {}
    return lambda: privopt.rspm(m, separator_vars=("p", "n"), **kw, **extra)


@pytest.mark.parametrize("mechanism, parameter", [("opdisc", "model"), ("opsamp", "model"),
                                                  ("rspm", "sensitivity")])
def test_opdisc_opsamp_and_rspm_refuse_a_row_coupling_the_records(mechanism, parameter):
    with pytest.raises(ModelError) as err:
        _min_load_for(mechanism)()
    msg = str(err.value)
    assert err.value.parameter == parameter
    assert "joined by min_load." in msg and "1 independent block(s) for n = 7" in msg
    assert ("sensitivity=" in msg) == (mechanism == "rspm")     # only RSPM's noise takes a declared bound


@pytest.mark.parametrize("mechanism, declared, coupled", [("opdisc", False, False), ("rspm", False, False),
                                                          ("rspm", True, True)])
def test_the_same_model_runs_uncoupled_or_with_rspm_s_declared_sensitivity(mechanism, declared, coupled):
    require_solver("highs")
    result = _min_load_for(mechanism, declared, coupled)()
    assert set(np.asarray(result.weights).tolist()) <= {0.0, 1.0}
    if declared:
        assert result.parameters["sensitivity"] == 6.0


def test_a_p_median_falls_into_one_block_per_customer():
    from tests._models import pmedian

    m, _ = pmedian(6, 30)
    sides = _contract.model_sides(m, list(m.open.values()))
    assert _contract.loss_blocks(sides) == 30
    m.cap = pyo.Constraint(m.J, rule=lambda m, j: sum(m.assign[i, j] for i in m.I) <= 10 * m.open[j])
    sides = _contract.model_sides(m, list(m.open.values()))
    assert _contract.loss_blocks(sides) == 1
    assert {c.parent_component().name for c in _contract.coupling_rows(sides, 30)} == {"cap"}


# --- each record's term against loss_range ----------------------------------------------------

def _sites(dist):
    """Open one of two sites (public: exactly one); each customer's term is its distance to
    the open site, loss_range (0, 1) declared; the model falls apart into one choose-one
    block per customer once ``open`` is fixed (the closed form).  The audit's model."""
    from privopt.audit import sites_model

    return sites_model(dist)


def _far_neighbours(n=60):
    """Customer 0 is 25 (far outside [0, 1]) from site B on D, 0 on D'; the others 0.1 from
    both: every total stays inside [n a, n b] = [0, 60], so the old range check passed."""
    d = np.full((n, 2), 0.1)
    d[0] = (0.0, 25.0)
    d2 = d.copy()
    d2[0] = (0.0, 0.0)
    return d, d2


_SITE_KW = dict(weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=60, public_constraints="one")


def test_a_record_term_outside_loss_range_is_clipped_and_the_law_stays_within_e_eps(monkeypatch):
    """Before: the far customer moved L(B) by 25 at a declared width of 1 (log-ratio about
    11.8 at eps 1), released silently.  Now its term is clipped to 1, the release says so."""
    require_solver("highs")
    p, q = (_law(_sites(d), monkeypatch, **_SITE_KW) for d in _far_neighbours())
    assert _log_ratio(p, q) <= 1.0 + 1e-9
    res = privopt.exponential_mechanism(_sites(_far_neighbours()[0]), random_state=0, keep_report=True, **_SITE_KW)
    assert res.report.engine == "blocks (closed form)"
    assert res.parameters["record_terms"] == "clipped"
    assert "clipped into loss_range" in res.report.record_terms
    # how many terms lay outside depends on the data: the neighbours' reports differ in the wall time only
    other = privopt.exponential_mechanism(_sites(_far_neighbours()[1]), random_state=0, keep_report=True,
                                          **_SITE_KW)
    assert not hasattr(res.report, "terms_clipped")
    assert {k: v for k, v in vars(res.report).items() if k != "wall_time"} == {
        k: v for k, v in vars(other.report).items() if k != "wall_time"}


def test_terms_inside_the_range_are_released_as_before():
    require_solver("highs")
    d = _far_neighbours()[1]
    res = privopt.exponential_mechanism(_sites(d), random_state=3, **_SITE_KW)
    assert res.parameters["record_terms"] == "clipped"


def test_where_the_records_cannot_be_seen_the_release_says_they_are_assumed():
    """On an executor (each worker solves its shard; no solution comes back): the terms are
    not seen, the total is checked against [n a, n b] as before, and the parameters say so."""
    from concurrent.futures import ThreadPoolExecutor

    require_solver("highs")
    y = _level_neighbours()[0]
    with ThreadPoolExecutor(2) as pool:
        res = privopt.exponential_mechanism(_level_model(y), weights="x", epsilon=1.0, loss_range=(0, 5),
                                            n_samples=6, public_constraints="x", random_state=0, executor=pool,
                                            keep_report=True)
    assert res.parameters["record_terms"] == "assumed"
    assert "assumed in loss_range" in res.report.record_terms


# --- the audit ----------------------------------------------------------------------------------

def test_audit_passes_the_clipped_record_term_and_flags_the_variant_without_clip():
    require_solver("highs")
    from privopt import audit

    shipped, broken = shipped_and_broken(audit.RecordClipTarget, epsilon=1.0, broken={"clip": False})
    assert not shipped.violation
    assert broken.violation and broken.epsilon_lower_bound > 2.0


def test_record_clip_target_is_the_mechanism_run_by_run():
    require_solver("highs")
    from privopt import audit

    target = audit.RecordClipTarget(epsilon=1.0)
    # L(A), L(B): customer 0's term 10 at B clipped to 1 on D; 0 on D'; the five others 0.1 each
    assert np.allclose(target.losses[0], [0.5, 1.5]) and np.allclose(target.losses[1], [0.5, 0.5])
    seeds = list(range(12))
    for which in (0, 1):
        fast = audit.sample_outputs(target, which, len(seeds), seeds=seeds)
        real = audit.sample_outputs(target, which, len(seeds), oracle="solver", seeds=seeds)
        assert np.array_equal(fast, real)


# --- messages in the words of the user's model -------------------------------------------------

def test_a_time_limit_refusal_on_a_p_median_speaks_of_its_decision_not_of_features():
    from tests._models import pmedian

    m, _ = pmedian(20, 200)
    with pytest.raises(privopt.exceptions.ParameterError, match="time_limit") as err:
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=200,
                                      public_constraints=["p"], time_limit=1e-4, path="score")
    msg = str(err.value)
    assert "feature" not in msg and "d = " not in msg and "norm_bound" not in msg
    assert "rows and columns" in msg and "decision" in msg


def test_a_bound_not_certified_on_a_users_model_names_its_decision_not_features():
    from types import SimpleNamespace

    from privopt.oracle import SMALLER_USER_MODEL, not_certified_message

    report = SimpleNamespace(objective=1.0, bound=0.0, abs_gap_achieved=1.0, abs_gap=1e-9, solver="highs",
                             termination=SimpleNamespace(name="maxTimeLimit"), wall_time=1.0, time_limit=1.0)
    assert "feature" in not_certified_message(report)                    # privopt's own models
    msg = not_certified_message(report, smaller=SMALLER_USER_MODEL)
    assert "feature" not in msg and "norm_bound" not in msg and "decision" in msg


# --- each record's term against loss_range, on the LP solves -------------------------------------

def _lad_model(c, y):
    """x in {0, 1, 2} (grid=); each record's term |c_t x - y_t| (u_t >= +-(c_t x - y_t)),
    declared in [0, 1]: a LAD regression, one u_t per record, not of the closed form's
    shape (a lower bound on u_t that depends on x), so every point of W is one LP solve."""
    m = pyo.ConcreteModel()
    m.T = pyo.RangeSet(0, len(y) - 1)
    m.x = pyo.Var(bounds=(0, 2))
    m.u = pyo.Var(m.T, domain=pyo.NonNegativeReals)
    m.up = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= float(c[t]) * m.x - float(y[t]))
    m.down = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= float(y[t]) - float(c[t]) * m.x)
    m.loss = pyo.Objective(expr=sum(m.u[t] for t in m.T))
    return m


def _lad_neighbours(n=40):
    """Record 0 is (c, y) = (12.5, 0) on D, its term 12.5 at x = 1 and 25 at x = 2 (far outside [0, 1]), and
    (0, 0) on D'; the others (0.25, 0.25): terms in [0, 0.25], every total inside [0, n]."""
    c, y = np.full(n, 0.25), np.full(n, 0.25)
    c[0], y[0] = 12.5, 0.0
    c2 = c.copy()
    c2[0] = 0.0
    return (c, y), (c2, y.copy())


_LAD_KW = dict(weights="x", grid=[0, 1, 2], epsilon=1.0, loss_range=(0, 1), n_samples=40, public_constraints="x")


def test_a_record_term_outside_loss_range_on_lp_solves_is_clipped(monkeypatch):
    """Before: scored by one LP per point, the far record moved L(2) by 25 at a declared width
    of 1 (log-ratio 7.8 at eps 1), the total inside [n a, n b]: released silently.  Now
    each record's term is read from each solve's solution (one block per record) and clipped."""
    require_solver("highs")
    p, q = (_law(_lad_model(*data), monkeypatch, **_LAD_KW) for data in _lad_neighbours())
    assert _log_ratio(p, q) <= 1.0 + 1e-9
    res = privopt.exponential_mechanism(_lad_model(*_lad_neighbours()[0]), random_state=0, keep_report=True,
                                        **_LAD_KW)
    assert res.report.engine == "highs_fixed" and res.report.solves == 3
    assert res.parameters["record_terms"] == "clipped"
    assert "from each solve's solution" in res.report.record_terms
    # the losses the release was drawn from: each record's term clipped into [0, 1], computed here independently
    c, y = _lad_neighbours()[0]
    clipped = [np.clip(np.abs(c * x - y), 0.0, 1.0).sum() for x in (0, 1, 2)]
    p = np.exp(-(np.array(clipped) - min(clipped)) / 2.0)
    assert np.allclose(_law(_lad_model(c, y), monkeypatch, **_LAD_KW), p / p.sum(), atol=1e-12)


def test_lp_solves_with_terms_inside_the_range_release_the_solved_losses(monkeypatch):
    """Nothing outside: the clipped loss is the solve's objective, point by point."""
    require_solver("highs")
    data = _lad_neighbours()[1]
    import privopt.mechanisms.selection.exponential as sel

    seen = []
    keys = sel.selection_keys
    monkeypatch.setattr(sel, "selection_keys", lambda lo, *a: seen.append(np.array(lo)) or keys(lo, *a))
    res = privopt.exponential_mechanism(_lad_model(*data), random_state=0, **_LAD_KW)
    c, y = data
    exact = [np.abs(c * x - y).sum() for x in (0, 1, 2)]
    assert np.allclose(np.concatenate(seen), exact, atol=1e-9)
    assert res.parameters["record_terms"] == "clipped"


def test_more_blocks_than_records_are_refused_before_any_solve():
    """More objective blocks than records (40 for a declared n = 20): some block is no
    record's, its term cannot be told from a record's, and the model's contract refuses it
    before any solve (it used to release with the terms assumed in the range)."""
    c, y = _lad_neighbours()[1]
    m = _lad_model(c, y)
    with pytest.raises(ModelError, match="40 independent blocks for n = 20") as err:
        privopt.exponential_mechanism(m, random_state=0, **dict(_LAD_KW, n_samples=20))
    assert err.value.parameter == "model"


# --- public_constraints="all" ---------------------------------------------------------------------

def _cardinality_model(d):
    """Open sites (8 binaries); at most k open, with k computed from the records (the leak:
    k = number of customers farther than 0.5 from site 0, capped at 3); each customer's term
    its distance to the nearest open site, in [0, 1]."""
    d = np.asarray(d, dtype=float)
    k = int(min(3, np.count_nonzero(d[:, 0] > 0.5)))               # from the data!
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, len(d) - 1), pyo.RangeSet(0, d.shape[1] - 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.some = pyo.Constraint(expr=sum(m.open[j] for j in m.J) >= 1)
    m.card = pyo.Constraint(expr=sum(m.open[j] for j in m.J) <= k)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.open[j])
    m.cost = pyo.Objective(expr=sum(float(d[i, j]) * m.x[i, j] for i in m.I for j in m.J))
    return m


def _cardinality_neighbours():
    rng = np.random.default_rng(5)
    d = rng.uniform(0.0, 0.4, size=(12, 8))
    d[:2, 0] = 0.9                                   # two customers far from site 0: k = 2
    d2 = d.copy()
    d2[2, 0] = 0.9                                   # one more on the neighbour: k = 3
    return d, d2


def test_a_data_built_cardinality_declared_public_changes_w_with_one_record():
    """The leak "all" used to let through silently: |W| 36 on one data set, 92 on its neighbour."""
    require_solver("highs")
    sizes = [privopt.exponential_mechanism(_cardinality_model(d), weights="open", epsilon=1.0, loss_range=(0, 1),
                                           n_samples=12, public_constraints=["some", "card"], random_state=0
                                           ).parameters["n_points"] for d in _cardinality_neighbours()]
    assert sizes == [36, 92]


@pytest.mark.parametrize("mechanism", ["exponential_mechanism", "opdisc"])
def test_public_constraints_all_declares_nothing_and_names_each_component(mechanism):
    """"all" is refused before any work, naming every component it would have declared, so
    that the data-built cardinality is declared (or not) by its name."""
    kw = (dict(loss_range=(0, 1)) if mechanism == "exponential_mechanism"
          else dict(delta=1e-3, lipschitz=1.0, norm_bound=3.0))
    with pytest.raises(ModelError) as err:
        getattr(privopt, mechanism)(_cardinality_model(_cardinality_neighbours()[0]), weights="open", epsilon=1.0,
                                    n_samples=12, public_constraints="all", **kw)
    msg = str(err.value)
    assert err.value.parameter == "public_constraints"
    assert "public_constraints='all' declares nothing" in msg and "public_constraints=['some', 'card']" in msg


def test_all_names_the_decision_bounds_with_the_constraints():
    """One refusal lists every component "all" would have covered: constraints and bounds."""
    y, _ = _level_neighbours()
    m = _level_model(y)
    m.cap = pyo.Constraint(expr=m.x <= 3)
    with pytest.raises(ModelError) as err:
        privopt.exponential_mechanism(m, weights="x", epsilon=1.0, loss_range=(0, 5), n_samples=6,
                                      public_constraints="all")
    assert "public_constraints=['cap', 'x']" in str(err.value)


# --- a loss whose records are not separable: the mean absolute deviation ---------------------

def _mad_model(r, *, mean_as_variable):
    """MO-book's MAD portfolio, small: weights w_j (tenths, grid=), each day's |w . (r_t - mean)|
    split as u_t - v_t.  ``mean_as_variable``: the portfolio's mean return is a variable of the
    model, mu == w . mean(r) (a row over the decision), and each day's row uses it; else the
    mean is folded into each day's numbers (as MO-book writes it)."""
    r = np.asarray(r, dtype=float)
    mean = r.mean(axis=0)
    m = pyo.ConcreteModel()
    m.T, m.J = pyo.RangeSet(0, len(r) - 1), pyo.RangeSet(0, r.shape[1] - 1)
    m.w = pyo.Var(m.J, bounds=(0, 1))
    m.u = pyo.Var(m.T, domain=pyo.NonNegativeReals)
    m.v = pyo.Var(m.T, domain=pyo.NonNegativeReals)
    m.budget = pyo.Constraint(expr=sum(m.w[j] for j in m.J) == 1)
    if mean_as_variable:
        m.mu = pyo.Var()
        m.mean_return = pyo.Constraint(expr=m.mu == sum(float(mean[j]) * m.w[j] for j in m.J))
        m.day = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] - m.v[t] == sum(
            float(r[t, j]) * m.w[j] for j in m.J) - m.mu)
    else:
        m.day = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] - m.v[t] == sum(
            float(r[t, j] - mean[j]) * m.w[j] for j in m.J))
    m.mad = pyo.Objective(expr=sum(m.u[t] + m.v[t] for t in m.T))
    return m


def test_a_mad_with_the_mean_as_a_variable_is_refused_as_coupled():
    """The mean joins every day's row: one block for n records, refused naming the rows."""
    r = np.random.default_rng(2).uniform(-0.05, 0.05, size=(20, 3))
    with pytest.raises(ModelError) as err:
        privopt.exponential_mechanism(_mad_model(r, mean_as_variable=True), weights="w", grid=[0, 0.5, 1],
                                      epsilon=1.0, loss_range=(0, 0.1), n_samples=20,
                                      public_constraints=["budget", "w"])
    msg = str(err.value)
    assert err.value.parameter == "sensitivity" and "1 independent block(s) for n = 20" in msg and "day" in msg


def test_per_record_terms_that_do_not_add_up_to_the_solve_release_nothing(monkeypatch):
    """The blocks' parts are checked against each solve's objective before any is clipped."""
    require_solver("highs")
    from privopt.exceptions import NotCertifiedError
    from privopt.solvers import RecordBlocks

    values = RecordBlocks.values
    monkeypatch.setattr(RecordBlocks, "values", lambda self, x: values(self, x) + 0.01)
    with pytest.raises(NotCertifiedError, match="add up to"):
        privopt.exponential_mechanism(_lad_model(*_lad_neighbours()[1]), random_state=0, **_LAD_KW)

"""A catalogue of models written by hand that leak the records in ways a check must see, each
run on every mechanism it applies to (private selection, OPDisc, OPSamp, RSPM): refused or
handled by the one contract (:func:`privopt.models.check_model_contract`), never released
silently; and the honest version of each still released.

The kinds: a decision's bounds computed from the data; a data-built row that names a record's
variable with coefficient 0; records coupled by a row with n not given; a variable shared by
the records' terms (n + 1 blocks); a data-built cost of the decision through an auxiliary
variable; a record's term beyond loss_range; and refusals whose text carried a value of the
data."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import ModelError, NotCertifiedError, ParameterError
from privopt.models import ModelInfo, attach_info, check_model_contract

from tests.conftest import require_solver

#: Demands of the records, in [0, 4]; each record's term |Q - D_i| / 4 lies in [0, 1] on Q in [0, 4].
DEMAND = np.array([0.5, 1.25, 2.0, 2.75, 3.5, 1.75])
N = len(DEMAND)
RANGE = (0.0, 1.0)


def newsvendor(demand=DEMAND, *, continuous=False, upper=4.0, extra=None):
    """Order Q (integer, or continuous for OPSamp) in [0, upper]; record i's term
    |Q - D_i| / 4 through its own h_i >= +-(Q - D_i); ``extra`` adds one leak by name."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, len(demand) - 1)
    m.Q = pyo.Var(domain=pyo.Reals if continuous else pyo.Integers, bounds=(0, upper))
    m.h = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.over = pyo.Constraint(m.I, rule=lambda m, i: m.h[i] >= m.Q - float(demand[i]))
    m.under = pyo.Constraint(m.I, rule=lambda m, i: m.h[i] >= float(demand[i]) - m.Q)
    cost = sum(0.25 * m.h[i] for i in m.I)
    mean = float(np.mean(demand))
    if extra == "zero_row":          # a row built from the data, a record's variable in it with coefficient 0
        m.cut = pyo.Constraint(expr=m.Q + 0 * m.h[0] <= 1.2 * mean)
    elif extra == "coupled":         # a capacity shared by the records' terms
        m.cap = pyo.Constraint(expr=sum(m.h[i] for i in m.I) <= 100)
    elif extra == "shared":          # one variable shared by every record's term: n + 1 blocks
        m.s = pyo.Var(bounds=(0, 1))
        m.s_row = pyo.Constraint(expr=m.s >= 0.25 * m.Q - 0.5)
        cost = cost + m.s
    elif extra in ("cost_aux", "cost_aux_declared"):   # a cost of the decision built from the data, through f
        m.f = pyo.Var(domain=pyo.NonNegativeReals)
        m.f_row = pyo.Constraint(expr=m.f >= mean * m.Q / 4)
        if extra == "cost_aux_declared":
            m.fixed_cost = pyo.Expression(expr=m.f)
            cost = cost + m.fixed_cost
        else:
            cost = cost + m.f
    m.loss = pyo.Objective(expr=cost)
    return m


def rspm_model(y, *, extra=None):
    """w in {-1, 0, 1} (w = p - n, binaries), record i's term |w - y_i| / 2 in [0, 1] for y_i in
    {-1, 0, 1}, through its own h_i."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, len(y) - 1)
    m.w = pyo.Var(domain=pyo.Integers, bounds=(-1, 1))
    m.pp = pyo.Var(domain=pyo.Binary)
    m.nn = pyo.Var(domain=pyo.Binary)
    m.link = pyo.Constraint(expr=m.w == m.pp - m.nn)
    m.excl = pyo.Constraint(expr=m.pp + m.nn <= 1)
    m.h = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.up = pyo.Constraint(m.I, rule=lambda m, i: m.h[i] >= m.w - float(y[i]))
    m.down = pyo.Constraint(m.I, rule=lambda m, i: m.h[i] >= float(y[i]) - m.w)
    cost = sum(0.5 * m.h[i] for i in m.I)
    if extra == "zero_row":
        m.cut = pyo.Constraint(expr=m.w + 0 * m.h[0] <= float(np.mean(y)))
    elif extra == "shared":
        m.s = pyo.Var(bounds=(0, 1))
        m.s_row = pyo.Constraint(expr=m.s >= 0.5 * m.w)
        cost = cost + m.s
    m.loss = pyo.Objective(expr=cost)
    return m


Y = np.array([1, 0, -1, 1, 1, 0], dtype=float)
_RSPM_PUBLIC = ["link", "excl", "w"]


def _run(mechanism, model, **extra):
    """One release of ``mechanism`` on a newsvendor-shaped ``model`` (Q declared public unless
    ``extra`` says otherwise), with the keywords each needs."""
    kw = dict(epsilon=1.0, random_state=0)
    kw.update(extra)
    kw.setdefault("public_constraints", "Q")
    if mechanism == "selection":
        kw.setdefault("loss_range", RANGE)
        return privopt.exponential_mechanism(model, weights="Q", **kw)
    if mechanism == "opdisc":
        kw.setdefault("loss_range", RANGE)
        return privopt.opdisc(model, weights="Q", delta=1e-3, norm_bound=4.0, **kw)
    if mechanism == "opsamp":
        kw.setdefault("loss_range", RANGE)
        return privopt.opsamp(model, weights="Q", delta=1e-3, lipschitz_l1=0.25, n_oracle_calls=4, progress=False,
                              **kw)
    kw["public_constraints"] = _RSPM_PUBLIC if kw["public_constraints"] == "Q" else kw["public_constraints"]
    kw.setdefault("loss_range", RANGE)
    return privopt.rspm(model, separator_vars=("pp", "nn"), **kw)


def _model(mechanism, demand=DEMAND, **kw):
    return newsvendor(demand, continuous=mechanism == "opsamp", **kw)


_NEWSVENDOR = ["selection", "opdisc", "opsamp"]


# --- the honest versions are released --------------------------------------------------------

@pytest.mark.parametrize("mechanism", _NEWSVENDOR)
def test_the_honest_newsvendor_is_released_on_every_mechanism(mechanism):
    require_solver("highs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _run(mechanism, _model(mechanism), n_samples=N)
    assert 0.0 <= float(res.weights[0]) <= 4.0


def test_the_honest_rspm_model_is_released():
    require_solver("highs")
    res = privopt.rspm(rspm_model(Y), separator_vars=("pp", "nn"), epsilon=1.0, loss_range=RANGE, n_samples=N,
                       public_constraints=_RSPM_PUBLIC, random_state=0)
    assert float(res.weights[0]) in (-1.0, 0.0, 1.0) and res.parameters["n_samples"] == N


def test_the_honest_cost_through_a_declared_variable_is_released():
    """An auxiliary variable tied to the decision, declared by name (it joins the decision),
    its row and its cost declared too: released (the declaration is the user's word that
    their numbers were fixed before the data)."""
    require_solver("highs")
    res = _run("selection", _model("selection", extra="cost_aux_declared"), n_samples=N,
               public_constraints=["Q", "f", "f_row", "fixed_cost"])
    assert res.parameters["n_points"] == 5


# --- 1. a decision's bounds computed from the data ----------------------------------------

@pytest.mark.parametrize("mechanism", _NEWSVENDOR)
def test_bounds_from_the_data_are_refused_on_every_mechanism_without_their_value(mechanism):
    """Q in [0, max(D)]: OPSamp used to release over that box and print D_inf = max(D)."""
    upper = float(DEMAND.max())
    with pytest.raises(ModelError) as err:
        _run(mechanism, _model(mechanism, upper=upper), n_samples=N, public_constraints=None)
    msg = str(err.value)
    assert err.value.parameter == "public_constraints" and "public_constraints=['Q']" in msg
    assert f"{upper:g}" not in msg


# --- 2. a data-built row naming a record's variable with coefficient 0 ----------------------

@pytest.mark.parametrize("mechanism", _NEWSVENDOR + ["rspm"])
def test_a_zero_coefficient_does_not_make_a_row_a_records_row(mechanism):
    model = rspm_model(Y, extra="zero_row") if mechanism == "rspm" else _model(mechanism, extra="zero_row")
    with pytest.raises(ModelError, match="constraints on the decision alone: cut") as err:
        _run(mechanism, model, n_samples=N)
    assert err.value.parameter == "public_constraints"
    assert f"{1.2 * DEMAND.mean():g}" not in str(err.value)


# --- 3. records coupled by a row, n not given -----------------------------------------------

@pytest.mark.parametrize("mechanism", _NEWSVENDOR + ["rspm"])
def test_n_is_required_naming_both_ways_to_give_it(mechanism):
    model = rspm_model(Y) if mechanism == "rspm" else _model(mechanism, extra="coupled")
    with pytest.raises(ParameterError, match=r"n_samples=n.*ModelInfo\(n_samples=n") as err:
        _run(mechanism, model)
    assert err.value.parameter == "n_samples"


@pytest.mark.parametrize("mechanism", _NEWSVENDOR)
def test_records_coupled_by_a_row_are_refused_once_n_is_known(mechanism):
    with pytest.raises(ModelError, match="joined by cap") as err:
        _run(mechanism, _model(mechanism, extra="coupled"), n_samples=N)
    assert f"1 independent block(s) for n = {N}" in str(err.value)


def test_n_from_the_models_info_is_enough():
    require_solver("highs")
    m = _model("selection")
    attach_info(m, ModelInfo(n_samples=N, loss_range=RANGE))
    res = privopt.exponential_mechanism(m, weights="Q", epsilon=1.0, public_constraints="Q", random_state=0)
    assert res.parameters["n_samples"] == N


# --- 4. a variable shared by the records' terms: n + 1 blocks ---------------------------------

@pytest.mark.parametrize("mechanism", _NEWSVENDOR + ["rspm"])
def test_n_plus_one_blocks_are_refused_on_every_mechanism(mechanism):
    model = rspm_model(Y, extra="shared") if mechanism == "rspm" else _model(mechanism, extra="shared")
    with pytest.raises(ModelError, match=f"{N + 1} independent blocks for n = {N} records") as err:
        _run(mechanism, model, n_samples=N)
    assert err.value.parameter == "model"


# --- 5. a data-built cost of the decision through an auxiliary variable -----------------------

@pytest.mark.parametrize("mechanism", _NEWSVENDOR)
def test_a_cost_through_an_auxiliary_variable_is_refused_on_every_mechanism(mechanism):
    """``f >= mean(D) * Q / 4``, objective ``+ f``: used to be released on every mechanism."""
    with pytest.raises(ModelError, match="no record's: an auxiliary variable tied to the decision") as err:
        _run(mechanism, _model(mechanism, extra="cost_aux"), n_samples=N)
    assert f"{DEMAND.mean() / 4:g}" not in str(err.value)


def test_declaring_the_variable_asks_for_its_row_and_its_cost():
    """Declared part of the decision, f's row is a constraint of the decision and its cost a
    term on the decision: each must be declared too, by name."""
    m = _model("selection", extra="cost_aux")
    with pytest.raises(ModelError, match="constraints on the decision alone: f_row"):
        _run("selection", m, n_samples=N, public_constraints=["Q", "f"])
    with pytest.raises(ModelError, match="on the decision alone.*a term in f"):
        _run("selection", m, n_samples=N, public_constraints=["Q", "f", "f_row"])


# --- 6. a record's term beyond loss_range --------------------------------------------------------

FAR = np.append(DEMAND[:-1], 40.0)      # record N-1's term |Q - 40| / 4 is about 9-10, far beyond [0, 1]


@pytest.mark.parametrize("mechanism", ["opdisc", "opsamp"])
def test_a_record_term_beyond_loss_range_is_refused_before_release(mechanism):
    """OPDisc and OPSamp used to release with it silently; now the term at each point they
    computed is checked, and the call refused with no value of the data in the message."""
    require_solver("highs")
    with pytest.raises(ModelError, match=r"outside loss_range = \(0, 1\)") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _run(mechanism, _model(mechanism, FAR), n_samples=N)
    msg = str(err.value)
    assert err.value.parameter == "model" and "40" not in msg and "No value of the data" in msg


def test_a_record_term_beyond_loss_range_is_refused_by_rspm():
    require_solver("highs")
    y = np.append(Y[:-1], 5.0)             # |w - 5| / 2 >= 2
    with pytest.raises(ModelError, match=r"outside loss_range = \(0, 1\)"):
        _run("rspm", rspm_model(y), n_samples=N)
    # with only a sensitivity declared: the terms at the answer must lie within a width of Delta
    with pytest.raises(ModelError, match="by more than sensitivity = 1"):
        privopt.rspm(rspm_model(y), separator_vars=("pp", "nn"), epsilon=1.0, sensitivity=1.0, n_samples=N,
                     public_constraints=_RSPM_PUBLIC, random_state=0)


def test_selection_clips_the_same_term():
    require_solver("highs")
    res = _run("selection", _model("selection", FAR), n_samples=N)
    assert res.parameters["record_terms"] == "clipped" and res.report.terms_clipped > 0


def test_selection_through_pyomo_clips_the_same_term_and_scores_as_highs():
    """A solver through Pyomo reads each record's term from the solved copy (the same
    finder) and clips it: the released law is HiGHS's, point by point."""
    require_solver("highs")
    require_solver("glpk")
    import privopt.mechanisms.selection.exponential as sel

    laws = []
    for solver in ("highs", "glpk"):
        seen: list = []
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sel, "selection_keys",
                       lambda lo, *a, seen=seen, keys=sel.selection_keys: seen.append(np.array(lo)) or keys(lo, *a))
            res = _run("selection", _model("selection", FAR), n_samples=N, solver=solver)
        assert res.parameters["record_terms"] == "clipped" and res.report.terms_clipped == 5
        laws.append(np.concatenate(seen))
    np.testing.assert_allclose(laws[0], laws[1], atol=1e-7)


# --- 7. refusals whose text carried a value of the data ----------------------------------------

def test_an_infeasible_point_is_not_named():
    """Used to say "infeasible at w = 4"."""
    require_solver("highs")
    m = _model("selection")
    m.h[0].setub(3.0)                      # D_0 = 0.5: at Q = 4, h_0 >= 3.5 is infeasible
    with pytest.raises(NotCertifiedError) as err:
        _run("selection", m, n_samples=N)
    msg = str(err.value)
    assert "w = " not in msg and "[4" not in msg and "a point of W" in msg


@pytest.mark.parametrize("mechanism", ["selection", "opdisc"])
def test_with_a_grid_the_bounds_are_not_read(mechanism):
    """Used to refuse "grid values [0, 5] ... outside its bounds (0, 3.5)", a refusal and a
    text that depended on bounds computed from the data.  With grid=, W is the grid: the
    decision's own bounds are never read (OPDisc relaxes them on its clone), so bounds from
    the data can neither cut W nor refuse the call."""
    require_solver("highs")
    grid = [0, 1, 2, 3, 4, 5]
    far = np.append(DEMAND[:-1], 5.0)          # Q = 5 is then the best order for record 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _run(mechanism, _model(mechanism, far / 1.25, upper=3.5), n_samples=N, grid=grid,
                   public_constraints=None, loss_range=(0, 1.25))
    assert float(res.weights[0]) in grid
    if mechanism == "selection":
        assert res.parameters["n_points"] == 6


def test_the_bounded_path_does_not_print_the_loss():
    """Used to say "its objective at w = [1.0] is 28.2418, outside [n a, n b]"."""
    require_solver("highs")
    far = np.append(DEMAND[:-1], 400.0)
    with pytest.raises(ModelError, match=r"outside \[n a, n b\]") as err:
        _run("selection", _model("selection", far), n_samples=N, path="bounded")
    msg = str(err.value)
    assert "w = " not in msg and "at a point of W" in msg
    assert not any(f"{abs(q - 400) / 4:g}" in msg for q in range(5))


def test_an_uncertified_solve_does_not_print_its_objective():
    from privopt.oracle import not_certified_message

    report = SimpleNamespace(objective=28.2418, bound=27.1, abs_gap_achieved=1.1418, abs_gap=1e-6,
                             solver="highs", termination=SimpleNamespace(name="maxTimeLimit"), wall_time=3.7,
                             time_limit=5.0)
    msg = not_certified_message(report)
    assert "28.2" not in msg and "27.1" not in msg and "1.14" not in msg and "3.7" not in msg
    report.termination = SimpleNamespace(name="convergenceCriteriaSatisfied")
    report.abs_gap_achieved = 2e-6
    msg = not_certified_message(report)
    assert "28.2" not in msg and "2e-06" not in msg and "abs_gap" in msg


# --- the one finder, and models built record by record ------------------------------------------

def test_the_contract_counts_the_blocks_once_for_every_mechanism():
    m = _model("selection")
    contract = check_model_contract(m, [m.Q], "Q", None, "test", n_samples=N)
    assert contract.split.n_blocks == N and contract.n_records == N
    assert [len(g) for g in contract.split.variables] == [1] * N
    assert {c.name for c in contract.public_constraints} == set()


def _by_blocks(demand, *, foreign=False):
    """A model built record by record: block i holds record i's variable, rows and term."""
    m = pyo.ConcreteModel()
    m.Q = pyo.Var(domain=pyo.Integers, bounds=(0, 4))
    m.other = pyo.Var(domain=pyo.NonNegativeReals)
    m.rec = pyo.Block(range(len(demand)))
    for i, b in m.rec.items():
        b.h = pyo.Var(domain=pyo.NonNegativeReals)
        b.over = pyo.Constraint(expr=b.h >= m.Q - float(demand[i]) + (m.other if foreign and i == 0 else 0))
        b.under = pyo.Constraint(expr=b.h >= float(demand[i]) - m.Q)
    m.loss = pyo.Objective(expr=sum(0.25 * b.h for b in m.rec.values()))
    attach_info(m, ModelInfo(weights="Q", n_samples=len(demand), loss_range=RANGE, record_blocks="rec"))
    return m


def test_a_model_built_record_by_record_needs_no_declaration():
    """Outside its record blocks everything is public by construction: the bounds of Q are
    not asked for; the blocks are counted against n and must touch only their own variables
    and the decision."""
    require_solver("highs")
    res = privopt.exponential_mechanism(_by_blocks(DEMAND), epsilon=1.0, random_state=0)
    assert res.parameters["n_points"] == 5 and res.parameters["record_terms"] == "clipped"
    with pytest.raises(ModelError, match="references the variable other"):
        privopt.exponential_mechanism(_by_blocks(DEMAND, foreign=True), epsilon=1.0, random_state=0)
    m = _by_blocks(DEMAND)
    attach_info(m, privopt.models.get_info(m).replace(n_samples=N + 1))
    with pytest.raises(ModelError, match=f"declares {N} record blocks .* for n = {N + 1}"):
        privopt.exponential_mechanism(m, epsilon=1.0, random_state=0)


# --- the audit of the contract's checks ------------------------------------------------------------

@pytest.mark.parametrize("leak", ["bounds", "zero_row", "cost_aux"])
def test_audit_passes_each_check_as_shipped_and_flags_the_leak_released_as_before(leak):
    require_solver("highs")
    from privopt import audit

    shipped = audit.audit(audit.HandModelTarget(epsilon=1.0, leak=leak), n_samples=20_000, random_state=0)
    broken = audit.audit(audit.HandModelTarget(epsilon=1.0, leak=leak, broken=True), n_samples=20_000,
                         random_state=0)
    assert not shipped.violation
    assert broken.violation and broken.epsilon_lower_bound > 3.0     # measured 5.7-6.8 at eps 1


def test_the_hand_model_target_is_the_mechanism_run_by_run():
    require_solver("highs")
    from privopt import audit

    target = audit.HandModelTarget(epsilon=1.0, leak="cost_aux")
    seeds = list(range(10))
    for which in (0, 1):
        fast = audit.sample_outputs(target, which, len(seeds), seeds=seeds)
        real = audit.sample_outputs(target, which, len(seeds), oracle="solver", seeds=seeds)
        assert np.array_equal(fast, real)
    # the leaky models themselves are refused by the mechanism, before any solve
    for leak in ("bounds", "zero_row", "cost_aux"):
        with pytest.raises(ModelError):
            privopt.exponential_mechanism(audit.newsvendor_model(DEMAND, leak), weights="Q", epsilon=1.0,
                                          loss_range=RANGE, n_samples=N)

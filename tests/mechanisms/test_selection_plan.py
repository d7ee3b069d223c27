"""Private selection as plan -> sampler -> release: the plan chosen in one place
(privopt.mechanisms.selection._plan), one sampler interface (privopt.mechanisms.selection._samplers) that the
mechanisms and the audit run alike, and the options as one record."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.audit import BoundedSelectionTarget
from privopt.calibration import selection_noise_scale
from privopt.exceptions import ParameterError
from privopt.mechanisms import BoundedSampler, MixturePart
from privopt.mechanisms.selection import _plan
from privopt.search import PrefixSpace
from privopt.solvers import SolveOptions
from tests._models import tiny_halfspace as _halfspace
from tests._models import tiny_quadratic as _quadratic


def test_the_time_limit_rule_is_one_rule():
    _plan.check_time_limit(5.0, None, "w", "r")          # no limit
    _plan.check_time_limit(5.0, 5.0, "w", "r")           # at the limit: accepted
    _plan.check_time_limit(float("nan"), 1.0, "w", "r")  # no prediction: accepted
    with pytest.raises(ParameterError) as err:
        _plan.check_time_limit(5.5, 5.0, "scoring W takes about 6 s", "Raise time_limit.")
    assert str(err.value) == "time_limit: scoring W takes about 6 s, more than time_limit=5 s. Raise time_limit."
    assert err.value.parameter == "time_limit"


def test_every_path_is_planned_once_and_sampled_once(monkeypatch):
    """exponential_mechanism runs the plan's sampler exactly once, on every path."""
    calls = []
    for cls in (_plan.TopDownSampler, _plan.ScoredSampler, _plan.BoundedSampler):
        original = cls.sample

        def spy(self, *args, _original=original, **kwargs):
            calls.append(type(self).__name__)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "sample", spy)
    privopt.exponential_mechanism(_halfspace(), epsilon=1.0, random_state=0)
    kw = dict(weights="x", epsilon=1.0, loss_range=1, n_samples=5, public_constraints="x", random_state=0)
    privopt.exponential_mechanism(_quadratic(), **kw)
    privopt.exponential_mechanism(_quadratic(), path="bounded", **kw)
    assert calls == ["TopDownSampler", "ScoredSampler", "BoundedSampler"]


def test_the_mixture_plans_each_w_as_the_mechanism_plans_one():
    models = [_halfspace(), _halfspace(grid=2, norm_bound=2.0)]
    res = privopt.mixture_selection(models, epsilon=1.0, random_state=5, keep_report=True)
    for part, model in zip(res.report.parts, models):
        single = privopt.exponential_mechanism(model, epsilon=1.0, random_state=5, keep_report=True)
        assert isinstance(part, MixturePart)
        assert part.path == single.report.path and part.n_points == single.report.n_points
        assert part.predicted_time == pytest.approx(single.report.predicted_time)
        if part.path == "topdown":      # the run's counts, as numbers (not a pair in one field)
            assert isinstance(part.regions_expanded, int) and isinstance(part.points_scored, int)


def test_the_audit_replays_the_mechanisms_bounded_sampler_seed_for_seed():
    """The bounded sampler, run as the audit runs it (the Pyomo oracle's bounds, not
    inflated), releases what exponential_mechanism(path='bounded') releases for each seed."""
    target = BoundedSelectionTarget(epsilon=1.0)
    model = target.models[0]
    scale = selection_noise_scale(1.0, 1.0)
    for seed in range(8):
        sampler = BoundedSampler(PrefixSpace([(0.0, 1.0)] * 2), model, list(model.w.values()))
        replay = sampler.sample(np.random.default_rng(seed), "exponential", scale).point
        released = target.run_mechanism(0, np.random.default_rng(seed))
        np.testing.assert_array_equal(replay, released)


def test_options_as_one_record_or_as_keywords_release_the_same_point():
    kw = dict(weights="x", epsilon=1.0, loss_range=1, n_samples=5, random_state=3)
    a = privopt.exponential_mechanism(_quadratic(), public_constraints="x", time_limit=60.0, **kw)
    b = privopt.exponential_mechanism(_quadratic(), options=SolveOptions(public_constraints=("x",),
                                                                         time_limit=60.0), **kw)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.parameters == b.parameters


def test_an_unknown_keyword_is_refused_naming_it_and_the_closest():
    with pytest.raises(TypeError, match="time_limt.*Did you mean 'time_limit'"):
        privopt.exponential_mechanism(_halfspace(), epsilon=1.0, time_limt=5)
    with pytest.raises(TypeError, match="threads"):
        privopt.mixture_selection([_halfspace(), _halfspace()], epsilon=1.0, threads=2)


def _budget_model():
    """Four binary decisions, at most two chosen (a declared public budget); five records,
    record i's term (c_i . x) / 2 in [0, 1] under the budget."""
    c = np.array([[1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 1]])
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.budget = pyo.Constraint(expr=sum(m.x[j] for j in range(4)) <= 2)
    m.obj = pyo.Objective(expr=sum(float(c[i, j]) * m.x[j] for i in range(5) for j in range(4)) / 2)
    return m


@pytest.mark.parametrize("path", ["auto", "score", "bounded"])
def test_w_of_a_users_model_is_read_and_counted_once(path, monkeypatch):
    """The decision set (the declared constraints as rows, |W| counted through them) is
    built once per release, and the plan, the evaluator and the bounded sampler read it."""
    from privopt.mechanisms.selection import _decision
    from privopt.space import _w as space_w

    calls = {"rows": 0, "count": 0}

    def spy(name, original):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(_decision, "_separable_constraints", spy("rows", _decision._separable_constraints))
    monkeypatch.setattr(space_w, "count_constrained_points", spy("count", space_w.count_constrained_points))
    res = privopt.exponential_mechanism(_budget_model(), weights="x", epsilon=1.0, loss_range=1, n_samples=5,
                                        public_constraints="budget", path=path, random_state=0, keep_report=True)
    assert res.parameters.n_points == 11         # 1 + 4 + 6 subsets of at most two of four
    assert calls == {"rows": 1, "count": 1}
    assert res.report.listing == ("prefixes" if path == "bounded" else "constraints")


def _count_decision_sets(monkeypatch) -> list:
    """Every DecisionSet built from now on (whoever calls decision_set), in a list."""
    from privopt.mechanisms.selection import _decision

    built = []

    class Counted(_decision.DecisionSet):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(_decision, "DecisionSet", Counted)
    return built


@pytest.mark.parametrize("w_given", [dict(public_constraints="x"), dict(grid=[0, 1, 2, 3], public_constraints="x")])
def test_on_the_fix_and_solve_path_w_is_built_once_and_the_evaluator_reads_the_plans(w_given, monkeypatch):
    """One exponential_mechanism run scoring every point of a user's W builds one
    DecisionSet (W from declared bounds, or from a grid given, where no constraint's rows
    are read nor W counted through them), and the evaluator that scores W holds that one."""
    built = _count_decision_sets(monkeypatch)
    evaluators = []
    original = _plan.ScoredSampler.sample

    def spy(self, *args, **kwargs):
        evaluators.append(self.evaluator)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(_plan.ScoredSampler, "sample", spy)
    res = privopt.exponential_mechanism(_quadratic(), weights="x", epsilon=1.0, loss_range=1, n_samples=5,
                                        path="score", random_state=0, keep_report=True, **w_given)
    assert res.report.path == "fix_and_solve" and res.parameters.n_points == 4
    assert len(built) == 1 and len(evaluators) == 1
    assert evaluators[0].decision is built[0]


def test_an_evaluator_built_directly_builds_w_once_as_the_plan_does():
    """A direct FixAndSolveEvaluator(model, w, grids, ...) and one from the plan's
    DecisionSet list the same W; the direct one builds its DecisionSet once."""
    from privopt.mechanisms.selection._decision import decision_set
    from privopt.mechanisms.selection._evaluate import FixAndSolveEvaluator

    m = _budget_model()
    w, grids = list(m.x.values()), [(0.0, 1.0)] * 4
    with pytest.MonkeyPatch.context() as mp:
        built = _count_decision_sets(mp)
        direct = FixAndSolveEvaluator(m, w, grids, public_constraints=[m.budget])
    assert built == [direct.decision] and direct.n_points == 11
    planned = decision_set(w, grids, None, [m.budget])
    from_plan = FixAndSolveEvaluator.from_decision(m, planned)
    assert from_plan.decision is planned
    np.testing.assert_array_equal(from_plan.points, direct.points)


def _zero_one(grid, norm_bound):
    from privopt.models import zero_one_halfspace

    rng = np.random.default_rng(3)
    X = rng.integers(-1, 2, size=(30, 3)).astype(float)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    return zero_one_halfspace(X, y, grid=grid, norm_bound=norm_bound)


@pytest.mark.parametrize("grid, norm_bound, smaller, path", [
    (2, 2.0, None, "topdown"),                                  # one grid with 0: split by support
    (2, 2.0, 1.5, "topdown"),                                   # the selection's own, smaller ball
    ([[-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0, 2.0], [0.0, 1.0]], 2.0, None, "enumerate"),   # a grid per coordinate
])
def test_the_plan_holds_w_as_one_record_and_its_count_is_the_engines(grid, norm_bound, smaller, path):
    """The plan's W is the halfspace data's own record (or the same grids in the selection's
    smaller ball), and |W| counted by that record equals the count of the engine that samples it."""
    from privopt.models import ENUMERATION_ATTR
    from privopt.space import DecisionSpace

    model = _zero_one(grid, norm_bound)
    data = getattr(model, ENUMERATION_ATTR)
    problem = privopt.mechanisms.selection.topdown_problem(data, smaller)
    plan = _plan.plan_halfspace(data, problem, n_public=30, model=model, norm_bound=smaller)
    assert plan.path == path and isinstance(plan.w.space, DecisionSpace)
    if smaller is None:
        assert plan.w.space is data.w and plan.w.norm_bound == data.norm_bound
    else:
        assert plan.w.space.grids is data.w.grids and plan.w.norm_bound == smaller
    assert plan.w.space.size == plan.n_points > 1
    brute = sum(1 for p in np.array(np.meshgrid(*data.grid, indexing="ij")).reshape(len(data.grid), -1).T
                if p @ p <= plan.w.norm_bound ** 2 + 1e-9)
    assert plan.n_points == brute


def test_a_users_w_is_read_into_one_record_that_the_prefix_tree_reads():
    """DecisionSet holds W's record (the declared linear rows; the ball added by W); the
    prefix tree's |W| is the record's count, equal to the brute-force count."""
    from privopt.mechanisms.selection._decision import decision_set

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.budget = pyo.Constraint(expr=sum(m.x[j] for j in range(4)) <= 2)
    grids = [(0.0, 1.0)] * 4
    dec = decision_set(list(m.x.values()), grids, 1.2, [m.budget])
    assert dec.w.constraints.rows == 1 and dec.separable.rows == 2     # the ball is W's row
    assert dec.w.norm_bound == 1.2 and dec.grids == tuple(grids)
    assert dec.count == dec.w.size == dec.space.size(()) == 1 + 4          # ||x|| <= 1.2: at most one 1
    no_ball = decision_set(list(m.x.values()), grids, None, [m.budget])
    assert no_ball.count == no_ball.space.size(()) == 1 + 4 + 6

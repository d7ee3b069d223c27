"""Private selection on a user's own model: what ``time_limit`` bounds, what is predicted
before any solve, and scoring on the caller's executor.

* The bounded path (A* sampling over prefixes): every bounding or scoring solve gets the
  time left as its solver's own limit, a solve stopped by that limit is never used, and a
  run past its deadline raises privopt's time-limit error with nothing released; a
  time_limit that is ample changes nothing.
* Its prediction: a lower bound from public quantities (the regions above any point of W,
  counted from the grids and the declared constraints, each timed from the model's rows
  and columns), checked here against a brute-force walk of the prefix tree; a time_limit
  below it is refused before the model is read.
* The score path on an executor: the same released point for the same seed with
  executor=None, a thread pool, a process pool (and dask's Client when installed)."""

from __future__ import annotations

import functools

import dataclasses
import itertools
import math
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import privopt
import privopt.mechanisms.selection._bounded as bounded
from privopt.exceptions import NotCertifiedError, ParameterError
from privopt.mechanisms.selection._bounded import PyomoBoundOracle, prefix_space
from privopt.search import PrefixSpace
from privopt.solvers import HighsFixedSession
from privopt.space import SeparableConstraints, linear_tables

from tests.conftest import require_solver
from tests._models import pmedian as pmedian_model
from tests.mechanisms.test_bounded_selection import _release, facility_model

pytest.importorskip("highspy", reason="the HiGHS solver (highspy) is needed here")

SOLVERS = ["highs", "glpk", "cbc"]


# --- the HiGHS session's time limit ------------------------------------------------------

def test_the_highs_session_gives_each_run_its_own_time_limit():
    # HiGHS counts its time_limit on a clock that runs over every run of one Highs object:
    # after 0.1 s of earlier runs, a run allowed 0.1 s must still get its 0.1 s
    model, _, _ = facility_model(n_sites=12, n_cust=30, seed=1)
    w = list(model.y.values())
    session = HighsFixedSession.build(model, w, relax_integers=True)
    runs = 0
    while session._h.getRunTime() < 0.1:
        lo = np.zeros(12)
        lo[runs % 12] = 1.0                                   # one site forced open, in turn
        assert session.solve_within(lo, np.ones(12)).certified_optimal
        runs += 1
    report = session.solve_within(np.zeros(12), np.ones(12), 0.1)
    assert report.certified_optimal and report.termination.name == "convergenceCriteriaSatisfied"


def test_a_highs_solve_stopped_by_its_time_limit_is_not_certified():
    model, _, _ = facility_model(n_sites=20, n_cust=200, seed=1, k=6)
    session = HighsFixedSession.build(model, list(model.y.values()), relax_integers=True)
    report = session.solve_within(np.zeros(20), np.ones(20), 1e-7)
    assert report.termination.name == "maxTimeLimit" and not report.certified_optimal


# --- the bounded path: time_limit bounds every solve, nothing released past it -------------

def _oracle(model, solver, deadline, time_limit=1.0):
    w = list(model.y.values())
    oracle = PyomoBoundOracle(model, w, solver=solver, weight_cons=[model.open], public_term=model.fixed,
                              time_limit=time_limit)
    oracle.deadline = deadline
    return oracle


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solve_gets_the_time_left_and_one_stopped_by_it_is_never_used(solver, monkeypatch):
    """Pyomo's path (GLPK, CBC, and HiGHS forced through Pyomo): the time left is passed as
    the solver's own limit (privopt.solvers translates it: GLPK tmlim, CBC sec, HiGHS
    time_limit); a solve that ends on maxTimeLimit raises the time-limit error instead of
    giving a bound or a loss."""
    require_solver(solver)
    monkeypatch.setattr(HighsFixedSession, "build", classmethod(lambda *a, **k: None))   # Pyomo's path
    model, _, _ = facility_model(n_sites=6, n_cust=10, seed=3)
    real = bounded.certified_solve
    limits = []

    def spy(*a, **k):
        limits.append(k["time_limit"])
        return real(*a, **k)

    monkeypatch.setattr(bounded, "certified_solve", spy)
    oracle = _oracle(model, solver, time.perf_counter() + 60.0)
    assert oracle.engine == "pyomo"
    oracle.lower_bound(np.zeros(6), np.ones(6))
    oracle.loss(np.array([1.0, 0, 0, 0, 0, 0]))
    assert len(limits) == 2 and all(0 < t <= 60.0 for t in limits) and limits[1] < limits[0]

    def stopped(*a, **k):   # what a solve cut by its limit returns: maxTimeLimit, not certified
        report = real(*a, **k)
        from pyomo.contrib.solver.common.results import TerminationCondition

        cut = dataclasses.replace(report, termination=TerminationCondition.maxTimeLimit, certified_optimal=False)
        raise NotCertifiedError("Not certified: stopped", cut)

    monkeypatch.setattr(bounded, "certified_solve", stopped)
    oracle = _oracle(model, solver, time.perf_counter() + 60.0)
    with pytest.raises(NotCertifiedError, match="time_limit: 1 s ran out during a solve") as err:
        oracle.lower_bound(np.zeros(6), np.ones(6))
    assert "nothing is released" in str(err.value) and oracle._bounds == {}


def test_an_uncertified_point_and_a_time_limit_on_the_bounded_path_say_no_point_and_no_count(monkeypatch):
    """Which point a solve failed at, and how many regions and points were reached when the
    time ran out, depend on the data: neither is in the message (it used to say "the model
    with the decision fixed at [1.0, 0.0, ...]" and "after 3 region bound(s) and 1 point
    score(s)")."""
    require_solver("highs")
    monkeypatch.setattr(HighsFixedSession, "build", classmethod(lambda *a, **k: None))   # Pyomo's path
    model, _, _ = facility_model(n_sites=6, n_cust=10, seed=3)
    said = []

    def failing(*a, **k):
        said.append(k["what"])
        raise NotCertifiedError("Not certified: stopped", None)

    monkeypatch.setattr(bounded, "certified_solve", failing)
    oracle = _oracle(model, "highs", time.perf_counter() + 60.0)
    with pytest.raises(NotCertifiedError):
        oracle.loss(np.array([1.0, 0, 0, 0, 0, 0]))
    assert said == ["the model with the decision fixed at a point of W"]
    oracle.regions_solved, oracle.points_scored = 3, 1
    text = str(oracle._out_of_time(True))
    assert "3" not in text and "region bound" not in text and "nothing is released" in text


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_solve_ending_past_the_deadline_or_a_deadline_already_past_raises(solver):
    require_solver(solver)
    model, _, _ = facility_model(n_sites=6, n_cust=10, seed=3)
    oracle = _oracle(model, solver, time.perf_counter() - 1.0)        # already past: no solve starts
    with pytest.raises(NotCertifiedError, match="time_limit") as err:
        oracle.lower_bound(np.zeros(6), np.ones(6))
    assert "during a solve" not in str(err.value) and oracle.regions_solved == 0
    oracle = _oracle(model, solver, time.perf_counter() + 1e-6)       # ends after it: not used
    time.sleep(1e-5)
    oracle.deadline = time.perf_counter() + 1e-4
    with pytest.raises(NotCertifiedError, match="time_limit"):
        oracle.loss(np.array([1.0, 0, 0, 0, 0, 0]))
    assert oracle._losses == {}


@pytest.mark.slow
def test_a_long_highs_solve_is_cut_by_its_own_time_limit():
    # the root relaxation of a larger model takes far longer than the time left: HiGHS stops
    # it (the session's time_limit), and the run raises within a fraction of the full solve
    model, _, _ = facility_model(n_sites=30, n_cust=600, seed=2, k=8)
    full = _oracle(model, "highs", None)
    start = time.perf_counter()
    full.lower_bound(np.zeros(30), np.ones(30))
    full_time = time.perf_counter() - start
    oracle = _oracle(model, "highs", None)
    start = time.perf_counter()
    oracle.deadline = start + full_time / 20
    with pytest.raises(NotCertifiedError, match="during a solve"):
        oracle.lower_bound(np.zeros(30), np.ones(30))
    assert time.perf_counter() - start < full_time / 2


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_time_limit_shorter_than_the_run_raises_and_releases_nothing(solver):
    # above the predicted lower bound (so not refused up front), far below the run's work
    require_solver(solver)
    model, _, _ = facility_model(n_sites=20, n_cust=200, seed=1, k=6)
    w = list(model.y.values())
    space, _ = prefix_space([(0.0, 1.0)] * 20, None, [model.open], w)
    predicted, _ = privopt.mechanisms.selection.bounded_lower_bound(space, model, solver)
    limit = 1.5 * predicted
    start = time.perf_counter()
    with pytest.raises(NotCertifiedError, match="time_limit") as err:
        _release(model, path="bounded", random_state=0, time_limit=limit, solver=solver)
    assert "nothing is released" in str(err.value)
    # what cannot be cut: reading the model into HiGHS (before the first solve), Pyomo's writing
    # of the model file for GLPK and CBC, and GLPK's tmlim in whole seconds (at least 1)
    overrun = 1.0 if solver == "highs" else 2.5
    assert time.perf_counter() - start < limit + overrun


@pytest.mark.parametrize("solver", SOLVERS)
def test_an_ample_time_limit_releases_what_no_time_limit_releases(solver):
    require_solver(solver)
    model, _, _ = facility_model(n_sites=6, n_cust=10, seed=3)
    for seed in range(3):
        free = _release(model, path="bounded", random_state=seed, solver=solver)
        timed = _release(model, path="bounded", random_state=seed, solver=solver, time_limit=600.0)
        assert np.array_equal(free.weights, timed.weights)
        assert timed.report.regions_solved == free.report.regions_solved


# --- the bounded path's prediction: a public lower bound ----------------------------------

def _min_ancestors_brute_force(space: PrefixSpace) -> int:
    """The fewest ancestors holding several points over every point of W, by walking every
    path of the prefix tree (sizes from space.size, the thing counted, is trusted here;
    the walk and the minimum are not the method's)."""
    best = math.inf
    for full in itertools.product(*(range(len(g)) for g in space.grids)):
        if space.size(full) != 1:
            continue
        depth = next(t for t in range(space.d + 1) if space.size(full[:t]) == 1)
        boxes = {tuple(map(tuple, space.box(full[:t]))) for t in range(depth)}
        best = min(best, len(boxes))
    return int(best)


def test_the_fewest_region_solves_is_found_exactly_on_small_trees():
    rng = np.random.default_rng(0)
    checked, seen = 0, set()
    while checked < 12:
        d = int(rng.integers(3, 7))
        grids = [tuple(sorted(set(rng.choice([0.0, 1.0, 2.0], size=int(rng.integers(1, 4)))))) for _ in range(d)]
        a = rng.integers(0, 3, size=(1, d)).astype(float)
        top = float(rng.integers(1, 5))
        space = PrefixSpace(grids, SeparableConstraints(linear_tables(grids, a), [-np.inf], [top]))
        if space.size(()) < 2:      # private selection refuses such a W
            continue
        fewest = _min_ancestors_brute_force(space)
        assert space.min_region_solves() == fewest
        # a budget that runs out still gives a bound from below
        assert 1 <= space.min_region_solves(budget=1) <= fewest
        checked, seen = checked + 1, seen | {fewest}
    assert len(seen) >= 3           # the draws reach different depths


def test_the_fewest_region_solves_do_not_depend_on_the_clock(monkeypatch):
    """The count's limits are work, not seconds: a clock that jumps a minute at every reading
    (a loaded machine at its worst) gives the same bound as an idle one, and a work limit
    that runs out still gives a bound from below."""
    grids = [(0.0, 1.0)] * 16
    space = PrefixSpace(grids, SeparableConstraints(linear_tables(grids, [[1.0] * 16]), [8], [8]))
    exact = space.min_region_solves()
    assert exact == 8

    import privopt.search._prefix as prefix_module
    clock = itertools.count(step=60.0)
    monkeypatch.setattr(prefix_module.time, "perf_counter", lambda: next(clock))
    fresh = PrefixSpace(grids, SeparableConstraints(linear_tables(grids, [[1.0] * 16]), [8], [8]))
    assert fresh.min_region_solves() == exact
    assert 1 <= fresh.min_region_solves(work=1) < exact


def test_a_counts_work_is_the_same_counted_now_or_before():
    grids = [(0.0, 1.0, 2.0)] * 6
    cons = SeparableConstraints(linear_tables(grids, [[1.0] * 6]), [-np.inf], [5])
    space = PrefixSpace(grids, cons)
    first = space.count_work((1,))
    assert first > 0 and space.count_work((1,)) == first      # memoized: the same cost again
    counted = privopt.space.count_with_work(space._sub((1,)))
    assert counted.count == space.size((1,)) and first == counted.work + privopt.space.COUNT_STEP_WORK
    # one more coordinate to count costs more; the cost is the steps plus the candidate sums
    assert space.count_work((1,)) > space.count_work((1, 1))


def _two_row_space(d):
    """W = {0..4}^d with two rows (sum <= 2d, weights 1..7 cycling <= 3d): counts that grow fast with d."""
    grids = [tuple(float(v) for v in range(5))] * d
    A = np.array([[1.0] * d, [float(j % 7 + 1) for j in range(d)]])
    return grids, SeparableConstraints(linear_tables(grids, A), [-np.inf, -np.inf], [2.0 * d, 3.0 * d])


def test_a_count_with_a_work_limit_is_the_count_or_cut():
    """A count under a work limit is the unlimited count, at the same cost, when that cost is within
    the limit, and is cut (no count) exactly when the cost would be past it."""
    for d in (3, 8, 20):
        grids, cons = _two_row_space(d)
        full = privopt.space.count_with_work(cons)
        assert full.count is not None and not full.cut
        for limit in (full.work - 1, full.work, full.work + 1, full.work // 2, 0):
            got = privopt.space.count_with_work(cons, max_work=limit)
            if limit >= full.work:
                assert got == full
            else:
                assert got.cut and got.count is None and got.work > limit


def test_the_fewest_region_solves_stop_inside_a_count_with_the_same_bound():
    """The work limit also stops a count under way (one count of a large W can cost a hundred times the
    limit): no more than the limit is counted, and the bound is the one found when the counts were made
    before (their cost counted as theirs), so it is still a function of W alone."""
    grids, cons = _two_row_space(16)
    bounds = []
    for limit in (2_000, 400_000, 2_000_000):
        fresh = PrefixSpace(grids, cons)
        bounds.append(fresh.min_region_solves(work=limit))
        assert sum(fresh._work.values()) <= limit
        assert fresh.min_region_solves(work=limit) == bounds[-1]      # again, on the memo it left
        counted_before = PrefixSpace(grids, cons)
        for k in range(5):
            counted_before.size((k,))
        assert counted_before.min_region_solves(work=limit) == bounds[-1]
    assert bounds == sorted(bounds) and len(set(bounds)) == 3       # the limits reach different depths


def test_choose_k_needs_at_least_min_k_d_minus_k_region_solves():
    grids = [(0.0, 1.0)] * 12
    for k in (1, 3, 6, 9):
        space = PrefixSpace(grids, SeparableConstraints(linear_tables(grids, [[1.0] * 12]), [k], [k]))
        assert space.min_region_solves() == min(k, 12 - k)


@pytest.mark.parametrize("solver", ["highs", "glpk"])
def test_the_prediction_is_reported_and_never_above_the_work_done(solver):
    require_solver(solver)
    model, _, _ = facility_model(n_sites=10, n_cust=20, seed=2, k=4)
    w = list(model.y.values())
    space, _ = prefix_space([(0.0, 1.0)] * 10, None, [model.open], w)
    fewest = space.min_region_solves()
    assert fewest == 4
    predicted, _ = privopt.mechanisms.selection.bounded_lower_bound(space, model, solver)
    for seed in range(4):
        rep = _release(model, path="bounded", random_state=seed, solver=solver).report
        assert rep.predicted_time == pytest.approx(predicted)
        assert rep.regions_solved >= fewest and rep.points_scored >= 1
    # a larger model (more rows and columns): a larger prediction, from its size alone
    big, _, _ = facility_model(n_sites=10, n_cust=80, seed=2, k=4)
    assert privopt.mechanisms.selection.bounded_lower_bound(space, big, solver)[0] > predicted


def test_a_time_limit_below_the_lower_bound_is_refused_before_the_model_is_read(monkeypatch):
    model, _, _ = facility_model(n_sites=20, n_cust=200, seed=1, k=6)
    w = list(model.y.values())
    space, _ = prefix_space([(0.0, 1.0)] * 20, None, [model.open], w)
    predicted, _ = privopt.mechanisms.selection.bounded_lower_bound(space, model, "highs")
    monkeypatch.setattr(HighsFixedSession, "build", classmethod(lambda *a, **k: pytest.fail("the model was read")))
    # the count's search is limited by work, not seconds: 6 on any machine at any load
    with pytest.raises(ParameterError, match=r"at least 6 certified LP solve") as err:
        _release(model, path="bounded", random_state=0, time_limit=predicted / 2)
    assert err.value.parameter == "time_limit" and "lower bound" in str(err.value)


# --- the score path on the caller's executor ----------------------------------------------

pmedian = functools.partial(pmedian_model, n_sites=8, n_customers=40)


def _score_release(m, n, **kw):
    return privopt.exponential_mechanism(m, weights="open", epsilon=3.0, loss_range=(0, 1), n_samples=n,
                                         public_constraints=["p"], path="score", keep_report=True, **kw)


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_the_same_release_on_any_executor(method):
    m, dist = pmedian()
    with ThreadPoolExecutor(2) as threads, ProcessPoolExecutor(2) as procs:
        for seed in range(3):
            ref = _score_release(m, 40, method=method, random_state=seed)
            # in this process the closed form of the blocks (tests/solvers/test_blocks.py); the workers solve
            assert ref.report.engine == "blocks (closed form)" and ref.report.points_scored == math.comb(8, 2)
            for ex in (threads, procs):
                got = _score_release(m, 40, method=method, random_state=seed, executor=ex)
                assert np.array_equal(got.weights, ref.weights)
                assert got.report.solves == got.report.points_scored == math.comb(8, 2)
                assert got.report.engine == "highs_fixed" and "2 worker" in got.report.reason


def test_the_executor_scores_every_point_exactly():
    # the losses the workers return are the brute-force ones, in W's order
    from privopt.mechanisms.selection._evaluate import FixAndSolveEvaluator
    from privopt.perturbation import resolve_grids

    m, dist = pmedian(n_sites=7, n_customers=25, k=3, seed=4)
    w = [m.open[j] for j in m.J]
    scorer = FixAndSolveEvaluator(m, w, resolve_grids(w), solver="highs", public_constraints=[m.p])
    with ProcessPoolExecutor(2) as ex:
        blocks = list(scorer.blocks(block_points=9, executor=ex))
    pts = np.vstack([p for p, _ in blocks])
    losses = np.concatenate([loss for _, loss in blocks])
    assert [len(p) for p, _ in blocks][:3] == [9, 9, 9] and len(pts) == math.comb(7, 3)
    brute = np.array([dist[:, np.flatnonzero(p > 0.5)].min(axis=1).sum() for p in pts])
    assert np.allclose(losses, brute, atol=1e-6)
    assert scorer.solves == math.comb(7, 3) and scorer.workers == 2


def test_the_pyomo_path_on_an_executor_releases_the_same_point():
    require_solver("glpk")
    m, _ = pmedian(n_sites=5, n_customers=10)
    with ThreadPoolExecutor(2) as ex:
        for seed in range(2):
            ref = _score_release(m, 10, random_state=seed, solver="glpk")
            got = _score_release(m, 10, random_state=seed, solver="glpk", executor=ex)
            assert np.array_equal(got.weights, ref.weights) and got.report.engine == ref.report.engine


@pytest.mark.slow
def test_dask_client_releases_the_same_point():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    m, _ = pmedian()
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as client:
        for seed in range(2):
            ref = _score_release(m, 40, random_state=seed)
            got = _score_release(m, 40, random_state=seed, executor=client)
            assert np.array_equal(got.weights, ref.weights)


def test_an_unpicklable_model_on_an_executor_is_refused_naming_executor(monkeypatch):
    m, _ = pmedian()
    m.lock = threading.Lock()          # neither pickle nor cloudpickle can send this to a worker
    monkeypatch.setattr(HighsFixedSession, "build", classmethod(lambda *a, **k: pytest.fail("a solve ran")))
    with ThreadPoolExecutor(2) as ex:
        with pytest.raises(ParameterError, match="executor") as err:
            _score_release(m, 40, random_state=0, executor=ex)
    assert err.value.parameter == "executor" and "executor=None" in str(err.value)


def test_time_limit_on_an_executor_releases_nothing(monkeypatch):
    # the prediction set aside (so the up-front refusal does not fire): the workers run out
    from privopt.mechanisms.selection._evaluate import FixAndSolveEvaluator

    monkeypatch.setattr(FixAndSolveEvaluator, "predicted_seconds", lambda self, n=None: 0.0)
    m, _ = pmedian(n_sites=12, n_customers=60)
    with ProcessPoolExecutor(2) as ex:
        with pytest.raises(NotCertifiedError, match="time_limit: 0.001 s ran out") as err:
            _score_release(m, 60, random_state=0, executor=ex, time_limit=1e-3)
    assert "nothing is released" in str(err.value)


# --- the score path through files (GLPK, CBC): the prediction, and HiGHS named ------------

@pytest.mark.parametrize("solver", ["glpk", "cbc"])
def test_a_file_solvers_prediction_is_within_2x_of_its_run_and_its_reason_names_highs(solver):
    """GLPK and CBC write, solve and read back one LP file per point: their rates
    (privopt.mechanisms.selection._evaluate.FIX_SOLVE_RATES) predict the run within a factor 2 either way,
    where Pyomo's persistent rate predicted it 2 to 12 times short; the plan says HiGHS is the
    fast path and why."""
    require_solver(solver)
    m, _ = pmedian_model(n_sites=8, n_customers=30, k=2, seed=0)
    start = time.perf_counter()
    rep = _score_release(m, 30, solver=solver, random_state=0).report
    wall = time.perf_counter() - start
    assert rep.solves == rep.n_points == 28 and rep.engine == "pyomo"
    # at most 2x above the run (a quiet machine); a loaded one runs slower than the prediction:
    # measured up to 4x at load 10 on 2 cores (CBC, the first run), so 5x here
    assert 1 / 5 <= rep.predicted_time / wall <= 2.0, (rep.predicted_time, wall)
    assert f"{solver} is driven through files" in rep.reason and "solver='highs' is the fast path" in rep.reason
    highs = _score_release(m, 30, solver="highs", random_state=0).report
    assert "driven through files" not in highs.reason and highs.predicted_time < rep.predicted_time / 10

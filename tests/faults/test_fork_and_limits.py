"""Solver and thread state across fork, and limits checked before the work.

* A process forked after HiGHS ran a MILP in its parent inherits HiGHS's task
  scheduler without its worker threads; privopt resets it in the child
  (``privopt.solvers._dispatch._reset_highs_scheduler``).  Each fork test runs
  in a subprocess of its own session with a timeout, so that a regression
  fails (and its spinning children are killed) instead of hanging the suite.
* The kernels' thread pool ends its threads before a fork
  (``privopt._runtime.map_on_kernel_threads``), and the progress bars start no
  monitor thread: a child forked with them would inherit a pool without threads
  (its first kernel call waits forever), and Python 3.12 and later warn of a fork
  with threads alive.
* Sizes that follow from a user's parameter (a grid, D, max_points,
  n_oracle_calls) are refused from public quantities before any grid, table or
  noise is built, naming the parameter.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

from privopt.exceptions import ParameterError

from tests.conftest import require_solver

#: Seconds within which every refusal below must come (generous: they take milliseconds).
FAST = 30.0
#: Seconds a fork scenario may take before it counts as hung (they take about 5 s).
HUNG = 180.0


def _run_script(code: str) -> str:
    """Run ``code`` in a fresh interpreter in its own session; on timeout kill
    the whole session (the forked workers included) and fail."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=env,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        out, err = proc.communicate(timeout=HUNG)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"hung: no answer within {HUNG:g} s (a forked child spinning on HiGHS's inherited scheduler?)")
    assert proc.returncode == 0, err[-3000:]
    return out


# --- 1. HiGHS's scheduler across fork ------------------------------------------------

#: A MILP whose root node runs a task on HiGHS's scheduler (the analytic centre).
_MILP = """
from privopt.solvers import solve
from privopt.solvers.examples import market_split

def milp(threads=None):
    return solve(market_split(2, 12, seed=1), "highs", time_limit=60, threads=threads).objective
"""


@pytest.mark.slow
def test_forked_worker_after_highs_in_the_parent_finishes():
    require_solver("highs")
    out = _run_script(_MILP + """
import concurrent.futures as cf
import multiprocessing

if __name__ == "__main__":
    parent = milp(threads=2)          # the scheduler starts a worker thread here
    ctx = multiprocessing.get_context("fork")
    with cf.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        child = pool.submit(milp).result()
        again = pool.submit(milp).result()
    print(parent, child, again, milp(threads=2))
""")
    values = [float(v) for v in out.split()]
    assert len(values) == 4 and np.allclose(values, values[0])


@pytest.mark.slow
def test_opsamp_default_pool_after_a_highs_milp_finishes():
    require_solver("highs")
    out = _run_script(_MILP + """
import numpy as np
import pyomo.environ as pyo
import privopt
from privopt.models import ModelInfo, attach_info

def integer_abs_model(n=12, d=2):
    # min sum_i |y_i - <x_i, w>| / C over w in {-1, 0, 1}^d: a MILP oracle
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(-1, 1, size=(n, d)), 2)
    y = np.round(X @ np.linspace(0.5, -0.3, d) + rng.normal(0, 0.2, size=n), 2)
    C = float(np.abs(y).max() + np.abs(X).max(axis=0).sum())
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), bounds=(-1, 1), domain=pyo.Integers)
    m.t = pyo.Var(range(n), domain=pyo.NonNegativeReals)
    m.c = pyo.ConstraintList()
    for i in range(n):
        s = sum(float(X[i, j]) * m.w[j] for j in range(d))
        m.c.add(m.t[i] >= float(y[i]) - s)
        m.c.add(m.t[i] >= s - float(y[i]))
    m.loss = pyo.Objective(expr=sum(m.t[i] for i in range(n)) / C)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=float(np.abs(X).max() / C), n_samples=n,
                             public_constraints=("w",)))     # the box {-1, 0, 1}^d is public
    return m

if __name__ == "__main__":
    milp(threads=2)
    result = privopt.opsamp(integer_abs_model(), epsilon=1.0, delta=1e-3, n_oracle_calls=4, time_limit=20,
                            random_state=0, progress=False, keep_report=True)   # executor=None: a forked pool
    print(len(result.report), all(r.certified_optimal for r in result.report))
""")
    assert out.split() == ["4", "True"]


def test_the_child_reset_is_registered_and_harmless_without_a_scheduler():
    """The hook runs in every forked child; with no HiGHS run (or no highspy) it does nothing."""
    from privopt.solvers import _dispatch

    _dispatch._reset_highs_scheduler()      # no scheduler in this thread, or a fresh one: no error
    lock = _dispatch.solve_lock()
    _dispatch._after_fork_in_child()
    assert _dispatch.solve_lock() is not lock


def test_a_replaced_kernel_pool_leaves_no_thread_at_a_fork():
    """A larger kernel pool replaces a smaller one, whose threads end on their own once their
    calls are done; the fork hook waits for them too (it once ended only the current pool's, and a
    replaced pool's thread could still be alive at the fork)."""
    import threading

    from privopt import _runtime

    with _runtime._POOL_LOCK:
        busy = _runtime._kernel_pool(2).submit(time.sleep, 0.5)     # the smaller pool, one thread busy
    with _runtime._POOL_LOCK:
        _runtime._kernel_pool(_runtime.kernel_threads() + 3)         # a larger one replaces it
    _runtime._end_pool_before_fork()           # what os.fork runs first
    try:
        alive = [t.name for t in threading.enumerate() if t.name.startswith("privopt-kernel")]
        assert busy.done() and alive == [] and _runtime._POOL == [] and _runtime._RETIRED == []
    finally:
        _runtime._POOL_LOCK.release()         # what os.fork runs after, in the parent


@pytest.mark.slow
def test_no_thread_outlives_a_fork_and_a_forked_child_maps_and_fits():
    out = _run_script("""
import os, signal, threading
import numpy as np
import privopt
from privopt._progress import progress_bar
from privopt._runtime import map_on_kernel_threads

def names():
    return sorted(t.name for t in threading.enumerate() if t is not threading.current_thread())

rng = np.random.default_rng(0)
X = rng.uniform(0, 1, (2000, 6))
y = (X @ rng.normal(size=6) > 0).astype(int)
fit = lambda: privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y).coef_
with progress_bar(2, desc="bar") as bar:
    bar.update(2)
coef = fit()
assert map_on_kernel_threads(abs, [-1, -2, -3]) == [1, 2, 3]
alive = names()                       # the pool's idle threads, waiting for work
pid = os.fork()
if pid == 0:
    signal.alarm(60)                  # a child that waits on an inherited pool is killed, not left hanging
    ok = map_on_kernel_threads(abs, [-4, -5]) == [4, 5] and np.array_equal(fit(), coef)
    os._exit(0 if ok else 3)
after = names()
_, status = os.waitpid(pid, 0)
print(alive, after, os.WIFEXITED(status) and os.WEXITSTATUS(status))
print(map_on_kernel_threads(abs, [-6, -7]))
""")
    first, second = out.strip().splitlines()
    assert "privopt-kernel" in first and "tqdm" not in first      # the pool was alive, no monitor ever
    assert first.endswith("] [] 0")                                # no thread at the fork; the child exited 0
    assert second == "[6, 7]"                                      # the parent makes a new pool


# --- 2. limits before the work -------------------------------------------------------

def _timed(fn):
    start = time.perf_counter()
    with pytest.raises(ParameterError) as info:
        fn()
    elapsed = time.perf_counter() - start
    assert elapsed < FAST, f"refused only after {elapsed:.1f} s"
    return info.value


def _halfspace_data(n=60, d=3):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(n, d)).astype(float)
    return X, (X[:, 0] > 1).astype(int)


@pytest.mark.parametrize("kwargs, parameter", [
    ({"grid": range(-10**7, 10**7)}, "grid"),
    ({"grid": 10**7}, "grid"),
    ({"grid": [range(-2, 3), range(-2, 3), range(-10**6, 10**6), range(2)]}, "grid"),
    ({"norm_bound": 1e300}, "norm_bound"),
    ({"grid": 2, "norm_bound": 1e300}, "norm_bound"),
])
@pytest.mark.parametrize("mechanism", ["auto", "opdisc"])
def test_halfspace_classifier_refuses_huge_grids_before_building_them(kwargs, parameter, mechanism):
    pytest.importorskip("sklearn")
    from privopt import PrivateHalfspaceClassifier

    X, y = _halfspace_data()
    err = _timed(lambda: PrivateHalfspaceClassifier(time_limit=5, mechanism=mechanism, random_state=0,
                                                    **kwargs).fit(X, y))
    assert err.parameter == parameter
    assert parameter in str(err)


def test_halfspace_classifier_with_a_tiny_time_limit_returns_or_refuses_quickly():
    pytest.importorskip("sklearn")
    from privopt import PrivateHalfspaceClassifier
    from privopt.exceptions import PrivoptError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            PrivateHalfspaceClassifier(time_limit=1e-3, bounds=(-3, 3), random_state=0).fit(X, y)
        except PrivoptError as exc:      # a refusal must name time_limit or say it was hit
            # refused up front (parameter time_limit), or the W's its ladder kept within time_limit
            # took longer than predicted here: "time_limit: 0.001 s ran out before the 3 W's were sampled ..."
            assert getattr(exc, "parameter", None) == "time_limit" or str(exc).startswith("time_limit: ") \
                or "time limit" in str(exc)
    assert time.perf_counter() - start < FAST


def test_parse_grid_refuses_from_the_length_alone():
    from privopt.models._common import parse_grid

    for grid in (range(-10**8, 10**8), 10**9, [range(3), range(10**7)]):
        err = _timed(lambda grid=grid: parse_grid(grid, 2))
        assert err.parameter == "grid"
    assert parse_grid(3, 2) == (tuple(range(-3, 4)),) * 2       # small grids unchanged


def test_a_per_coordinate_grid_of_a_million_coordinates_is_parsed_at_once():
    """A (d, K) grid is parsed as one array: the same tuples as coordinate by coordinate (a
    million coordinates took 40 s that way, now about a second); a ragged grid and a bad
    coordinate still take the coordinate-by-coordinate path, which names the coordinate."""
    from privopt.space import _grid, parse_grid

    rng = np.random.default_rng(0)
    grid = [tuple(rng.permutation([-1.0, 0.5, float(j % 3) + 2.0])) for j in range(50)]
    by_coordinate = tuple(_grid._coordinate(g, "grid", "grid", 1) for g in grid)
    assert parse_grid(grid, 50) == by_coordinate
    assert parse_grid([[0.5, 1], [2, -1, 3]], 2) == ((0.5, 1.0), (-1.0, 2.0, 3.0))
    with pytest.raises(ParameterError, match=r"grid\[1\] contains repeated values"):
        parse_grid([[0, 1], [2, 2]], 2)
    start = time.perf_counter()
    wide = parse_grid([(1.0, 0.0, -1.0)] * 10**6, 10**6)
    assert time.perf_counter() - start < 10 and len(wide) == 10**6 and wide[-1] == (-1.0, 0.0, 1.0)


def test_norm_levels_limits():
    from privopt._lattice import MAX_GRID_SIZE
    from privopt.perturbation import norm_levels

    small = [tuple(float(v) for v in range(-2, 3))] * 5
    assert _timed(lambda: norm_levels(small, 1e300)).parameter == "norm_bound"       # D^2 overflows
    wide = [tuple(float(v) for v in range(-5000, 5000))] * 3
    assert _timed(lambda: norm_levels(wide, 1e4)).parameter == "norm_bound"          # 1e8 levels
    too_many = [tuple(float(v) for v in range(MAX_GRID_SIZE + 1))]
    assert _timed(lambda: norm_levels(too_many, 1.0)).parameter == "grid"
    lv = norm_levels(small, 2.0)                                                      # unchanged
    assert lv.exact and lv.levels == (0, 1, 2, 3, 4) and lv.bound == 4


def test_common_step_integer_fast_path_matches_fractions():
    from fractions import Fraction

    from privopt.space import common_step

    assert common_step([-4.0, 2.0, 6.0]) == 2
    assert common_step([-9.0, 3.0, 0.0, 12.0]) == 3
    assert common_step([0.5, 1.5, -2.0]) == Fraction(1, 2)
    assert common_step([0.0]) == 1


def _binary_data(n=200, d=8):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(n, d))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def test_scoring_system_refuses_max_points_before_any_table():
    pytest.importorskip("sklearn")
    from privopt.scoring import PrivateScoringSystem

    X, y = _binary_data()
    err = _timed(lambda: PrivateScoringSystem(max_points=10**6, max_items=4, time_limit=5,
                                              random_state=0).fit(X, y))
    assert err.parameter == "max_points" and "memory" in str(err)
    # also without a time limit: memory is refused whatever the time allowed
    from privopt.scoring import select_scoring_system

    err = _timed(lambda: select_scoring_system(X, y, epsilon=1.0, max_points=10**6, max_items=4, random_state=0))
    assert err.parameter == "max_points"
    X40, y40 = _binary_data(d=40)
    err = _timed(lambda: select_scoring_system(X40, y40, epsilon=1.0, max_points=3, max_items=40, random_state=0))
    assert err.parameter == "max_items"


def test_scoring_system_time_limit_counts_the_scoring_of_a_support():
    from privopt.scoring import select_scoring_system
    from privopt.scoring._select import predict_bound_seconds, predict_support_seconds
    from privopt.scoring._space import ScoreSpace

    X, y = _binary_data()
    space = ScoreSpace(X.shape[1], 2000, 2)
    assert predict_bound_seconds(space, X.shape[0]) < 5 < predict_support_seconds(space)
    err = _timed(lambda: select_scoring_system(X, y, epsilon=1.0, max_points=2000, max_items=2, time_limit=5,
                                               random_state=0))
    assert err.parameter == "time_limit"
    # the defaults still fit within a modest limit
    result = select_scoring_system(X, y, epsilon=1.0, max_points=5, max_items=2, time_limit=5, random_state=0)
    assert result.parameters["max_points"] == 5


def test_score_space_values_built_with_numpy_are_the_same():
    from privopt.scoring._space import ScoreSpace

    space = ScoreSpace(3, 3, 2, signs=[0, 1, -1])
    assert [v.tolist() for v in space.values] == [[-3, -2, -1, 1, 2, 3], [1, 2, 3], [-3, -2, -1]]
    assert space.count.tolist() == [6, 3, 3] and space.l1.tolist() == [12, 6, 6]


def test_opsamp_refuses_n_oracle_calls_by_memory_before_any_noise():
    import pyomo.environ as pyo

    import privopt
    from privopt.models import ModelInfo, attach_info

    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(-1, 1))
    m.loss = pyo.Objective(expr=0.1 * m.w[0] + 0.1 * m.w[1] + 0.5)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=0.1, n_samples=100))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    err = _timed(lambda: privopt.opsamp(m, epsilon=1.0, delta=1e-3, n_oracle_calls=10**12, random_state=rng,
                                        progress=False))
    assert err.parameter == "n_oracle_calls" and "memory" in str(err)
    assert rng.bit_generator.state == state          # refused before any noise was drawn

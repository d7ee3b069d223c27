"""Faults under kill and load: a worker of a user's multiprocessing.Pool that dies while
privopt waits ends the call with a clear error (never a hang), and inputs too wide for
this machine are refused from their public sizes before any work."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time

import numpy as np
import pyomo.environ as pyo
import pytest

from privopt._runtime import PoolExecutor, run_ordered
from privopt.exceptions import PrivoptError, WorkerLostError
from privopt.mechanisms import opsamp
from privopt.models import ModelInfo, attach_info

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks worker processes")


# --- 1. a worker of a multiprocessing.Pool dies while privopt waits ---------------------------

def _kill_myself(i):
    """A task that kills its own worker process with SIGKILL (as the OOM killer would)."""
    os.kill(os.getpid(), signal.SIGKILL)
    return i


def _exit_quietly(i):
    """A task whose worker leaves without a word (os._exit with status 0)."""
    os._exit(0)


def _square(i):
    return i * i


def _arm_oracle_exit():
    """A pool initializer: in this worker only, every OPSamp oracle call ends the process."""
    parallel = sys.modules["privopt.mechanisms._parallel"]

    def die(*args, **kwargs):
        os._exit(1)

    parallel.oracle_call = die


def _small_lp():
    """min |w0 - 0.3| + |w1 + 0.2| over the box [-1, 1]^2, an LP any solver takes: two records,
    one term each."""
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(-1, 1))
    m.t = pyo.Var(range(2), domain=pyo.NonNegativeReals)
    m.c = pyo.ConstraintList()
    for j, c in enumerate((0.3, -0.2)):
        m.c.add(m.t[j] >= m.w[j] - c)
        m.c.add(m.t[j] >= c - m.w[j])
    m.loss = pyo.Objective(expr=(m.t[0] + m.t[1]) / 4.0)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=0.25, n_samples=2,
                             public_constraints=("w",)))   # the box [-1, 1]^2 is public
    return m


@pytest.fixture
def fork_pool():
    pools = []

    def make(processes=2, **kw):
        pool = multiprocessing.get_context("fork").Pool(processes, **kw)
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.terminate()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("task", [_kill_myself, _exit_quietly], ids=["SIGKILL", "os._exit(0)"])
def test_a_dead_pool_worker_ends_the_wait_with_a_clear_error(fork_pool, task):
    """The lost task's callback never fires; the liveness check sees the worker's exit
    and fails every pending task instead of waiting for ever."""
    ex = PoolExecutor(fork_pool())
    start = time.monotonic()
    with pytest.raises(WorkerLostError) as info:
        run_ordered(ex, task, [(i,) for i in range(4)])
    assert time.monotonic() - start < 30
    msg = str(info.value)
    assert "multiprocessing.Pool" in msg and "worker process" in msg and "new pool" in msg
    assert isinstance(info.value, PrivoptError)


@pytest.mark.timeout(60)
def test_opsamp_on_a_pool_whose_worker_dies_raises_instead_of_hanging(fork_pool):
    """The issue's case: opsamp with a multiprocessing.Pool (documented as supported) whose
    worker dies during an oracle call (os._exit in the worker) raised nothing and waited for
    good; now it raises WorkerLostError and releases nothing."""
    pool = fork_pool(2, initializer=_arm_oracle_exit)
    with pytest.raises(WorkerLostError, match="executor"):
        opsamp(_small_lp(), epsilon=2.0, delta=1e-4, n_oracle_calls=4, executor=pool, random_state=1,
               progress=False)


@pytest.mark.timeout(60)
def test_a_healthy_pool_still_runs_and_is_left_usable(fork_pool):
    """The check does not disturb a pool whose workers live (nor one that recycles its
    workers after each task, maxtasksperchild=1, whose exits are normal)."""
    for kw in ({}, {"maxtasksperchild": 1}):
        pool = fork_pool(2, **kw)
        results, fatal = run_ordered(PoolExecutor(pool), _square, [(i,) for i in range(12)])
        assert results == [i * i for i in range(12)] and fatal is None
        assert pool.apply_async(_square, (7,)).get(timeout=30) == 49


#: A worker of the pool killed after privopt was handed the pool and before its first task: an
#: idle worker holds the pool's queue lock while it waits, so the pool deadlocks (its
#: replacement waits on the lock) and no death is seen while privopt waits.  Run in a fresh
#: interpreter in its own session: such a pool's own terminate() blocks on the same lock, so
#: the script leaves with os._exit and the test ends the session.
_KILLED_BEFORE_FIRST_TASK = """
import multiprocessing, os, signal, sys, time
import numpy as np
import pyomo.environ as pyo
import privopt
from privopt._runtime import check_executor, run_ordered
from privopt.models import ModelInfo, attach_info

def square(i):
    return i * i

def kill_workers(pool):
    for proc in list(pool._pool):
        os.kill(proc.pid, signal.SIGKILL)
    time.sleep(0.5)          # the pool replaces them; the queue lock stays with the dead

def small_lp():
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(-1, 1))
    m.t = pyo.Var(range(2), domain=pyo.NonNegativeReals)
    m.c = pyo.ConstraintList()
    for j, c in enumerate((0.3, -0.2)):
        m.c.add(m.t[j] >= m.w[j] - c)
        m.c.add(m.t[j] >= c - m.w[j])
    m.loss = pyo.Objective(expr=(m.t[0] + m.t[1]) / 4.0)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=0.25, n_samples=2,
                             public_constraints=("w",)))     # the box [-1, 1]^2 is public
    return m

if __name__ == "__main__":
    pool = multiprocessing.get_context("fork").Pool(2)
    assert pool.apply_async(square, (3,)).get(30) == 9          # the workers are up and idle
    start = time.monotonic()
    try:
        if sys.argv[1] == "executor":
            ex = check_executor(pool)                              # privopt is handed the pool
            kill_workers(pool)
            run_ordered(ex, square, [(i,) for i in range(4)])
        else:                                                      # opsamp: killed just before its tasks
            opsamp_module = sys.modules["privopt.mechanisms.opsamp"]     # the module, not the function
            inner = opsamp_module.run_ordered
            def killing(*args, **kwargs):
                kill_workers(pool)
                return inner(*args, **kwargs)
            opsamp_module.run_ordered = killing
            privopt.opsamp(small_lp(), epsilon=2.0, delta=1e-4, n_oracle_calls=4, executor=pool,
                           random_state=1, progress=False)
        print("RETURNED", flush=True)
    except Exception as exc:
        print(type(exc).__name__, isinstance(exc, privopt.PrivoptError), round(time.monotonic() - start, 1),
              flush=True)
    os._exit(0)
"""


@pytest.mark.timeout(180)
@pytest.mark.parametrize("entry", ["executor", "opsamp"])
def test_a_worker_killed_before_the_first_task_ends_the_call(entry, tmp_path):
    """The issue's case: a worker of a multiprocessing.Pool killed after privopt was handed the
    pool but before its first task left the call waiting for ever (the watcher noted the
    workers only at the first submit, after the death).  Now the workers are noted at the
    hand-over, and the call ends with WorkerLostError (a PrivoptError) within 120 s."""
    import subprocess
    import textwrap

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "w") as out_file, open(err_path, "w") as err_file:   # files: the orphans hold no pipe
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_KILLED_BEFORE_FIRST_TASK), entry],
                                stdout=out_file, stderr=err_file, start_new_session=True, cwd=root,
                                env=dict(os.environ, PYTHONWARNINGS="ignore"))
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pass
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)       # the script (if hung) and the pool's orphaned workers
            except ProcessLookupError:
                pass
            proc.wait()
    out, err = out_path.read_text(), err_path.read_text()
    words = out.split()
    assert words[:2] == ["WorkerLostError", "True"], (out + err)[-3000:]
    assert float(words[2]) < 120


# --- 2. inputs too wide for this machine, refused from public sizes before any work ---------

WIDE = 10**6


@pytest.fixture
def six_gib(monkeypatch):
    """The issue's machine: 6 GiB for one fit, whatever this machine has."""
    import privopt._limits as limits
    import privopt.estimators as estimators

    monkeypatch.setattr(limits, "memory_budget", lambda: 6 * 2**30)
    monkeypatch.setattr(estimators, "memory_budget", lambda: 6 * 2**30)


def _refused_quickly(fit):
    """Run ``fit``; return its ParameterError, the seconds taken and the peak of new allocations."""
    import tracemalloc

    from privopt.exceptions import ParameterError

    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(ParameterError) as info:
            fit()
        return info.value, time.monotonic() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.timeout(60)
def test_a_million_features_are_refused_by_the_estimator_before_any_model(six_gib):
    """The issue's fit reached 8.6 GB in 10 minutes (the MILP's model, its clone and the solver's
    copy, about 40 KiB per weight); now it is refused from n, d and W's grid before the features
    are discretized: nothing but the checked copy of X (40 MB) is allocated."""
    from privopt import PrivateHalfspaceClassifier

    X, y = np.zeros((5, WIDE)), np.arange(5) % 2
    err, seconds, peak = _refused_quickly(lambda: PrivateHalfspaceClassifier(bounds=(0, 1)).fit(X, y))
    assert err.parameter == "X" and "1,000,001 weights" in str(err) and "fewer features" in str(err)
    assert "features fit here" in str(err) and "grid=1" in str(err)
    assert seconds < 20 and peak < 3 * X.nbytes


@pytest.mark.timeout(60)
def test_dpsgd_refuses_noise_that_cannot_fit_before_drawing_it(six_gib):
    """DP-SGD draws the noise of every step at once (steps x d floats): 5,000 steps over a million
    features is 37 GiB, refused before the accountant or the feature map runs."""
    from privopt.baselines import DPSGDLogisticRegression

    X, y = np.zeros((5, WIDE)), np.arange(5) % 2
    err, seconds, peak = _refused_quickly(lambda: DPSGDLogisticRegression(bounds=(0, 1), epochs=1000).fit(X, y))
    assert err.parameter == "X" and "1,000,000 features" in str(err) and "epochs" in str(err)
    assert seconds < 20 and peak < 3 * X.nbytes


def test_sizes_that_fit_today_are_not_refused(six_gib):
    """Adult one-hot (30,000 records, 120 features) passes both checks at the issue's 6 GiB, and so
    does DP-SGD's default schedule on the million-feature input (2.4 GB of noise: it fits, in
    70 s, and is left to run), while the estimator's MILP on a million features does not."""
    from privopt import PrivateHalfspaceClassifier
    from privopt._limits import halfspace_fit_bytes
    from privopt.baselines import DPSGDLogisticRegression

    est = PrivateHalfspaceClassifier(bounds=(0, 1))
    for mechanism in ("auto", "opdisc", "rspm", "permute_and_flip"):
        est._check_fit_memory((30_000, 120), mechanism, milp_solver=False)
    sgd = DPSGDLogisticRegression(bounds=(0, 1))
    params = sgd._check_params()
    sgd._check_work_memory(30_000, 120, True, params)
    sgd._check_work_memory(5, WIDE, True, params)
    assert 2.4e9 < sgd._work_bytes(5, WIDE + 1, params) < 2.6e9      # 300 steps x 10^6 weights x 8 B
    # the model alone (private selection) is 8 times smaller than the MILP fit: 1 KiB and 8 KiB a value
    assert halfspace_fit_bytes(5, 10, 11, 5, milp=True) == 11 * 5 * 8192 + 5 * 10 * 24
    assert halfspace_fit_bytes(5, 10, 11, 5, milp=False) == 11 * 5 * 1024 + 5 * 10 * 24


def _wide_entry_points():
    """name -> a call on 5 records of a million features (each ran past 60 s or out of memory)."""
    import privopt
    from privopt import models
    from privopt.baselines import (DPAGDLogisticRegression, ObjectivePerturbationLogisticRegression,
                                   OutputPerturbationLogisticRegression, private_grid_search)
    from privopt.estimators import PrivateHalfspaceClassifier, ZeroOneHalfspaceClassifier
    from privopt.scoring import PrivateScoringSystem
    from privopt.scoring._select import select_scoring_system

    X = np.zeros((5, WIDE))
    X[::2, ::3] = 1.0
    y = np.array([0, 1, 0, 1, 1])
    pm = 2 * y - 1
    est = {m: (lambda m=m: PrivateHalfspaceClassifier(bounds=(0, 1), mechanism=m, random_state=0).fit(X, y))
           for m in ("auto", "permute_and_flip", "exponential", "opdisc", "rspm")}
    return {
        **{f"PrivateHalfspaceClassifier[{m}]": f for m, f in est.items()},
        "ZeroOneHalfspaceClassifier": lambda: ZeroOneHalfspaceClassifier(bounds=(0, 1), epsilon=1.0).fit(X, y),
        "PrivateScoringSystem": lambda: PrivateScoringSystem(random_state=0).fit(X, y),
        "select_scoring_system": lambda: select_scoring_system(X, y, epsilon=1.0, random_state=0),
        "zero_one_halfspace": lambda: models.zero_one_halfspace(X, pm),
        "zero_one_halfspace, a grid per coordinate": lambda: models.zero_one_halfspace(X, pm, grid=[(-1, 0, 1)] * WIDE),
        "zero_one_loss": lambda: privopt.mixture_selection([models.zero_one_loss(X, pm, grid=g) for g in (1, 2)],
                                                           epsilon=1.0),
        "rspm_halfspace": lambda: privopt.rspm(models.rspm_halfspace(X, pm), epsilon=1.0),
        "hinge_halfspace": lambda: privopt.opsamp(models.hinge_halfspace(X, pm), epsilon=1.0, delta=1e-5),
        "absolute_regression": lambda: models.absolute_regression(X, y.astype(float)),
        "squared_regression": lambda: models.squared_regression(X, y.astype(float)),
        "ObjectivePerturbationLogisticRegression":
            lambda: ObjectivePerturbationLogisticRegression(bounds=(0, 1), random_state=0).fit(X, y),
        "OutputPerturbationLogisticRegression":
            lambda: OutputPerturbationLogisticRegression(bounds=(0, 1), random_state=0).fit(X, y),
        "OutputPerturbationLogisticRegression[gaussian]":
            lambda: OutputPerturbationLogisticRegression(bounds=(0, 1), delta=1e-5, random_state=0).fit(X, y),
        "DPAGDLogisticRegression": lambda: DPAGDLogisticRegression(bounds=(0, 1), random_state=0).fit(X, y),
        "private_grid_search[output perturbation]":
            lambda: private_grid_search(OutputPerturbationLogisticRegression(bounds=(0, 1)),
                                        {"epsilon": [0.5, 1.0]}, X, y, random_state=0),
    }


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", [
    "PrivateHalfspaceClassifier[auto]", "PrivateHalfspaceClassifier[permute_and_flip]",
    "PrivateHalfspaceClassifier[exponential]", "PrivateHalfspaceClassifier[opdisc]",
    "PrivateHalfspaceClassifier[rspm]", "ZeroOneHalfspaceClassifier", "PrivateScoringSystem",
    "select_scoring_system", "zero_one_halfspace", "zero_one_halfspace, a grid per coordinate", "zero_one_loss",
    "rspm_halfspace", "hinge_halfspace", "absolute_regression", "squared_regression",
    "ObjectivePerturbationLogisticRegression", "OutputPerturbationLogisticRegression",
    "OutputPerturbationLogisticRegression[gaussian]", "DPAGDLogisticRegression",
    "private_grid_search[output perturbation]"])
def test_a_million_features_are_refused_or_fitted_within_20_seconds(name):
    """Every entry point ran past 60 s (or out of memory) on 5 records of a million features:
    the 0/1-loss models and estimators, the scoring system, the Pyomo builders, output
    perturbation (its exact noise: 40 s Laplace, 81 s Gaussian) and DP-AGD (about a thousand
    noisy gradients) are now refused from X's shape alone (privopt._limits.check_width,
    naming X, the limit and the fix), and objective perturbation, linear in d, fits (the
    Woodbury Newton step)."""
    import warnings

    from privopt.exceptions import ParameterError

    call = _wide_entry_points()[name]
    start = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except ParameterError as err:
            assert err.parameter == "X", str(err)
            assert "features" in str(err) and "fewer" in str(err).lower()
    assert time.monotonic() - start < 20


@pytest.mark.timeout(120)
def test_selection_on_a_model_of_a_million_weights_is_refused_from_the_size_of_w():
    """exponential_mechanism on a user's model of a million integer weights with a grid per
    coordinate ran past 60 s (|W| = 3^(10^6) multiplied out one length at a time, then printed,
    then weighed as a float); now |W| is counted by powers and refused as more than the samplers
    can weigh, naming grid, within 20 s of this process's CPU time (about 10 s on a shared
    2-core machine: Pyomo's million variables read, their grids resolved; the wall time a loaded
    machine inflates is not what this guards)."""
    import warnings

    import privopt
    from privopt.exceptions import ParameterError

    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(WIDE), domain=pyo.Integers, bounds=(-1, 1))
    m.loss = pyo.Objective(expr=pyo.quicksum(m.w[j] for j in range(0, WIDE, 1000)) / WIDE)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=1.0, n_samples=5))
    grid = [(-1, 0, 1)] * WIDE
    start = time.process_time()
    with warnings.catch_warnings(), pytest.raises(ParameterError) as info:
        warnings.simplefilter("ignore")
        privopt.exponential_mechanism(m, epsilon=1.0, random_state=0, grid=grid)
    assert time.process_time() - start < 20
    assert info.value.parameter == "grid" and "about 1.8e+477,121 points" in str(info.value)


def test_format_count_and_product_size():
    from privopt._limits import format_count
    from privopt.space import product_size

    assert format_count(12_345) == "12,345" and format_count(3 ** (10**6)) == "about 1.8e+477,121"
    assert product_size([(0, 1, 2)] * 4 + [(0, 1)] * 3) == 3**4 * 2**3

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

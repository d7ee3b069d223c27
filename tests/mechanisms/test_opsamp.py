"""privopt.opsamp: parameters, exact oracle answers, executors, Laplace step,
validation, failure policy, catalogue models on every LP solver."""

from __future__ import annotations

import dataclasses
import math
import pickle
import sys
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy import optimize, stats

import privopt
from privopt import calibration
from privopt._exact import discrete_laplace
from privopt.exceptions import (
    ModelError,
    NoiseDisclosureWarning,
    NotCertifiedError,
    ParameterError,
    ParameterTypeError,
    SolverNotAvailableError,
    UncertifiedReleaseWarning,
    UnknownSolverError,
)
from privopt.mechanisms import MECHANISMS, opsamp
from privopt.models import ModelInfo, absolute_regression, attach_info, hinge_halfspace
from privopt.perturbation import is_transformed
from privopt.solvers import TerminationCondition
from privopt.solvers.examples import market_split

from tests.conftest import solver_available

# the module (the name privopt.mechanisms.opsamp is the function)
parallel_mod = sys.modules["privopt.mechanisms._parallel"]  # the worker side of the OPSamp oracle calls

BETA3 = 2 * math.exp(-3)      # 1 + ln(2 / beta) = 4
DELTA5 = 4 * math.exp(-5)     # d = 2: ln(2d / delta) = 5


# --- a user's own LP: absolute-loss regression over a box ---------------------

def _data(n=12, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(-1, 1, size=(n, d)), 2)
    y = np.round(X @ np.linspace(0.5, -0.3, d) + rng.normal(0, 0.2, size=n), 2)
    return X, y


def abs_model(X, y, bound=1.0, C=None, info=True, lower=None):
    """min sum_i |y_i - <x_i, w>| / C over the box, written as a user would (no lambdas)."""
    n, d = X.shape
    C = C if C is not None else float(np.abs(y).max() + bound * np.abs(X).max(axis=0).sum())
    lb = -bound if lower is None else lower
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), bounds=(lb, bound))
    m.t = pyo.Var(range(n), domain=pyo.NonNegativeReals)
    m.c = pyo.ConstraintList()
    for i in range(n):
        score = sum(float(X[i, j]) * m.w[j] for j in range(d))
        m.c.add(m.t[i] >= float(y[i]) - score)
        m.c.add(m.t[i] >= score - float(y[i]))
    m.loss = pyo.Objective(expr=sum(m.t[i] for i in range(n)) / C)
    if info:
        attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=float(np.abs(X).max() / C),
                                 n_samples=n, public_constraints=("w",)))   # the box: public numbers
    return m, C


def linprog_abs(X, y, C, bound, sigma, lower=None):
    """argmin over the box of sum_i |y_i - <x_i, w>| / C - <sigma, w>, by scipy."""
    n, d = X.shape
    lb = -bound if lower is None else lower
    c = np.concatenate([-np.asarray(sigma), np.full(n, 1.0 / C)])
    A = np.block([[-X, -np.eye(n)], [X, -np.eye(n)]])      # y - Xw <= t ;  Xw - y <= t
    b = np.concatenate([-y, y])
    res = optimize.linprog(c, A_ub=A, b_ub=b, bounds=[(lb, bound)] * d + [(0, None)] * n, method="highs")
    assert res.status == 0
    return res.x[:d]


def linprog_hinge(X, y_pm, C, bound, sigma):
    """argmin over the box of sum_i max(0, 1 - y_i <x_i, w>) / C - <sigma, w>."""
    n, d = X.shape
    c = np.concatenate([-np.asarray(sigma), np.full(n, 1.0 / C)])
    A = np.hstack([-(y_pm[:, None] * X), -np.eye(n)])          # 1 - y <x, w> <= xi
    res = optimize.linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=[(-bound, bound)] * d + [(0, None)] * n,
                           method="highs")
    assert res.status == 0
    return res.x[:d]


@pytest.fixture(scope="module")
def threads():
    with ThreadPoolExecutor(2) as pool:
        yield pool


# --- 1. parameters against hand-computed values ---------------------------------

def test_parameters_paper_m_hand_values():
    # d = 2, epsilon = 2, n = 25, D_inf = 1, D_2 = sqrt(2), G = 0.5, alpha = 0.1,
    # delta = 4 e^-5 (ln(2d/delta) = ln(e^5) = 5), beta = 2 e^-3 (1 + ln(2/beta) = 4).
    p = calibration.opsamp_parameters(2.0, DELTA5, 0.5, 1.0, math.sqrt(2), 25, 2, beta=BETA3, oracle_error=0.1)
    # gamma = sqrt(2) / (sqrt(25) * 2^(5/4) * 2^(1/4)) = sqrt(2) / (5 * 2^(3/2)) = 1/10
    assert p.gamma == pytest.approx(0.1, rel=1e-12)
    # m = 5 / (2 * 0.01) = 250
    assert p.n_oracle_calls == 250 and p.gamma_source == "paper"
    assert p.paper_n_oracle_calls == pytest.approx(250.0, rel=1e-12)
    # eta^2 = sqrt(2) * sqrt(4) * 2 / (250 * 0.25 * 4 * 1 * 4 * 25) = 4 sqrt(2) / 25000 = 2.2627417e-4
    assert p.eta == pytest.approx(0.015042412372345574, rel=1e-12)
    # A = 250 * eta * 0.5 * 4 * 1 + 0.1 / (10 * 0.5) = 500 eta + 0.02 = 7.54120618617
    assert p.stability_bound == pytest.approx(7.541206186172786, rel=1e-12)
    # D_1 = min(d D_inf, sqrt(d) D_2) = 2; L = ln(1/delta) = 5 - ln 4 = 3.61370563888
    # t_H = 2 sqrt(L / 500) = 0.170028365607; t_B = L 2/750 + sqrt((L 2/750)^2 + 2 L 2 A / 250) = 0.670030409765
    assert p.l1_diameter == 2.0
    assert p.t_hoeffding == pytest.approx(0.17002836560715648, rel=1e-12)
    assert p.t_bernstein == pytest.approx(0.6700304097647247, rel=1e-12)
    # A + min(t_H, t_B) = 7.71 exceeds D_1: two points of W are never further apart, lambda = D_1
    assert p.lambda_ == 2.0
    # the output step's grid: gamma = 2^floor(log2(lambda / d) - 20) = 2^-20, t = (lambda/gamma + d)/eps
    # = (2^21 + 2)/2 = 2^20 + 1 grid units, so laplace_scale = t gamma = 1 + 2^-20 (lambda/eps = 1)
    assert p.output_grid.exponent == -20 and p.output_grid.parameter == 2**20 + 1
    assert p.laplace_scale == 1.0 + 2.0**-20 and p.output_grid.epsilon == 2.0
    assert p.as_dict()["lambda"] == p.lambda_ and "lambda_" not in p.as_dict()


def test_parameters_from_given_m():
    # d = 1, epsilon = 1, D_inf = D_2 = D_1 = 1, G = 1, n = 10^7, delta = e^-5 (L = 5),
    # beta = 2 e^-3 (1 + ln(2/beta) = 4), oracle error 0:
    #   eta = sqrt(sqrt(2) / (250 * 4 * 10^7)) = 2^(1/4) / 10^5 = 1.189207115e-5, A = 250 eta = 2.97301778751e-3
    kw = dict(beta=BETA3)
    p = calibration.opsamp_parameters(1.0, math.exp(-5), 1.0, 1.0, 1.0, 10**7, 1, n_oracle_calls=1000, **kw)
    assert (p.n_oracle_calls, p.gamma_source) == (1000, "n_oracle_calls")
    assert p.gamma == pytest.approx(math.sqrt((5 + math.log(2)) / 2000), rel=1e-12)  # reported, unused
    assert p.eta == pytest.approx(2 ** 0.25 / 1e5, rel=1e-12)
    assert p.stability_bound == pytest.approx(2.9730177875068025e-3, rel=1e-12)
    # m = 1000: t_H = sqrt(5/2000) = 0.05; t_B = 5/3000 + sqrt((5/3000)^2 + 10 A / 1000) = 7.36824150638e-3
    assert p.t_hoeffding == pytest.approx(0.05, rel=1e-12)
    assert p.t_bernstein == pytest.approx(7.368241506379446e-3, rel=1e-12)
    assert p.lambda_ == pytest.approx(0.010341259293886249, rel=1e-12)       # A + t_B
    # m = 10: t_H = 0.5, t_B = 0.342025714238: lambda = A + t_B = 0.344998732026
    p10 = calibration.opsamp_parameters(1.0, math.exp(-5), 1.0, 1.0, 1.0, 10**7, 1, n_oracle_calls=10, **kw)
    assert p10.lambda_ == pytest.approx(0.3449987320259614, rel=1e-12)
    # every m >= 1 is private (no gamma <= 1 condition any more); fewer calls, more noise
    p1 = calibration.opsamp_parameters(1.0, math.exp(-5), 1.0, 1.0, 1.0, 10**7, 1, n_oracle_calls=1, **kw)
    assert p1.lambda_ == 1.0 > p10.lambda_ > p.lambda_          # m = 1: capped at D_1
    # a smaller W in l1 (given D_1) gets less noise; D_1 < D_2 is refused
    q = calibration.opsamp_parameters(1.0, 1e-3, 1.0, 1.0, 1.0, 10**7, 4, n_oracle_calls=100, l1_diameter=2.0)
    r = calibration.opsamp_parameters(1.0, 1e-3, 1.0, 1.0, 1.0, 10**7, 4, n_oracle_calls=100)
    assert r.l1_diameter == 2.0 and q.lambda_ == r.lambda_      # default min(4 * 1, 2 * 1) = 2
    big = calibration.opsamp_parameters(1.0, 1e-3, 1.0, 1.0, 2.0, 10**7, 4, n_oracle_calls=100)
    assert big.l1_diameter == 4.0 and big.lambda_ > r.lambda_
    with pytest.raises(ParameterError) as err:
        calibration.opsamp_parameters(1.0, 1e-3, 1.0, 1.0, 2.0, 10**7, 4, l1_diameter=1.5)
    assert err.value.parameter == "l1_diameter"


def test_theorem7_is_reported_as_a_rate_not_a_bound():
    p = calibration.opsamp_parameters(2.0, DELTA5, 0.5, 1.0, math.sqrt(2), 25, 2, beta=BETA3, oracle_error=0.1)
    assert p.alpha_source == "privopt"
    # d^(5/4) G D_inf sqrt(D_2 ln(1/beta)) / sqrt(eps n) + alpha ln(1/beta) / eps
    L = math.log(1 / BETA3)
    rate = 2**1.25 * 0.5 * math.sqrt(math.sqrt(2) * L) / math.sqrt(50) + 0.1 * L / 2.0
    assert p.alpha_theorem7_rate == pytest.approx(rate, rel=1e-12)
    assert "alpha_theorem7" not in p.as_dict()            # no made-up constant turns it into a bound


def test_simplex_counterexample_lemma9_fails_new_bound_holds():
    """W = the simplex in R^100, constant losses plus one record that differs, exact oracle.

    The oracle's answer for sigma is the vertex e_j maximizing sigma_j - c_j (c the loss of the
    vertices), computed here by numpy.  [NRVW20, Lemma 9] claims that the average of m = 1000
    answers lies within 2 D_inf gamma of its mean in l1 with probability 1 - delta/2; it fails
    with probability about 0.998.  privopt's bound on the coupled sensitivity
    ||W(D, Sigma) - W(D', Sigma)||_1 <= A + min(t_H, t_B) holds in every trial (and so does its
    premise E[Y_k] <= A)."""
    d, m, delta, trials = 100, 1000, 1e-3, 300
    n, eps, G = 10**9, 1.0, 1.0
    p = calibration.opsamp_parameters(eps, delta, G, 1.0, math.sqrt(2), n, d, n_oracle_calls=m, l1_diameter=2.0)
    rng = np.random.default_rng(0)
    c_D = np.zeros(d)                       # losses summed over records, per vertex
    c_Dp = c_D.copy()
    c_Dp[:50] += 1.0                        # one record's loss is 1 on half of the vertices in D'
    old_fail = new_fail = 0
    y_mean = []
    for _ in range(trials):
        sig = rng.exponential(1.0 / p.eta, size=(m, d))
        a = np.argmax(sig - c_D, axis=1)
        b = np.argmax(sig - c_Dp, axis=1)
        avg_D = np.bincount(a, minlength=d) / m
        avg_Dp = np.bincount(b, minlength=d) / m
        old_fail += np.abs(avg_D - 1.0 / d).sum() > 2 * 1.0 * p.gamma     # Lemma 9, E = uniform
        new_fail += np.abs(avg_D - avg_Dp).sum() > p.lambda_
        y_mean.append(2.0 * np.mean(a != b))
    assert old_fail / trials > 0.99 > delta / 2
    assert new_fail == 0 and p.lambda_ < p.l1_diameter        # holds, and is not the trivial cap
    assert np.mean(y_mean) <= p.stability_bound


def test_refuses_impractical_paper_m():
    # n = 1000: gamma = 0.1 / sqrt(40), m = 250 * 40 = 10,000 calls: the limit, accepted
    p = calibration.opsamp_parameters(2.0, DELTA5, 0.5, 1.0, math.sqrt(2), 1000, 2)
    assert p.n_oracle_calls == calibration._opsamp.MAX_PAPER_ORACLE_CALLS == 10_000
    # n = 25000: m = 250 * 1000 = 250,000 calls: refused with the size, an m to choose and its cost
    with pytest.raises(ParameterError) as err:
        calibration.opsamp_parameters(2.0, DELTA5, 0.5, 1.0, math.sqrt(2), 25_000, 2)
    msg = str(err.value)
    assert err.value.parameter == "n_oracle_calls"
    assert "250,000" in msg and "n_oracle_calls=100 gives laplace_scale" in msg
    # the quoted price is the one the given m really gets
    p100 = calibration.opsamp_parameters(2.0, DELTA5, 0.5, 1.0, math.sqrt(2), 25_000, 2, n_oracle_calls=100)
    assert f"laplace_scale={p100.laplace_scale:.4g}" in msg


def test_utility_bound_closed_form():
    # d = 1, m = 1: both Gamma quantiles are exponential ones, Q(1 - beta/2) = scale * ln(2/beta) = 3 scale.
    # epsilon = 1, delta = 0.5, G = 1, D_inf = D_2 = 1, n = 10, oracle error 0:
    #   eta = sqrt(1 * sqrt(2) * 1 / (250 * 1 * 1 * 1 * 4 * 10)) = 2^(1/4) / 100 = 0.0118920711500
    #   A = 250 * 0.01189207115 = 2.97301778751 > D_1 = 1, so lambda = D_1 = 1
    #   the output grid: gamma = 2^-20, laplace_scale = (lambda/gamma + d) gamma / eps = 1 + 2^-20
    #   alpha = 1 * 3 / (eta * 1 * 10) + 1 * 3 * (1 + 2^-20) = 25.2268924576 + 3.00000286102
    p = calibration.opsamp_parameters(1.0, 0.5, 1.0, 1.0, 1.0, 10, 1, n_oracle_calls=1, beta=BETA3)
    assert p.eta == pytest.approx(2 ** 0.25 / 100, rel=1e-12)
    assert p.lambda_ == 1.0 and p.laplace_scale == 1.0 + 2.0**-20
    assert p.alpha_perturbation == pytest.approx(25.226892457611438, rel=1e-9)
    assert p.alpha_laplace == pytest.approx(3.0 * (1.0 + 2.0**-20), rel=1e-9)
    assert p.alpha == pytest.approx(28.226892457611438 + 3.0 * 2.0**-20, rel=1e-9)


def test_utility_bound_quantiles_by_simulation():
    """Each random term of alpha is exceeded with probability beta/2 (the union: <= beta)."""
    eps, delta, G, Dinf, D2, n, d, m, beta = 1.0, 1e-3, 0.2, 2.0, 3.0, 50, 3, 12, 0.1
    p = calibration.opsamp_parameters(eps, delta, G, Dinf, D2, n, d, n_oracle_calls=m, beta=beta)
    rng = np.random.default_rng(5)
    reps = 40_000
    sig = rng.exponential(1 / p.eta, size=(reps, m * d)).sum(axis=1)          # sum_k ||sigma_k||_1
    lap = np.abs(rng.laplace(0, p.laplace_scale, size=(reps, d))).sum(axis=1)  # ||mu||_1
    for term, limit in ((Dinf * sig / (m * n), p.alpha_perturbation), (G * lap, p.alpha_laplace)):
        rate = float(np.mean(term > limit))
        assert abs(rate - beta / 2) < 4 * math.sqrt(beta / 2 * (1 - beta / 2) / reps), rate


@pytest.mark.parametrize("kwargs, parameter", [
    (dict(epsilon=0), "epsilon"), (dict(delta=1.0), "delta"), (dict(lipschitz=-1), "lipschitz"),
    (dict(linf_diameter=0), "linf_diameter"), (dict(l2_diameter=0.5), "l2_diameter"),
    (dict(n_samples=0), "n_samples"), (dict(dim=0), "dim"), (dict(beta=1.0), "beta"),
    (dict(oracle_error=-0.1), "oracle_error"), (dict(n_oracle_calls=0), "n_oracle_calls"),
])
def test_parameters_reject_bad_values(kwargs, parameter):
    args = dict(epsilon=1.0, delta=1e-3, lipschitz=1.0, linf_diameter=1.0, l2_diameter=1.4, n_samples=10, dim=2,
                n_oracle_calls=50)
    args.update(kwargs)
    with pytest.raises(ParameterError) as err:
        calibration.opsamp_parameters(**args)
    assert err.value.parameter == parameter


# --- 2. the mechanism: exact oracle answers, noise, output -----------------------

def test_lipschitz_is_a_deprecated_alias_of_lipschitz_l1():
    """opdisc's lipschitz is an l2 constant; opsamp's G is l1 and is called lipschitz_l1.
    The old name still works, warns naming the new one, and gives the same release."""
    X, y = _data()
    model, C = abs_model(X, y, info=False)
    kw = dict(epsilon=2.0, delta=1e-3, n_samples=12, n_oracle_calls=4, random_state=5, progress=False,
              public_constraints="w")
    with ThreadPoolExecutor(1) as pool:
        new = opsamp(model, lipschitz_l1=0.3, executor=pool, **kw)
        with pytest.warns(DeprecationWarning, match=r"opsamp\(lipschitz=\.\.\.\) is deprecated.*lipschitz_l1="):
            old = opsamp(model, lipschitz=0.3, executor=pool, **kw)
    assert old.weights.tobytes() == new.weights.tobytes()
    assert old.parameters["lipschitz_l1"] == new.parameters["lipschitz"] == 0.3


def _try_solve_lock(queue):
    from privopt.solvers._dispatch import solve_lock

    got = solve_lock().acquire(timeout=5)
    queue.put(got)


@pytest.mark.skipif(not hasattr(__import__("os"), "register_at_fork"), reason="needs os.register_at_fork")
def test_one_solve_lock_reset_in_a_forked_child():
    """The worker side and solve() share ONE lock, and a child forked while another
    thread holds it gets a fresh one (else its first solve would wait forever)."""
    import multiprocessing

    from privopt.solvers._dispatch import solve_lock

    assert parallel_mod._solve_lock() is solve_lock()
    held, release = threading.Event(), threading.Event()

    def hold():
        with solve_lock():
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_try_solve_lock, args=(queue,))
        child.start()
        got = queue.get(timeout=30)
        child.join(30)
    finally:
        release.set()
        holder.join()
    assert got is True


def test_persistent_oracle_keeps_one_model_and_gives_the_cold_answers():
    X, y = _data(n=40, seed=4)
    model, C = abs_model(X, y)
    payload = privopt.mechanisms._parallel.dumps_model(model)
    names = tuple(pyo.ComponentUID(model.w[j]) for j in range(2))
    how = parallel_mod.OracleSolve("highs", abs_gap=1e-6)
    rng = np.random.default_rng(3)
    key = "test-persistent"
    parallel_mod._KEPT.pop(key, None)
    kept = None
    for _ in range(6):
        sigma = rng.exponential(0.5, size=2)
        warm = parallel_mod.oracle_call(payload, names, sigma, how, key, True)
        cold = parallel_mod.oracle_call(payload, names, sigma, how)
        assert warm.certified and cold.certified
        np.testing.assert_allclose(warm.values, cold.values, atol=1e-7)
        np.testing.assert_allclose(warm.values, linprog_abs(X, y, C, 1.0, sigma), atol=1e-6)
        state = parallel_mod._KEPT[key]
        assert kept is None or state.model is kept          # built once, reused
        kept = state.model
    # a solver without a persistent path (GLPK) takes the cold path
    if solver_available("glpk"):
        glpk = dataclasses.replace(how, solver="glpk")
        answer = parallel_mod.oracle_call(payload, names, sigma, glpk, "test-glpk", True)
        assert answer.certified and "test-glpk" not in parallel_mod._KEPT


class _PicklingThreads(ThreadPoolExecutor):
    """A thread pool that pickles every task's arguments, as a process pool, dask or
    Ray must, and keeps them."""

    def __init__(self):
        super().__init__(2)
        self.tasks = []

    def submit(self, fn, /, *args, **kwargs):
        self.tasks.append(pickle.loads(pickle.dumps(args)))
        return super().submit(fn, *args, **kwargs)


def test_workers_get_the_solve_options_as_one_frozen_picklable_record():
    """Each oracle task carries an OracleSolve: the run's solver, time limit, threads,
    abs_gap and solver options, frozen, and not the executor (which cannot pickle)."""
    X, y = _data()
    model, _ = abs_model(X, y)
    with _PicklingThreads() as pool:
        res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=4, random_state=0, executor=pool,
                     time_limit=30.0, abs_gap=1e-5, solver_options={"presolve": "off"}, progress=False)
    assert res.certified and pool.tasks
    expected = parallel_mod.OracleSolve("highs", 30.0, None, 1e-5, (("presolve", "off"),))
    for args in pool.tasks:                # (payload, names, sigmas, how, key, keep, stop)
        assert args[3] == expected
    with pytest.raises(dataclasses.FrozenInstanceError):
        expected.time_limit = 1.0          # type: ignore[misc]
    options = expected.solve_options()     # what certified_solve gets in the worker
    assert (options.solver, options.time_limit, options.abs_gap, options.options) == (
        "highs", 30.0, 1e-5, {"presolve": "off"})


def test_persistent_path_applies_the_failure_policy(monkeypatch):
    """An uncertified warm re-solve stops the run like a cold one."""
    from privopt.solvers._highs_costs import HighsCostSession

    X, y = _data()
    model, _ = abs_model(X, y)
    real = HighsCostSession.solve
    seen = []

    def flaky(self, costs):
        values, report = real(self, costs)
        seen.append(report)
        if len(seen) == 2:
            report = dataclasses.replace(report, certified_optimal=False,
                                         termination=TerminationCondition.maxTimeLimit)
        return values, report

    monkeypatch.setattr(HighsCostSession, "solve", flaky)
    with ThreadPoolExecutor(1) as pool:
        # call 1 builds, 2-3 are warm; which call failed depends on the data and the noise: not said
        with pytest.raises(NotCertifiedError, match="an OPSamp oracle call") as err:
            opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=12, random_state=0, executor=pool,
                   progress=False)
    assert "call 3" not in str(err.value)
    assert 2 <= len(seen) <= 11          # the rest is cancelled (the one worker may have run ahead)


@pytest.mark.parametrize("which", ["absolute", "hinge"])
def test_same_answer_persistent_or_cold_on_every_executor(which, threads):
    if which == "absolute":
        X, y = _data(n=60, seed=8)
        model, _ = abs_model(X, y)
    else:
        rng = np.random.default_rng(2)
        Xh = rng.normal(size=(80, 3))
        model = hinge_halfspace(Xh, np.where(Xh @ [1.0, -1.0, 0.5] > 0, 1, -1), x_bound=3.0)
    kw = dict(epsilon=2.0, delta=1e-3, n_oracle_calls=12, progress=False, project=False)
    for seed in (0, 1, 2):
        cold = opsamp(model, random_state=seed, executor=threads, persistent=False, **kw)
        warm = opsamp(model, random_state=seed, executor=threads, **kw)
        np.testing.assert_allclose(warm.weights, cold.weights, atol=1e-7)
        assert warm.certified and cold.certified
    owned = opsamp(model, random_state=0, **kw)                 # privopt's own process pool
    np.testing.assert_allclose(owned.weights,
                               opsamp(model, random_state=0, executor=threads, persistent=False, **kw).weights,
                               atol=1e-7)

def test_each_oracle_answer_is_the_exact_argmin():
    X, y = _data()
    model, C = abs_model(X, y)
    payload = privopt.mechanisms._parallel.dumps_model(model)
    names = tuple(pyo.ComponentUID(model.w[j]) for j in range(2))
    rng = np.random.default_rng(1)
    how = parallel_mod.OracleSolve("highs", abs_gap=1e-6)
    for scale in (0.05, 0.3, 2.0):
        sigma = rng.exponential(scale, size=2)
        answer = parallel_mod.oracle_call(payload, names, sigma, how)
        assert answer.certified and answer.report.certified_optimal
        np.testing.assert_allclose(answer.values, linprog_abs(X, y, C, 1.0, sigma), atol=1e-6)


def test_output_is_mean_of_argmins_plus_laplace(threads):
    X, y = _data()
    model, C = abs_model(X, y)
    with pytest.warns(NoiseDisclosureWarning):
        res = opsamp(model, epsilon=4.0, delta=1e-3, n_oracle_calls=8, random_state=11, executor=threads,
                     progress=False, return_noise=True, keep_report=True)
    p = res.parameters
    m, d = 8, 2
    # all noise from the one generator, sigma_k first (RATE eta: numpy scale 1/eta), then mu
    g = np.random.default_rng(11)
    sig = g.exponential(scale=1 / p["eta"], size=(m, d))
    # the output step: exact discrete Laplace integers on the grid 2^k, in grid units
    grid = calibration.grid_laplace(p["lambda"], 4.0, d)
    z = np.array([discrete_laplace(g, grid.parameter) for _ in range(d)], dtype=float)
    mu = z * grid.step
    assert p["grid_step"] == grid.step and p["laplace_scale"] == grid.scale
    np.testing.assert_array_equal(res.noise, np.vstack([sig, mu]))
    argmins = np.array([linprog_abs(X, y, C, 1.0, s) for s in sig])
    # the default release is projected onto the box [-1, 1]^2 of the declared bounds
    np.testing.assert_allclose(res.weights, np.clip(argmins.mean(axis=0) + mu, -1.0, 1.0), atol=1e-6)
    assert res.parameters["projected"] is True
    with pytest.warns(NoiseDisclosureWarning):
        raw = opsamp(model, epsilon=4.0, delta=1e-3, n_oracle_calls=8, random_state=11, executor=threads,
                     progress=False, return_noise=True, project=False)
    np.testing.assert_allclose(raw.weights, argmins.mean(axis=0) + mu, atol=1e-6)
    assert raw.parameters["projected"] is False
    assert res.mechanism == "opsamp" and res.certified and (res.epsilon, res.delta) == (4.0, 1e-3)
    assert len(res.report) == m and all(r.certified_optimal for r in res.report)
    # the parameters are the calibration's, with the info's G and the box's diameters;
    # the oracle error is the certification tolerance abs_gap / n
    expected = calibration.opsamp_parameters(4.0, 1e-3, float(np.abs(X).max() / C), 2.0, math.sqrt(8), 12, 2,
                                             n_oracle_calls=8, oracle_error=1e-6 / 12, l1_diameter=4.0).as_dict()
    for key in ("n_oracle_calls", "gamma", "eta", "lambda", "laplace_scale", "oracle_error",
                "stability_bound", "t_hoeffding", "t_bernstein", "l1_diameter"):
        assert p[key] == pytest.approx(expected[key], rel=1e-12), key
    # the utility bound on L/n is alpha_per_record (selection's "alpha" is a total); the old key reads, warned
    assert p["alpha_per_record"] == pytest.approx(expected["alpha"], rel=1e-12) and "alpha" not in list(p)
    with pytest.warns(DeprecationWarning, match="alpha_per_record"):
        assert p["alpha"] == p["alpha_per_record"]
    assert p["diameter_source"] == {"linf_diameter": "variable bounds", "l2_diameter": "variable bounds",
                                    "l1_diameter": "variable bounds"}
    # the caller's model is untouched
    assert not is_transformed(model) and model.loss.active and model.w[0].value is None


def test_diameters_from_declared_bounds_and_arguments(threads):
    X, y = _data()
    model, C = abs_model(X, y, bound=2.0, lower=-1.0)        # box [-1, 2]^2: widths 3, 3
    res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=0, executor=threads,
                 progress=False)
    assert res.parameters["linf_diameter"] == 3.0
    assert res.parameters["l2_diameter"] == pytest.approx(math.sqrt(18), rel=1e-12)
    res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=0, executor=threads,
                 progress=False, linf_diameter=4.0, l2_diameter=5.0)
    assert (res.parameters["linf_diameter"], res.parameters["l2_diameter"]) == (4.0, 5.0)
    assert res.parameters["diameter_source"]["l2_diameter"] == "argument"


def test_same_result_on_every_executor(threads):
    """Process pool, thread pool, dask (executor and Client), default: identical bits."""
    distributed = pytest.importorskip("dask.distributed")
    X, y = _data(n=20, d=3, seed=3)
    model, _ = abs_model(X, y)
    kw = dict(epsilon=2.0, delta=1e-4, n_oracle_calls=10, random_state=123, progress=False, keep_report=True)
    results = {"threads": opsamp(model, executor=threads, **kw)}
    with ProcessPoolExecutor(2) as pool:
        results["processes"] = opsamp(model, executor=pool, **kw)
    results["default"] = opsamp(model, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        results["dask executor"] = opsamp(model, executor=client.get_executor(), **kw)
        results["dask client"] = opsamp(model, executor=client, **kw)
    ref = results.pop("threads")
    for name, res in results.items():
        np.testing.assert_array_equal(res.weights, ref.weights, err_msg=name)
        assert dict(res.parameters) == dict(ref.parameters), name
        assert [r.objective for r in res.report] == [r.objective for r in ref.report], name
    # a different seed gives a different answer
    other = opsamp(model, executor=threads, **{**kw, "random_state": 124})
    assert not np.array_equal(other.weights, ref.weights)


@pytest.mark.slow
def test_multiprocessing_pools_and_ray_give_the_same_answer(threads):
    """A multiprocessing.Pool, and on a local Ray instance both executor='ray' (privopt's own
    Ray pool, the model sent once per worker) and a user's ray.util.multiprocessing.Pool:
    the same bits as a thread pool for the same random_state."""
    import multiprocessing

    X, y = _data(n=20, d=3, seed=3)
    model, _ = abs_model(X, y)
    kw = dict(epsilon=2.0, delta=1e-4, n_oracle_calls=10, random_state=123, progress=False)
    ref = opsamp(model, executor=threads, **kw)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        res = opsamp(model, executor=pool, **kw)
    np.testing.assert_array_equal(res.weights, ref.weights)
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'privopt[ray]')")
    from ray.util.multiprocessing import Pool

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        res = opsamp(model, executor="ray", **kw)
        np.testing.assert_array_equal(res.weights, ref.weights)
        assert ray.is_initialized()                                  # the user's session is left alone
        user_pool = Pool(2)
        try:
            res = opsamp(model, executor=user_pool, **kw)
        finally:
            user_pool.terminate()
        np.testing.assert_array_equal(res.weights, ref.weights)
    finally:
        ray.shutdown()


def test_executor_ray_without_ray_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)   # "import ray" now fails, as without the package
    X, y = _data(n=20, d=3, seed=3)
    model, _ = abs_model(X, y)
    with pytest.raises(ImportError, match=r"privopt\[ray\]"):
        opsamp(model, epsilon=2.0, delta=1e-4, n_oracle_calls=4, random_state=0, executor="ray", progress=False)


@pytest.mark.slow
def test_dask_cluster_of_processes_gives_the_same_answer(threads):
    distributed = pytest.importorskip("dask.distributed")
    X, y = _data(n=20, d=3, seed=3)
    model, _ = abs_model(X, y)
    kw = dict(epsilon=2.0, delta=1e-4, n_oracle_calls=10, random_state=123, progress=False)
    ref = opsamp(model, executor=threads, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = opsamp(model, executor=client, **kw)
    np.testing.assert_array_equal(res.weights, ref.weights)


def test_laplace_step_has_the_stated_scale(threads):
    """Every oracle answer is the corner (1, ..., 1) whatever sigma >= 0, so output - 1 = mu:
    over 10 seeds x 200 coordinates it is Laplace(0, lambda/epsilon), and neither 0.75 nor
    1.33 times that."""
    d = 200
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), bounds=(0.0, 1.0))
    m.loss = pyo.Objective(expr=sum(1 - m.w[j] for j in range(d)) / d)
    samples, scale = [], None
    for seed in range(10):
        res = opsamp(m, epsilon=0.5, delta=1e-3, lipschitz_l1=0.01, n_samples=1000, n_oracle_calls=7, project=False,
                     random_state=seed, executor=threads, progress=False, public_constraints="w")
        scale = res.parameters["laplace_scale"]
        samples.append(res.weights - 1.0)
    z = np.concatenate(samples) / scale
    # lambda / epsilon by hand: D_inf = 1, D_2 = sqrt(200), D_1 = 200 (the box), G = 0.01,
    # n = 1000, beta = 0.05: eta = 5.49e-3, A = 250 eta 0.01 200^2 = 549 > D_1, so lambda = D_1 = 200
    eta = math.sqrt(math.sqrt(200) * math.sqrt(400) * 0.5 / (250 * 1e-4 * 200**2 * 1 * (1 + math.log(40)) * 1000))
    assert 250 * eta * 0.01 * 200**2 > 200
    # on the grid gamma = 2^floor(log2(200 / 200) - 20) = 2^-20: scale (200/gamma + 200) gamma / 0.5
    assert scale == 400.0 * (1.0 + 2.0**-20)
    released = np.concatenate(samples) + 1.0
    assert np.all(np.ldexp(released, 20) == np.rint(np.ldexp(released, 20)))   # every value on the grid
    assert stats.kstest(z, stats.laplace(0, 1).cdf).pvalue > 0.01
    for wrong in (0.75, 1.33):                                # the test has power
        assert stats.kstest(z, stats.laplace(0, wrong).cdf).pvalue < 1e-3, wrong


def test_progress_bar(threads, capsys):
    X, y = _data()
    model, _ = abs_model(X, y)
    opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=0, executor=threads, progress=True)
    err = capsys.readouterr().err
    assert "OPSamp oracle calls" in err and "8/8" in err
    opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=0, executor=threads, progress=False)
    assert "OPSamp" not in capsys.readouterr().err


def test_registered_and_decorator(threads):
    assert MECHANISMS["opsamp"] is opsamp
    X, y = _data()

    @privopt.private("opsamp", epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=2, executor=threads,
                     progress=False)
    def build(X, y):
        return abs_model(X, y)[0]

    direct = opsamp(abs_model(X, y)[0], epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=2,
                    executor=threads, progress=False)
    np.testing.assert_array_equal(build(X, y).weights, direct.weights)


def test_secure_source_by_default(threads):
    X, y = _data()
    model, _ = abs_model(X, y)
    kw = dict(epsilon=1.0, delta=1e-3, n_oracle_calls=8, executor=threads, progress=False, project=False)
    a, b = opsamp(model, **kw), opsamp(model, **kw)          # random_state=None: os.urandom
    assert np.all(np.isfinite(a.weights)) and not np.array_equal(a.weights, b.weights)


def test_run_ordered_keeps_order_and_bounds_pending_calls():
    from privopt.mechanisms._parallel import run_ordered

    class Counting(ThreadPoolExecutor):
        def __init__(self):
            super().__init__(2)
            self.pending = self.most = 0
            self.lock = threading.Lock()

        def _done(self, _):
            with self.lock:
                self.pending -= 1

        def submit(self, fn, *args):
            with self.lock:
                self.pending += 1
                self.most = max(self.most, self.pending)
            fut = super().submit(fn, *args)
            fut.add_done_callback(self._done)
            return fut

    with Counting() as pool:
        results, fatal = run_ordered(pool, lambda i: i * i, [(i,) for i in range(20)], max_in_flight=3)
        assert results == [i * i for i in range(20)] and fatal is None and pool.most <= 3
        results, fatal = run_ordered(pool, lambda i: i, [(i,) for i in range(20)], max_in_flight=1,
                                     is_fatal=lambda r: r == 4)
        assert fatal == 4 and results[:5] == [0, 1, 2, 3, 4] and results[5:] == [None] * 15


# --- 3. validation before any noise or solve -------------------------------------

class _RecordingExecutor(Executor):
    def __init__(self):
        self.calls = 0

    def submit(self, fn, /, *args, **kwargs):  # pragma: no cover - must never run
        self.calls += 1
        raise AssertionError("a call was submitted")


BAD = [
    (dict(epsilon=0), ParameterError, "epsilon"),
    (dict(epsilon="1"), ParameterTypeError, "epsilon"),
    (dict(delta=0.0), ParameterError, "delta"),
    (dict(delta=1.0), ParameterError, "delta"),
    (dict(lipschitz_l1=-1.0), ParameterError, "lipschitz_l1"),
    (dict(lipschitz=-1.0), ParameterError, "lipschitz"),            # the deprecated name is named
    (dict(lipschitz=1.0, lipschitz_l1=1.0), ParameterError, "lipschitz"),   # both
    (dict(linf_diameter=0.0), ParameterError, "linf_diameter"),
    (dict(linf_diameter="2"), ParameterTypeError, "linf_diameter"),
    (dict(l2_diameter=-1.0), ParameterError, "l2_diameter"),
    (dict(linf_diameter=3.0, l2_diameter=2.0), ParameterError, "l2_diameter"),
    (dict(n_samples=0), ParameterError, "n_samples"),
    (dict(n_samples=2.5), ParameterTypeError, "n_samples"),
    (dict(n_oracle_calls=0), ParameterError, "n_oracle_calls"),
    (dict(l1_diameter=0.5), ParameterError, "l1_diameter"),             # below D_2
    (dict(n_oracle_calls=True), ParameterTypeError, "n_oracle_calls"),
    (dict(n_oracle_calls=None, epsilon=0.01), ParameterError, "n_oracle_calls"),  # paper m too large (~80,000)
    (dict(n_samples=10**6), ParameterError, "n_samples"),  # contradicts the 12 records of the model
    (dict(beta=1.5), ParameterError, "beta"),
    (dict(oracle_error=-1.0), ParameterError, "oracle_error"),
    (dict(executor="threads"), ParameterTypeError, "executor"),
    (dict(solver="no_such_solver"), UnknownSolverError, "solver"),
    (dict(on_failure="ignore"), ParameterError, "on_failure"),
    (dict(time_limit=-1.0), ParameterError, "time_limit"),
    (dict(threads=0), ParameterError, "threads"),
    (dict(progress="yes"), ParameterTypeError, "progress"),
    (dict(random_state=-1), ParameterTypeError, "random_state"),
    (dict(weights="nosuch"), ModelError, "weights"),
]


@pytest.mark.parametrize("kwargs, exc, parameter", BAD)
def test_invalid_parameters_raise_before_any_solve(kwargs, exc, parameter, monkeypatch):
    X, y = _data()
    model, _ = abs_model(X, y)
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    monkeypatch.setattr(parallel_mod, "oracle_call", lambda *a: pytest.fail("an oracle call ran"))
    executor = _RecordingExecutor()
    args = dict(epsilon=1.0, delta=1e-3, n_oracle_calls=8, random_state=rng, executor=executor, progress=False)
    args.update(kwargs)
    with pytest.raises(exc) as err:
        opsamp(model, **args)
    assert err.value.parameter == parameter, str(err.value)
    assert executor.calls == 0 and rng.bit_generator.state == before   # no noise drawn


def test_model_errors_before_any_solve():
    X, y = _data()
    kw = dict(epsilon=1.0, delta=1e-3, n_oracle_calls=8, executor=_RecordingExecutor(), progress=False)
    model, _ = abs_model(X, y)
    model.loss.sense = pyo.maximize
    with pytest.raises(ModelError, match="maximized"):
        opsamp(model, **kw)
    model, _ = abs_model(X, y)
    model.other = pyo.Objective(expr=model.w[0])
    with pytest.raises(ModelError, match="exactly one active objective"):
        opsamp(model, **kw)
    model, _ = abs_model(X, y)
    attach_info(model, ModelInfo(loss_range=(0.0, 2.0), lipschitz_l1=1.0, n_samples=12))
    with pytest.raises(ModelError, match="width 1"):
        opsamp(model, **kw)
    model, _ = abs_model(X, y, info=False)           # no info: G and n are needed
    with pytest.raises(ModelError, match=r"public_constraints=\['w'\]"):   # its box: not declared
        opsamp(model, n_samples=12, lipschitz_l1=1.0, **kw)
    with pytest.raises(ParameterError) as err:
        opsamp(model, n_samples=12, public_constraints="w", **kw)
    assert err.value.parameter == "lipschitz_l1"
    with pytest.raises(ParameterError) as err:
        opsamp(model, lipschitz_l1=1.0, public_constraints="w", **kw)
    assert err.value.parameter == "n_samples"
    model, _ = abs_model(X, y)
    model.w[1].setub(None)                           # unbounded weight and no diameter given
    with pytest.raises(ParameterError) as err:
        opsamp(model, **kw)
    assert err.value.parameter == "linf_diameter"


def test_missing_solver_raises_before_any_solve():
    if solver_available("cplex"):
        pytest.skip("cplex is installed here")
    X, y = _data()
    model, _ = abs_model(X, y)
    with pytest.raises(SolverNotAvailableError):
        opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=8, solver="cplex",
               executor=_RecordingExecutor(), progress=False)


# --- 4. uncertified calls ----------------------------------------------------------

def _hard_kwargs(executor):
    # G tiny -> eta large -> sigma small: the perturbed market split stays hard
    return dict(weights="x", epsilon=1.0, delta=1e-3, lipschitz_l1=1e-5, n_samples=4, n_oracle_calls=6,
                time_limit=0.1, executor=executor, progress=False, random_state=0, keep_report=True)


def test_time_limited_call_raises_and_releases_nothing():
    model = market_split()       # built with rule=lambda: serialized with cloudpickle
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(NotCertifiedError, match="nothing is released") as err:
            opsamp(model, **_hard_kwargs(pool))
    assert err.value.report is not None and not err.value.report.certified_optimal
    assert err.value.report.termination == TerminationCondition.maxTimeLimit


def test_time_limited_call_returned_with_warning():
    model = market_split()
    with ThreadPoolExecutor(1) as pool, pytest.warns(UncertifiedReleaseWarning, match="WITHOUT a privacy"):
        res = opsamp(model, on_failure="return", **_hard_kwargs(pool))
    assert not res.certified and "certified=False" in repr(res)
    assert "n_uncertified" not in res.parameters and any(not r.certified_optimal for r in res.report)
    assert np.all(np.isfinite(res.weights)) and res.weights.shape == (40,)


def test_first_uncertified_call_stops_the_rest(monkeypatch):
    """Deterministic: call 3 of 12 is reported uncertified; nothing is released and the
    calls not yet started are cancelled."""
    X, y = _data()
    model, _ = abs_model(X, y)
    real = parallel_mod.certified_solve
    seen = []

    def flaky(m, *args, **kw):
        report = real(m, *args, **kw)
        seen.append(report)
        if len(seen) == 3:
            raise NotCertifiedError("stopped", dataclasses.replace(
                report, certified_optimal=False, termination=TerminationCondition.maxTimeLimit))
        return report

    monkeypatch.setattr(parallel_mod, "certified_solve", flaky)
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(NotCertifiedError, match="an OPSamp oracle call") as err:
            opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=12, random_state=0, executor=pool,
                   progress=False, persistent=False)
    assert "call 3" not in str(err.value)     # which call failed depends on the data: not said
    assert 3 <= len(seen) < 12
    seen.clear()
    with ThreadPoolExecutor(1) as pool, pytest.warns(UncertifiedReleaseWarning, match="Some of the 12") as rec:
        res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=12, random_state=0, executor=pool,
                     progress=False, on_failure="return", persistent=False)
    assert not res.certified and len(seen) == 12
    # how many calls failed, and which, depends on the data: neither in the warning nor the parameters
    text = " ".join(str(w.message) for w in rec)
    assert "1 of 12" not in text and "call 3" not in text and "n_uncertified" not in res.parameters


# --- 5. the catalogue's convex LPs on every LP solver ----------------------------

def _catalogue_data(seed=7, n=30):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(-1, 1, size=(n, 2)), 1)
    y_pm = np.where(X @ np.array([1.0, -0.5]) + rng.normal(0, 0.3, n) >= 0, 1, -1)
    y_reg = np.round(X @ np.array([0.6, -0.4]) + rng.normal(0, 0.1, n), 2)
    return X, y_pm, y_reg


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
@pytest.mark.parametrize("kind", ["hinge", "absolute"])
def test_catalogue_models_every_solver(kind, milp_solver, threads):
    X, y_pm, y_reg = _catalogue_data()
    if kind == "hinge":
        model = hinge_halfspace(X, y_pm, bound=1.0, x_bound=1.0)
        C = 1.0 + 1.0 * 2.0                       # 1 + b * sum_j beta_j
        argmin = lambda s: linprog_hinge(X, y_pm, C, 1.0, s)  # noqa: E731
    else:
        model = absolute_regression(X, y_reg, bound=1.0, x_bound=1.0, y_bound=2.0)
        C = 2.0 + 1.0 * 2.0                       # Y + b * sum_j beta_j
        argmin = lambda s: linprog_abs(X, y_reg, C, 1.0, s)  # noqa: E731
    res = opsamp(model, epsilon=2.0, delta=1e-3, n_oracle_calls=6, random_state=21, solver=milp_solver,
                 executor=threads, progress=False, return_noise=True, keep_report=True)
    p = res.parameters
    # the info's public constants: D_inf = 2b, D_2 = 2b sqrt(d), G = max_j beta_j / C, n
    assert (p["linf_diameter"], p["n_samples"], p["dim"]) == (2.0, 30, 2)
    assert p["l2_diameter"] == pytest.approx(2 * math.sqrt(2), rel=1e-12)
    assert p["lipschitz_l1"] == p["lipschitz"] == pytest.approx(1.0 / C, rel=1e-12)
    assert res.certified and all(r.certified_optimal for r in res.report)
    assert all(r.solver == milp_solver for r in res.report)
    sig, mu = res.noise[:-1], res.noise[-1]
    expected = np.mean([argmin(s) for s in sig], axis=0) + mu
    lo = np.array([v.lb for v in model.w.values()])
    hi = np.array([v.ub for v in model.w.values()])
    np.testing.assert_allclose(res.weights, np.clip(expected, lo, hi), atol=1e-6)


def test_default_answer_lies_in_W_and_large_noise_warns(threads):
    """The case users met: weights in [-1, 1]^3, n = 200, m = 50, eps = 1 released [26.9, -15.3, 16.5]."""
    from privopt.exceptions import NoiseDominatesWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, 1, -1)
    model = privopt.models.hinge_halfspace(X, y, x_bound=3.0)
    with pytest.warns(NoiseDominatesWarning, match="mostly noise"):
        res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=50, random_state=0, executor=threads,
                     progress=False)
    lo = np.array([v.lb for v in model.w.values()])
    hi = np.array([v.ub for v in model.w.values()])
    assert np.all(res.weights >= lo) and np.all(res.weights <= hi)
    assert res.parameters["laplace_scale_over_width"] > 1


@pytest.mark.slow
def test_kept_models_survive_concurrent_eviction(monkeypatch):
    """Threads of one worker insert and evict kept models at once (a thread pool running
    several OPSamp calls): no KeyError, at most _MAX_KEPT kept.  Two threads evicting the
    same oldest entry raised KeyError; the thread switch interval is made tiny so that the
    race would show at once.  Without the lock one round of 8 threads x 3,000 insertions
    fails about 3 times in 4 (291 of 400 rounds), so ten rounds miss the race about once in
    half a million runs.  The solver and the model copy are stubbed where the module reads
    them (it imports persistent_solver by name)."""
    import sys
    import threading

    import privopt.mechanisms._parallel as par

    monkeypatch.setattr(par, "persistent_solver", lambda solver: object())
    monkeypatch.setattr(par, "_transformed_copy", lambda *a, **k: (None, []))

    def one_round():
        monkeypatch.setattr(par, "_KEPT", {})
        errors, start = [], threading.Barrier(8)

        def work(t):
            start.wait()
            try:
                for i in range(3000):
                    par._persistent_state(f"{t}-{i}", b"", (), None, "highs")
            except Exception as exc:   # noqa: BLE001 - any failure is the finding
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors[:3]
        assert len(par._KEPT) <= par._MAX_KEPT

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(10):
            one_round()
    finally:
        sys.setswitchinterval(old_interval)


def test_parameters_refuse_an_unknown_keyword_naming_the_closest():
    """oracle_error and l1_diameter are keywords (**kwargs): a misspelt one fails like Python's own."""
    with pytest.raises(TypeError, match=r"opsamp_parameters\(\) got an unexpected keyword argument 'l1_diam'.*"
                                        r"'l1_diameter'"):
        calibration.opsamp_parameters(1.0, 1e-3, 1.0, 1.0, 1.0, 10**7, 4, n_oracle_calls=100, l1_diam=2.0)


def test_parameters_are_a_typed_frozen_record_read_as_the_documented_mapping():
    """OPSamp's parameters: typed fields, the calibration's values under the documented keys
    (lambda_ read as "lambda", the renamed "alpha" with a warning), frozen, picklable."""
    from privopt.mechanisms import OPSampReleaseParameters

    X, y = _data()
    model, _ = abs_model(X, y)
    with ThreadPoolExecutor(1) as pool:
        res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=4, random_state=0, executor=pool,
                     progress=False)
    p = res.parameters
    assert isinstance(p, OPSampReleaseParameters)
    assert p["lambda"] == p.lambda_ and "lambda" in list(p) and "lambda_" not in list(p)
    # lambda / epsilon, on the output grid: never below it (the privacy needs at least that scale)
    assert p["laplace_scale"] == p.laplace_scale and p.lambda_ / 1.0 <= p.laplace_scale <= p.lambda_ * (1 + 1e-5)
    assert p.diameter_source["linf_diameter"] == "variable bounds" and res.certified
    with pytest.warns(DeprecationWarning, match=r"parameters\['alpha_per_record'\]"):
        assert p["alpha"] == p.alpha_per_record
    assert "alpha" not in dict(p) and "epsilon" not in dict(p)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.eta = 0.0
    assert pickle.loads(pickle.dumps(res)).parameters == p == dict(p)
    with pytest.raises(KeyError):
        p["lambda_"]

"""Randomness: secure by default, reproducible under a seed, and no seed (or
stream) reused across independent draws.

* ``random_state=None`` draws every noise vector from the operating system
  (privopt._random.SecureGenerator) in opdisc, opsamp, rspm and
  PrivateHalfspaceClassifier (the baselines: tests/baselines/test_baselines.py), and no
  seeded numpy generator is created on the way;
* an int, a SeedSequence or a Generator in a given state reproduces a run;
* independent draws never share a stream: OPSamp's m exponential vectors and
  its Laplace vector are consecutive draws of one generator (not re-seeded),
  and each oracle call receives its own vector; two runs inside one call
  (the experiment runner, private grid search, an estimator refitted with one
  Generator, the audit's two data sets) get different noise.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import privopt
from privopt import _random, calibration
from privopt._exact import discrete_laplace
from privopt._random import SecureGenerator, check_random_state, spawn
from privopt.exceptions import NoiseDisclosureWarning
from privopt.models import hinge_halfspace, rspm_halfspace, zero_one_halfspace

from tests.conftest import require_solver

parallel_mod = sys.modules["privopt.mechanisms._parallel"]  # the worker side of the OPSamp oracle calls
opdisc_mod = sys.modules["privopt.mechanisms.opdisc"]
rspm_mod = sys.modules["privopt.mechanisms.rspm"]


def _X():
    return np.array([[0, 1], [1, 0], [1, 1], [2, 1], [0, 2], [1, 2], [2, 0], [2, 2]], dtype=float)


def _y():
    return np.array([1, -1, 1, -1, 1, -1, -1, 1])


def _run(kind, random_state, executor=None, **kw):
    """One run of ``kind`` with return_noise=True; returns the PrivateResult."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDisclosureWarning)
        if kind == "opdisc":
            return privopt.opdisc(zero_one_halfspace(_X(), _y()), epsilon=1.0, delta=1e-3,
                                  random_state=random_state, return_noise=True, **kw)
        if kind == "rspm":
            return privopt.rspm(rspm_halfspace(_X(), _y()), epsilon=1.0, random_state=random_state,
                                return_noise=True, **kw)
        own = executor is None
        pool = ThreadPoolExecutor(1) if own else executor
        try:
            return privopt.opsamp(hinge_halfspace(_X(), _y(), x_bound=2.0), epsilon=1.0, delta=1e-3,
                                  n_oracle_calls=8, random_state=random_state, executor=pool, progress=False,
                                  return_noise=True, **kw)
        finally:
            if own:
                pool.shutdown()


MECHS = ["opdisc", "opsamp", "rspm"]


# --- secure by default -------------------------------------------------------------------

@pytest.fixture
def secure_only(monkeypatch):
    """Count the draws from the operating system's secure source (every draw of the
    secure generator, its exact integers and the keyed streams' secrets come from
    os.urandom); fail if a numpy generator is created."""
    count = {"draws": 0}
    original = _random.os.urandom

    def counting(n):
        count["draws"] += 1
        return original(n)

    def forbidden(*a, **k):
        raise AssertionError("a seeded numpy generator was created although random_state=None")

    # scipy.stats calls default_rng while it is imported (the examples of its docstrings);
    # privopt imports it at the calibration's first use, so import it before forbidding.
    importlib.import_module("scipy.stats")
    monkeypatch.setattr(_random.os, "urandom", counting)
    monkeypatch.setattr(np.random, "default_rng", forbidden)
    return count


@pytest.mark.parametrize("kind", MECHS)
def test_mechanisms_default_to_the_secure_generator(kind, secure_only):
    require_solver("highs")
    a = _run(kind, None)
    drawn = secure_only["draws"]
    assert drawn >= 1
    b = _run(kind, None)
    assert secure_only["draws"] > drawn
    assert not np.array_equal(a.noise, b.noise)          # never the same noise twice


@pytest.mark.parametrize("mechanism", ["opdisc", "rspm"])
def test_estimator_defaults_to_the_secure_generator(mechanism, secure_only, monkeypatch):
    require_solver("highs")
    from privopt.estimators import PrivateHalfspaceClassifier

    seen = []
    mod = {"opdisc": opdisc_mod, "rspm": rspm_mod}[mechanism]
    original = mod.check_random_state

    def spy(rs):
        rng = original(rs)
        seen.append(rng)
        return rng

    monkeypatch.setattr(mod, "check_random_state", spy)
    PrivateHalfspaceClassifier(epsilon=1.0, mechanism=mechanism).fit(_X(), _y())
    assert len(seen) == 1 and isinstance(seen[0], SecureGenerator)
    assert secure_only["draws"] >= 1


def test_secure_generator_cannot_be_seeded_and_spawns_fresh_sources():
    g = check_random_state(None)
    assert isinstance(g, SecureGenerator) and g.secure
    children = spawn(g, 3)
    assert all(isinstance(c, SecureGenerator) for c in children) and len({id(c) for c in children}) == 3
    draws = [c.normal(size=8) for c in children]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])


# --- reproducible under a seed ---------------------------------------------------------------

@pytest.mark.parametrize("kind", MECHS)
def test_a_seed_reproduces_a_run(kind):
    require_solver("highs")
    a, b = _run(kind, 7), _run(kind, 7)
    np.testing.assert_array_equal(a.noise, b.noise)
    np.testing.assert_array_equal(a.weights, b.weights)
    # a SeedSequence or a Generator in the same state gives the same run
    np.testing.assert_array_equal(_run(kind, np.random.SeedSequence(7)).noise, a.noise)
    np.testing.assert_array_equal(_run(kind, np.random.default_rng(7)).noise, a.noise)
    assert not np.array_equal(_run(kind, 8).noise, a.noise)


def test_estimator_seed_reproduces_and_generator_advances():
    require_solver("highs")
    from privopt.estimators import PrivateHalfspaceClassifier

    seen = []
    original = opdisc_mod.draw_opdisc_noise

    def spy(rng, sigma, dim, size=None):
        eta = original(rng, sigma, dim, size)
        seen.append(eta.copy())
        return eta

    mp = pytest.MonkeyPatch()
    mp.setattr(opdisc_mod, "draw_opdisc_noise", spy)
    try:
        est = PrivateHalfspaceClassifier(epsilon=1.0, mechanism="opdisc", random_state=3)
        est.fit(_X(), _y())
        est.fit(_X(), _y())
        # an int seed: every fit is the same computation (scikit-learn's convention;
        # a run whose seed is known is not private anyway)
        np.testing.assert_array_equal(seen[0], seen[1])
        # one Generator: the second fit continues the stream -- different noise
        est = PrivateHalfspaceClassifier(epsilon=1.0, mechanism="opdisc", random_state=np.random.default_rng(3))
        est.fit(_X(), _y())
        est.fit(_X(), _y())
        np.testing.assert_array_equal(seen[2], seen[0])
        assert not np.array_equal(seen[3], seen[2])
    finally:
        mp.undo()


# --- distinct streams -----------------------------------------------------------------------

def test_opsamp_noise_is_one_stream_drawn_in_order():
    """sigma_1..sigma_m then mu are consecutive draws of ONE generator: the Laplace
    vector does not restart the stream (no seed reuse), and each oracle call gets
    its own sigma_k."""
    require_solver("highs")
    received = []
    original = parallel_mod.oracle_call

    def spy(payload, names, sigma, how, *rest):
        received.append(np.array(sigma, dtype=float))
        return original(payload, names, sigma, how, *rest)

    mp = pytest.MonkeyPatch()
    mp.setattr(parallel_mod, "oracle_call", spy)
    try:
        res = _run("opsamp", 11)
    finally:
        mp.undo()
    sigmas, mu = res.noise[:-1], res.noise[-1]
    m, d = sigmas.shape
    eta, step = res.parameters["eta"], res.parameters["grid_step"]
    t = calibration.grid_laplace(res.parameters["lambda"], res.epsilon, d).parameter
    g = np.random.default_rng(11)
    np.testing.assert_array_equal(sigmas, g.exponential(1.0 / eta, size=(m, d)))
    # the same generator, continued: the output step's exact integers on the grid
    np.testing.assert_array_equal(mu, [discrete_laplace(g, t) * step for _ in range(d)])
    fresh = np.random.default_rng(11)
    assert not np.allclose(mu, [discrete_laplace(fresh, t) * step for _ in range(d)])   # not re-seeded
    assert len({tuple(r) for r in res.noise}) == m + 1                      # m + 1 distinct vectors
    # each oracle call received its own sigma_k, in order
    assert len(received) == m
    np.testing.assert_array_equal(np.array(sorted(map(tuple, received))), np.array(sorted(map(tuple, sigmas))))


@pytest.mark.parametrize("kind", MECHS)
def test_one_generator_across_calls_never_repeats_noise(kind):
    require_solver("highs")
    g = np.random.default_rng(5)
    a, b = _run(kind, g), _run(kind, g)
    assert not np.array_equal(a.noise, b.noise)


def test_experiment_runner_gives_every_run_its_own_noise(tmp_path):
    """One call of the runner runs OPDisc and RSPM several times: every run has its
    own seed and its own noise vector, and seeds do not collide across methods."""
    require_solver("highs")
    import concurrent.futures as cf

    from privopt.datasets import make_planted_halfspace
    from privopt.experiments import run_experiment, task_seed

    seeds = {(m, e, r): task_seed(0, m, e, r) for m in ("opdisc", "rspm", "dpsgd", "dpagd", "noisy_sgd")
             for e in (0.1, 0.5, 1.0, 2.0) for r in range(50)}
    assert len(set(seeds.values())) == len(seeds)
    assert task_seed(0, "opdisc", 1.0, 0) != task_seed(1, "opdisc", 1.0, 0)

    noises = []
    mp = pytest.MonkeyPatch()
    for mod, name in ((opdisc_mod, "draw_opdisc_noise"), (rspm_mod, "draw_rspm_noise")):
        original = getattr(mod, name)

        def spy(*a, _original=original, _kind=name, **k):
            out = _original(*a, **k)
            noises.append((_kind, np.array(out, copy=True)))
            return out

        mp.setattr(mod, name, spy)
    try:
        data = make_planted_halfspace(60, 3, n_test=20, noise=0.05, random_state=0)
        with cf.ThreadPoolExecutor(2) as ex:
            rows = run_experiment(data.X_train, data.y_train, data.X_test, data.y_test,
                                  methods=["opdisc", "rspm"], epsilons=[1.0, 2.0], runs=3, executor=ex,
                                  out=str(tmp_path), progress=False, figures=False)
    finally:
        mp.undo()
    assert len(rows) == 12 and len(noises) == 12
    assert len({r["seed"] for r in rows}) == 12
    assert len({v.tobytes() for _, v in noises}) == 12


def test_grid_search_gives_every_fit_its_own_stream():
    from privopt.baselines import ObjectivePerturbationLogisticRegression, private_grid_search

    states = []
    original = ObjectivePerturbationLogisticRegression._fit_private

    def spy(self, Z, y, rng, eps, delta, p):
        states.append(rng.bit_generator.state["state"]["state"])
        return original(self, Z, y, rng, eps, delta, p)

    mp = pytest.MonkeyPatch()
    mp.setattr(ObjectivePerturbationLogisticRegression, "_fit_private", spy)
    try:
        rng = np.random.default_rng(0)
        X = rng.uniform(0, 1, size=(80, 3))
        y = np.where(X[:, 0] > 0.5, 1, -1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            private_grid_search(ObjectivePerturbationLogisticRegression(epsilon=1.0, bounds=(0, 1)),
                                {"alpha": [0.01, 0.1, 1.0]}, X, y, random_state=4)
    finally:
        mp.undo()
    assert len(states) == 4 and len(set(states)) == 4          # 3 fits + the refit


def test_audit_draws_independent_noise_for_the_two_data_sets():
    from privopt import audit

    target = audit.RSPMTarget(audit.design_instance(), epsilon=1.0)
    drawn = []
    original = target.draw_noise

    def spy(rng, size=None):
        out = original(rng, size)
        drawn.append(out.copy())
        return out

    target.draw_noise = spy
    audit.audit(target, n_samples=1000, random_state=0)
    assert len(drawn) == 2 and not np.array_equal(drawn[0], drawn[1])


def test_selection_estimator_seed_reproduces_and_generator_advances():
    """The same conventions for private selection, the estimator's default mechanism."""
    from privopt.estimators import PrivateHalfspaceClassifier

    X, y = _X(), _y()
    a = PrivateHalfspaceClassifier(epsilon=0.5, random_state=3).fit(X, y).coef_
    b = PrivateHalfspaceClassifier(epsilon=0.5, random_state=3).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    rng = np.random.default_rng(3)
    est = PrivateHalfspaceClassifier(epsilon=0.01, random_state=rng)
    draws = {tuple(est.fit(X, y).coef_[0]) for _ in range(8)}
    assert len(draws) > 1          # the stream advances: not the same point every time


def test_estimator_warm_start_defaults_to_the_secure_generator(secure_only):
    """With random_state=None both the warm start's noise and the selection's secret come
    from the secure source (no seeded numpy generator is created: the fixture forbids it)."""
    from privopt.estimators import PrivateHalfspaceClassifier

    rng = np.random.RandomState(0)          # the data only (a legacy generator, not default_rng)
    X = rng.uniform(0, 1, size=(300, 2))
    y = (X[:, 0] - X[:, 1] + rng.normal(0, 0.3, size=300) > 0).astype(int)
    a = PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), warm_start=True).fit(X, y)
    drawn = secure_only["draws"]
    assert a.warm_start_ is not None and drawn >= 2
    b = PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), warm_start=True).fit(X, y)
    assert secure_only["draws"] > drawn
    assert not np.array_equal(a.warm_start_.weights_, b.warm_start_.weights_)

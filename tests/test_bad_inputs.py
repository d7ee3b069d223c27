"""A catalogue of bad inputs across privopt's public API.

Every case calls one public function with one bad argument and checks that

* it raises a privopt error that is also a ValueError or TypeError
  (ParameterError, ParameterTypeError, ModelError, UnknownSolverError,
  SolverOptionError), whose ``.parameter`` names the argument to fix;
* it raises BEFORE any work: no solver runs (every solver runner, the oracle's
  ``solve`` and OPSamp's worker function are replaced by functions that fail
  the test), no noise is drawn (the generator passed as ``random_state`` is in
  the same state), no file is read or downloaded (``load_adult``);
* the caller's Pyomo model (component names, every Var's value, bounds, domain
  and fixed flag, every objective's activity, sense and expression,
  constraints, model info) and data arrays are unchanged.

Cases already covered by tests/test_opdisc.py and tests/test_solvers.py are
not repeated here.  (A known-but-missing solver is a SolverNotAvailableError,
a RuntimeError about the machine rather than the argument: see
tests/test_failures.py.)
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt import calibration
from privopt.exceptions import (
    ModelError,
    ParameterError,
    ParameterTypeError,
    PrivoptError,
    SolverOptionError,
    UnknownSolverError,
)
from privopt.models import (
    absolute_regression,
    get_info,
    hinge_halfspace,
    rspm_halfspace,
    squared_regression,
    zero_one_halfspace,
)

from ._toy import toy_data, zero_one_model

XFRM = "privopt.objective_perturbation"
MISSING = object()


# --- data and models -----------------------------------------------------------------

def _X():
    return np.array([[0, 1], [1, 0], [1, 1], [2, 1], [0, 2], [1, 2]], dtype=float)


def _y():
    return np.array([1, -1, 1, -1, 1, -1])


def _halfspace():
    return zero_one_halfspace(_X(), _y())


def _rspm_model():
    return rspm_halfspace(_X(), _y())


def _hinge():
    return hinge_halfspace(_X(), _y(), x_bound=2.0)


def _toy_model():
    X, y = toy_data(n=6, d=2, seed=0)
    return zero_one_model(X, y, grid=(-2, -1, 0, 1, 2), margin=1.0)


def _real_box_model(bounds=(-1.0, 1.0)):
    """A user's model whose weights are continuous (Reals), with these bounds."""
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), domain=pyo.Reals, bounds=bounds)
    m.loss = pyo.Objective(expr=m.w[0] - m.w[1])
    return m


def _maximized(make):
    def build():
        m = make()
        m.loss.sense = pyo.maximize
        return m
    return build


def _two_objectives(make):
    def build():
        m = make()
        m.second = pyo.Objective(expr=m.w[0])
        return m
    return build


def _no_objective(make):
    def build():
        m = make()
        m.loss.deactivate()
        return m
    return build


def _transformed(make, noise_size, normalize=True):
    def build():
        m = make()
        pyo.TransformationFactory(XFRM).apply_to(m, noise=np.zeros(noise_size), normalize=normalize)
        return m
    return build


def _continuous_separators():
    m = _rspm_model()
    for j in m.p:
        m.p[j].domain = pyo.Reals
    return m


class _NoExecutor(Executor):
    """An executor that fails the test if any call is submitted."""

    def submit(self, fn, /, *args, **kwargs):  # pragma: no cover - must never run
        raise AssertionError("an OPSamp oracle call was submitted before validation finished")


# --- the call of one case --------------------------------------------------------------

@dataclass
class Call:
    fn: Callable
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    models: tuple = ()
    arrays: tuple = ()
    rng: Any = None


def _kw(defaults, changes):
    out = {**defaults, **changes}
    return {k: v for k, v in out.items() if v is not MISSING}


def mech(name, make, **changes):
    """privopt.<name>(model, ...) with working defaults, then ``changes``."""
    defaults = {
        "opdisc": dict(epsilon=1.0, delta=1e-3),
        "opsamp": dict(epsilon=1.0, delta=1e-3, n_oracle_calls=8, progress=False),
        "rspm": dict(epsilon=1.0),
    }[name]

    def build():
        model = make()
        rng = np.random.default_rng(0)
        kw = _kw({**defaults, "random_state": rng}, changes)
        if name == "opsamp":
            kw.setdefault("executor", _NoExecutor())
        return Call(getattr(privopt, name), (model,), kw, models=(model,), rng=rng)
    return build


def builder(fn, X=_X, y=_y, **kwargs):
    def build():
        Xa, ya = X(), y()
        return Call(fn, (Xa, ya), kwargs, arrays=(Xa, ya))
    return build


def xfrm(make, **kwargs):
    def build():
        model = make()
        apply = pyo.TransformationFactory(XFRM).apply_to
        return Call(apply, (model,), kwargs, models=(model,))
    return build


def estimator(X=_X, y=_y, **params):
    def build():
        from privopt.estimators import PrivateHalfspaceClassifier

        Xa, ya = X(), y()
        rng = np.random.default_rng(0)
        params.setdefault("random_state", rng)
        est = PrivateHalfspaceClassifier(**params)
        return Call(est.fit, (Xa, ya), {}, arrays=(Xa, ya), rng=rng if params["random_state"] is rng else None)
    return build


def baseline(name, X=_X, y=_y, **params):
    def build():
        from privopt.baselines import PRIVATE_BASELINES

        Xa, ya = X(), y()
        rng = np.random.default_rng(0)
        est = PRIVATE_BASELINES[name](**{"epsilon": 1.0, "bounds": (0.0, 2.0), "random_state": rng, **params})
        return Call(est.fit, (Xa, ya), {}, arrays=(Xa, ya), rng=rng)
    return build


def decorated(**kwargs):
    """@privopt.private(...) on a builder of the 0/1 model, then called on data."""
    def build():
        Xa, ya = _X(), _y()
        deco = privopt.private("opdisc", **{"epsilon": 1.0, "delta": 1e-3, **kwargs})
        fn = deco(lambda X, y: zero_one_halfspace(X, y))
        return Call(fn, (Xa, ya), {}, arrays=(Xa, ya))
    return build


def call(fn, *args, **kwargs):
    def build():
        return Call(fn, args, kwargs)
    return build


def adult(**kwargs):
    def build():
        from privopt.datasets import load_adult

        return Call(load_adult, (), {"download": False, **kwargs})
    return build


def _X_nan():
    X = _X()
    X[2, 1] = np.nan
    return X


def _X_inf():
    X = _X()
    X[0, 0] = np.inf
    return X


def _y_one_class():
    return np.ones(6, dtype=int)


def _y_short():
    return _y()[:4]


def _y_nan():
    y = _y().astype(float)
    y[1] = np.nan
    return y


def _X_3d():
    return _X()[:, :, None]


def _X_1d():
    return _X()[:, 0]


def _X_empty():
    return np.zeros((0, 2))


def _y_empty():
    return np.zeros(0)


def _X_real():
    return _X() + 0.25


# --- the catalogue ---------------------------------------------------------------------
# (id, build, expected exception, parameter it must name)

CASES = [
    # privopt.opdisc (beyond tests/test_opdisc.py)
    ("opdisc-epsilon-bool", mech("opdisc", _halfspace, epsilon=True), ParameterTypeError, "epsilon"),
    ("opdisc-epsilon-none", mech("opdisc", _halfspace, epsilon=None), ParameterTypeError, "epsilon"),
    ("opdisc-epsilon-inf", mech("opdisc", _halfspace, epsilon=math.inf), ParameterError, "epsilon"),
    ("opdisc-delta-negative", mech("opdisc", _halfspace, delta=-1e-3), ParameterError, "delta"),
    ("opdisc-delta-nan", mech("opdisc", _halfspace, delta=math.nan), ParameterError, "delta"),
    ("opdisc-delta-string", mech("opdisc", _halfspace, delta="1e-3"), ParameterTypeError, "delta"),
    ("opdisc-continuous-weights", mech("opdisc", _hinge), ModelError, "weights"),
    ("opdisc-continuous-unbounded-weights", mech("opdisc", lambda: _real_box_model((None, None)), norm_bound=1.0,
                                          lipschitz=1.0, n_samples=3), ModelError, "weights"),
    ("opdisc-tau-grid-not-separated", mech("opdisc", lambda: _real_box_model(), grid=(-1.0, -0.5, 0.0, 0.5, 1.0),
                                          separation=1.0, norm_bound=1.0, lipschitz=1.0, n_samples=3),
     ParameterError, "separation"),
    ("opdisc-norm-bound-excludes-grid", mech("opdisc", lambda: zero_one_halfspace(_X(), _y(), grid=[-2, -1, 1, 2]),
                                            norm_bound=1.0), ParameterError, "norm_bound"),
    ("opdisc-already-perturbed", mech("opdisc", _transformed(_halfspace, 3)), ModelError, "model"),
    ("opdisc-solver-options-list", mech("opdisc", _halfspace, solver_options=["presolve", "off"]),
     SolverOptionError, "options"),
    ("opdisc-time-limit-zero", mech("opdisc", _halfspace, time_limit=0), ParameterError, "time_limit"),
    ("opdisc-threads-float", mech("opdisc", _halfspace, threads=1.5), ParameterTypeError, "threads"),
    ("opdisc-abs-gap-negative", mech("opdisc", _halfspace, abs_gap=-1e-6), ParameterError, "abs_gap"),
    ("opdisc-return-noise-string", mech("opdisc", _halfspace, return_noise="no"), ParameterTypeError,
     "return_noise"),
    ("opdisc-beta-one", mech("opdisc", _halfspace, beta=1.0), ParameterError, "beta"),
    ("opdisc-pi-encoding", mech("opdisc", _halfspace, pi_encoding="quadratic"), ParameterError, "pi_encoding"),
    ("opdisc-not-a-model", call(privopt.opdisc, {"w": [1, 2]}, epsilon=1.0, delta=1e-3), ModelError, "model"),

    # privopt.opsamp
    ("opsamp-m-zero", mech("opsamp", _hinge, n_oracle_calls=0), ParameterError, "n_oracle_calls"),
    ("opsamp-l1-below-l2", mech("opsamp", _hinge, l1_diameter=1e-3), ParameterError, "l1_diameter"),
    ("opsamp-m-negative", mech("opsamp", _hinge, n_oracle_calls=-4), ParameterError, "n_oracle_calls"),
    ("opsamp-m-float", mech("opsamp", _hinge, n_oracle_calls=3.5), ParameterTypeError, "n_oracle_calls"),
    ("opsamp-epsilon-nan", mech("opsamp", _hinge, epsilon=math.nan), ParameterError, "epsilon"),
    ("opsamp-delta-zero", mech("opsamp", _hinge, delta=0.0), ParameterError, "delta"),
    ("opsamp-solver-options-values", mech("opsamp", _hinge, solver_options={"presolve": [1]}),
     SolverOptionError, "options"),
    ("opsamp-time-limit-string", mech("opsamp", _hinge, time_limit="10"), ParameterTypeError, "time_limit"),
    ("opsamp-lipschitz-string", mech("opsamp", _hinge, lipschitz_l1="1"), ParameterTypeError, "lipschitz_l1"),
    ("opsamp-unbounded-weights", mech("opsamp", lambda: _real_box_model((-1.0, None)), lipschitz_l1=1.0,
                                      n_samples=3), ParameterError, "linf_diameter"),
    ("opsamp-two-objectives", mech("opsamp", _two_objectives(_hinge)), ModelError, "model"),
    ("opsamp-already-perturbed", mech("opsamp", _transformed(_hinge, 2, normalize=False)), ModelError, "model"),
    ("opsamp-unknown-solver", mech("opsamp", _hinge, solver="gurobbi"), UnknownSolverError, "solver"),

    # privopt.rspm (beyond tests/test_rspm.py)
    ("rspm-epsilon-negative", mech("rspm", _rspm_model, epsilon=-1.0), ParameterError, "epsilon"),
    ("rspm-noise-int", mech("rspm", _rspm_model, noise=1), ParameterTypeError, "noise"),
    ("rspm-two-objectives", mech("rspm", _two_objectives(_rspm_model)), ModelError, "model"),
    ("rspm-no-separators", mech("rspm", _halfspace), ModelError, "separator_vars"),
    ("rspm-continuous-separators", mech("rspm", _continuous_separators), ModelError, "separator_vars"),
    ("rspm-already-perturbed", mech("rspm", _transformed(_rspm_model, 3)), ModelError, "model"),
    ("rspm-solver-options-dict-keys", mech("rspm", _rspm_model, solver_options={1: 2}), SolverOptionError,
     "options"),
    ("rspm-time-limit-negative", mech("rspm", _rspm_model, time_limit=-5.0), ParameterError, "time_limit"),
    ("rspm-solver-none", mech("rspm", _rspm_model, solver=None), ParameterTypeError, "solver"),

    # @privopt.private
    ("private-mechanism-not-a-string", call(privopt.private, 3, epsilon=1.0), ParameterTypeError, "mechanism"),
    ("private-epsilon-missing", call(privopt.private, "opdisc"), ParameterError, "epsilon"),
    ("private-delta-above-one", call(privopt.private, "opsamp", epsilon=1.0, delta=2.0), ParameterError, "delta"),
    ("private-epsilon-nan", call(privopt.private, "rspm", epsilon=math.nan), ParameterError, "epsilon"),
    ("private-builder-not-callable", call(privopt.private("opdisc", epsilon=1.0, delta=1e-3), "model"),
     ParameterTypeError, "builder"),
    ("private-call-norm-bound", decorated(norm_bound=-1.0), ParameterError, "norm_bound"),
    ("private-call-data-nan", lambda: (lambda c: Call(c.fn, (_X_nan(), _y()), {}, arrays=()))(decorated()()),
     ParameterError, "X"),

    # privopt.solvers.solve (beyond tests/test_solvers.py)
    ("solve-not-a-model", call(privopt.solvers.solve, {"obj": 1}, "highs"), ModelError, "model"),
    ("solve-no-active-objective", lambda: (lambda m: Call(privopt.solvers.solve, (m, "highs"), {}, models=(m,)))(
        _no_objective(_halfspace)()), ParameterError, "model"),
    ("solve-mip-gap-nan", lambda: (lambda m: Call(privopt.solvers.solve, (m, "highs"), {"mip_gap": math.nan},
                                                  models=(m,)))(_halfspace()), ParameterError, "mip_gap"),
    ("solve-option-complex", lambda: (lambda m: Call(privopt.solvers.solve, (m, "highs"),
                                                     {"options": {"presolve": 1j}}, models=(m,)))(_halfspace()),
     SolverOptionError, "options"),

    # the privopt.objective_perturbation transformation
    ("xfrm-noise-missing", xfrm(_halfspace), ParameterError, "noise"),
    ("xfrm-noise-nan", xfrm(_halfspace, noise=[0.0, np.nan, 1.0]), ParameterError, "noise"),
    ("xfrm-noise-wrong-length", xfrm(_halfspace, noise=np.zeros(2)), ParameterError, "noise"),
    ("xfrm-noise-not-numbers", xfrm(_halfspace, noise=["a", "b", "c"]), ParameterTypeError, "noise"),
    ("xfrm-normalize-string", xfrm(_halfspace, noise=np.zeros(3), normalize="False"), ParameterTypeError,
     "normalize"),
    ("xfrm-scale-string", xfrm(_halfspace, noise=np.zeros(3), scale="large"), ParameterError, "scale"),
    ("xfrm-pi-encoding", xfrm(_halfspace, noise=np.zeros(3), pi_encoding="quadratic"), ParameterError,
     "pi_encoding"),
    ("xfrm-norm-bound-excludes-grid", xfrm(lambda: zero_one_halfspace(_X(), _y(), grid=[-2, -1, 1, 2]),
                                           noise=np.zeros(3), norm_bound=0.5), ParameterError, "norm_bound"),
    ("xfrm-grid-encoding-missing", xfrm(_halfspace, noise=np.zeros(3), grid_encoding="nope"), ModelError,
     "grid_encoding"),
    ("xfrm-continuous-weights", xfrm(_real_box_model, noise=np.zeros(3), norm_bound=1.0), ModelError, "weights"),
    ("xfrm-maximized", xfrm(_maximized(_toy_model), noise=np.zeros(3), norm_bound=2.0), ModelError, "model"),
    ("xfrm-twice", xfrm(_transformed(_halfspace, 3), noise=np.zeros(3)), ModelError, "model"),

    # privopt.models builders (beyond tests/test_models.py)
    ("zero-one-X-3d", builder(zero_one_halfspace, X=_X_3d), ParameterError, "X"),
    ("zero-one-X-empty", builder(zero_one_halfspace, X=_X_empty, y=_y_empty), ParameterError, "X"),
    ("zero-one-y-nan", builder(zero_one_halfspace, y=_y_nan), ParameterError, "y"),
    ("zero-one-real-features", builder(zero_one_halfspace, X=_X_real), ParameterError, "X"),
    ("rspm-model-X-inf", builder(rspm_halfspace, X=_X_inf), ParameterError, "X"),
    ("rspm-model-one-class", builder(rspm_halfspace, y=_y_one_class), ParameterError, "y"),
    ("hinge-one-class", builder(hinge_halfspace, y=_y_one_class, x_bound=2.0), ParameterError, "y"),
    ("hinge-X-nan", builder(hinge_halfspace, X=_X_nan, x_bound=2.0), ParameterError, "X"),
    ("hinge-bound-nan", builder(hinge_halfspace, x_bound=2.0, bound=math.nan), ParameterError, "bound"),
    ("absolute-y-short", builder(absolute_regression, y=_y_short, x_bound=2.0, y_bound=1.0), ParameterError, "y"),
    ("squared-X-1d", builder(squared_regression, X=_X_1d, x_bound=2.0, y_bound=1.0), ParameterError, "X"),

    # PrivateHalfspaceClassifier (beyond tests/test_estimators.py)
    ("estimator-X-3d", estimator(X=_X_3d), ParameterError, "X"),
    ("estimator-X-inf", estimator(X=_X_inf), ParameterError, "X"),
    ("estimator-y-nan", estimator(y=_y_nan), ParameterError, "y"),
    ("estimator-epsilon-nan", estimator(epsilon=math.nan), ParameterError, "epsilon"),
    ("estimator-delta-zero", estimator(delta=0.0), ParameterError, "delta"),
    ("estimator-levels-zero", estimator(X=_X_real, bounds=(0.0, 3.0), levels=0), ParameterError, "levels"),
    ("estimator-bounds-malformed", estimator(X=_X_real, bounds=(0.0,)), ParameterTypeError, "bounds"),
    ("estimator-norm-bound", estimator(norm_bound=-1.0), ParameterError, "norm_bound"),
    ("estimator-grid-for-rspm", estimator(mechanism="rspm", grid=2), ParameterError, "grid"),
    ("estimator-fit-intercept", estimator(fit_intercept="yes"), ParameterTypeError, "fit_intercept"),
    ("estimator-unknown-solver", estimator(solver="hihgs"), UnknownSolverError, "solver"),
    ("estimator-on-failure", estimator(on_failure="ignore"), ParameterError, "on_failure"),
    ("estimator-random-state", estimator(random_state="seed"), ParameterTypeError, "random_state"),

    # baselines: data errors on every private baseline
    ("dpsgd-X-inf", baseline("dpsgd", X=_X_inf, delta=1e-5), ParameterError, "X"),
    ("dpagd-one-class", baseline("dpagd", y=_y_one_class, delta=1e-5), ParameterError, "y"),
    ("noisy-sgd-X-3d", baseline("noisy_sgd", X=_X_3d, delta=1e-5), ParameterError, "X"),
    ("objective-perturbation-y-short", baseline("objective_perturbation", y=_y_short, delta=1e-5),
     ParameterError, "y"),
    ("output-perturbation-X-empty", baseline("output_perturbation", X=_X_empty, y=_y_empty), ParameterError, "X"),
    ("dpsgd-epsilon-zero", baseline("dpsgd", epsilon=0.0, delta=1e-5), ParameterError, "epsilon"),

    # calibration functions (public; the audit uses them)
    ("opsamp-parameters-l1", call(calibration.opsamp_parameters, 1.0, 1e-3, 1.0, 2.0, 2.0, 100, 2,
                                  n_oracle_calls=2, l1_diameter=1.0), ParameterError, "l1_diameter"),
    ("opsamp-parameters-paper-m", call(calibration.opsamp_parameters, 1.0, 1e-3, 1.0, 2.0, 2.0, 10**7, 2),
     ParameterError, "n_oracle_calls"),
    ("opdisc-sigma-delta-one", call(calibration.opdisc_sigma, 1.0, 1.0, 1.0, 1.0, 1.0, 2), ParameterError, "delta"),
    ("rspm-scale-no-separators", call(calibration.rspm_noise_scale, 1.0, 0.0, 0), ParameterError, "n_separators"),

    # privopt.datasets.load_adult (arguments checked before any file is touched)
    ("adult-feature-set", adult(feature_set="census"), ParameterError, "feature_set"),
    ("adult-scale", adult(scale="percent"), ParameterError, "scale"),
    ("adult-holdout", adult(holdout="train"), ParameterError, "holdout"),
    ("adult-test-size", adult(test_size=1.5), ParameterError, "test_size"),
    ("adult-test-size-without-split", adult(holdout=None, test_size=0.2), ParameterError, "test_size"),
    ("adult-download-string", adult(download="yes"), ParameterTypeError, "download"),
    ("adult-timeout", adult(timeout=0), ParameterError, "timeout"),
    ("adult-random-state", adult(random_state="seed"), ParameterTypeError, "random_state"),
]


def test_catalogue_is_large_and_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 30


# --- snapshots ---------------------------------------------------------------------------

def _snapshot(model) -> dict:
    return {
        "components": sorted((c.name, c.ctype.__name__) for c in model.component_objects(descend_into=True)),
        "vars": {v.name: (v.value, v.lb, v.ub, str(v.domain), v.fixed)
                 for v in model.component_data_objects(pyo.Var, descend_into=True)},
        "objectives": {o.name: (o.active, o.sense, str(o.expr))
                       for o in model.component_data_objects(pyo.Objective, descend_into=True)},
        "constraints": {c.name: (c.active, str(c.body))
                        for c in model.component_data_objects(pyo.Constraint, descend_into=True)},
        "info": get_info(model),
    }


@pytest.fixture
def nothing_runs(monkeypatch):
    """Every way to start a solve, an OPSamp worker, or a file access fails the test."""
    from privopt import oracle
    from privopt.datasets import _base, adult as adult_mod
    from privopt.solvers import _dispatch

    parallel_mod = __import__("sys").modules["privopt.mechanisms._parallel"]

    def boom(*a, **k):
        raise AssertionError("work started before the input was validated")

    for key in list(_dispatch._RUNNERS):
        monkeypatch.setitem(_dispatch._RUNNERS, key, boom)
    monkeypatch.setattr(oracle, "solve", boom)
    monkeypatch.setattr(parallel_mod, "oracle_call", boom)
    monkeypatch.setattr(adult_mod, "fetch_files", boom)
    monkeypatch.setattr(_base, "_urlopen", boom)


@pytest.mark.filterwarnings("ignore::privopt.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("build, exc, parameter", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_before_any_work(nothing_runs, build, exc, parameter):
    c = build()
    models = [_snapshot(m) for m in c.models]
    arrays = [np.array(a, copy=True) for a in c.arrays]
    state = c.rng.bit_generator.state if c.rng is not None else None

    with pytest.raises(exc) as err:
        c.fn(*c.args, **c.kwargs)

    e = err.value
    assert isinstance(e, PrivoptError) and isinstance(e, (ValueError, TypeError)), type(e).__mro__
    assert getattr(e, "parameter", None) == parameter, f"{type(e).__name__}({e}) names {e.parameter!r}"
    # the message says what to fix too ("options" errors talk about one "option")
    assert parameter in ("model", "builder") or any(w in str(e) for w in (parameter, parameter.rstrip("s"))), str(e)
    for m, before in zip(c.models, models):
        assert _snapshot(m) == before, "the caller's model was modified"
    for a, before in zip(c.arrays, arrays):
        np.testing.assert_array_equal(a, before)     # NaN compares equal here
    if c.rng is not None:
        assert c.rng.bit_generator.state == state, "noise was drawn before the input was validated"


def test_a_failed_transformation_can_be_retried():
    """After a refused transformation the model is still the user's, so a corrected
    call works (the refused one left no half-built block behind)."""
    m = zero_one_halfspace(_X(), _y(), grid=[-2, -1, 1, 2])
    apply = pyo.TransformationFactory(XFRM).apply_to
    with pytest.raises(ParameterError):
        apply(m, noise=np.zeros(3), norm_bound=0.5)
    apply(m, noise=np.zeros(3), norm_bound=3.0)
    assert privopt.perturbation.is_transformed(m)


# --- careless calls: caught before any solve ---------------------------------------

def test_private_decorator_checks_when_decorating():
    from privopt.exceptions import UnknownSolverError

    with pytest.raises(UnknownSolverError) as err:
        privopt.private("opdisc", epsilon=1.0, delta=1e-6, solver="higs")
    assert "'highs'" in str(err.value)                     # the solver typo, with a suggestion
    with pytest.raises(ParameterError) as err:
        privopt.private("opdisc", epsilon=1.0)             # no delta
    assert err.value.parameter == "delta"
    with pytest.raises(ParameterError) as err:
        privopt.private("opdisc", epsilon=1.0, delta=1e-6, norm_bond=2.0)
    assert err.value.parameter == "norm_bond" and "norm_bound" in str(err.value)
    privopt.private("rspm", epsilon=1.0)                   # RSPM is pure DP: no delta needed


def test_opdisc_careless_calls():
    import warnings as _w

    from privopt.exceptions import WeakGuaranteeWarning

    model = _halfspace()
    n = privopt.models.get_info(model).n_samples
    with pytest.raises(ParameterError) as err:             # contradicts the model's records
        privopt.opdisc(model, epsilon=1.0, delta=1e-6, n_samples=n + 1, random_state=0)
    assert err.value.parameter == "n_samples"
    with pytest.raises(ParameterError) as err:             # only w = 0 in the ball
        privopt.opdisc(model, epsilon=1.0, delta=1e-6, norm_bound=0.5, random_state=0)
    assert err.value.parameter == "norm_bound" and "one grid point" in str(err.value)
    with pytest.warns(WeakGuaranteeWarning, match="1/n"):
        privopt.opdisc(model, epsilon=1.0, delta=2.0 / n, random_state=0)
    with _w.catch_warnings():
        _w.simplefilter("error", WeakGuaranteeWarning)
        privopt.opdisc(model, epsilon=1.0, delta=1.0 / n**2, random_state=0)

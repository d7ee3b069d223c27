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

Cases already covered by tests/mechanisms/test_opdisc.py and tests/solvers/test_solvers.py are
not repeated here.  (A known-but-missing solver is a SolverNotAvailableError,
a RuntimeError about the machine rather than the argument: see
tests/faults/test_failures.py.)

And, from the former test_input_validation.py: bad values the estimators and baselines used to
accept: an epsilon so large that the noise computations overflow, text as features, X far outside
the declared bounds, and bounds in a form only some estimators understood (or not at all).
"""

from __future__ import annotations

import math
import warnings
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
    ClippedFeaturesWarning,
)
from privopt.models import (
    absolute_regression,
    get_info,
    hinge_halfspace,
    rspm_halfspace,
    squared_regression,
    zero_one_halfspace,
)

from tests._toy import toy_data, zero_one_model

pytest.importorskip("sklearn")

from privopt._validation import MAX_EPSILON, check_array_2d, check_bounds, check_epsilon  # noqa: E402
from privopt.baselines import (  # noqa: E402
    PRIVATE_BASELINES,
    REFERENCE_BASELINES,
    DPSGDLogisticRegression,
    NonPrivateLogisticRegression,
)
from privopt.estimators import PrivateHalfspaceClassifier, ZeroOneHalfspaceClassifier  # noqa: E402
from privopt.scoring import PrivateScoringSystem, ThresholdBinarizer  # noqa: E402


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
    # privopt.opdisc (beyond tests/mechanisms/test_opdisc.py)
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
                                      n_samples=3, public_constraints="w"), ParameterError, "linf_diameter"),
    ("opsamp-two-objectives", mech("opsamp", _two_objectives(_hinge)), ModelError, "model"),
    ("opsamp-already-perturbed", mech("opsamp", _transformed(_hinge, 2, normalize=False)), ModelError, "model"),
    ("opsamp-unknown-solver", mech("opsamp", _hinge, solver="gurobbi"), UnknownSolverError, "solver"),

    # privopt.rspm (beyond tests/mechanisms/test_rspm.py)
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

    # privopt.solvers.solve (beyond tests/solvers/test_solvers.py)
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

    # privopt.models builders (beyond tests/models/test_models.py)
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

    # PrivateHalfspaceClassifier (beyond tests/estimators/test_estimators.py)
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


# --- bad values the estimators and baselines used to accept (the former test_input_validation.py) --------


#: Every estimator that takes public feature bounds.
WITH_BOUNDS = {**PRIVATE_BASELINES, **REFERENCE_BASELINES, "halfspace": PrivateHalfspaceClassifier,
               "zero_one": ZeroOneHalfspaceClassifier}
#: Every estimator (the scoring system takes binary items, no bounds).
ALL = {**WITH_BOUNDS, "scoring": PrivateScoringSystem}
#: Small and quick settings per private estimator.
FAST = {"dpsgd": dict(epochs=1), "dpagd": dict(splits=2), "noisy_sgd": dict(), "halfspace": dict(),
        "scoring": dict(max_items=2)}


def _binary_data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = (X[:, 0] + rng.random(n) > 0.8).astype(int)
    return X, y


def _make(name, **kw):
    params = dict(FAST.get(name, {}))
    params.update(kw)
    cls = ALL[name]
    if "random_state" in cls().get_params():
        params.setdefault("random_state", 0)
    return cls(**params)


# ---------------------------------------------------------------------------
# 1. epsilon too large for the noise computations
# ---------------------------------------------------------------------------
def test_largest_epsilon_is_accepted_and_one_above_is_refused_naming_it():
    assert check_epsilon(MAX_EPSILON) == MAX_EPSILON
    for bad in (math.nextafter(MAX_EPSILON, math.inf), 1e4, 1e308):
        with pytest.raises(ParameterError, match="largest accepted value is 700") as info:
            check_epsilon(bad)
        assert info.value.parameter == "epsilon"
    assert math.isfinite(math.exp(MAX_EPSILON)) and MAX_EPSILON < math.log(np.finfo(float).max)


@pytest.mark.parametrize("name", sorted(set(PRIVATE_BASELINES) | {"halfspace", "scoring"}))
def test_every_private_estimator_refuses_epsilon_1e308_before_reading_the_data(name):
    with pytest.raises(ParameterError, match="largest accepted value is 700") as info:
        _make(name, epsilon=1e308).fit("not data", None)
    assert info.value.parameter == "epsilon"


def test_the_calibrations_still_work_at_the_largest_epsilon():
    """Every noise scale of privopt.calibration (and the accountants the baselines use) at
    epsilon = MAX_EPSILON: finite, positive, and without an overflow warning."""
    from privopt import calibration as cal
    from privopt.baselines import accounting as acc
    from privopt.calibration._scoring import risk_table_noise_scale, split_risk_epsilon

    eps = MAX_EPSILON
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        values = {
            "opdisc_sigma_proven": cal.opdisc_sigma_proven(eps, 1e-6, 1.0, 2.0, 1.0, 3),
            "opdisc_sigma_proven d=50": cal.opdisc_sigma_proven(eps, 1e-12, 1.0, 2.0, 1.0, 50),
            "opdisc_sigma paper": cal.opdisc_sigma(eps, 1e-6, 1.0, 2.0, 1.0, calibration="paper"),
            "opdisc_utility_bound": cal.opdisc_utility_bound(cal.opdisc_sigma_paper(eps, 1e-6, 1, 2, 1), 50, 3),
            "rspm_noise_scale": cal.rspm_noise_scale(eps, 0.0, 6),
            "selection_noise_scale": cal.selection_noise_scale(eps, 1.0),
            "selection_utility_bound": cal.selection_utility_bound(eps, 1.0, 10**6),
            "opsamp lambda": cal.opsamp_parameters(eps, 1e-6, lipschitz=1.0, linf_diameter=1.0, l2_diameter=1.0,
                                                   n_samples=100, dim=2, n_oracle_calls=10).as_dict()["lambda"],
            "risk_table_noise_scale": risk_table_noise_scale(eps),
            "split_risk_epsilon": sum(split_risk_epsilon(eps, 0.5)),
            "amplify_by_subsampling": acc.amplify_by_subsampling(eps, 1e-6, 0.1)[0],
            "deamplify_by_subsampling": acc.deamplify_by_subsampling(eps, 1e-6, 0.1)[0],
            "analytic_gaussian_sigma": acc.analytic_gaussian_sigma(eps, 1e-6),
        }
        delta = cal.opdisc_delta(values["opdisc_sigma_proven"], eps, 1.0, 2.0, 1.0, 3)
        cal.opdisc_paper_argument_holds(eps, 1e-6)
        probs = [cal.exponential_mechanism_probabilities([0.0, 1.0, 2.0], eps, 1.0),
                 cal.permute_and_flip_probabilities([0.0, 1.0, 2.0], eps, 1.0)]
    for what, value in values.items():
        assert math.isfinite(value) and value > 0, what
    assert 0 <= delta <= 1e-6 * (1 + 1e-6)
    for p in probs:
        assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0) and p[0] > 0.99


@pytest.mark.parametrize("name", sorted(set(PRIVATE_BASELINES) | {"halfspace", "scoring"}))
def test_every_private_estimator_fits_at_the_largest_epsilon_without_overflow(name):
    X, y = _binary_data()
    kw = {} if name == "scoring" else {"bounds": (0, 1)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = _make(name, epsilon=MAX_EPSILON, **kw).fit(X, y)
    assert np.all(np.isfinite(est.decision_function(X)))


def test_dpsgd_shuffled_batches_at_the_largest_epsilon():
    """The accountant nearest the overflow (dp_accounting's PLD, shuffled batches: it overflows from
    epsilon 709) still calibrates at MAX_EPSILON."""
    X, y = _binary_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = DPSGDLogisticRegression(epsilon=MAX_EPSILON, bounds=(0, 1), epochs=1, sampling="shuffle",
                                      random_state=0).fit(X, y)
    assert 0 < est.epsilon_spent_ <= MAX_EPSILON and math.isfinite(est.noise_multiplier_)


# ---------------------------------------------------------------------------
# 2. text as features
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ALL))
def test_number_strings_are_refused_by_every_estimator(name):
    X, y = _binary_data()
    est = _make(name) if name == "scoring" else _make(name, bounds=(0, 1))
    with pytest.raises(ParameterTypeError, match="numbers written as text.*astype\\(float\\)") as info:
        est.fit(X.astype(str), y)
    assert info.value.parameter == "X"
    assert "columns 0, 1, 2 hold text" in str(info.value)


def test_a_text_column_of_a_dataframe_is_named_with_the_fix():
    pd = pytest.importorskip("pandas")
    X, y = _binary_data()
    df = pd.DataFrame({"age": X[:, 0] * 50 + 20, "smoker": np.where(X[:, 1] > 0, "yes", "no"), "bmi": 25.0})
    for est in (PrivateHalfspaceClassifier(bounds=(0, 100)), DPSGDLogisticRegression(bounds=(0, 100)),
                NonPrivateLogisticRegression(), PrivateScoringSystem()):
        with pytest.raises(ParameterTypeError) as info:
            est.fit(df, y)
        message = str(info.value)
        assert "column 'smoker' (index 1) holds text" in message, message
        assert "OneHotEncoder" in message and "ThresholdBinarizer" in message
        assert "'age'" not in message and "'bmi'" not in message     # only the text column is named
        assert "yes" not in message     # no value of the data is quoted
    # a categorical column of text is text too
    df["smoker"] = df["smoker"].astype("category")
    with pytest.raises(ParameterTypeError, match="'smoker' \\(index 1\\)"):
        DPSGDLogisticRegression(bounds=(0, 100)).fit(df, y)


def test_a_text_column_of_an_array_is_named_by_index_and_predict_checks_too():
    X, y = _binary_data()
    mixed = X.astype(object)
    mixed[5, 2] = "n/a"
    with pytest.raises(ParameterTypeError, match="column 2 holds text") as info:
        NonPrivateLogisticRegression().fit(mixed, y)
    assert "numbers written as text" not in str(info.value)      # 'n/a' is no number: the fix is encoding
    est = NonPrivateLogisticRegression().fit(X, y)
    with pytest.raises(ParameterTypeError, match="column 2 holds text"):
        est.predict(mixed)
    # objects that are numbers stay accepted (scikit-learn's convention)
    assert est.predict(X.astype(object)).shape == (len(X),)


def test_check_array_2d_refuses_number_strings():
    """The arrays of privopt.models (discretize_features) and the grid search go through it."""
    from privopt.models import discretize_features

    with pytest.raises(ParameterTypeError, match="numbers written as text"):
        check_array_2d([["1", "2"], ["3", "4"]])
    with pytest.raises(ParameterTypeError, match="column 0 holds text"):
        discretize_features(np.array([["a", 1.0]], dtype=object), bounds=(0, 1))


def test_threshold_binarizer_names_a_text_column_instead_of_numpy_error():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"age": [30.0, 50.0, 70.0, 40.0], "smoker": ["yes", "no", "yes", "no"]})
    with pytest.raises(ParameterTypeError) as info:
        ThresholdBinarizer({"age": [45]}).fit(df)
    message = str(info.value)
    assert "column 'smoker' (index 1) holds text" in message and "OneHotEncoder" in message
    assert not isinstance(info.value.__cause__, ValueError)      # raised by privopt, not numpy's ValueError
    fitted = ThresholdBinarizer({"age": [45], "smoker": []}).fit(df.assign(smoker=[1.0, 0.0, 1.0, 0.0]))
    with pytest.raises(ParameterTypeError, match="'smoker'"):
        fitted.transform(df)


# ---------------------------------------------------------------------------
# 3. values outside the declared bounds: clipped, with a warning for the curator
# ---------------------------------------------------------------------------
def _outside_data():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(80, 3))
    X[[3, 7, 11], 1] = [5.0, -2.0, 40.0]       # three values of feature 1 far outside [0, 1]
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("name", ["dpsgd", "output_perturbation", "nonprivate_lr", "halfspace"])
def test_clipping_warns_how_many_values_of_which_features(name):
    X, y = _outside_data()
    est = _make(name, bounds=(0, 1))
    with pytest.warns(ClippedFeaturesWarning) as record:
        est.fit(X, y)
    message = next(str(w.message) for w in record if w.category is ClippedFeaturesWarning)
    assert "fit: 3 of 240 values" in message and "feature 1: 3 outside [0, 1]" in message, message
    assert "feature 0" not in message and "feature 2" not in message
    assert issubclass(ClippedFeaturesWarning, UserWarning)
    # inside the bounds: silent
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippedFeaturesWarning)
        clean = np.clip(X, 0, 1)
        _make(name, bounds=(0, 1)).fit(clean, y)
        est.predict(clean)
    # clipping itself is kept: the clipped data gives the same predictions
    with pytest.warns(ClippedFeaturesWarning, match="predict: 3 of 240"):
        outside = est.predict(X)
    np.testing.assert_array_equal(outside, est.predict(clean))


def test_clipping_warning_names_dataframe_columns():
    pd = pytest.importorskip("pandas")
    X, y = _outside_data()
    df = pd.DataFrame(X, columns=["age", "income", "hours"])
    with pytest.warns(ClippedFeaturesWarning, match="feature 'income' \\(index 1\\): 3 outside"):
        DPSGDLogisticRegression(bounds=(0, 1), epochs=1, random_state=0).fit(df, y)


def test_clipping_warning_is_documented_as_the_curators():
    import inspect

    import privopt.baselines._base as base

    for doc in (inspect.getdoc(PrivateHalfspaceClassifier), inspect.getdoc(base)):
        assert "ClippedFeaturesWarning" in doc and "curator" in doc
    assert "curator only" in inspect.getdoc(ClippedFeaturesWarning)


# ---------------------------------------------------------------------------
# 4. one bounds parser for every estimator
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("bounds, lower, upper", [
    ((0, 1), [0, 0], [1, 1]),
    (([0, 0], [3000, 80000]), [0, 0], [3000, 80000]),
    ([(0, 3000), (0, 80000)], [0, 0], [3000, 80000]),           # pairs: as (lower, upper), feature 0 is [0, 0]
    (np.array([[0, 3000], [0, 80000]]), [0, 0], [3000, 80000]),
    ({"lower": [0, 1], "upper": [2, 3]}, [0, 1], [2, 3]),
    ((0, [3000, 80000]), [0, 0], [3000, 80000]),
])
def test_bounds_forms(bounds, lower, upper):
    lo, hi = check_bounds(bounds, 2)
    np.testing.assert_array_equal(lo, lower)
    np.testing.assert_array_equal(hi, upper)


def test_bounds_pairs_with_more_than_two_features_and_the_ambiguous_two_by_two():
    lo, hi = check_bounds([(0, 1), (0, 2), (-1, 3)], 3)
    np.testing.assert_array_equal(lo, [0, 0, -1])
    np.testing.assert_array_equal(hi, [1, 2, 3])
    lo, hi = check_bounds([[0, 0, -1], [1, 2, 3]], 3)          # (2, d): (lower, upper)
    np.testing.assert_array_equal(hi, [1, 2, 3])
    with pytest.raises(ParameterError, match="ambiguous with 2 features.*'lower'") as info:
        check_bounds(((0, 1), (2, 3)), 2)
    assert info.value.parameter == "bounds"


@pytest.mark.parametrize("bounds, d, pattern", [
    (((5, 5), (5, 5)), 2, "feature 0 has an empty range \\[5, 5\\]"),
    ((1, 0), 3, "every feature has lower 1 > upper 0 \\(inverted\\); swap them"),
    ([(0, 1), (0, 2), (3, 2)], 3, "feature 2 has lower 3 > upper 2"),
    (([0, 0, 0], [1, np.nan, 1]), 3, "feature 1 has a non-finite bound"),
    (([0, -np.inf], [1, 1]), 2, "feature 1 has a non-finite bound"),
    (([0, 0], [1, 1]), 3, "2 lower bounds but X has 3 features"),
    ([(0, 1), (0, 1), (0, 1)], 2, "3 lower bounds but X has 2 features"),
])
def test_bad_bounds_are_refused_naming_the_feature_and_the_fix(bounds, d, pattern):
    with pytest.raises(ParameterError, match=pattern) as info:
        check_bounds(bounds, d)
    assert info.value.parameter == "bounds"
    assert "Accepted forms" in str(info.value)


def test_bounds_error_when_no_reading_of_a_two_by_two_is_valid_gives_both():
    with pytest.raises(ParameterError) as info:
        DPSGDLogisticRegression(bounds=[(0, 100), (7, 7)]).fit("not data", None)
    message = str(info.value)
    assert "read as (lower, upper), feature 1 has lower 100 > upper 7" in message, message
    assert "read as per-feature pairs (lo, hi), feature 1 has an empty range [7, 7]" in message, message
    # with names (a DataFrame's columns), a feature is named by them
    with pytest.raises(ParameterError, match="feature 'income' \\(index 1\\) has an empty range"):
        check_bounds([(0, 100), (7, 7), (0, 1)], 3, feature_names=["age", "income", "hours"])


@pytest.mark.parametrize("name", sorted(WITH_BOUNDS))
def test_every_estimator_refuses_empty_and_inverted_bounds_before_reading_the_data(name):
    for bounds, pattern in ((((5, 5), (5, 5)), "empty range"), ((1, 0), "inverted")):
        with pytest.raises(ParameterError, match=pattern) as info:
            _make(name, bounds=bounds).fit("not data", None)
        assert info.value.parameter == "bounds"


@pytest.mark.parametrize("name", sorted(set(WITH_BOUNDS) - {"zero_one"}))
def test_every_estimator_reads_per_feature_pairs_as_lower_upper(name):
    """Per-feature pairs and (lower, upper) give the same fit (same seed): one parser for all."""
    rng = np.random.default_rng(0)
    X = np.c_[rng.uniform(0, 3000, 120), rng.uniform(0, 80000, 120)]
    y = (X[:, 0] / 3000 + X[:, 1] / 80000 > 1).astype(int)
    pairs = _make(name, bounds=[(0, 3000), (0, 80000)]).fit(X, y)
    lower_upper = _make(name, bounds=([0, 0], [3000, 80000])).fit(X, y)
    np.testing.assert_array_equal(pairs.decision_function(X), lower_upper.decision_function(X))


# ---------------------------------------------------------------------------
# pandas as a newcomer gives it: bounds by column name, a missing label, a
# categorical column of numbers
# ---------------------------------------------------------------------------
def _frame(n=120, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.uniform(18, 90, n), "income": rng.uniform(0, 80000, n)})
    y = (X["age"] / 90 + X["income"] / 80000 > 1).astype(int)
    return X, y


@pytest.mark.parametrize("name", sorted(set(WITH_BOUNDS) - {"zero_one"}))
def test_every_estimator_takes_bounds_by_column_name_for_a_dataframe(name):
    """{column: (lo, hi)} (as ThresholdBinarizer takes its thresholds) gives the fit of the same
    bounds in column order, whatever the dict's order."""
    X, y = _frame()
    by_name = _make(name, bounds={"income": (0, 80000), "age": (18, 90)}).fit(X, y)
    in_order = _make(name, bounds=([18, 0], [90, 80000])).fit(X, y)
    np.testing.assert_array_equal(by_name.decision_function(X), in_order.decision_function(X))


def test_bounds_by_column_name_refuse_a_missing_or_unknown_column_and_an_array():
    X, y = _frame()
    with pytest.raises(ParameterError, match=r"no bounds for 1 column\(s\): 'income'\.") as info:
        PrivateHalfspaceClassifier(bounds={"age": (18, 90)}).fit(X, y)
    assert info.value.parameter == "bounds"
    with pytest.raises(ParameterError, match=r"'salary' is not a column of X"):
        DPSGDLogisticRegression(bounds={"age": (18, 90), "income": (0, 1), "salary": (0, 1)}).fit(X, y)
    with pytest.raises(ParameterError, match="need X as a pandas DataFrame"):
        PrivateHalfspaceClassifier(bounds={"age": (18, 90), "income": (0, 80000)}).fit(X.to_numpy(), y)
    # a bad pair is refused before the data is read, naming the column
    with pytest.raises(ParameterError, match="column 'age' has lower 90 > upper 18"):
        PrivateHalfspaceClassifier(bounds={"age": (90, 18), "income": (0, 1)}).fit("not data", None)


@pytest.mark.parametrize("missing", [None, float("nan"), "pd.NA"])
@pytest.mark.parametrize("name", ["halfspace", "dpsgd", "scoring"])
def test_a_missing_label_names_y_and_the_fix(name, missing):
    """A y with a missing label (a DataFrame's empty cell) is a ParameterError naming y and the
    fix, not numpy's TypeError comparing None with a string."""
    pd = pytest.importorskip("pandas")
    X, _ = _binary_data()
    y = pd.Series(np.where(X[:, 0] > 0, "yes", "no"), dtype=object)
    y[4] = pd.NA if missing == "pd.NA" else missing
    with pytest.raises(ParameterError, match="y has missing labels") as info:
        _make(name, **({} if name == "scoring" else {"bounds": (0, 1)})).fit(X, y)
    assert info.value.parameter == "y" and "drop those records" in str(info.value)


def test_labels_of_mixed_kinds_name_y():
    X, _ = _binary_data()
    y = np.where(X[:, 0] > 0, "yes", "no").astype(object)
    y[2] = 1
    with pytest.raises(ParameterError, match="y mixes labels of different kinds") as info:
        PrivateHalfspaceClassifier(bounds=(0, 1)).fit(X, y)
    assert info.value.parameter == "y"


def test_a_categorical_column_of_numbers_is_numbers():
    pd = pytest.importorskip("pandas")
    X, y = _frame()
    X["children"] = pd.Series(np.arange(len(X)) % 3).astype("category")
    plain = X.assign(children=X["children"].astype(int))
    for name in ("halfspace", "dpsgd"):
        a = _make(name, bounds={"age": (18, 90), "income": (0, 80000), "children": (0, 5)}).fit(X, y)
        b = _make(name, bounds={"age": (18, 90), "income": (0, 80000), "children": (0, 5)}).fit(plain, y)
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(plain))


# ---------------------------------------------------------------------------
# bounds read from the data: said once, at the user's line, and no epsilon claimed
# ---------------------------------------------------------------------------
def _leak_warnings(fit):
    from privopt.exceptions import PrivacyLeakWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = fit()
    return est, [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]


def test_a_fit_on_bounds_from_the_data_claims_no_epsilon_and_warns_once_at_the_users_line():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 5, (150, 3))
    y = (X[:, 0] > 2.5).astype(int)
    est, leaks = _leak_warnings(lambda: PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(X, y))
    assert len(leaks) == 1 and leaks[0].filename == __file__, [(w.filename, w.lineno) for w in leaks]
    assert est.result_.epsilon == math.inf and est.result_.parameters["epsilon_requested"] == 1.0
    base, leaks = _leak_warnings(lambda: DPSGDLogisticRegression(epsilon=1.0, random_state=0).fit(X, y))
    assert len(leaks) == 1 and leaks[0].filename == __file__
    assert base.epsilon_spent_ == math.inf
    # declared bounds, or integer features used as they are: no warning, the epsilon asked
    for fit in (lambda: PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 5), random_state=0).fit(X, y),
                lambda: PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(np.round(X), y)):
        est, leaks = _leak_warnings(fit)
        assert not leaks and est.result_.epsilon == 1.0
    base, leaks = _leak_warnings(lambda: DPSGDLogisticRegression(epsilon=1.0, bounds=(0, 5), random_state=0).fit(X, y))
    assert not leaks and base.epsilon_spent_ <= 1.0


def test_a_fit_on_bounds_from_the_data_keeps_typed_frozen_parameters():
    """Its parameters are one frozen typed record around the release's own (kept typed,
    unchanged), with the epsilon asked for and the note, and still read as a mapping."""
    import dataclasses
    import pickle

    from privopt._frozen import FrozenRecord
    from privopt.estimators import DataBoundsParameters

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 5, (150, 3))
    y = (X[:, 0] > 2.5).astype(int)
    est, _ = _leak_warnings(lambda: PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(X, y))
    p = est.result_.parameters
    assert isinstance(p, DataBoundsParameters) and isinstance(p.release, FrozenRecord)
    assert (p.epsilon_requested, p.bounds) == (1.0, "from the data: no guarantee")
    assert "epsilon_requested" not in p.release and p.release["noise_scale"] == p["noise_scale"]
    assert dict(p) == {**dict(p.release), "epsilon_requested": 1.0, "bounds": "from the data: no guarantee"}
    assert list(p)[-2:] == ["epsilon_requested", "bounds"] and p.get("release") is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.epsilon_requested = 0.5      # type: ignore[misc]
    with pytest.raises(TypeError):
        p["bounds"] = "declared"       # type: ignore[index]
    assert pickle.loads(pickle.dumps(est.result_)).parameters == p

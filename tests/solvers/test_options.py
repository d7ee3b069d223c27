"""SolveOptions: the one typed, validated record of how a model is solved."""

import dataclasses
import inspect
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import NoiseDominatesWarning, ParameterError, ParameterTypeError, SolverOptionError
from privopt.oracle import certified_solve
from privopt.solvers import DEFAULT_ABS_GAP, SolveOptions, solve


def _lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 4))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=2 * m.x + m.y)
    return m


def test_defaults_and_export():
    opts = SolveOptions()
    assert privopt.SolveOptions is SolveOptions
    assert opts.solver is None and opts.solver_or("highs") == "highs"
    assert opts.abs_gap == DEFAULT_ABS_GAP and opts.mip_gap == 0.0 and opts.on_failure == "raise"
    assert opts.options == {}
    assert opts.keep_report is False        # the report stays with the mechanism unless asked for


@pytest.mark.parametrize("field, value, error, words", [
    ("time_limit", 0, ParameterError, "time_limit must be > 0"),
    ("time_limit", "60", ParameterTypeError, "time_limit must be a number"),
    ("threads", 0, ParameterError, "threads"),
    ("abs_gap", -1.0, ParameterError, "abs_gap must be a finite number >= 0"),
    ("mip_gap", float("nan"), ParameterError, "mip_gap"),
    ("seed", -1, ParameterError, "seed"),
    ("on_failure", "ignore", ParameterError, "on_failure must be one of"),
    ("progress", 1, ParameterTypeError, "progress must be True or False"),
    ("solver", 3, ParameterTypeError, "solver must be a solver name"),
    ("executor", 42, ParameterTypeError, "executor must be None"),
    ("keep_report", 1, ParameterTypeError, "keep_report must be True or False"),
])
def test_each_field_is_validated_when_built(field, value, error, words):
    with pytest.raises(error) as err:
        SolveOptions(**{field: value})
    assert words in str(err.value)
    assert getattr(err.value, "parameter", None) == field


def test_solver_options_checked_and_copied():
    with pytest.raises(SolverOptionError):
        SolveOptions(solver_options=["presolve"])
    given = {"presolve": "on"}
    opts = SolveOptions(solver_options=given)
    given["presolve"] = "off"                        # the user's dict changes afterwards ...
    assert opts.solver_options == {"presolve": "on"}  # ... the record does not
    assert opts.options is not opts.solver_options    # a fresh dict for each solver call


def test_frozen_and_public_constraints_as_tuple():
    opts = SolveOptions(public_constraints=["a", "b"])
    assert opts.public_constraints == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.time_limit = 5  # type: ignore[misc]


def test_unknown_keyword_is_a_type_error_with_the_closest_name():
    with pytest.raises(TypeError, match=r"solve\(\) got an unexpected keyword argument 'time_limt'.*'time_limit'"):
        solve(_lp(), time_limt=5)
    with pytest.raises(TypeError, match=r"certified_solve\(\) got an unexpected keyword argument 'thread'"):
        certified_solve(_lp(), thread=1)
    with pytest.raises(TypeError, match="SolveOptions.replace"):
        SolveOptions().replace(abs_gp=1e-3)
    # a field solve() does not take is refused as a keyword, as before (on_failure is certified_solve's)
    with pytest.raises(TypeError, match="on_failure"):
        solve(_lp(), on_failure="return")


def test_from_keywords_overrides_a_record():
    base = SolveOptions(solver="highs", time_limit=60, threads=2)
    opts = SolveOptions.from_keywords("f", {"time_limit": 10}, options=base)
    assert (opts.solver, opts.time_limit, opts.threads) == ("highs", 10, 2)
    assert base.time_limit == 60                      # the reused record is unchanged
    with pytest.raises(ParameterError, match="time_limit"):
        SolveOptions.from_keywords("f", {"time_limit": -1}, options=base)
    with pytest.raises(ParameterTypeError, match="options: f\\(\\) takes options=privopt.SolveOptions"):
        SolveOptions.from_keywords("f", {}, options={"time_limit": 1})


def test_solve_with_a_record_is_solve_with_keywords():
    by_keywords = solve(_lp(), "highs", time_limit=30, abs_gap=1e-7, solver_options={"presolve": "off"})
    record = SolveOptions(solver="highs", time_limit=30, abs_gap=1e-7, solver_options={"presolve": "off"})
    by_record = solve(_lp(), options=record)
    for report in (by_keywords, by_record):
        assert report.certified_optimal and report.objective == pytest.approx(3.0)
        assert report.time_limit == 30 and report.abs_gap == 1e-7 and report.options["presolve"] == "off"
    # a keyword beside the record overrides it; the positional solver overrides the record's
    overridden = solve(_lp(), "highs", options=SolveOptions(solver="glpk", time_limit=30), time_limit=20)
    assert overridden.solver == "highs" and overridden.time_limit == 20


def test_solve_options_dict_keeps_its_old_meaning():
    report = solve(_lp(), options={"presolve": "off"})
    assert report.options["presolve"] == "off"
    with pytest.raises(ParameterError, match="not both"):
        solve(_lp(), options={"presolve": "off"}, solver_options={"presolve": "on"})


def test_certified_solve_reads_on_failure_from_the_record():
    report = certified_solve(_lp(), options=SolveOptions(on_failure="return", time_limit=30))
    assert report.certified_optimal and report.mip_gap == 0.0
    with pytest.raises(ParameterError, match="on_failure"):
        certified_solve(_lp(), on_failure="ignore")


# --- the mechanisms: keywords and a record give the same release ------------------------

def _halfspace_data(n=10, d=2, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    y = np.where(X @ np.linspace(1.0, -0.5, d) + rng.normal(0, 0.5, size=n) > 0, 1, 0)
    return X, y


def test_opdisc_same_release_with_keywords_or_a_record():
    X, y = _halfspace_data()
    model = privopt.models.zero_one_halfspace(X, y, grid=[-1, 0, 1])
    record = SolveOptions(solver="highs", time_limit=60, abs_gap=1e-7, on_failure="raise", keep_report=True)
    for seed in range(3):
        by_keywords = privopt.opdisc(model, epsilon=2.0, delta=1e-3, random_state=seed, solver="highs",
                                     time_limit=60, abs_gap=1e-7)
        by_record = privopt.opdisc(model, epsilon=2.0, delta=1e-3, random_state=seed, options=record)
        np.testing.assert_array_equal(by_keywords.weights, by_record.weights)
        assert by_record.report.time_limit == 60 and by_record.report.abs_gap == 1e-7
    # a keyword beside the record overrides it
    overridden = privopt.opdisc(model, epsilon=2.0, delta=1e-3, random_state=0, options=record, time_limit=30)
    assert overridden.report.time_limit == 30 and record.time_limit == 60


def test_rspm_same_release_with_keywords_or_a_record():
    X, y = _halfspace_data()
    model = privopt.models.rspm_halfspace(X, np.where(y > 0, 1, -1))
    for seed in range(3):
        by_keywords = privopt.rspm(model, epsilon=1.0, random_state=seed, time_limit=60, abs_gap=1e-7)
        by_record = privopt.rspm(model, epsilon=1.0, random_state=seed,
                                 options=SolveOptions(time_limit=60, abs_gap=1e-7, keep_report=True))
        np.testing.assert_array_equal(by_keywords.weights, by_record.weights)
        assert by_record.report.abs_gap == 1e-7


def test_opsamp_same_release_with_keywords_or_a_record():
    X, y = _halfspace_data(n=12)
    model = privopt.models.absolute_regression(X, X @ [0.5, -0.25], bound=1.0, x_bound=2.0, y_bound=2.0)
    common = dict(epsilon=1.0, delta=1e-3, n_oracle_calls=6)
    with ThreadPoolExecutor(1) as pool, warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatesWarning)
        for seed in range(2):
            by_keywords = privopt.opsamp(model, random_state=seed, executor=pool, progress=False,
                                         abs_gap=1e-7, **common)
            record = SolveOptions(executor=pool, progress=False, abs_gap=1e-7)
            by_record = privopt.opsamp(model, random_state=seed, options=record, **common)
            np.testing.assert_array_equal(by_keywords.weights, by_record.weights)
            assert by_record.parameters["abs_gap"] == 1e-7


@pytest.mark.parametrize("name", ["opdisc", "opsamp", "rspm"])
def test_mechanisms_refuse_an_unknown_keyword_naming_the_closest(name):
    X, y = _halfspace_data()
    model = privopt.models.zero_one_halfspace(X, y, grid=[-1, 0, 1])
    with pytest.raises(TypeError, match=rf"{name}\(\) got an unexpected keyword argument 'time_limt'.*'time_limit'"):
        getattr(privopt, name)(model, epsilon=1.0, delta=1e-3, time_limt=5)
    with pytest.raises(ParameterTypeError, match="options"):   # a dict is not the record
        getattr(privopt, name)(model, epsilon=1.0, delta=1e-3, options={"time_limit": 5})


@pytest.mark.parametrize("name, keyword", [("opdisc", "norm_bound"), ("opsamp", "l1_diameter"),
                                           ("rspm", "separator_vars")])
def test_signature_lists_every_keyword(name, keyword):
    """help(), inspect and @privopt.private see each keyword, not **kwargs."""
    params = inspect.signature(getattr(privopt, name)).parameters
    assert keyword in params and "time_limit" in params and "options" in params
    assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in params.values())
    assert params["solver"].default == "highs" and params["keep_report"].default is False
    privopt.private(name, epsilon=1.0, delta=1e-3, **{keyword: None})   # accepted when decorating


def test_the_record_goes_through_the_layers(monkeypatch):
    """opdisc -> certified_solve -> solve: the mechanism's record reaches solve() as one record
    (solver resolved, mip_gap 0), not re-listed as keywords."""
    import privopt.oracle as oracle

    seen = []
    real = oracle.solve

    def spy(model, solver=None, *, options=None, **kwargs):
        seen.append((solver, options, kwargs))
        return real(model, solver, options=options, **kwargs)

    monkeypatch.setattr(oracle, "solve", spy)
    X, y = _halfspace_data()
    model = privopt.models.zero_one_halfspace(X, y, grid=[-1, 0, 1])
    privopt.opdisc(model, epsilon=2.0, delta=1e-3, random_state=0,
                   options=SolveOptions(time_limit=45, abs_gap=1e-7), solver="highs")
    [(solver, options, kwargs)] = seen
    assert solver is None and isinstance(options, SolveOptions)
    assert (options.solver, options.time_limit, options.abs_gap, options.mip_gap) == ("highs", 45, 1e-7, 0.0)
    assert set(kwargs) <= {"persistent", "vars_to_load", "_prechecked"}

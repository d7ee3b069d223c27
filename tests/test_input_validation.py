"""Bad values the estimators and baselines used to accept: an epsilon so large that the noise
computations overflow, text as features, X far outside the declared bounds, and bounds in a
form only some estimators understood (or not at all)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from privopt._validation import MAX_EPSILON, check_array_2d, check_bounds, check_epsilon  # noqa: E402
from privopt.baselines import (  # noqa: E402
    PRIVATE_BASELINES,
    REFERENCE_BASELINES,
    DPSGDLogisticRegression,
    NonPrivateLogisticRegression,
)
from privopt.estimators import PrivateHalfspaceClassifier, ZeroOneHalfspaceClassifier  # noqa: E402
from privopt.exceptions import ClippedFeaturesWarning, ParameterError, ParameterTypeError  # noqa: E402
from privopt.scoring import PrivateScoringSystem, ThresholdBinarizer  # noqa: E402

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
    with pytest.raises(ParameterError, match=r"no bounds for column\(s\) \['income'\]") as info:
        PrivateHalfspaceClassifier(bounds={"age": (18, 90)}).fit(X, y)
    assert info.value.parameter == "bounds"
    with pytest.raises(ParameterError, match=r"\['salary'\] are not columns of X"):
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
    with pytest.raises(ParameterError, match="y has 1 missing label") as info:
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

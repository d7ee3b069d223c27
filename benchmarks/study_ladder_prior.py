"""A study: the default estimator with the uniform prior over its ladder of resolutions
instead of the Occam prior, checked where the prior was not chosen.

Usage:  python benchmarks/study_ladder_prior.py [--seeds 5] [--only NAME ...] [--out PREFIX]
Writes  <PREFIX>.csv (one row per fit) and <PREFIX>.md, PREFIX defaulting to
        benchmarks/results/study_ladder_prior.

``study_finer_rung.py`` found, as a diagnostic on the development and aside sets at eps 0.5
to 2 (10 seeds), that the uniform prior over the offered resolutions beats the shipped Occam
prior (+0.003 / +0.009 / +0.008 on dev, +0.004 / +0.005 / +0.005 on aside).  Both priors are
public (they read epsilon, n and |W_r| only), so either release is epsilon-DP alike.  This
study runs the checks that choice still needs, once, in one run, with nothing changed in
between:

* eps 0.1 on the dev and aside sets (where the issue asks to keep the lead; at small
  epsilon * n the public rule ``ladder_cap`` usually offers one W, and the prior is moot);
* the ``fresh`` sets of ``bench_adaptive_w.py`` (never used to choose anything) at eps 0.1,
  0.5, 1 and 2;
* Adult with the paper's features at eps 0.1 and 2 where ``PRIVOPT_DATA_HOME`` holds it.

Learners, on the stratified 70/30 splits of ``bench_adaptive_w.split`` (seeds 0..S-1, the
splits of ``benchmarks/results/adaptive_w.csv``): ``default``, the shipped estimator
``PrivateHalfspaceClassifier(epsilon, bounds, random_state=seed)``; ``uniform``, the same with
``privopt.estimators.LADDER_PRIOR`` set to "uniform" for its fits (the library unchanged).
The best convex private method of each cell is read from ``adaptive_w.csv`` (the mean over
the same seeds of its rows), not rerun.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections import defaultdict

import numpy as np

import privopt
import privopt.estimators as estimators

import _common
from bench_adaptive_w import CONVEX, development_datasets, fresh_datasets, split

OUT = _common.HERE + "/results/study_ladder_prior"
LEARNERS = ("default", "uniform")
#: (role, epsilons): where each role is checked
PLAN = {"dev": (0.1,), "aside": (0.1,), "fresh": (0.1, 0.5, 1.0, 2.0), "adult": (0.1, 2.0)}
COLUMNS = ("role", "data", "n_train", "d", "eps", "seed", "learner", "accuracy", "seconds", "offered")


def datasets(only=None):
    """(role, name, X, y, bounds) of the study's sets."""
    items = [(role, name, X, y, b) for role, name, X, y, b, _ in development_datasets()]
    items += list(fresh_datasets())
    if os.environ.get("PRIVOPT_DATA_HOME"):
        from privopt.datasets import load_adult

        data = load_adult(scale="public", random_state=0)
        X = np.vstack([data.X_train, data.X_test])
        y = (np.concatenate([data.y_train, data.y_test]) == 1).astype(int)
        items.append(("adult", "adult_paper_23", X, y, (0.0, 1.0)))
    return [it for it in items if not only or it[1] in only]


def fit_one(learner, eps, bounds, seed, Xtr, ytr, Xte, yte) -> dict:
    """One fit of ``learner``: held-out accuracy, seconds and the resolutions offered."""
    shipped = estimators.LADDER_PRIOR
    estimators.LADDER_PRIOR = "uniform" if learner == "uniform" else shipped
    try:
        clf = privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=bounds, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            clf.fit(Xtr, ytr)
            secs = time.perf_counter() - t0
    finally:
        estimators.LADDER_PRIOR = shipped
    return {"accuracy": float(np.mean(clf.predict(Xte) == yte)), "seconds": secs,
            "offered": len(getattr(clf, "resolutions_", ()) or ())}


def run(seeds: int, only=None) -> list[dict]:
    rows = []
    for role, name, X, y, bounds in datasets(only):
        for eps in PLAN[role]:
            for seed in range(seeds):
                Xtr, Xte, ytr, yte = split(X, y, seed)
                for learner in LEARNERS:
                    out = fit_one(learner, eps, bounds, seed, Xtr, ytr, Xte, yte)
                    rows.append({"role": role, "data": name, "n_train": len(ytr), "d": X.shape[1], "eps": eps,
                                 "seed": seed, "learner": learner, **out})
            print(f"{role} {name} eps {eps:g}: done", flush=True)
    return rows


def best_convex(seeds: int) -> dict:
    """(set, eps) -> (mean accuracy over seeds 0..S-1, method) of the best convex private
    method in benchmarks/results/adaptive_w.csv."""
    acc = defaultdict(list)
    for r in _common.read_csv(_common.HERE + "/results/adaptive_w.csv"):
        if r["learner"] in CONVEX and int(r["seed"]) < seeds:
            acc[(r["data"], float(r["eps"]), r["learner"])].append(float(r["accuracy"]))
    best: dict = {}
    for (name, eps, method), v in acc.items():
        if (name, eps) not in best or np.mean(v) > best[(name, eps)][0]:
            best[(name, eps)] = (float(np.mean(v)), method)
    return best


def summarize(rows, seeds: int) -> list[str]:
    by = defaultdict(dict)
    for r in rows:
        by[(r["role"], r["data"], float(r["eps"]), int(r["seed"]))][r["learner"]] = r
    convex = best_convex(seeds)
    lines = ["| role | set | n | eps | default | uniform | uniform - default (paired) | best convex (adaptive_w) "
             "| default - best | uniform - best | offered | s default | s uniform |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    cells = defaultdict(list)
    for key, fits in by.items():
        cells[key[:3]].append(fits)
    for (role, name, eps), fits in cells.items():
        d = [f["default"]["accuracy"] for f in fits]
        u = [f["uniform"]["accuracy"] for f in fits]
        diff = [b - a for a, b in zip(d, u)]
        bc = convex.get((name, eps))
        vs = ("", "") if bc is None else (f"{np.mean(d) - bc[0]:+.3f}", f"{np.mean(u) - bc[0]:+.3f}")
        lines.append(
            f"| {role} | {name} | {fits[0]['default']['n_train']} | {eps:g} | {np.mean(d):.3f} | {np.mean(u):.3f} "
            f"| {np.mean(diff):+.4f} +- {np.std(diff, ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0:.4f} "
            f"| {'' if bc is None else f'{bc[0]:.3f} ({bc[1]})'} | {vs[0]} | {vs[1]} "
            f"| {np.mean([f['uniform']['offered'] for f in fits]):.1f} "
            f"| {np.median([f['default']['seconds'] for f in fits]):.2f} "
            f"| {np.median([f['uniform']['seconds'] for f in fits]):.2f} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    env = _common.stamp(argv)
    rows = run(args.seeds, args.only)
    _common.write_csv(args.out + ".csv", rows, COLUMNS)
    lines = ["# The uniform prior over the default ladder, where it was not chosen (a study)", "",
             _common.stamp_line(env), "",
             "Held-out accuracy, mean over seeds (module docstring of `benchmarks/study_ladder_prior.py`); "
             "`uniform - default`: mean +- s.e. of the paired differences; best convex: the mean over the same "
             "seeds of the best convex private method's rows in `benchmarks/results/adaptive_w.csv` (another run, "
             "the same splits); `offered`: resolutions offered (the same for both learners: the prior does not "
             "change which W's are offered); seconds: medians.", ""]
    lines += summarize(rows, args.seeds)
    _common.write_markdown(args.out + ".md", lines)


if __name__ == "__main__":
    main()

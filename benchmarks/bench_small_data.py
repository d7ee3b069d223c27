"""Private baselines with their DEFAULT hyperparameters on small public data.

Usage: PYTHONPATH=. python benchmarks/bench_small_data.py [--seeds 3] [--out benchmarks/results/small_data.csv]

Data sets (all ship with scikit-learn or are synthetic): breast_cancer
(n=569, d=30), wine class 0 vs rest (n=178, d=13), digits 0-4 vs 5-9
(n=1797, d=64, bounds (0, 16) are public), make_classification at n=200,
2000 and 20000 (d=10).  Bounds: digits (0, 16); the others use the range of
the whole data set as a stand-in for published feature ranges (stated: this
is a benchmark of defaults, not a privacy audit).  70/30 split per seed.
Reports test accuracy of every private baseline at eps 0.5, 1, 2, next to the
majority class and non-private logistic regression.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine, make_classification
from sklearn.model_selection import train_test_split

from privopt.baselines import PRIVATE_BASELINES, NonPrivateLogisticRegression


def datasets():
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", X, y, (X.min(0), X.max(0))
    X, y = load_wine(return_X_y=True)
    yield "wine_0_vs_rest", X, (y == 0).astype(int), (X.min(0), X.max(0))
    X, y = load_digits(return_X_y=True)
    yield "digits_lo_vs_hi", X, (y >= 5).astype(int), (0.0, 16.0)
    for n in (200, 2000, 20000):
        X, y = make_classification(n_samples=n, n_features=10, n_informative=5, random_state=0)
        yield f"synthetic_n{n}", X, y, (X.min(0), X.max(0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results/small_data.csv")
    args = ap.parse_args()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    rows = []
    warnings.simplefilter("ignore")
    for name, X, y, bounds in datasets():
        for seed in range(args.seeds):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
            maj = max(np.mean(yte == c) for c in np.unique(y))
            lr = NonPrivateLogisticRegression().fit(Xtr, ytr).score(Xte, yte)
            for eps in (0.5, 1.0, 2.0):
                for bname, cls in PRIVATE_BASELINES.items():
                    t = time.perf_counter()
                    kw = {"epsilon": eps, "bounds": bounds, "random_state": seed}
                    if "delta" in cls().get_params():
                        kw["delta"] = min(1e-5, 1.0 / len(ytr) ** 2) if bname != "objective_perturbation" else 1e-5
                    try:
                        acc = cls(**kw).fit(Xtr, ytr).score(Xte, yte)
                        err = ""
                    except Exception as exc:  # record, do not hide
                        acc, err = float("nan"), f"{type(exc).__name__}: {exc}"[:120]
                    rows.append(dict(dataset=name, n_train=len(ytr), d=X.shape[1], seed=seed, epsilon=eps,
                                     method=bname, accuracy=acc, majority=maj, nonprivate_lr=lr,
                                     seconds=round(time.perf_counter() - t, 3), error=err))
        print(name, "done", flush=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    # summary: mean accuracy over seeds
    import collections
    agg = collections.defaultdict(list)
    for r in rows:
        agg[(r["dataset"], r["epsilon"], r["method"])].append(r["accuracy"])
    base = {r["dataset"]: (r["majority"], r["nonprivate_lr"]) for r in rows}
    for (ds, eps, m), v in sorted(agg.items()):
        print(f"{ds:18s} eps={eps:<4g} {m:24s} acc={np.nanmean(v):.3f}  majority={base[ds][0]:.3f} "
              f"LR={base[ds][1]:.3f}")


if __name__ == "__main__":
    main()

"""Private selection: how fast W is scored, and how good the public time prediction is.

For each instance, ``privopt.exponential_mechanism`` (permute-and-flip and the
exponential mechanism) scores every point of W; the table gives |W|, the
number of distinct rows, the wall time, the throughput in score entries per
second (points x distinct rows x (d + ROW_OVERHEAD), the unit of
``privopt.mechanisms.selection._evaluate.SCORE_ENTRIES_PER_SECOND``), and the time the
mechanism predicted from public quantities only (|W|, n, d: n bounds the
distinct rows, and the number of distinct feature values for the sparse
engine).  The prediction must not be below the wall time, or a
``time_limit`` set from it would stop a run half-way.  OPDisc's exact oracle on
the same W (``solver="auto"``) is timed alongside.

Instances: Adult with the paper's features and the estimator's default W (when
the Adult files are available, ``PRIVOPT_DATA_HOME``), breast cancer (30
features, levels 4, intercept, D = 2), and two synthetic sets with many
distinct rows.

A second table compares the two exact scoring engines in the same run: the
dense one (one matrix product of each block of points with the distinct rows)
and the sparse one (losses tabulated per support from the rows' pattern
histograms, read back in the same order), on one-hot and on dense data, as
score entries per second in the dense engine's unit (both engines compute the
same losses for the same points).

Run:  python benchmarks/bench_selection.py [--repeats 3]
Writes benchmarks/results/selection.csv, selection.md and selection_engines.csv.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import privopt
from privopt.models import FeatureDiscretizer, zero_one_halfspace
from privopt.mechanisms.selection._evaluate import ROW_OVERHEAD, SCORE_ENTRIES_PER_SECOND
from privopt.solvers import enumeration_size

import _common

HERE = os.path.dirname(os.path.abspath(__file__))


def instances():
    """(name, Xd, y in {-1, 1}, grid, D, fit_intercept)."""
    try:
        from privopt.datasets import load_adult
        from privopt.experiments.adult import adult_levels

        data = load_adult(random_state=0)
        lv = adult_levels(data.feature_blocks, data.X_train.shape[1])
        Xd = FeatureDiscretizer(bounds=(0.0, 1.0), levels=lv).fit(data.X_train).transform(data.X_train)
        yield "adult_paper_features", Xd, np.where(data.y_train == 1, 1, -1), 2, 2.0, True
    except Exception as exc:  # the files are optional
        print(f"Adult skipped: {exc}")
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    Xd = FeatureDiscretizer(bounds=(X.min(0), X.max(0)), levels=4).fit(X).transform(X)
    yield "breast_cancer", Xd, np.where(y == 1, 1, -1), 2, 2.0, True
    rng = np.random.default_rng(0)
    for n, d, D in ((12000, 23, 2.0), (3000, 10, 3.0)):
        X = rng.integers(0, 5, size=(n, d))
        y = np.where(X @ rng.integers(-2, 3, size=d) + rng.normal(0, 2, n) >= 0, 1, -1)
        yield f"synthetic_n{n}_d{d}_D{D:g}", X, y, int(D), D, False


def engine_instances():
    """(name, model) pairs for the engine comparison: one-hot and dense data."""
    rng = np.random.default_rng(1)
    for n, groups, cats in ((5000, 8, 4), (20000, 10, 4)):
        X = np.hstack([np.eye(cats)[rng.integers(0, cats, n)] for _ in range(groups)]).astype(int)
        y = np.where(X @ rng.normal(size=X.shape[1]) + rng.normal(0, 1, n) > 0, 1, -1)
        yield f"onehot_{groups}x{cats}_n{n}", zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True)
    X = rng.integers(0, 5, size=(3000, 12))
    y = np.where(X @ rng.normal(size=12) + rng.normal(0, 2, 3000) > 0, 1, -1)
    yield "levels4_d12_n3000", zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True)


def compare_engines():
    from privopt.search import choose_engine, enumeration_levels, iter_losses

    out = []
    for name, model in engine_instances():
        data = model._privopt_enumeration
        coef, bound, _, _ = enumeration_levels(data)
        points, rows = enumeration_size(model)
        d = data["X"].shape[1]
        row = {"instance": name, "d": d, "points": points, "distinct_rows": rows,
               "auto_engine": choose_engine(data, coef, bound)}
        losses = {}
        for engine in ("sparse", "dense"):
            t = time.perf_counter()
            losses[engine] = np.concatenate([b[2] for b in iter_losses(data, coef, bound, engine=engine)])
            sec = time.perf_counter() - t
            row[f"{engine}_seconds"] = sec
            row[f"{engine}_entries_per_second"] = points * rows * (d + ROW_OVERHEAD) / sec
            print(name, engine, f"{sec:.1f} s", flush=True)
        row["identical_losses"] = bool(np.array_equal(losses["sparse"], losses["dense"]))
        row["speedup"] = row["dense_seconds"] / row["sparse_seconds"]
        out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    rows = []
    for name, Xd, y, grid, D, fi in instances():
        model = zero_one_halfspace(Xd, y, grid=grid, norm_bound=D, fit_intercept=fi)
        points, distinct = enumeration_size(model)
        d = len(model.w)
        for method in ("permute_and_flip", "exponential"):
            for r in range(args.repeats):
                t = time.perf_counter()
                res = privopt.exponential_mechanism(model, epsilon=1.0, method=method, random_state=r,
                                                    progress=False, keep_report=True)
                wall = time.perf_counter() - t
                rows.append({"instance": name, "method": method, "repeat": r, "n": len(y), "d": d,
                             "points": points, "distinct_rows": distinct, "seconds": wall,
                             "entries_per_second": points * distinct * (d + ROW_OVERHEAD) / wall,
                             "predicted_seconds": res.report.predicted_time})
        t = time.perf_counter()
        privopt.opdisc(model, epsilon=1.0, delta=1.0 / len(y) ** 2, solver="auto", random_state=0)
        rows.append({"instance": name, "method": "opdisc (solver='auto')", "repeat": 0, "n": len(y), "d": d,
                     "points": points, "distinct_rows": distinct, "seconds": time.perf_counter() - t,
                     "entries_per_second": float("nan"), "predicted_seconds": float("nan")})
        print(name, "done", flush=True)
    os.makedirs(args.out, exist_ok=True)
    _common.write_csv(os.path.join(args.out, "selection.csv"), rows, list(rows[0]))
    lines = ["# Private selection: scoring time and the public time prediction", "",
             f"{_common.stamp_line()} Median over repeats; epsilon 1. `entries/s` = points x distinct rows x "
             f"(d + {ROW_OVERHEAD}) / seconds; `predicted` = the mechanism's prediction from |W|, n, d and the "
             "number of feature values "
             f"(SCORE_ENTRIES_PER_SECOND = {SCORE_ENTRIES_PER_SECOND:.3g}): it must not be below the actual time.",
             "The machine was shared with other jobs during the run.", "",
             "| instance | method | n | d | |W| | distinct rows | seconds | entries/s | predicted s "
             "| predicted / actual |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    keys = []
    for r in rows:
        if (r["instance"], r["method"]) not in keys:
            keys.append((r["instance"], r["method"]))
    for inst, meth in keys:
        sel = [r for r in rows if r["instance"] == inst and r["method"] == meth]
        sec = float(np.median([r["seconds"] for r in sel]))
        eps_ = float(np.median([r["entries_per_second"] for r in sel]))
        pred = sel[0]["predicted_seconds"]
        r0 = sel[0]
        lines.append(f"| {inst} | {meth} | {r0['n']:,} | {r0['d']} | {r0['points']:,} | {r0['distinct_rows']:,} | "
                     f"{sec:.2f} | {'' if np.isnan(eps_) else f'{eps_:.3g}'} | "
                     f"{'' if np.isnan(pred) else f'{pred:.3g}'} | {'' if np.isnan(pred) else f'{pred / sec:.1f}'} |")
    engines = compare_engines()
    _common.write_csv(os.path.join(args.out, "selection_engines.csv"), engines, list(engines[0]))
    lines += ["", "## Sparse against dense scoring, same run", "",
              "Score entries per second in the dense engine's unit (points x distinct rows x (d + "
              f"{ROW_OVERHEAD})) for both engines; `identical`: the two loss vectors are equal.", "",
              "| instance | d | |W| | distinct rows | engine auto picks | dense s | sparse s | dense entries/s | "
              "sparse entries/s | speed-up | identical |", "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|---|"]
    for r in engines:
        lines.append(f"| {r['instance']} | {r['d']} | {r['points']:,} | {r['distinct_rows']:,} | {r['auto_engine']} | "
                     f"{r['dense_seconds']:.1f} | {r['sparse_seconds']:.1f} | {r['dense_entries_per_second']:.3g} | "
                     f"{r['sparse_entries_per_second']:.3g} | {r['speedup']:.1f}x | {r['identical_losses']} |")
    _common.write_markdown(os.path.join(args.out, "selection.md"), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

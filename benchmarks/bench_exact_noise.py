"""Exact integer noise on a grid against the former double-precision noise: before and after, one run.

Usage:  python benchmarks/bench_exact_noise.py [--before eaaf9c1] [--splits 5] [--fits 1000]
                                               [--seeds 200] [--datasets a,b,...] [--tag ""]
Writes  benchmarks/results/exact_noise{tag}.csv (one row per fit) and
        benchmarks/results/exact_noise{tag}.md (tables).

Three releases changed their law when continuous noise in doubles was replaced
by exact integer noise on a grid fixed in advance (commits bcd5a40, 16e3bf2):

* output perturbation (``OutputPerturbationLogisticRegression``): before,
  [CMS11]'s Gamma-norm noise for ``noise="laplace"`` and the analytic Gaussian
  for ``"gaussian"``; after, discrete Laplace per coordinate for the l1
  sensitivity sqrt(d_z) Delta and a discrete Gaussian through zCDP (and the
  ``noise="auto"`` rule redrawn for the two);
* the risk table of ``PrivateScoringSystem``: Laplace(2 / eps_table) in doubles
  on each count, after: discrete Laplace of the same scale;
* OPSamp's output step: w_bar + Lap(lambda / eps) in doubles, after:
  gamma (round(w_bar / gamma) + Z), Z discrete Laplace.

The "before" side is privopt at ``--before`` (default eaaf9c1, the parent of
bcd5a40), checked out in a temporary git worktree and run as a subprocess of
this script with that worktree first on PYTHONPATH (:func:`_common.checkout_env`);
the "after" side is this checkout, run in this process at the same time.  Both
run the same function (:func:`measure`) on the same splits and seeds.

Measured:

1. Output perturbation, held-out accuracy on real tables of the small-data
   suite (benchmarks/bench_small_data.py) tagged held-out or fresh (none of the
   development sets), 70/30 stratified splits 0..splits-1 (the suite's), epsilon
   0.5, 1, 2: ``noise="laplace"`` with delta = 0 and ``noise="auto"`` with
   delta = 1/n_train^2; ``random_state`` = the split.  Objective perturbation
   (pure epsilon) runs on both sides (its code did not change: equal numbers
   show that the splits and seeds are the same) and DP-SGD (epsilon, 1/n^2) on
   the before side only (its code did not change in these commits), to say
   whether output perturbation was the best of the three on each cell.
2. The risk table: ``PrivateScoringSystem(epsilon=1, risk_share=0.5,
   max_points=3, max_items=2, random_state=seed)`` on the diabetes table with
   every feature cut at its median (10 items, n = 442), seeds 0..fits-1:
   mean absolute error of the released (score, label) counts against the true
   counts of the released system, and of the released rates against the true
   rates (cells with a true and a released count > 0); with, for the counts, the
   expectation of that error under each side's law given the true counts (a
   reference free of sampling noise: the two laws differ by about 0.04 in it,
   which 200 fits, standard error about 0.14, cannot show; hence 1000).
3. OPSamp: absolute-loss regression over [-1, 1]^20 (60 records, seeded),
   ``opsamp(epsilon=1, delta=1e-3, n_oracle_calls=4, project=False,
   random_state=seed)`` for seeds 0..seeds-1: the l1 distance of the release
   from w_bar, the mean of the four argmins (recomputed with scipy's linprog
   from the sigmas that ``return_noise`` gives: independent of privopt).

Differences are after - before, paired by split or seed (same data, same
generator seed; the noise draws themselves differ, so the standard error is
that of the paired differences).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

EPSILONS = (0.5, 1.0, 2.0)
#: held-out and fresh real tables of benchmarks/bench_small_data.py (none of its dev sets)
DATASETS = ("wine_1_vs_rest", "iris_virginica_vs_rest", "digits_3_vs_8", "diabetes_above_median",
            "digits_1_vs_7", "digits_4_vs_9")
#: the scoring system's budget and the share of its risk table: each count gets noise of scale 2 / eps_table
TABLE_EPSILON, TABLE_SHARE = 1.0, 0.5
TABLE_SCALE = 2.0 / (TABLE_EPSILON * TABLE_SHARE)
#: OPSamp's regression: records and weights (each weight is one draw of the output noise per seed)
OPSAMP_N, OPSAMP_D = 60, 20
COLUMNS = ("part", "side", "dataset", "role", "n_train", "d_z", "epsilon", "delta", "method", "seed",
           "accuracy", "noise", "noise_rms_norm", "system", "cells", "mae_counts", "rate_cells", "mae_rates",
           "table_scale", "expected_laplace", "expected_discrete", "l1_distance", "laplace_scale", "grid_step", "error")


# --- the measurements (run on each side) -------------------------------------------------------


def _op_noise_rms(est, d_z: int) -> float:
    """Root mean square norm of output perturbation's noise, from the fitted attributes of
    either side: Gamma-norm noise (before, ``beta_``) sqrt(d(d+1))/beta; Gaussian sigma
    sqrt(d); per-coordinate discrete Laplace of scale t (after, ``noise_scale_``)
    about sqrt(2 d) t."""
    if est.noise_ == "gaussian":
        return float(est.noise_std_) * math.sqrt(d_z)
    if getattr(est, "beta_", None) is not None:
        return math.sqrt(d_z * (d_z + 1)) / float(est.beta_)
    return math.sqrt(2.0 * d_z) * float(est.noise_scale_)


def _op_rows(side: str, splits: int, epsilons, names, with_dpsgd: bool) -> list[dict]:
    """Held-out accuracy of output perturbation (two settings), objective perturbation and,
    with ``with_dpsgd``, DP-SGD, on the named tables of the small-data suite."""
    from sklearn.model_selection import train_test_split

    import bench_small_data
    from privopt.baselines import (
        DPSGDLogisticRegression,
        ObjectivePerturbationLogisticRegression,
        OutputPerturbationLogisticRegression,
    )

    rows = []
    for role, name, X, y, bounds in bench_small_data.datasets():
        if name not in names:
            continue
        if role == "dev":
            raise ValueError(f"{name} is a development set of the small-data suite; choose held-out or fresh")
        t0 = time.perf_counter()
        for seed in range(splits):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
            n = len(ytr)
            d_z = X.shape[1] + 1
            for eps in epsilons:
                fits = {
                    "op_laplace": (OutputPerturbationLogisticRegression, dict(noise="laplace", delta=0.0)),
                    "op_auto": (OutputPerturbationLogisticRegression, dict(noise="auto", delta=1.0 / n**2)),
                    "objective_perturbation": (ObjectivePerturbationLogisticRegression, dict(delta=0.0)),
                }
                if with_dpsgd:
                    fits["dpsgd"] = (DPSGDLogisticRegression, dict(delta=1.0 / n**2))
                for method, (cls, kw) in fits.items():
                    est = cls(epsilon=eps, bounds=bounds, random_state=seed, **kw)
                    row = dict(part="output_perturbation", side=side, dataset=name, role=role, n_train=n, d_z=d_z,
                               epsilon=eps, delta=kw["delta"], method=method, seed=seed, error="")
                    try:
                        row["accuracy"] = float(est.fit(Xtr, ytr).score(Xte, yte))
                    except Exception as exc:  # recorded, not hidden
                        row["accuracy"], row["error"] = math.nan, f"{type(exc).__name__}: {exc}"[:160]
                    if method.startswith("op_") and not row["error"]:
                        row["noise"], row["noise_rms_norm"] = est.noise_, _op_noise_rms(est, d_z)
                    rows.append(row)
        print(f"[{side}] {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return rows


def scoring_data():
    """The diabetes table (scikit-learn) with every feature cut at its median and the
    target above its median: (X01, y01), 442 x 10."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    return (X > np.median(X, axis=0)).astype(int), (y > np.median(y)).astype(int)


def _risk_table_errors(est, X01, y01) -> dict:
    """Mean absolute errors of a fitted system's released table against its true counts
    and rates (per score: positives and negatives; rates where both counts are > 0)."""
    coef = np.asarray(est.coef_, dtype=np.int64)
    lo = int(np.minimum(coef, 0).sum())
    width = int(np.maximum(coef, 0).sum()) - lo + 1
    scores = X01.astype(np.int64) @ coef - lo
    pos = np.bincount(scores[y01 == 1], minlength=width)
    neg = np.bincount(scores[y01 != 1], minlength=width)
    table = est.risk_table_
    assert [r["score"] for r in table] == list(range(lo, lo + width)), "unexpected risk table layout"
    pos_n = np.array([r["positives"] for r in table], dtype=float)
    neg_n = np.array([r["n"] for r in table], dtype=float) - pos_n
    errors = np.concatenate([np.abs(pos_n - pos), np.abs(neg_n - neg)])
    both = (pos + neg > 0) & (pos_n + neg_n > 0)
    rate_err = np.abs(pos_n[both] / (pos_n + neg_n)[both] - pos[both] / (pos + neg)[both])
    true = np.concatenate([pos, neg])
    return dict(cells=2 * width, mae_counts=float(errors.mean()), rate_cells=int(both.sum()),
                mae_rates=float(rate_err.mean()) if both.any() else math.nan,
                expected_laplace=float(np.mean([_clipped_error_laplace(c, TABLE_SCALE) for c in true])),
                expected_discrete=float(np.mean([_clipped_error_discrete(c, TABLE_SCALE) for c in true])))


def _clipped_error_laplace(c: int, b: float) -> float:
    """E|max(c + X, 0) - c| for X ~ Laplace(0, b) and a count c >= 0: the error of a count
    released as before, b (1 - e^{-c/b} / 2) (|X| where c + X > 0, else c)."""
    return b * (1.0 - 0.5 * math.exp(-c / b))


def _clipped_error_discrete(c: int, t: float) -> float:
    """E|max(c + Z, 0) - c| for Z discrete Laplace, P(Z = k) proportional to e^{-|k|/t}: the
    error of a count released after (summed over |k| <= 100 t; the rest weighs < e^-100)."""
    k = np.arange(-int(100 * t), int(100 * t) + 1)
    p = np.exp(-np.abs(k) / t)
    return float((np.abs(np.maximum(c + k, 0) - c) * p).sum() / p.sum())


def _risk_rows(side: str, fits: int) -> list[dict]:
    """``fits`` seeded fits of a small scoring system with a risk table."""
    from privopt.scoring import PrivateScoringSystem

    X01, y01 = scoring_data()
    rows = []
    t0 = time.perf_counter()
    for seed in range(fits):
        est = PrivateScoringSystem(epsilon=TABLE_EPSILON, risk_share=TABLE_SHARE, max_points=3, max_items=2,
                                   random_state=seed, progress=False).fit(X01, y01)
        rows.append(dict(part="risk_table", side=side, method="scoring_system", epsilon=TABLE_EPSILON, seed=seed,
                         n_train=len(y01), system=f"{est.points_} >= {est.threshold_}", table_scale=TABLE_SCALE,
                         error="", **_risk_table_errors(est, X01, y01)))
    print(f"[{side}] risk table: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return rows


def opsamp_problem(n: int = OPSAMP_N, d: int = OPSAMP_D, seed: int = 0):
    """(X, y, C) of a small absolute-loss regression (seeded)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(-1, 1, size=(n, d)), 2)
    y = np.round(X @ np.linspace(0.5, -0.3, d) + rng.normal(0, 0.2, size=n), 2)
    C = float(np.abs(y).max() + np.abs(X).max(axis=0).sum())
    return X, y, C


def _opsamp_model(X, y, C):
    """min sum_i |y_i - <x_i, w>| / C over w in [-1, 1]^d, as a Pyomo model with its ModelInfo."""
    import pyomo.environ as pyo

    from privopt.models import ModelInfo, attach_info

    n, d = X.shape
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), bounds=(-1.0, 1.0))
    m.t = pyo.Var(range(n), domain=pyo.NonNegativeReals)
    m.c = pyo.ConstraintList()
    for i in range(n):
        score = sum(float(X[i, j]) * m.w[j] for j in range(d))
        m.c.add(m.t[i] >= float(y[i]) - score)
        m.c.add(m.t[i] >= score - float(y[i]))
    m.loss = pyo.Objective(expr=sum(m.t[i] for i in range(n)) / C)
    attach_info(m, ModelInfo(loss_range=(0.0, 1.0), lipschitz_l1=float(np.abs(X).max() / C), n_samples=n))
    return m


def _argmin(X, y, C, sigma) -> np.ndarray:
    """argmin over [-1, 1]^d of sum_i |y_i - <x_i, w>| / C - <sigma, w> (scipy's HiGHS)."""
    from scipy import optimize

    n, d = X.shape
    c = np.concatenate([-np.asarray(sigma), np.full(n, 1.0 / C)])
    A = np.block([[-X, -np.eye(n)], [X, -np.eye(n)]])
    b = np.concatenate([-y, y])
    res = optimize.linprog(c, A_ub=A, b_ub=b, bounds=[(-1.0, 1.0)] * d + [(0, None)] * n, method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog: {res.message}")
    return res.x[:d]


def _opsamp_rows(side: str, seeds: int) -> list[dict]:
    """The l1 distance of OPSamp's release from w_bar over ``seeds`` seeds."""
    from privopt.mechanisms import opsamp

    X, y, C = opsamp_problem()
    model = _opsamp_model(X, y, C)
    rows = []
    t0 = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:
        for seed in range(seeds):
            res = opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=4, random_state=seed, executor=pool,
                         progress=False, return_noise=True, project=False)
            w_bar = np.mean([_argmin(X, y, C, s) for s in res.noise[:-1]], axis=0)
            w = np.asarray(res.weights, dtype=float)
            rows.append(dict(part="opsamp", side=side, method="opsamp", epsilon=1.0, delta=1e-3, seed=seed,
                             n_train=len(y), d_z=X.shape[1], l1_distance=float(np.abs(w - w_bar).sum()),
                             laplace_scale=float(res.parameters["laplace_scale"]),
                             grid_step=res.parameters.get("grid_step", ""), error=""))
    print(f"[{side}] opsamp: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return rows


def measure(side: str, splits: int, fits: int, seeds: int, names, epsilons=EPSILONS) -> list[dict]:
    """Every row of one side, with the privopt this process imports."""
    warnings.simplefilter("ignore")
    return (_op_rows(side, splits, epsilons, names, with_dpsgd=side == "before")
            + _risk_rows(side, fits) + _opsamp_rows(side, seeds))


# --- the two sides --------------------------------------------------------------------------


def _git(*args) -> str:
    return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True, text=True).stdout


def start_before(rev: str, args, out_json: str):
    """This script on privopt at ``rev`` (a temporary worktree first on PYTHONPATH), in a
    subprocess writing its rows to ``out_json``: (process, worktree)."""
    tree = tempfile.mkdtemp(prefix="privopt-before-")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-f", "--detach", tree, rev], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cmd = [sys.executable, os.path.abspath(__file__), "--side", "before", "--json", out_json, "--expect-root", tree,
           "--splits", str(args.splits), "--fits", str(args.fits), "--seeds", str(args.seeds),
           "--datasets", ",".join(args.datasets)]
    return subprocess.Popen(cmd, env=_common.checkout_env(tree), cwd=tree), tree


def _worker(args) -> int:
    """``--side before``: the measurements with the privopt of the checkout ``--expect-root``."""
    import privopt

    where = os.path.realpath(privopt.__file__)
    if args.expect_root and not where.startswith(os.path.realpath(args.expect_root) + os.sep):
        raise SystemExit(f"the before side imports privopt from {where}, not from {args.expect_root}")
    rows = measure(args.side, args.splits, args.fits, args.seeds, args.datasets)
    with open(args.json, "w") as fh:
        json.dump({"privopt": where, "rows": rows}, fh)
    return 0


# --- the tables -----------------------------------------------------------------------------


def _mean_se(values) -> tuple[float, float]:
    v = np.asarray([x for x in values if x == x], dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0


def _by_seed(rows, **where) -> dict:
    return {r["seed"]: r for r in rows if all(r.get(k) == v for k, v in where.items())}


def _paired(rows, key, **where):
    """(before mean, after mean, mean of after - before, its standard error) over common seeds."""
    b, a = _by_seed(rows, side="before", **where), _by_seed(rows, side="after", **where)
    seeds = sorted(set(a) & set(b))
    diff = _mean_se([a[s][key] - b[s][key] for s in seeds])
    return _mean_se([b[s][key] for s in seeds])[0], _mean_se([a[s][key] for s in seeds])[0], diff[0], diff[1]


def _laws(rows, **where) -> str:
    laws = sorted({r.get("noise") or "?" for r in rows if all(r.get(k) == v for k, v in where.items())})
    return "/".join(laws)


def _op_lines(rows, names, epsilons, splits) -> list[str]:
    lines = []
    ahead = {"op_laplace": [], "op_auto": []}
    for variant, title in (("op_laplace", 'noise="laplace", delta = 0 (pure epsilon-DP)'),
                           ("op_auto", 'noise="auto", delta = 1/n_train^2')):
        lines += [f"### {title}", "",
                  "| role | data | n_train | d_z | eps | law before -> after | noise norm after/before | before "
                  "| after | after - before (se) | objective pert. | DP-SGD | OP best before | OP best after |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for name in names:
            for eps in epsilons:
                where = dict(part="output_perturbation", dataset=name, epsilon=eps)
                cell = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
                if not cell:
                    continue
                r0 = cell[0]
                before, after, diff, se = _paired(cell, "accuracy", method=variant)
                ratio = _mean_se([r["noise_rms_norm"] for r in cell if r["method"] == variant
                                  and r["side"] == "after"])[0] / \
                    _mean_se([r["noise_rms_norm"] for r in cell if r["method"] == variant
                              and r["side"] == "before"])[0]
                obj = _mean_se([r["accuracy"] for r in cell if r["method"] == "objective_perturbation"
                                and r["side"] == "before"])[0]
                sgd = _mean_se([r["accuracy"] for r in cell if r["method"] == "dpsgd"])[0]
                best = max(x for x in (obj, sgd) if x == x)
                ahead[variant].append((diff, se))
                lines.append(
                    f"| {r0['role']} | {name} | {r0['n_train']} | {r0['d_z']} | {eps:g} | "
                    f"{_laws(cell, method=variant, side='before')} -> {_laws(cell, method=variant, side='after')} | "
                    f"{ratio:.2f} | {before:.3f} | {after:.3f} | {diff:+.3f} ({se:.3f})"
                    f"{' *' if abs(diff) > 2 * se and se > 0 else ''} | {obj:.3f} | {sgd:.3f} | "
                    f"{'yes' if before >= best else 'no'} | {'yes' if after >= best else 'no'} |")
        d, s = np.asarray(ahead[variant]).T
        lines += ["", f"Mean over the {d.size} cells of after - before: {d.mean():+.4f} "
                  f"(se {math.sqrt(float((s ** 2).sum())) / d.size:.4f} treating the cells as independent; "
                  f"after lower on {int((d < 0).sum())} cells, higher on {int((d > 0).sum())}, more than two "
                  f"standard errors apart on {int((np.abs(d) > 2 * s).sum())}).", ""]
    same = _objective_check(rows)
    lines += [f"Objective perturbation (unchanged code) gave the same accuracy on both sides in {same[0]} of "
              f"{same[1]} fits: the two sides ran on the same splits with the same seeds.", ""]
    return lines


def _objective_check(rows) -> tuple[int, int]:
    b = {(r["dataset"], r["epsilon"], r["seed"]): r["accuracy"] for r in rows
         if r["method"] == "objective_perturbation" and r["side"] == "before"}
    a = {(r["dataset"], r["epsilon"], r["seed"]): r["accuracy"] for r in rows
         if r["method"] == "objective_perturbation" and r["side"] == "after"}
    keys = set(a) & set(b)
    return sum(a[k] == b[k] for k in keys), len(keys)


def _risk_lines(rows) -> list[str]:
    part = [r for r in rows if r["part"] == "risk_table"]
    b, a = _by_seed(part, side="before"), _by_seed(part, side="after")
    seeds = sorted(set(a) & set(b))
    same = sum(a[s]["system"] == b[s]["system"] for s in seeds)
    lines = ["| quantity | before (se) | after (se) | after - before (se) |", "|---|---|---|---|"]
    for key, label in (("mae_counts", "mean absolute error of a count"),
                       ("mae_rates", "mean absolute error of a rate")):
        (before, sb), (after, sa) = (_mean_se([r[key] for r in part if r["side"] == side])
                                     for side in ("before", "after"))
        diff, se = _paired(part, key)[2:]
        lines.append(f"| {label} | {before:.4f} ({sb:.4f}) | {after:.4f} ({sa:.4f}) | {diff:+.4f} ({se:.4f}) |")
        if key == "mae_counts":
            eb, ea = (_mean_se([r[k] for r in part if r["side"] == side])[0]
                      for k, side in (("expected_laplace", "before"), ("expected_discrete", "after")))
            lines.append(f"| its expectation under the side's law, given the true counts | {eb:.4f} | {ea:.4f} | "
                         f"{ea - eb:+.4f} |")
    cells = _mean_se([r["cells"] for r in part])[0]
    rate_cells = _mean_se([r["rate_cells"] for r in part])[0]
    return lines + ["", f"{len(seeds)} fits per side; the same scoring system was selected on both sides in "
                    f"{same} of {len(seeds)} fits (same seed), so the true counts are paired. Per fit: "
                    f"{cells:.1f} counts on average (positives and negatives per total score), {rate_cells:.1f} "
                    f"rates. Scale of the noise on each count: 2 / eps_table = {TABLE_SCALE:g} (continuous "
                    f"Laplace before, discrete Laplace after: E|noise| = {TABLE_SCALE:g} and "
                    f"{_discrete_laplace_mean_abs(TABLE_SCALE):.4f} before the clip of negative noisy counts at 0, "
                    "which every count's error includes).", ""]


def _opsamp_lines(rows) -> list[str]:
    from scipy import stats

    part = [r for r in rows if r["part"] == "opsamp"]
    scale = {side: sorted({r["laplace_scale"] for r in part if r["side"] == side}) for side in ("before", "after")}
    step = sorted({str(r["grid_step"]) for r in part if r["side"] == "after"})
    d = part[0]["d_z"]
    before, after, diff, se = _paired(part, "l1_distance")
    ratio = {side: _mean_se([r["l1_distance"] / (d * r["laplace_scale"]) for r in part if r["side"] == side])
             for side in ("before", "after")}
    ks = stats.ks_2samp([r["l1_distance"] for r in part if r["side"] == "before"],
                        [r["l1_distance"] for r in part if r["side"] == "after"]).pvalue
    return ["| quantity | before | after | after - before (se) |", "|---|---|---|---|",
            f"| mean l1 distance of the release from w_bar | {before:.4f} | {after:.4f} | {diff:+.4f} ({se:.4f}) |",
            f"| the same over its expectation d x scale | {ratio['before'][0]:.4f} ({ratio['before'][1]:.4f}) | "
            f"{ratio['after'][0]:.4f} ({ratio['after'][1]:.4f}) | |",
            "", f"{len(part) // 2} seeds per side, d = {d}. Scale of the output noise: before lambda/eps = "
            f"{', '.join(f'{s:.9g}' for s in scale['before'])}, after "
            f"{', '.join(f'{s:.9g}' for s in scale['after'])} (grid step {', '.join(step)}), so the expected l1 "
            f"distances are {d * scale['before'][0]:.6f} and {d * scale['after'][0]:.6f}. Two-sample "
            f"Kolmogorov-Smirnov test of the two sides' l1 distances: p = {ks:.3f}. The oracle answers "
            "(sigma_1..sigma_m come first from the generator) are the same on both sides; only the output "
            "step's draw differs.", ""]


def _discrete_laplace_mean_abs(t: float) -> float:
    """E|Z| for P(Z = k) proportional to exp(-|k| / t): 2 e^{-1/t} / (1 - e^{-2/t})."""
    return 2.0 * math.exp(-1.0 / t) / (1.0 - math.exp(-2.0 / t))


def summary(rows, env, args, before_info) -> str:
    names = [n for n in args.datasets if any(r.get("dataset") == n for r in rows)]
    errors = [r for r in rows if r.get("error")]
    lines = [
        "# Exact integer noise on a grid: before and after, one run", "",
        _common.stamp_line(env), "",
        f"Before: privopt at {before_info['rev']} (a git worktree, in a subprocess). After: this checkout at "
        f"{before_info['head']}{before_info['dirty']}. Both sides ran the same code of this script at the same "
        "time, on the same splits and seeds (benchmarks/bench_exact_noise.py explains each part).", "",
        "## Output perturbation: held-out accuracy", "",
        f"Mean over {args.splits} stratified 70/30 splits (those of the small-data suite) of the held-out "
        "accuracy; `after - before` is the mean paired difference over the splits with its standard error "
        "(`*`: more than two). `noise norm after/before`: the ratio of the root mean square norms of the noise "
        "(from the fitted scales). Objective perturbation (pure epsilon) and DP-SGD (epsilon, 1/n_train^2) are "
        "the before side's (their code did not change); `OP best`: output perturbation's mean at least the larger "
        "of the two. Tables tagged held-out or fresh in benchmarks/bench_small_data.py (not the sets the "
        "defaults were tuned on).", "",
    ]
    lines += _op_lines(rows, names, EPSILONS, args.splits)
    lines += ["## Risk table of PrivateScoringSystem", "",
              f"`PrivateScoringSystem(epsilon={TABLE_EPSILON:g}, risk_share={TABLE_SHARE:g}, max_points=3, "
              "max_items=2)` on the diabetes table cut at the medians (442 records, 10 items); eps_table = "
              f"{TABLE_EPSILON * TABLE_SHARE:g}.", ""]
    lines += _risk_lines(rows)
    lines += ["## OPSamp's output step", "",
              "`opsamp(epsilon=1, delta=1e-3, n_oracle_calls=4, project=False)` on absolute-loss regression over "
              f"[-1, 1]^{OPSAMP_D} with {OPSAMP_N} records ({OPSAMP_D} weights: {OPSAMP_D} draws of the output "
              "noise per seed); w_bar recomputed with scipy's linprog from the returned sigmas.", ""]
    lines += _opsamp_lines(rows)
    if errors:
        lines += [f"{len(errors)} fits raised; first: {errors[0]['side']} {errors[0].get('dataset', '')} "
                  f"{errors[0]['method']}: {errors[0]['error']}", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="eaaf9c1", help="the revision of the 'before' side (a git worktree)")
    ap.add_argument("--splits", type=int, default=5, help="70/30 splits per table (output perturbation)")
    ap.add_argument("--fits", type=int, default=1000, help="seeded fits of the scoring system (risk table)")
    ap.add_argument("--seeds", type=int, default=200, help="seeds of OPSamp")
    ap.add_argument("--datasets", type=lambda s: s.split(","), default=list(DATASETS),
                    help="held-out or fresh tables of bench_small_data.py, comma-separated")
    ap.add_argument("--tag", default="", help="suffix of the output files")
    ap.add_argument("--side", choices=("before",), help=argparse.SUPPRESS)   # the subprocess of the before side
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--expect-root", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.side:
        return _worker(args)
    env = _common.stamp(argv)
    info = {"rev": _git("rev-parse", "--short", args.before).strip(),
            "head": _git("rev-parse", "--short", "HEAD").strip()}
    dirty = _git("status", "--porcelain", "--", "privopt")
    info["dirty"] = (" with uncommitted edits to " + ", ".join(line[3:] for line in dirty.splitlines())) if dirty \
        else ""
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "before.json")
        proc, tree = start_before(args.before, args, out_json)
        try:
            after = measure("after", args.splits, args.fits, args.seeds, args.datasets)
            if proc.wait() != 0:
                print(f"the before side ({args.before}) failed", file=sys.stderr)
                return 1
            with open(out_json) as fh:
                before = json.load(fh)["rows"]
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = before + after
    out = os.path.join(HERE, "results", f"exact_noise{args.tag}")
    _common.write_csv(out + ".csv", rows, COLUMNS)
    text = summary(rows, env, args, info)
    _common.write_markdown(out + ".md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

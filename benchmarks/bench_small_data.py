"""Private baselines with their DEFAULT hyperparameters, from n = 100 to n = 35,000.

Usage:  python benchmarks/bench_small_data.py [--seeds 5] [--tag ""] [--before REV]
Writes  benchmarks/results/small_data{tag}.csv (one row per fit) and
        benchmarks/results/small_data{tag}.md (tables and verdicts); with --before REV
        the same script also runs, in parallel, on privopt as of git revision REV
        (small_data_before.*), so before and after come from one invocation.

Every baseline is built exactly as a user would build it: ``cls(epsilon=eps,
delta=..., bounds=bounds, random_state=seed)`` and nothing else, so the run
measures privopt's public default rules (docs/estimators.md, "Defaults at
small n").  Every method gets the budget (epsilon, delta = min(1e-5, 1/n^2));
objective perturbation (pure epsilon-DP) ignores delta.

Data (all ship with scikit-learn or are generated; 70/30 stratified split per
seed).  Bounds: digits (0, 16) are public; for the others the range of the whole
published data set stands in for published feature ranges (this is a benchmark of
defaults, not a privacy audit).

* ``dev``: the sets the rules' constants were chosen on (breast cancer,
  make_classification at n = 200, 2000 and 50,000).
* ``held-out``: sets that played no part in choosing them.
* ``fresh``: sets added after the intercept column of the feature map was
  changed (a change prompted by output perturbation's results on the held-out
  sets), first run with that code.
* ``fresh-2``: sets added after output perturbation gained Gaussian noise for
  delta > 0 (prompted by its results on the digits sets), first run with it.

A baseline is "clearly above" the majority class when its mean accuracy exceeds
the majority rate by more than 0.05 and by more than two standard errors.

``private_selection`` (issue 28) is privopt's private 0/1-loss estimator built as
a user would, ``PrivateHalfspaceClassifier(epsilon=eps, delta=..., bounds=bounds,
random_state=seed)``: its default ``mechanism="auto"`` runs permute-and-flip over
its default W (intercept, grid -2..2, ||w|| <= min(sqrt(d), 2)) where scoring W
is predicted to fit its time limit, else OPDisc (the ``mechanism`` column says
which ran).  ``--methods`` runs only the methods named and keeps the other
methods' rows of the results file as they are.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

import privopt
from privopt.baselines import PRIVATE_BASELINES, NonPrivateLogisticRegression

import _common
from _datasets import small_data_sets

HERE = os.path.dirname(os.path.abspath(__file__))


def _private_selection(epsilon, delta, bounds, random_state):
    """privopt's private 0/1-loss estimator with its defaults (mechanism="auto")."""
    return privopt.PrivateHalfspaceClassifier(epsilon=epsilon, delta=delta, bounds=bounds,
                                              random_state=random_state)


def _private_selection_single_w(epsilon, delta, bounds, random_state):
    """The same estimator on its single default W (``resolutions=None``: no ladder of
    resolutions), the "before" of the budget-adaptive W, in the same run."""
    return privopt.PrivateHalfspaceClassifier(epsilon=epsilon, delta=delta, bounds=bounds,
                                              random_state=random_state, resolutions=None)


def _private_selection_no_warm_start(epsilon, delta, bounds, random_state):
    """The estimator's ladder of resolutions without the warm start's W (``warm_start=False``:
    the default before the warm start), in the same run."""
    return privopt.PrivateHalfspaceClassifier(epsilon=epsilon, delta=delta, bounds=bounds,
                                              random_state=random_state, warm_start=False)


#: Every method of the tables: the private baselines, then privopt's private selection estimator
#: (its default W chosen among resolutions, the same without the warm start, and its single default W).
METHODS = {**PRIVATE_BASELINES, "private_selection": _private_selection,
           "private_selection_no_warm_start": _private_selection_no_warm_start,
           "private_selection_single_w": _private_selection_single_w}
EPSILONS = (0.5, 1.0, 2.0)
MARGIN = 0.05


def run(seeds: int, methods=None, epsilons=EPSILONS, after_set=None, only=None):
    """Rows of every fit (of the sets named in ``only``, default all); ``after_set(rows)``
    after each data set (to save as it goes)."""
    rows = []
    warnings.simplefilter("ignore")
    for role, name, X, y, bounds in small_data_sets():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        for seed in range(seeds):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
            n = len(ytr)
            base = dict(role=role, dataset=name, n_train=n, d=X.shape[1], seed=seed,
                        majority=max(np.mean(yte == c) for c in np.unique(y)),
                        nonprivate_lr=NonPrivateLogisticRegression().fit(Xtr, ytr).score(Xte, yte))
            for eps in epsilons:
                for method, cls in METHODS.items():
                    if methods and method not in methods:
                        continue
                    # every method gets the same (epsilon, delta) budget; objective perturbation
                    # ignores delta, output perturbation may use it (Gaussian noise, noise="auto")
                    kw = {"epsilon": eps, "delta": min(1e-5, 1.0 / n**2), "bounds": bounds,
                          "random_state": seed}
                    t = time.perf_counter()
                    est = cls(**kw)
                    try:
                        acc, err = est.fit(Xtr, ytr).score(Xte, yte), ""
                    except Exception as exc:  # record, do not hide
                        acc, err = math.nan, f"{type(exc).__name__}: {exc}"[:160]
                    rows.append(dict(base, epsilon=eps, method=method, accuracy=acc,
                                     seconds=round(time.perf_counter() - t, 3), error=err,
                                     mechanism=getattr(est, "mechanism_", "")))
        print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        if after_set is not None:
            after_set(rows)
    return rows


def _stats(values):
    v = np.asarray([x for x in values if not math.isnan(x)], dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0


def summary(rows, seeds, tag, before=None, methods_run=None, epsilons_run=None, datasets_run=None) -> str:
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    info = {r["dataset"]: r for r in rows}
    lines = [
        "# Private baselines with their default hyperparameters",
        "",
        _common.stamp_line(),
        "",
        f"Held-out accuracy, mean ± standard error over {seeds} seeds (70/30 splits). "
        f"`+` marks a mean above the majority rate by more than {MARGIN} and by more than two standard "
        "errors ('clearly above'). `dev`: the sets the default rules' constants were chosen on; "
        "`held-out`: sets that played no part in choosing them."
        + (f" Only {', '.join(methods_run)} ran in this invocation; the other methods' rows are those of "
           "the results file it extended." if methods_run and methods_run != ["(summary only)"] else "")
        + (" Tables rebuilt from the results file (`--summary-only`); its rows come from earlier "
           "invocations (see the git log of this file)." if methods_run == ["(summary only)"] else ""),
        "",
    ]
    if "private_selection" in methods:
        lines += ["`private_selection`: `privopt.PrivateHalfspaceClassifier(epsilon, delta, bounds, "
                  "random_state)` with its defaults (mechanism='auto': permute-and-flip over its default W "
                  "where scoring W is predicted to fit the time limit, else OPDisc).", ""]
    verdict = {}
    for eps in EPSILONS:
        lines += [f"## epsilon = {eps:g}", "",
                  "| role | data | n_train | d | majority | LR (non-private) | " + " | ".join(methods) + " |",
                  "|---|---|---|---|---|---|" + "---|" * len(methods)]
        for name in names:
            r0 = info[name]
            maj = _stats([r["majority"] for r in rows if r["dataset"] == name])[0]
            lr = _stats([r["nonprivate_lr"] for r in rows if r["dataset"] == name and r["method"] == methods[0]
                         and r["epsilon"] == eps])[0]
            cells = []
            for m in methods:
                accs = [r["accuracy"] for r in rows if r["dataset"] == name and r["method"] == m
                        and r["epsilon"] == eps]
                if not accs:   # not run at this epsilon (--methods/--epsilons)
                    cells.append("-")
                    continue
                mean, se = _stats(accs)
                clear = mean - maj > max(MARGIN, 2 * se)
                verdict[(name, eps, m)] = (clear, lr >= 0.9, r0["role"])
                cells.append(f"{mean:.3f} ± {se:.3f}{' +' if clear else ''}")
            lines.append(f"| {r0['role']} | {name} | {r0['n_train']} | {r0['d']} | {maj:.3f} | {lr:.3f} | "
                         + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## At epsilon = 1, on sets where non-private LR reaches >= 0.90", "",
              "Counts of sets where the method is clearly above the majority class.", "",
              "| method | dev, n_train >= 200 | held-out, n_train >= 200 | held-out, n_train < 200 "
              "| fresh, n_train >= 200 | fresh-2, n_train >= 200 |",
              "|---|---|---|---|---|---|"]
    for m in methods:
        cnt = []
        for role, small in (("dev", False), ("held-out", False), ("held-out", True), ("fresh", False),
                            ("fresh-2", False)):
            cells = [v for (name, eps, mm), v in verdict.items() if mm == m and eps == 1.0 and v[1] and v[2] == role
                     and (info[name]["n_train"] < 200) == small]
            cnt.append(f"{sum(c[0] for c in cells)} of {len(cells)}")
        lines.append(f"| {m} | " + " | ".join(cnt) + " |")
    if "private_selection" in methods and "dpsgd" in methods:
        lines += _selection_lines(rows, verdict, info)
    if "private_selection" in methods and "private_selection_single_w" in methods:
        lines += _adaptive_lines(rows, info)
    errors = [r for r in rows if r["error"]]
    if errors:
        lines += ["", f"{len(errors)} fits raised; first: {errors[0]['dataset']} {errors[0]['method']}: "
                  f"{errors[0]['error']}"]
    return "\n".join(lines) + "\n"


def _adaptive_lines(rows, info) -> list:
    """The default (``private_selection``: W chosen among resolutions, with the warm start's W
    where its rule allows) against the same without the warm start
    (``private_selection_no_warm_start``, where it ran) and the single default W
    (``private_selection_single_w``), same run, same splits, and against the best convex
    private method with public defaults: per epsilon, the mean paired differences and the count
    of sets where each is level with (within 0.005) or ahead of the best convex mean; then the
    sets where the default's mean falls from one epsilon to the next by more than two standard
    errors of the paired difference."""
    convex = [m for m in PRIVATE_BASELINES]
    nowarm = "private_selection_no_warm_start"
    lines = ["", "## W chosen among resolutions against the single default W", "",
             "Per epsilon: mean over sets of the paired differences (same splits) of the default against "
             "the single W and against the ladder without the warm start, and the sets where each is level "
             "with (within 0.005 of) or ahead of the best convex private method's mean.", "",
             "| role | eps | sets | default - single W | default - no warm start | default level/ahead "
             "| no warm start level/ahead | single W level/ahead |",
             "|---|---|---|---|---|---|---|---|"]
    names = sorted({r["dataset"] for r in rows}, key=lambda n: (info[n]["role"], n))

    def by_method(n, eps):
        by = {}
        for r in rows:
            if r["dataset"] == n and r["epsilon"] == eps and not r["error"]:
                by.setdefault(r["method"], {})[r["seed"]] = r["accuracy"]
        return by

    for role in sorted({info[n]["role"] for n in names}) + ["all"]:
        for eps in EPSILONS:
            diffs, dnw, ok, oknw, ok1, count = [], [], 0, 0, 0, 0
            for n in names:
                if role != "all" and info[n]["role"] != role:
                    continue
                by = by_method(n, eps)
                a, b, c = by.get("private_selection", {}), by.get("private_selection_single_w", {}), by.get(nowarm, {})
                conv = [np.mean(list(by[m].values())) for m in convex if by.get(m)]
                seeds = sorted(set(a) & set(b))
                if not seeds or not conv:
                    continue
                count += 1
                diffs.append(np.mean([a[s] - b[s] for s in seeds]))
                ok += np.mean(list(a.values())) >= max(conv) - 0.005
                ok1 += np.mean(list(b.values())) >= max(conv) - 0.005
                if set(a) & set(c):
                    dnw.append(np.mean([a[s] - c[s] for s in sorted(set(a) & set(c))]))
                    oknw += np.mean(list(c.values())) >= max(conv) - 0.005
            if count:
                lines.append(f"| {role} | {eps:g} | {count} | {np.mean(diffs):+.3f} | "
                             + (f"{np.mean(dnw):+.3f} | " if dnw else "- | ")
                             + f"{ok}/{count} | " + (f"{oknw}/{len(dnw)} | " if dnw else "- | ")
                             + f"{ok1}/{count} |")
    drops = []
    for n in names:
        for e0, e1 in zip(EPSILONS, EPSILONS[1:]):
            a, b = by_method(n, e0).get("private_selection", {}), by_method(n, e1).get("private_selection", {})
            seeds = sorted(set(a) & set(b))
            if len(seeds) < 2:
                continue
            d = np.array([b[s] - a[s] for s in seeds])
            se = d.std(ddof=1) / np.sqrt(len(d))
            if d.mean() < -2 * se and d.mean() < 0:
                drops.append(f"{n} ({e0:g} -> {e1:g}: {d.mean():+.3f} +- {se:.3f})")
    lines += ["", "Non-decreasing in epsilon: sets where the default's mean falls from one epsilon to the next "
              "by more than two standard errors of the paired difference (same splits): "
              + (", ".join(drops) if drops else "none") + "."]
    return lines


def _selection_lines(rows, verdict, info) -> list:
    """At epsilon = 1: private selection against DP-SGD (ahead when the difference of means
    exceeds two standard errors of the difference), counted per role over the criterion sets
    (n_train >= 200, non-private LR >= 0.90) and over all sets, with the mechanism that ran."""
    def acc(name, m):
        return _stats([r["accuracy"] for r in rows if r["dataset"] == name and r["method"] == m
                       and r["epsilon"] == 1.0])

    lines = ["", "## private_selection at epsilon = 1", "",
             "Ahead of DP-SGD: mean above DP-SGD's by more than two standard errors of the difference. "
             "Criterion sets: n_train >= 200 and non-private LR >= 0.90.", "",
             "| role | sets | clearly above majority | ahead of DP-SGD | level with DP-SGD | behind DP-SGD "
             "| every fit failed | mechanism (fits) |",
             "|---|---|---|---|---|---|---|---|"]
    for role in dict.fromkeys(r["role"] for r in rows):
        for crit in (True, False):
            names = [n for (n, eps, m), v in verdict.items() if m == "private_selection" and eps == 1.0
                     and v[2] == role and (not crit or (v[1] and info[n]["n_train"] >= 200))]
            if not names:
                continue
            counts = {"ahead": 0, "level": 0, "behind": 0, "failed": 0}
            for n in names:
                (a, sa), (b, sb) = acc(n, "private_selection"), acc(n, "dpsgd")
                if math.isnan(a):   # no fit returned (errors are in the error column)
                    counts["failed"] += 1
                    continue
                se = math.sqrt(sa ** 2 + sb ** 2)
                counts["ahead" if a - b > 2 * se else "behind" if b - a > 2 * se else "level"] += 1
            clear = sum(verdict[(n, 1.0, "private_selection")][0] for n in names)
            mech = {}
            for r in rows:
                if r["dataset"] in names and r["method"] == "private_selection" and r["epsilon"] == 1.0:
                    mech[r.get("mechanism") or "?"] = mech.get(r.get("mechanism") or "?", 0) + 1
            lines.append(f"| {role} | {'criterion' if crit else 'all'}: {len(names)} | {clear} | "
                         f"{counts['ahead']} | {counts['level']} | {counts['behind']} | {counts['failed']} | "
                         + ", ".join(f"{k} {v}" for k, v in sorted(mech.items())) + " |")
    return lines


def _read(path) -> list:
    """Rows of a results file written by this script (numbers parsed)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("n_train", "d", "seed"):
            r[k] = int(r[k])
        for k in ("majority", "nonprivate_lr", "epsilon", "accuracy", "seconds"):
            r[k] = float(r[k])
    return rows


def run_before(rev: str, seeds: int) -> subprocess.Popen:
    """Start this script on privopt as of git revision ``rev`` (a temporary worktree put
    first on PYTHONPATH), writing small_data_before.*; returns the process and its worktree."""
    tree = tempfile.mkdtemp(prefix="privopt-before-")
    subprocess.run(["git", "-C", HERE, "worktree", "add", "-f", "--detach", tree, rev], check=True,
                   stdout=subprocess.DEVNULL)
    env = _common.checkout_env(tree)
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--seeds", str(seeds), "--tag", "_before"],
                            env=env, cwd=tree, stdout=subprocess.DEVNULL)
    return proc, tree


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tag", default="", help="suffix of the output files (e.g. _before)")
    ap.add_argument("--before", metavar="REV", default=None,
                    help="also run the same sets on privopt at git revision REV, side by side "
                         "(writes small_data_before.*), e.g. 3e4008f for the former defaults")
    ap.add_argument("--methods", type=lambda s: s.split(","), default=None,
                    help=f"only these methods ({', '.join(METHODS)}); the other methods' rows of the "
                         "results file are kept as they are")
    ap.add_argument("--epsilons", type=lambda s: [float(x) for x in s.split(",")], default=None,
                    help=f"only these epsilons (default: {', '.join(f'{e:g}' for e in EPSILONS)}); with "
                         "--methods, the rows of the methods and epsilons not run are kept as they are")
    ap.add_argument("--datasets", type=lambda s: s.split(","), default=None,
                    help="only these data sets; the rows of the others are kept as they are")
    ap.add_argument("--summary-only", action="store_true", help="only rebuild the .md from the .csv")
    args = ap.parse_args()
    out = os.path.join(HERE, "results", f"small_data{args.tag}")
    if args.summary_only:
        text = summary(_read(out + ".csv"), args.seeds, args.tag, methods_run=["(summary only)"])
        with open(out + ".md", "w") as fh:
            fh.write(text)
        print(text)
        return
    if args.epsilons and set(args.epsilons) - set(EPSILONS):
        ap.error(f"epsilons: choose from {', '.join(f'{e:g}' for e in EPSILONS)}")
    unknown = sorted(set(args.methods or ()) - set(METHODS))
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    if args.methods and args.before:
        ap.error("--methods and --before do not go together")
    kept = []
    partial = bool(args.methods or args.epsilons or args.datasets)
    if partial and os.path.exists(out + ".csv"):   # keep the rows not rerun as they are
        epsilons = set(args.epsilons or EPSILONS)
        kept = [r for r in _read(out + ".csv")
                if not ((not args.methods or r["method"] in args.methods) and r["epsilon"] in epsilons
                        and (not args.datasets or r["dataset"] in args.datasets))]
        if {r["seed"] for r in kept} - set(range(args.seeds)):
            ap.error(f"{out}.csv holds seeds other than 0..{args.seeds - 1}: give the same --seeds")

    def save(new):
        rows = kept + new
        _common.write_csv(out + ".csv", rows, list(dict.fromkeys(k for r in rows for k in r)))
        text = summary(rows, args.seeds, args.tag, args.before, args.methods, args.epsilons, args.datasets)
        with open(out + ".md", "w") as fh:
            fh.write(text)
        return text

    before = run_before(args.before, args.seeds) if args.before else None
    # with --methods/--epsilons the file is saved after every data set (an interrupted run keeps its sets)
    rows = run(args.seeds, args.methods, args.epsilons or EPSILONS, after_set=save if partial else None,
               only=args.datasets)
    if before is not None:
        proc, tree = before
        if proc.wait() != 0:
            print(f"the run on {args.before} failed", file=sys.stderr)
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", tree], check=False)
    print(save(rows))


if __name__ == "__main__":
    main()

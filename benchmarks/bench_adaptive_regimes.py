"""The W chosen among resolutions on the regime sweeps' data: the default
``PrivateHalfspaceClassifier`` (``resolutions="auto"``) against its single
default W (``resolutions=None``) and the untuned convex private peers of the
sweeps, in one run, on the same splits.

The regime sweeps (``benchmarks/bench_regimes.py``) run private selection
through the Adult experiment's runner, which fixes the feature levels, so the
ladder of resolutions never applies there.  This benchmark reuses the sweeps'
data and splits (their "n" stage: Adult's 23 paper features at n = 500 ..
12,546; their "data" stage: six feature sets) and fits the estimator with its
own defaults on the public bounds [0, 1].

Usage:  python benchmarks/bench_adaptive_regimes.py [--runs 5] [--stages n data] [--epsilons 0.1 0.5 1 2]
Writes  benchmarks/results/adaptive_regimes.csv and benchmarks/results/adaptive_regimes.md.

The data sets and splits are those of the sweeps (none was used to choose the
ladder or its constants).  A run is a seed of the private learners (the split
is the sweeps' one fixed split); the peers take their public default
hyperparameters.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


import _common
from _common import fit_timed, read_fit_rows, resolution_label
from _datasets import REGIMES_DATA_SETS, REGIMES_N_VALUES, regimes_data

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "adaptive_regimes"
EPSILONS = (0.1, 0.5, 1.0, 2.0)
#: the sweeps' untuned convex peers (public default hyperparameters)
PEERS = ("dpsgd", "objective_perturbation")
LEARNERS = ("single_w", "ladder", "default") + PEERS


def make(learner, eps, seed):
    """The learner on the public bounds (0, 1): ``single_w`` and ``default`` are
    :func:`_common.make_learner`'s ``before`` and ``after``; ``ladder`` and the peers are the same there."""
    return _common.make_learner({"single_w": "before", "default": "after"}.get(learner, learner), eps, (0.0, 1.0),
                                seed)


def configurations(stages, only=None):
    out = []
    if "n" in stages:
        out += [("n", "adult", n, ("adult", n)) for n in REGIMES_N_VALUES]
    if "data" in stages:
        out += [("data", name, None, (name, None)) for name in REGIMES_DATA_SETS]
    return [c for c in out if not only or c[1] in only]


def run(runs, epsilons, stages, save=None, only=None, learners=LEARNERS, kept=()):
    rows = list(kept)
    for stage, name, _n, key in configurations(stages, only):
        X, y, Xt, yt, _, _ = regimes_data(key)
        for eps in epsilons:
            for seed in range(runs):
                for learner in learners:
                    clf = make(learner, eps, seed)
                    acc, secs = fit_timed(clf, X, y, Xt, yt)
                    rows.append({"stage": stage, "data": name, "n_train": len(y), "d": X.shape[1], "eps": eps,
                                 "seed": seed, "learner": learner, "accuracy": acc, "seconds": secs,
                                 "resolution": resolution_label(getattr(clf, "resolution_", None)),
                                 "offered": len(getattr(clf, "resolutions_", ()) or ())})
                    print(f"{stage} {name} n={len(y)} eps {eps} seed {seed} {learner}: {acc:.3f} ({secs:.2f} s)",
                          file=sys.stderr, flush=True)
        if save is not None:
            save(rows)
    return rows


def _mean_se(v):
    v = np.asarray(v, dtype=float)
    return v.mean(), (v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0)


def summarize(rows, runs, epsilons):
    lines = ["# The W chosen among resolutions on the regime sweeps' data (benchmarks/bench_adaptive_regimes.py)",
             "", _common.stamp_line(), "",
             f"Held-out accuracy, mean +- s.e. over {runs} runs (seeds of the private learners; the sweeps' one "
             "fixed split).  `single W`: `PrivateHalfspaceClassifier(epsilon, bounds=(0, 1), random_state)` with "
             "`resolutions=None`; `ladder`: the W chosen among resolutions without the warm start "
             "(`warm_start=False`, the previous default); `default`: the estimator's defaults (the ladder and, "
             "where its rule allows, the warm start's W; `warm`: the share of fits that released it).  "
             "`best peer`: the better mean of DP-SGD and objective perturbation with their public defaults "
             "(the sweeps' untuned convex peers).  `level`: `default` within 0.005 of the best peer or ahead.", "",
             "| stage | data | n | d | eps | single W | ladder | default | default - single W | default - ladder | "
             "best peer | default - best peer | level | offered | warm | default s | ladder s | single W s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = list(dict.fromkeys((r["stage"], r["data"], r["n_train"]) for r in rows))
    verdict = {}
    for stage, name, n in keys:
        rs = [r for r in rows if (r["stage"], r["data"], r["n_train"]) == (stage, name, n)]
        for eps in epsilons:
            acc = {ln: [r["accuracy"] for r in rs if r["learner"] == ln and r["eps"] == eps] for ln in LEARNERS}
            if not acc["default"]:
                continue
            a, b = _mean_se(acc["default"]), _mean_se(acc["single_w"])
            diff = _mean_se(np.subtract(acc["default"], acc["single_w"]))
            lad = _mean_se(acc["ladder"]) if acc["ladder"] else (float("nan"), 0.0)
            dlad = _mean_se(np.subtract(acc["default"], acc["ladder"])) if acc["ladder"] else (float("nan"), 0.0)
            peers = {ln: np.mean(acc[ln]) for ln in PEERS if acc[ln]}
            best = max(peers, key=peers.get)
            dpeer = _mean_se(np.subtract(acc["default"], acc[best]))
            level = a[0] >= peers[best] - 0.005
            verdict[(stage, name, n, eps)] = (level, diff[0], a[0], b[0], lad[0])
            cell = [r for r in rs if r["eps"] == eps]
            lines.append(
                f"| {stage} | {name} | {n} | {rs[0]['d']} | {eps:g} | {b[0]:.3f} +- {b[1]:.3f} | "
                f"{lad[0]:.3f} +- {lad[1]:.3f} | "
                f"{a[0]:.3f} +- {a[1]:.3f} | {diff[0]:+.3f} +- {diff[1]:.3f} | {dlad[0]:+.3f} +- {dlad[1]:.3f} | "
                f"{peers[best]:.3f} ({best}) | "
                f"{dpeer[0]:+.3f} +- {dpeer[1]:.3f} | {'yes' if level else 'no'} | "
                f"{np.mean([r['offered'] for r in cell if r['learner'] == 'default']):.1f} | "
                f"{np.mean([r['resolution'].endswith('/warm') for r in cell if r['learner'] == 'default']):.1f} | "
                f"{np.mean([r['seconds'] for r in cell if r['learner'] == 'default']):.2f} | "
                f"{np.mean([r['seconds'] for r in cell if r['learner'] == 'ladder'] or [float('nan')]):.2f} | "
                f"{np.mean([r['seconds'] for r in cell if r['learner'] == 'single_w']):.2f} |")
    lines += ["", "Summary: per stage and epsilon, the configurations where `default` is level with or ahead of "
              "the best untuned peer (ladder without the warm start, then single W, in brackets), and the mean paired "
              "differences default - single W and default - ladder.", "",
              "| stage | eps | level or ahead: default (ladder, single W) | default - single W | default - ladder |",
              "|---|---|---|---|---|"]
    for stage in dict.fromkeys(k[0] for k in verdict):
        for eps in epsilons:
            cells = [(k, v) for k, v in verdict.items() if k[0] == stage and k[3] == eps]
            if not cells:
                continue
            peers_best = {}
            for (st, name, n, e), _ in cells:
                rs = [r for r in rows if (r["stage"], r["data"], r["n_train"], r["eps"]) == (st, name, n, e)]
                peers_best[(name, n)] = max(np.mean([r["accuracy"] for r in rs if r["learner"] == ln])
                                            for ln in PEERS)
            single_ok = sum(v[3] >= peers_best[(k[1], k[2])] - 0.005 for k, v in cells)
            ladder_ok = sum(v[4] >= peers_best[(k[1], k[2])] - 0.005 for k, v in cells)
            lines.append(f"| {stage} | {eps:g} | {sum(v[0] for _, v in cells)}/{len(cells)} "
                         f"({ladder_ok}/{len(cells)}, {single_ok}/{len(cells)}) "
                         f"| {np.mean([v[1] for _, v in cells]):+.3f} "
                         f"| {np.mean([v[2] - v[4] for _, v in cells]):+.3f} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--stages", nargs="*", default=["n", "data"])
    ap.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--only", nargs="*", help="only these data sets (e.g. planted-onehot-30)")
    ap.add_argument("--merge", nargs="*", help="write the tables from these CSV files instead of running")
    ap.add_argument("--learners", nargs="*", choices=LEARNERS, default=list(LEARNERS),
                    help="run only these learners; the rows of the others are kept from the results file")
    args = ap.parse_args(argv)
    if args.merge:
        rows = [r for path in args.merge for r in read_fit_rows(path)]
    else:
        def save(rows):
            _common.write_csv(args.out + ".csv", rows, list(rows[0]))

        kept = []
        if set(args.learners) != set(LEARNERS) and Path(args.out + ".csv").exists():
            kept = [r for r in read_fit_rows(args.out + ".csv") if r["learner"] not in args.learners]
        rows = run(args.runs, tuple(args.epsilons), args.stages, save, args.only, tuple(args.learners), kept)
    _common.write_csv(args.out + ".csv", rows, list(rows[0]))
    _common.write_markdown(args.out + ".md", summarize(rows, args.runs, tuple(args.epsilons)))
    print(f"wrote {args.out}.csv and {args.out}.md")


if __name__ == "__main__":
    main()

"""Study (issue: accuracy at large epsilon beyond the 0/1 ceiling): does private selection
over one W score better with a bounded surrogate loss than with the 0/1 loss?

Usage:  python benchmarks/study_surrogate_selection.py [--seeds 3] [--only NAME ...]
Writes  benchmarks/results/study_surrogate_selection.csv and .md (or --out PATH.csv and .md)

A study, not a library change.  For each table (the development and aside sets of
``bench_adaptive_w.py``, d <= 7), each stratified 70/30 split and each W, the exponential
mechanism's law over W is computed EXACTLY (no sampling): p(w) proportional to
exp(-eps L(w) / 2) with sensitivity 1, for

* ``01``: L(w) = the number of training records misclassified by sign(<w, x> + b)
  (privopt's rule: +1 iff the score is >= 0);
* ``ramp<m>``: L(w) = sum_i min(1, max(0, 1 - y_i (<w, x_i> + b) / m)), the ramp (clipped
  hinge) loss with public margin m, each term in [0, 1], so the sensitivity is 1 as for the
  0/1 loss and the release is eps-DP alike.  It is never below the 0/1 loss.

and the expected held-out accuracy sum_w p(w) acc(w) is reported (the mean over splits).
Features are mapped by ``FeatureDiscretizer(bounds, levels, center=True)`` with the tables'
public bounds; W = {-B..B}^(d+1) (with the intercept) inside ||w||_2 <= D, every point
listed (W's above 6e6 points are skipped).
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass

import numpy as np

import _common
from bench_adaptive_w import development_datasets, split
from privopt.models import FeatureDiscretizer

#: (name, feature levels, grid bound B, ball D): the default's first W, and a finer one
WS = (("coarse", 4, 2, 2.0), ("fine", 8, 3, 3.0))
MARGINS = (1.0, 2.0)
EPSILONS = (0.5, 1.0, 2.0)
MAX_POINTS = 6e6
OUT = _common.HERE + "/results/study_surrogate_selection"


def grid_points(d: int, B: int, D: float) -> np.ndarray:
    """W: the points of {-B..B}^d with ||w||_2 <= D, in lexicographic order (the last
    coordinate, the intercept, fastest), built coordinate by coordinate inside the ball so
    that only the ball's points are ever listed."""
    values = np.arange(-B, B + 1)
    pts = np.zeros((1, 0), dtype=np.int8)
    used = np.zeros(1)
    for _ in range(d):
        extended = used[:, None] + values[None, :] ** 2
        prefix, value = np.nonzero(extended <= D * D + 1e-9)      # row-major: prefixes stay in order
        pts = np.hstack([pts[prefix], values[value, None].astype(np.int8)])
        used = extended[prefix, value]
    return pts.astype(np.float64)


@dataclass(frozen=True)
class Design:
    """One split's records as the W's scores see them: the discretized features with a
    column of ones (the intercept, last), labels in {-1, +1}; training and held-out."""

    A: np.ndarray
    ypm: np.ndarray
    At: np.ndarray
    ytpm: np.ndarray


def design(X, y, bounds, levels: int, seed: int) -> Design:
    """The stratified 70/30 split ``seed`` of (X, y), features mapped by
    ``FeatureDiscretizer(bounds, levels, center=True)`` fitted on the training part."""
    Xtr, Xte, ytr, yte = split(X, y, seed)
    disc = FeatureDiscretizer(bounds=bounds, levels=levels, center=True).fit(Xtr)
    return Design(np.hstack([disc.transform(Xtr), np.ones((len(Xtr), 1))]), np.where(ytr == 1, 1.0, -1.0),
                  np.hstack([disc.transform(Xte), np.ones((len(Xte), 1))]), np.where(yte == 1, 1.0, -1.0))


def losses_and_accuracy(W, A, ypm, At, ytpm, margins=MARGINS):
    """Per point of W: the 0/1 loss, the ramp loss per margin (training), held-out accuracy.
    W is scored in blocks of about 4e6 (record, point) pairs, whatever n."""
    L = {"01": np.empty(len(W)), **{f"ramp{m:g}": np.empty(len(W)) for m in margins}}
    acc = np.empty(len(W))
    block = max(1000, int(4e6 // len(A)))
    for s in range(0, len(W), block):
        Wb = W[s:s + block].T
        S = A @ Wb
        L["01"][s:s + block] = ((S >= 0) != (ypm[:, None] > 0)).sum(0)
        Z = S * ypm[:, None]
        for m in margins:
            L[f"ramp{m:g}"][s:s + block] = np.clip(1 - Z / m, 0, 1).sum(0)
        acc[s:s + block] = (((At @ Wb) >= 0) == (ytpm[:, None] > 0)).mean(0)
    return L, acc


def exact_law(loss, eps, log_prior=None):
    """The exponential mechanism's law over W, exactly: p(w) proportional to
    mu(w) exp(-eps loss(w) / 2), with log mu = ``log_prior`` (uniform when None)."""
    logit = -eps * (loss - loss.min()) / 2
    if log_prior is not None:
        logit = logit + log_prior
    p = np.exp(logit - logit.max())
    return p / p.sum()


def expected_accuracy(loss, acc, eps, log_prior=None):
    """sum_w p(w) acc(w) under :func:`exact_law`."""
    return float(exact_law(loss, eps, log_prior) @ acc)


def run(seeds, only):
    rows = []
    for role, name, X, y, bounds, _ in development_datasets():
        if only and name not in only:
            continue
        d = X.shape[1]
        for wname, levels, B, D in WS:
            if (2 * B + 1) ** (d + 1) > MAX_POINTS:
                continue
            W = grid_points(d + 1, B, D)
            for seed in range(seeds):
                sp = design(X, y, bounds, levels, seed)
                L, acc = losses_and_accuracy(W, sp.A, sp.ypm, sp.At, sp.ytpm)
                for eps in EPSILONS:
                    for loss, values in L.items():
                        rows.append({"set": name, "role": role, "d": d, "n_train": len(sp.A), "W": wname,
                                     "n_points": len(W), "eps": eps, "seed": seed, "loss": loss,
                                     "expected_accuracy": expected_accuracy(values, acc, eps)})
        print(name, flush=True)
    return rows


def summarize(rows, env):
    losses = ["01"] + [f"ramp{m:g}" for m in MARGINS]
    lines = ["# Selection scored by a ramp loss instead of the 0/1 loss (a study)", "",
             _common.stamp_line(env), "",
             "Exact expected held-out accuracy of the exponential mechanism over one W (mean over splits; "
             "module docstring of `benchmarks/study_surrogate_selection.py`). `ramp m`: the clipped hinge with "
             "public margin m, sensitivity 1 like the 0/1 loss. `best - 01`: the best ramp column minus the "
             "0/1 column: optimistic, since it picks the margin after seeing held-out accuracy. Reading: a fixed "
             "ramp loss is not a uniform gain; on the coarse W margin 1 is within 0.013 of the 0/1 loss everywhere "
             "(ahead on pima, biopsy), on the fine W margin 2 gains on twoclass and wine and loses on breast "
             "cancer, wachurn and biopsy.", ""]
    for wname, levels, B, D in WS:
        lines += [f"## W `{wname}`: levels {levels}, grid -{B}..{B}, ||w|| <= {D:g}", "",
                  "| set | role | eps | " + " | ".join(losses) + " | best - 01 |",
                  "|---|---|--:|" + "--:|" * (len(losses) + 1)]
        cells = {}
        for r in rows:
            if r["W"] == wname:
                cells.setdefault((r["set"], r["role"], r["eps"]), {}).setdefault(r["loss"], []).append(
                    r["expected_accuracy"])
        for (name, role, eps), by in cells.items():
            means = [float(np.mean(by[k])) for k in losses]
            lines.append(f"| {name} | {role} | {eps:g} | " + " | ".join(f"{m:.3f}" for m in means)
                         + f" | {max(means[1:]) - means[0]:+.3f} |")
        lines.append("")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", default=OUT, help="path of the results, without .csv/.md")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    env = _common.stamp(argv)
    rows = run(args.seeds, args.only)
    _common.write_csv(args.out + ".csv", rows, list(rows[0]))
    _common.write_markdown(args.out + ".md", summarize(rows, env))


if __name__ == "__main__":
    main()

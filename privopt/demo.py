"""``privopt demo`` (what ``make demo`` runs): the Adult experiment in small.

``default``: :class:`~privopt.PrivateHalfspaceClassifier` as a user gets it
(``epsilon`` and, for Adult's features scaled to [0, 1], public ``bounds``;
integer features need none), every other parameter its default:
``mechanism="auto"``, one private selection among resolutions of W and, where
epsilon * n allows, a private warm start's W; pure epsilon-DP in total), OPDisc
(privopt's default ball D = 2, without an intercept as in the paper), RSPM
(when installed), DP-SGD logistic regression and the non-private references
(logistic regression; the 0/1 optimum on OPDisc's W; the majority class) on a
4000-record subsample of the paper's balanced Adult training set, at epsilon
0.1, 0.5 and 2 (chosen so that the curves differ: OPDisc is mostly noise at
0.1 and close to its reference at 2), a few runs each; prints the table, the
default against DP-SGD and the W the default released, and writes
``accuracy_vs_epsilon.png``, ``runtimes.png`` and ``summary.md`` (which carries
the same and how to read it).  With the Adult files neither found nor
downloadable, it says so once and runs on a synthetic planted-halfspace data
set instead (1000 records, d = 10, 10% label noise, 78% of the labels in one
class: the majority line shows what a classifier that learned nothing scores
there).
"""

from __future__ import annotations

import os
import sys

from . import PrivateHalfspaceClassifier
from .datasets import DatasetError, load_adult, make_planted_halfspace
from .exceptions import PrivoptError
from .experiments import (available_methods, figures_unavailable, format_released, format_summary,
                          format_versus, run_experiment, summarize)
from .experiments.adult import SettingMismatchError, adult_levels
from .solvers import available_solvers

__all__ = ["run_demo", "DEMO_METHODS", "DEMO_EPSILONS"]

DEMO_METHODS = ("default", "opdisc", "rspm", "dpsgd", "nonprivate_lr", "nonprivate_01", "majority")
DEMO_EPSILONS = (0.1, 0.5, 2.0)
DEMO_N_TRAIN = 4000
#: OPDisc's ball in the demo: privopt's default (the estimator's), not the paper's sqrt(d).
DEMO_NORM_BOUND = 2.0
#: The methods whose first run in a process uses privopt's numba kernels: the demo warms them up first.
WARM_UP_METHODS = {"default", "permute_and_flip", "opdisc", "nonprivate_01_default", "nonprivate_01"}
#: The synthetic fallback: (records, features, label noise).
FALLBACK = (1000, 10, 0.1)

#: One line per method, printed before the runs.
METHOD_LINES = {
    "default": "PrivateHalfspaceClassifier(epsilon=...) (bounds=(0, 1) for Adult's scaled features; none for "
               "integer features), every other parameter its default "
               "(mechanism='auto'): one private selection (permute-and-flip [MS20]) releases a W and a point "
               "together, among W's from coarse (weights in -2..2, ||w|| <= 2) to fine and, where epsilon * n "
               "allows, a private warm start's W; pure epsilon-DP in total",
    "opdisc": "OPDisc [NRVW20, Alg. 1]: the exact 0/1-loss minimizer over the integer grid {-2..2}^d in "
              "the ball ||w|| <= 2, with Gaussian noise on the normalized weights (enumeration or a MILP)",
    "rspm": "RSPM [NRW18]: the exact 0/1-loss minimizer over {-1,0,1}^d with Laplace noise on a separator "
            "set (a MILP per run)",
    "dpsgd": "DP-SGD logistic regression [ACG+16]: clipped, noisy gradient steps, accounted under "
             "replace-one neighbours",
    "nonprivate_lr": "non-private logistic regression: the reference a private method would like to reach",
    "permute_and_flip": "permute-and-flip [MS20] over the single W {intercept and weights in -2..2, "
                        "||w|| <= 2} (resolutions=None): the default without the choice among resolutions",
    "nonprivate_01_default": "non-private 0/1-loss optimum on the single W of permute_and_flip: the selection "
                             "without noise",
    "nonprivate_01": "non-private 0/1-loss optimum on OPDisc's grid and ball: OPDisc without noise",
    "majority": "the majority class of the training labels: what a classifier that learned nothing scores",
}

CLOSING = (
    "How to read this: each private method's held-out accuracy rises with epsilon (less noise) towards "
    "its non-private reference: nonprivate_01 for OPDisc (the same problem without noise), nonprivate_lr "
    "for DP-SGD and for `default`; the majority line is what predicting one class scores. `default` is "
    "what PrivateHalfspaceClassifier does when given only epsilon (and the public bounds of real-valued "
    "features): it offers "
    "several W, coarse to fine, and one private selection releases a W and a point of it. Its excess "
    "error grows with ln |W| / epsilon, so a public rule offers the finer W only where epsilon * n "
    "allows them (the W it released at each epsilon is listed above); OPDisc's noise grows with "
    "D^2 / epsilon. The epsilon at which a curve reaches its reference is what privacy costs that "
    "method here. Uncertified MIP runs are never counted as private results (the table shows them "
    "apart). The full comparison is in notebooks/05_adult_experiment.ipynb. Seeds are fixed here for a "
    "reproducible demo, which is not private: leave random_state=None in real use."
)


def _warm_up(d: int) -> float | None:
    """Fit the default estimator once on 200 random records of d features (not
    the demo's data) before the timed runs, so that compiling privopt's numba
    kernels (or loading them from numba's on-disk cache, once per machine) is
    reported apart and not in any method's time.  Returns the seconds it took,
    or None if it failed (the demo goes on)."""
    import time

    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, size=(200, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    y[:2] = (0, 1)
    start = time.perf_counter()
    try:
        PrivateHalfspaceClassifier(bounds=(0.0, 1.0), random_state=0).fit(X, y)
    except (PrivoptError, ValueError) as exc:
        print(f"warm-up skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    seconds = time.perf_counter() - start
    print(f"warm-up: {seconds:.1f} s (privopt's kernels compiled, or loaded from the cache; not counted in the "
          "runtimes below, though each worker process still loads them once, and DP-SGD's first "
          "calibration on a machine is computed then cached)\n")
    return seconds


def run_demo(out: str = "privopt-demo", time_limit: float = 120.0, solver: str = "auto", runs: int = 3,
             n_train: int = DEMO_N_TRAIN, epsilons=DEMO_EPSILONS, progress: bool = True,
             data_home=None, figures: bool = True) -> int:
    """The demo; ``figures=False`` (``privopt demo --no-figures``) writes the table without
    the figures (which need matplotlib; without it the demo warns and goes on)."""
    methods = [m for m in DEMO_METHODS if m in available_methods()]
    installed = [s.name for s in available_solvers() if s.available]
    print(f"privopt demo: solvers installed: {', '.join(installed)}; using {solver}.")
    try:
        data = load_adult(data_home, random_state=0)
        X_train, y_train = data.X_train[:n_train], data.y_train[:n_train]
        X_test, y_test = data.X_test, data.y_test
        levels = adult_levels(data.feature_blocks, X_train.shape[1])
        title = f"Adult, {len(y_train)} training records (of {len(data.y_train)}), d = {X_train.shape[1]}"
    except DatasetError as exc:
        n_syn, d_syn, noise = FALLBACK
        n_syn = min(n_syn, n_train)
        print(f"\n{exc}\n"   # says where it looked, and how to provide the files
              f"RUNNING ON SYNTHETIC DATA INSTEAD (a planted halfspace over {{0,1}}^{d_syn} with "
              f"{noise:.0%} label noise).\n", file=sys.stderr)
        data = make_planted_halfspace(n_syn, d_syn, n_test=2000, noise=noise, random_state=0)
        X_train, y_train, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
        levels = None
        title = f"SYNTHETIC planted halfspace, n = {n_syn}, d = {d_syn}"
    print(f"{title}; methods {', '.join(methods)}; epsilons {', '.join(f'{e:g}' for e in epsilons)}; "
          f"{runs} runs each; time limit {time_limit:g} s per solve.")
    for m in methods:
        print(f"  {m:14s} {METHOD_LINES.get(m, '')}")
    print()
    if set(methods) & WARM_UP_METHODS:
        _warm_up(X_train.shape[1])
    kwargs = dict(methods=methods, epsilons=epsilons, runs=runs, solver=solver, time_limit=time_limit,
                  out=out, seed=0, levels=levels, progress=progress,
                  title=title, norm_bound=DEMO_NORM_BOUND, figures=figures, notes=CLOSING)
    try:
        rows = run_experiment(X_train, y_train, X_test, y_test, **kwargs)
    except SettingMismatchError:  # includes StaleResultsError
        # an earlier demo on other data (or options, or code): keep its results aside, start over
        path = os.path.join(out, "results.csv")
        kept = os.path.join(out, f"results-previous-{int(os.path.getmtime(path))}.csv")
        os.replace(path, kept)
        print(f"{path} held runs of another setting (other data or options) or of an older privopt; "
              f"moved it to {kept} and starting over.\n", file=sys.stderr)
        rows = run_experiment(X_train, y_train, X_test, y_test, **kwargs)
    print()
    print(format_summary(summarize(rows)))
    for part in (format_versus(rows), format_released(rows)):
        if part:
            print("\n" + part)
    print("\n" + CLOSING)
    drawn = figures and figures_unavailable() is None
    print(f"\nresults: {os.path.join(out, 'results.csv')}\n"
          + (f"figures: {os.path.join(out, 'accuracy_vs_epsilon.png')}, {os.path.join(out, 'runtimes.png')}; "
             if drawn else "")
          + f"table: {os.path.join(out, 'summary.md')}")
    return 0

# Source of notebooks/05_adult_in_small.ipynb (see notebooks/build.py).

# %% [markdown]
# # 5. The Adult experiment, in small
#
# Section 5 of [NRVW20] trains linear classifiers on the UCI Adult data (income above or below 50K)
# and compares, at several privacy levels $\varepsilon$:
#
# * **OPDisc** ([NRVW20, Algorithm 1]): the 0/1 loss over the grid $w \in \{-4, \dots, 4\}^{23}$,
#   $\|w\|_2 \le \sqrt{23}$, objective-perturbed and solved exactly as a MILP;
# * **RSPM** ([NRW18], Neel, Roth, Wu, *How to use heuristics for differential privacy*): the 0/1 loss
#   over $w \in \{-1, 0, 1\}^{23}$ with perturbed "separator" terms, also a MILP;
# * **private logistic regression** by DP-SGD ([ACG+16], RDP accountant), the convex baseline;
# * and non-private logistic regression as a reference line.
#
# The paper's run uses $n = 15{,}682$ balanced records, 15 runs per $\varepsilon$, and minutes per MILP.
# Here: **1500 training records, 2 runs, $\varepsilon \in \{0.5, 1, 2\}$**, $\delta = 1/n^2$, through the same
# runner as the full experiment (`privopt.experiments.run_experiment`; the command line is
# `privopt experiment adult`), on two worker processes. Held-out accuracy is measured on the 20%
# of the balanced set the training never sees.
#
# > **Seeds.** Every run gets a seed derived from `seed=0` (`privopt.experiments.task_seed`), so the
# > table below is reproducible — a *measurement*, not a private release. A release uses
# > `random_state=None`, privopt's default (operating-system secure randomness).

# %%
# %matplotlib inline
import math
import os
import shutil
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from IPython.display import Image, display

from privopt.calibration import opdisc_sigma
from privopt.datasets import DatasetError, load_adult, make_planted_halfspace
from privopt.experiments import available_methods, format_summary, run_experiment, summarize
from privopt.experiments.adult import adult_baseline_params, adult_levels

with warnings.catch_warnings():  # without ipywidgets tqdm.auto warns once on import; progress bars are off here
    warnings.simplefilter("ignore")
    import tqdm.auto  # noqa: F401

N_TRAIN = 1500           # training records (a subsample of the paper's 12,546)
RUNS = 2                 # runs per (method, epsilon); the paper: 15
EPSILONS = [0.5, 1.0, 2.0]
SEED = 0                 # seeds every run: reproducible, NOT private
TIME_LIMIT = 20.0        # seconds per MILP solve; uncertified runs are counted apart, never averaged
DOWNLOAD = False         # True: fetch the UCI files if they are not found locally

# %% [markdown]
# ## The data
#
# `load_adult` reproduces the paper's preprocessing ([NRVW20] Section 5): all 7841 records with label
# `>50K` plus as many drawn from the rest, $d = 23$ features (one-hot marital status, relationship, race,
# sex; capital gain, capital loss and hours per week scaled to $[0, 1]$), a stratified 80/20 held-out split.
# It looks in `$PRIVOPT_DATA_HOME/adult` (and the user cache) and checks the files' SHA-256. If the files
# are not there, this notebook says so and runs on a synthetic planted-halfspace data set instead.
#
# The MILP methods need integer features: each column is rounded onto a public grid
# (`levels`: one-hot columns stay exact; here the three numeric columns get 2 steps, $\{0, \tfrac12, 1\}$,
# a coarse grid that keeps the solves short — `privopt demo` uses 4). This is a per-record map with public
# bounds $[0, 1]$, so it costs no privacy.

# %%
try:
    data = load_adult(random_state=SEED, download=DOWNLOAD)
    X_train, y_train = data.X_train[:N_TRAIN], data.y_train[:N_TRAIN]  # rows come shuffled
    X_test, y_test = data.X_test, data.y_test
    levels = adult_levels(data.feature_blocks, X_train.shape[1], numeric_levels=2)
    baseline_params = adult_baseline_params(data)  # public row-norm bound for DP-SGD, from the schema
    title = f"Adult, {len(y_train)} training records (of {len(data.y_train)}), d = {X_train.shape[1]}"
    print(f"UCI Adult found: {len(data.y_train)} training and {len(y_test)} held-out records, d = {X_train.shape[1]}; "
          f"using the first {len(y_train)} training records.")
except DatasetError as exc:
    print("NOTE: the UCI Adult files were not found, so this notebook runs on SYNTHETIC data instead\n"
          "(a planted halfspace over {0,1}^6 with 10% label noise); its numbers say nothing about Adult.\n"
          "To use Adult: put adult.data, adult.test and adult.names in DIR/adult/ and set PRIVOPT_DATA_HOME=DIR\n"
          "(or set DOWNLOAD = True above to fetch them from UCI).\n"
          f"  ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    data = make_planted_halfspace(N_TRAIN, 6, n_test=2000, noise=0.1, random_state=SEED)
    X_train, y_train, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
    levels = None  # the features are already 0/1
    baseline_params = {"data_norm": math.sqrt(6)}  # public: ||x|| <= sqrt(d) on {0,1}^d
    title = f"SYNTHETIC planted halfspace, n = {N_TRAIN}, d = 6"
print(f"share of label +1: train {np.mean(y_train == 1):.3f}, held-out {np.mean(y_test == 1):.3f}")

# %% [markdown]
# ## How much noise OPDisc adds at this size
#
# $\sigma$ (privopt's proven calibration of [NRVW20, Algorithm 1]; the paper prints
# $7 G D^2 \sqrt{\ln(1/\delta)}/(\tau\varepsilon)$) with $G = 1/\tau = 1$ and
# $D^2 = d = 23$ depends on $n$ only through $\delta = 1/n^2$; the loss it competes with is a *sum* over $n$ records. Per
# record, the noise is $\sigma/n$:

# %%
d = X_train.shape[1]
for n_ in (len(y_train), 12_546):
    for eps in EPSILONS:
        s = opdisc_sigma(eps, 1.0 / n_**2, lipschitz=1.0, norm_bound=math.sqrt(d), separation=1.0, dim=d)
        size = "the paper's training set" if n_ == 12_546 else "this notebook"
        print(f"n = {n_:6d} ({size:<24s}), epsilon = {eps:3g}: sigma = {s:7.1f}, "
              f"sigma / n = {s / n_:.3f} errors per record")

# %% [markdown]
# ## The runs
#
# `run_experiment` runs every (method, $\varepsilon$, run) not already in `out/results.csv`, appending each
# finished run at once (an interrupted sweep resumes), with the MIP methods under `on_failure="return"` so
# that a solve stopped by the time limit is *recorded* as uncertified (and drawn apart, never averaged)
# instead of stopping the sweep. Any `concurrent.futures.Executor` runs them; here two local processes.
# The non-private reference does not depend on $\varepsilon$: one run, drawn as a horizontal line.

# %%
methods = [m for m in ("opdisc", "rspm", "dpsgd") if m in available_methods()]
if "rspm" not in methods:
    print("NOTE: RSPM is not available in this installation; it is left out.")
out = tempfile.mkdtemp(prefix="privopt-adult-small-")
start = time.perf_counter()
common = {"solver": "highs", "time_limit": TIME_LIMIT, "out": out, "seed": SEED, "levels": levels,
          "baseline_params": baseline_params, "progress": False, "title": title}
with ProcessPoolExecutor(max_workers=2) as pool:
    run_experiment(X_train, y_train, X_test, y_test, methods=methods, epsilons=EPSILONS, runs=RUNS,
                   executor=pool, figures=False, **common)
    rows = run_experiment(X_train, y_train, X_test, y_test, methods=["nonprivate_lr"], epsilons=[1.0], runs=1,
                          executor=pool, figures=True, **common)
print(f"{len(rows)} runs in {time.perf_counter() - start:.0f} s (wall clock, 2 workers)\n")
print(format_summary(summarize(rows)))

# %% [markdown]
# Accuracy against $\varepsilon$ (mean ± standard deviation over the certified runs, training and
# held-out, as in [NRVW20, Figure 1]) and the run times (their Figure 2), as written by the runner:

# %%
display(Image(filename=os.path.join(out, "accuracy_vs_epsilon.png")))
display(Image(filename=os.path.join(out, "runtimes.png")))
shutil.rmtree(out)  # the figures are embedded above; results.csv was only needed to build them

# %% [markdown]
# ## Reading the result
#
# * With two runs per point the error bars are themselves noisy; the full experiment uses 15.
# * OPDisc's $\sigma$ grows with $D^2 = d = 23$ and does not shrink with $n$, so its noise per record,
#   $\sigma/n$ (printed above), is about eight times larger here than at the paper's $n$. Do not expect the
#   paper's ordering (OPDisc > RSPM > private LR, OPDisc with the smallest variance) at this size and small
#   $\varepsilon$; it is a claim about $n \approx 15{,}000$. On the full training set privopt's certified
#   OPDisc runs reached about 0.77 held-out accuracy at $\varepsilon = 0.5$ and 1 (benchmarks/results/adult_oracle.md).
# * The non-private logistic regression line is a reference: what these features give without privacy.
# * To run the paper's experiment: `privopt experiment adult --runs 15 --epsilons 0.1,0.5,1`
#   (hours of solver time; it resumes where it stopped), or `privopt demo` for a 4000-record version.

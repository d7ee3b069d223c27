# Source of notebooks/05_adult_experiment.ipynb (see notebooks/build.py).

# %% [markdown]
# # 5. The Adult experiment: where does MIP-based private learning win?
#
# Section 5 of [NRVW20] trains linear classifiers on the UCI Adult data (income above or below 50K) and
# reports, at $\varepsilon \in \{0.1, 0.5, 1\}$, that **OPDisc** (the 0/1 loss over an integer grid,
# objective-perturbed and solved exactly as a MILP) beats **RSPM** ([NRW18]), which beats **private logistic
# regression** (DP-SGD, hyperparameters grid-searched). This notebook reads privopt's full re-run of that
# experiment and of the sweeps that ask *when* a private 0/1-loss method can win, then runs a small version
# live so that you can change it.
#
# What privopt changed to make the comparison fair:
#
# * **one neighbour relation** for every method: *replace-one* (a record is swapped for another). DP-SGD's
#   usual accounting is add/remove, under which the same noise buys about half the replace-one $\varepsilon$;
# * **proven calibrations**: OPDisc's $\sigma$ is privopt's (its proof is complete; Algorithm 1's value is
#   also run and labelled `opdisc[paper]`), RSPM's and the convex baselines' scales are cited in their
#   docstrings;
# * **the same hyperparameter rule** within a comparison: either every method uses a rule fixed before seeing
#   data (`opdisc`, `rspm`, `dpsgd`, `objective_perturbation`), or the method is labelled as tuned on the
#   private data (`dpsgd_tuned`: the paper's grid search; the choice is not itself private);
# * **references**: non-private logistic regression and the non-private 0/1-loss optimum on OPDisc's own
#   grid and ball (`nonprivate_01`): the best any 0/1-loss method on that grid could do.
#
# > **Seeds.** Every run gets a seed derived from the sweep's seed (`privopt.experiments.task_seed`), so the
# > numbers are reproducible: a *measurement*, not a private release. A release uses `random_state=None`,
# > privopt's default (operating-system secure randomness).

# %%
# %matplotlib inline
import math
import os
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from IPython.display import Image, display

import privopt
from privopt.calibration import opdisc_sigma
from privopt.datasets import DatasetError, load_adult, make_planted_halfspace
from privopt.experiments import available_methods, format_summary, read_results, run_experiment, summarize
from privopt.experiments.adult import adult_levels

with warnings.catch_warnings():  # without ipywidgets tqdm.auto warns once on import; progress bars are off here
    warnings.simplefilter("ignore")
    import tqdm.auto  # noqa: F401

# The committed results live in the repository's benchmarks/results/ (next to the privopt package of a
# source checkout).
RESULTS = Path(privopt.__file__).resolve().parent.parent / "benchmarks" / "results"
HAVE_RESULTS = (RESULTS / "adult_experiment" / "results.csv").exists()
if not HAVE_RESULTS:
    print(f"NOTE: {RESULTS} is not here (privopt was not installed from a source checkout), so the sections "
          "that read the committed results are skipped; the live run at the end still works.")

# %% [markdown]
# ## 1. The paper's experiment, like for like
#
# Balanced Adult (12,546 training / 3,136 held-out records, $d = 23$), $\delta = 1/n^2$, 15 runs per method and
# $\varepsilon \in \{0.1, 0.5, 1, 2\}$, every OPDisc and RSPM solve certified optimal by HiGHS. OPDisc uses the paper's grid
# $\{-4, \dots, 4\}^{23}$ and ball $\|w\|_2 \le \sqrt{23}$. The table and figure below are computed from the
# committed `results.csv` (command in `benchmarks/results/adult_experiment/summary.md`).

# %%
if HAVE_RESULTS:
    rows = read_results(RESULTS / "adult_experiment" / "results.csv")
    print(format_summary(summarize(rows)))
    display(Image(filename=str(RESULTS / "adult_experiment" / "accuracy_vs_epsilon.png")))

# %% [markdown]
# **How much noise.** OPDisc's $\sigma$ grows with $G D^2/\tau$ and with $\sqrt{\ln(1/\delta)}/\varepsilon$;
# privopt's proven value is 9–15 % above Algorithm 1's at $d = 23$ (it is below it at small $d$), which moves
# accuracy by less than the run-to-run spread above. The loss it competes with is a *sum* of $n$ zero-one
# errors, so the noise per record is $\sigma/n$:

# %%
n_full, d = 12_546, 23
for D in (math.sqrt(d), 2.0):
    for eps in (0.1, 0.5, 1.0):
        proven = opdisc_sigma(eps, 1 / n_full**2, 1.0, D, 1.0, d, calibration="proven")
        paper = opdisc_sigma(eps, 1 / n_full**2, 1.0, D, 1.0, d, calibration="paper")
        print(f"D = {D:4.2f}, epsilon = {eps:3g}: sigma proven {proven:7.1f}, paper {paper:7.1f} "
              f"(ratio {proven / paper:.3f}); sigma / n = {proven / n_full:.3f}")

# %% [markdown]
# ## 2. When could OPDisc win?  Sweeps over n, D and other data
#
# `benchmarks/bench_regimes.py` varies what the paper's argument says matters: the number of records $n$
# (the paper argues that small data favours OPDisc), OPDisc's ball $D$ (noise grows with $D^2$, the best
# classifier in the ball with $D$), and the data set. Five runs per point.

# %%
if HAVE_RESULTS and (RESULTS / "regimes" / "regimes.md").exists():
    for name in ("regimes_n.png", "regimes_D.png", "regimes_data.png"):
        if (RESULTS / "regimes" / name).exists():
            display(Image(filename=str(RESULTS / "regimes" / name)))

# %% [markdown]
# The verdict per configuration (OPDisc with privopt's default ball $D = 2$ against the best private convex
# method whose hyperparameters follow a public rule, and against DP-SGD tuned on the private data; a win is a
# difference of more than two standard errors):

# %%
if HAVE_RESULTS and (RESULTS / "regimes" / "regimes.md").exists():
    text = (RESULTS / "regimes" / "regimes.md").read_text().splitlines()
    table = [line for line in text if line.startswith("| ")]
    print("\n".join(table))

# %% [markdown]
# ## 3. Reading the results
#
# * **The paper's ordering does not hold here.** At the paper's ball OPDisc is the least accurate private
#   method up to $\varepsilon = 1$, under either calibration; RSPM is ahead of it, the convex baselines ahead of
#   both at $\varepsilon = 0.1$ and 0.5. At $\varepsilon = 2$ RSPM (0.765) is level with the untuned convex
#   methods (0.764-0.766, within two standard errors over 15 runs) and OPDisc at most level with them: no cell
#   where OPDisc or RSPM is ahead of a private convex method with public hyperparameters. (Against
#   privopt's former, weaker baseline defaults RSPM had looked ahead at $\varepsilon = 2$.)
# * **There is no headroom for the 0/1 loss on these features.** The best classifier on OPDisc's own grid,
#   found without any noise (`nonprivate_01`), is *less* accurate on held-out data than non-private logistic
#   regression. A private 0/1-loss method can then beat a private convex one only by paying less for privacy;
#   OPDisc and RSPM do not, private selection does (below).
# * **OPDisc's noise is set by its ball.** $\sigma \propto D^2$: the paper's $D = \sqrt{23}$ costs 5.75 times
#   the noise of privopt's default $D = 2$, whose grid $\{-2, \dots, 2\}$ still contains nearly the best
#   classifier (`regimes_D.png`). With $D = 2$ OPDisc draws level with objective perturbation and comes close to
#   untuned DP-SGD (level at $\varepsilon = 0.1$, 0.005-0.014 behind at 0.5 and 1); too small a ball ($D = 1$)
#   loses accuracy again.
# * **Small $n$ does not favour OPDisc here.** Its noise does not shrink with $n$ while the loss is a sum of $n$
#   errors; at every $n$ tried it is at or below the convex baselines, behind them at $\varepsilon = 1$ for
#   every $n$ from 500 to 12546 (`regimes_n.png`).
# * **Tuning on the private data helps the convex baseline most**: of OPDisc, RSPM and the convex methods, DP-SGD
#   with the paper's grid search is the most accurate in 24 of the 28 regime cells (in the other four it is within
#   0.003 of the best), but its hyperparameter choice is not private; compare it only with methods tuned the same
#   way. Permute-and-flip with public defaults is ahead of it by more than two standard errors in 7 of the 25 cells
#   where it ran and behind it in 7.
# * **Other feature sets tell the same story** (`regimes_data.png`): on six sets nobody tuned anything for,
#   OPDisc with $D = 2$ is never ahead of the best untuned convex baseline by more than two standard errors, and
#   behind it in 12 of the 18 (data set, $\varepsilon$) cells. RSPM is ahead of it in none.
# * **Private selection over the same kind of W does win** (`permute_and_flip`, `exponential`: the estimator's
#   default W, an intercept and the weights on $\{-2, \dots, 2\}$ in the ball $\|w\|_2 \le 2$, every point scored
#   exactly, pure $\varepsilon$-DP). In the committed experiment permute-and-flip reaches 0.769 ± 0.001 held-out at
#   $\varepsilon = 0.1$ (DP-SGD 0.729 ± 0.017, objective perturbation 0.727 ± 0.019, DP-SGD tuned on the private data
#   0.746 ± 0.018) and 0.769 at 0.5, 1 and 2: its non-private reference `nonprivate_01_default` (0.769), which
#   caps it. It is ahead of every untuned convex method by more than two standard errors at every $\varepsilon$
#   (by 0.003 over objective perturbation at 2), and of DP-SGD tuned on the private data at 0.1 and 0.5; the tuned
#   DP-SGD overtakes it at 1 and 2 (0.772, 0.777), because logistic regression (0.777 without noise) has more
#   headroom on these features than the 0/1 optimum on W. The exponential mechanism gives the same numbers here.
#   On the regime sweeps (the last column of the table above) permute-and-flip is level with or ahead of the best
#   untuned convex method in all 10 cells of the $n$ sweep and in 10 of the 18 on other feature sets; it is behind
#   in 5 of those, at $\varepsilon$ 0.5 and 1, and refused the one-hot Adult set (scoring its W was predicted to
#   exceed the sweep's time limit). Section 4 shows why it wins where it does.
#
# In the range tried, no regime was found where OPDisc beats the best private convex method; private
# selection over a W small enough to score is the way a 0/1-loss method wins here. Beyond what selection's smaller
# price of privacy buys, the 0/1 loss gains where it has headroom over the convex surrogate (the `nonprivate_01` line above the `nonprivate_lr`
# line: e.g. asymmetric label noise or outliers that drag a convex fit); `benchmarks/bench_regimes.py` runs the
# same comparison on any data you add to it.

# %% [markdown]
# ## 4. Why private selection wins: OPDisc's noise against selection's excess error, on the same W
#
# Private selection (`mechanism="permute_and_flip"`, the estimator's default; `privopt.exponential_mechanism`)
# and OPDisc can both run on the estimator's default W: an intercept and the 23 weights on $\{-2, \dots, 2\}$,
# $\|w\|_2 \le 2$. Both are measured in the same unit, errors of the summed 0/1 loss $L(w) = \sum_i
# 1[\text{record } i \text{ misclassified}]$:
#
# * **OPDisc** minimizes $L(w) - \langle \eta, \pi(w) \rangle$ with $\eta \sim N(0, \sigma^2 I)$ and $\pi(w)$ on
#   the unit sphere, so every point's objective is shifted by a normal amount of standard deviation $\sigma$
#   (`privopt.calibration.opdisc_sigma`, with the model's $G$, $D$, $\tau$, $d$ and $\delta = 1/n^2$);
# * **private selection** releases a point whose loss exceeds $\min_W L$ by at most
#   $\alpha = (2\Delta/\varepsilon)(\ln|W| + \ln(1/\beta))$ with probability $1 - \beta$
#   (`privopt.calibration.selection_utility_bound`, $\Delta = 1$, $\beta = 0.05$).
#
# The last column is what the committed experiment measured: the mean excess training error of the released
# point over the 0/1 optimum on the same W (`permute_and_flip` against `nonprivate_01_default` in
# `results.csv`, 15 runs).

# %%
import matplotlib.pyplot as plt
import numpy as np

from privopt.calibration import selection_utility_bound
from privopt.models import discretize_features, get_info, zero_one_halfspace

try:
    full = load_adult(random_state=0, download=False)
    X_sel, y_sel = full.X_train, full.y_train
    levels_sel = adult_levels(full.feature_blocks, X_sel.shape[1])   # as in the experiment: numeric on 0..4
    where = f"Adult, n = {len(y_sel)}, d = {X_sel.shape[1]} + intercept"
except DatasetError:
    syn = make_planted_halfspace(2000, 10, n_test=10, noise=0.1, random_state=0)
    X_sel, y_sel, levels_sel = syn.X_train, syn.y_train, 1
    where = f"SYNTHETIC planted halfspace (the Adult files were not found), n = {len(y_sel)}, d = 10 + intercept"
Xd = discretize_features(X_sel, bounds=(0.0, 1.0), levels=levels_sel)
model = zero_one_halfspace(Xd, y_sel, grid=2, norm_bound=2.0, fit_intercept=True)   # the estimator's default W
info = get_info(model)
n_sel, d_sel = info.n_samples, len(info.grid)
# one release scores all of W and reports |W| (and alpha at its epsilon)
n_points = privopt.exponential_mechanism(model, epsilon=1.0, method="permute_and_flip", random_state=0,
                                         progress=False).parameters["n_points"]
print(f"{where}: |W| = {n_points:,}, G = {info.lipschitz:g}, D = {info.norm_bound:g}, tau = {info.separation:g}")

measured = {}
if HAVE_RESULTS and where.startswith("Adult"):
    committed = read_results(RESULTS / "adult_experiment" / "results.csv")
    ref = [r["train_accuracy"] for r in committed if r["method"] == "nonprivate_01_default" and r["status"] == "ok"]
    for r in committed:
        if ref and r["method"] == "permute_and_flip" and r["status"] == "ok" and int(r["n_train"]) == n_sel:
            measured.setdefault(r["epsilon"], []).append((ref[0] - r["train_accuracy"]) * n_sel)

SEL_EPSILONS = (0.05, 0.1, 0.5, 1.0, 2.0)
sigmas = [opdisc_sigma(e, 1 / n_sel**2, info.lipschitz, info.norm_bound, info.separation, d_sel)
          for e in SEL_EPSILONS]
alphas = [selection_utility_bound(e, 1.0, n_points, 0.05) for e in SEL_EPSILONS]
print(f"\n{'epsilon':>7}  {'OPDisc sigma':>12}  {'selection alpha':>15}  {'sigma / alpha':>13}  "
      f"{'measured excess (selection)':>27}")
for e, s_, a_ in zip(SEL_EPSILONS, sigmas, alphas):
    m = measured.get(e)
    m_txt = f"{np.mean(m):.1f} errors ({len(m)} runs)" if m else "-"
    print(f"{e:7g}  {s_:12.1f}  {a_:15.1f}  {s_ / a_:13.2f}  {m_txt:>27}")

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.loglog(SEL_EPSILONS, sigmas, "o-", label=r"OPDisc: noise sd $\sigma$ per point of W")
ax.loglog(SEL_EPSILONS, alphas, "s-", label=r"selection: excess-error bound $\alpha$ ($\beta$ = 0.05)")
zero = sorted(e for e in measured if max(measured[e]) < 0.5)   # every run at the optimum: a log axis has no 0
positive = sorted(e for e in measured if e not in zero)
if positive:
    ax.loglog(positive, [np.mean(measured[e]) for e in positive], "^", color="C2",
              label="selection: measured mean excess (committed runs)")
if zero:
    ax.text(0.02, 0.03, f"measured excess 0 at epsilon {', '.join(f'{e:g}' for e in zero)}: every run released a "
            "0/1 optimum", transform=ax.transAxes, fontsize=8, color="C2")
ax.set_xlabel(r"$\varepsilon$")
ax.set_ylabel("training errors (summed 0/1 loss)")
ax.set_title(f"Same W, |W| = {n_points:,}, n = {n_sel}", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# OPDisc's noise grows with $G D^2 / (\tau \varepsilon)$ (times about $\sqrt{\ln(1/\delta)}$) and shifts *every*
# point of W; $\sigma$ is the shift of one point, and the noisy argmin is pulled by the largest of $|W|$ such
# shifts, so at small $\varepsilon$ the noise rather than the error count decides which point wins. Selection's excess error grows only with $\ln|W| / \varepsilon$, and the
# bound is loose: the mechanism puts almost no mass on points far from the optimum, so the measured excess sits
# far below $\alpha$, and a larger W costs selection only $\ln|W|$ where it costs OPDisc $D^2$.

# %% [markdown]
# ## 5. Run it yourself, in small
#
# The same runner (`privopt.experiments.run_experiment`; on the command line `privopt experiment adult`) on
# **1500 training records, 2 runs, $\varepsilon \in \{0.5, 1, 2\}$**, two worker processes, with permute-and-flip
# over the estimator's default W and OPDisc on privopt's default ball ($D = 2$, grid $\{-2, \dots, 2\}$, solved by
# exact enumeration). Change the constants and run again. The MILP methods need integer features: the three numeric columns are rounded
# onto $\{0, \tfrac12, 1\}$ (public bounds $[0, 1]$, a per-record map that costs no privacy; the one-hot
# columns stay exact).

# %%
N_TRAIN = 1500           # training records (a subsample of the paper's 12,546)
RUNS = 2                 # runs per (method, epsilon); the full experiment: 15
EPSILONS = [0.5, 1.0, 2.0]
SEED = 0                 # seeds every run: reproducible, NOT private
TIME_LIMIT = 20.0        # seconds per MILP solve; uncertified runs are counted apart, never averaged
NORM_BOUND = 2.0         # OPDisc's ball; math.sqrt(23) is the paper's (slower, noisier)
DOWNLOAD = False         # True: fetch the UCI files if they are not found locally

try:
    data = load_adult(random_state=SEED, download=DOWNLOAD)
    X_train, y_train = data.X_train[:N_TRAIN], data.y_train[:N_TRAIN]  # rows come shuffled
    X_test, y_test = data.X_test, data.y_test
    levels = adult_levels(data.feature_blocks, X_train.shape[1], numeric_levels=2)
    title = f"Adult, {len(y_train)} training records (of {len(data.y_train)}), d = {X_train.shape[1]}"
    print(f"UCI Adult found: {len(data.y_train)} training and {len(y_test)} held-out records; "
          f"using the first {len(y_train)} training records.")
except DatasetError as exc:
    print("NOTE: the UCI Adult files were not found, so this part runs on SYNTHETIC data instead\n"
          "(a planted halfspace over {0,1}^6 with 10% label noise); its numbers say nothing about Adult.\n"
          "To use Adult: put adult.data, adult.test and adult.names in DIR/adult/ and set PRIVOPT_DATA_HOME=DIR\n"
          "(or set DOWNLOAD = True above to fetch them from UCI).\n"
          f"  ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    data = make_planted_halfspace(N_TRAIN, 6, n_test=2000, noise=0.1, random_state=SEED)
    X_train, y_train, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
    levels = None  # the features are already 0/1
    title = f"SYNTHETIC planted halfspace, n = {N_TRAIN}, d = 6"

methods = [m for m in ("permute_and_flip", "opdisc", "rspm", "dpsgd", "objective_perturbation", "nonprivate_lr",
                       "nonprivate_01_default", "nonprivate_01")
           if m in available_methods()]
out = tempfile.mkdtemp(prefix="privopt-adult-small-")
start = time.perf_counter()
with ProcessPoolExecutor(max_workers=2) as pool:
    live = run_experiment(X_train, y_train, X_test, y_test, methods=methods, epsilons=EPSILONS, runs=RUNS,
                          executor=pool, solver="auto", time_limit=TIME_LIMIT, out=out, seed=SEED, levels=levels,
                          norm_bound=NORM_BOUND, progress=False, title=title)
print(f"{len(live)} runs in {time.perf_counter() - start:.0f} s (wall clock, 2 workers)\n")
print(format_summary(summarize(live)))
display(Image(filename=os.path.join(out, "accuracy_vs_epsilon.png")))

# %% [markdown]
# With two runs per point the error bars are themselves noisy. The non-private lines are what these features
# give without privacy; the gap between `nonprivate_01` and OPDisc (or `nonprivate_01_default` and
# permute-and-flip) is the price of privacy for the 0/1 loss on that W, the gap between `nonprivate_01` and
# `nonprivate_lr` the price (or gain) of the grid and the 0/1 loss themselves.

# Source of notebooks/03_decorate_and_swap_solvers.ipynb (see notebooks/build.py).

# %% [markdown]
# # 3. Make your own Pyomo model private, and swap solvers
#
# privopt is a plugin for Pyomo: you keep writing your loss model in Pyomo, and privopt perturbs
# its objective, dispatches it to any MILP solver by name and checks the certificate. This notebook
# takes a model of your own (not from `privopt.models`), written record by record with
# `privopt.RecordModel`, and makes it private in three ways:
#
# 1. with the Pyomo transformation `privopt.objective_perturbation` and a noise vector you draw
#    yourself (full control; you are responsible for the calibration);
# 2. with `privopt.opdisc(model, ...)`, which calibrates, draws, transforms, solves and certifies
#    ([NRVW20, Algorithm 1]);
# 3. with the decorator `@privopt.private("opdisc", ...)` on the function that builds the model.
#
# Then the same private problem goes to HiGHS, GLPK and CBC (each skipped with a note when it is not
# installed): same noise, same answer; their `SolveReport`s side by side; and what happens when a
# solver cannot certify the optimum.
#
# > **Seeds.** The runs below are seeded for reproducibility, so they are **not private**.
# > `random_state=None` (the default) draws the noise from the operating system's secure source.

# %%
# %matplotlib inline
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pyomo.environ as pyo
from IPython.display import Markdown, display

import privopt
from privopt.calibration import opdisc_sigma
from privopt.exceptions import NoSolutionError, NotCertifiedError, UncertifiedReleaseWarning
from privopt.models import get_info
from privopt.perturbation import revert
from privopt.solvers import available_solvers, solve

SEED = 11  # teaching only: a known seed makes the output NOT private
plt.rcParams.update({"figure.dpi": 90, "axes.titlesize": 11})

SOLVERS = ["highs", "glpk", "cbc"]
installed = {row.name: row for row in available_solvers(SOLVERS)}
usable = [s for s in SOLVERS if installed[s].available]
for s in SOLVERS:
    row = installed[s]
    print(f"{s:6s} " + (f"available, version {row.version}" if row.available
                        else f"NOT INSTALLED - skipped below (install: {row.install_hint})"))

# %% [markdown]
# ## Your own loss model, record by record
#
# A linear classifier $\mathrm{pred}(w, x) = +1$ iff $\langle w, x\rangle \ge 0$, trained on the
# 0/1 loss: for each record, one binary $e_i$ and a big-M constraint, the textbook way to write it.
# The weights are integer variables in $\{-2, \dots, 2\}$; that finite grid is what OPDisc needs.
#
# `privopt.RecordModel` builds it in the order privopt reads it:
#
# * the **decision** `w`, a Pyomo `Var` with its domain and bounds, written before any data is seen;
# * optionally a **public** part (constraints on the decision, a public cost), built before the records
#   are read and given none of them (this model has none);
# * the **records**: privopt calls `record(block, w, r)` once per record on a fresh block
#   `model.records[i]`; the function adds that record's variable and row to its block and returns the
#   record's term $e_i$.
#
# The result is an ordinary Pyomo `ConcreteModel` minimizing $\sum_i e_i$. Because privopt built it,
# it knows which parts came from the data (the blocks, each checked to touch only its own variables
# and `w`) and which are public (`w`'s bounds), and it records $n$ and each term's range (here
# $[0, 1]$) in the model's `ModelInfo`. What privopt still needs from *you* (public, i.e. not computed
# from the data):
#
# * $D$: a bound $\|w\|_2 \le D$ on the grid (here $D = \sqrt 5$, which cuts the corners);
# * $G$: each per-record loss is $G$-Lipschitz on the grid: a loss with values in $\{0, 1\}$ on a
#   grid of separation $\tau = 1$ has $G = 1/\tau = 1$.

# %%
def my_zero_one_model(X, y, B=2, margin=1.0):
    """0/1 loss of sign(<w, x>), ties -> +1, one block per record (a user's own model)."""
    def record(b, w, r):
        x, label = r
        b.e = pyo.Var(domain=pyo.Binary)  # e = 1: this record is misclassified
        score = sum(float(x[j]) * w[j] for j in w)
        M = B * float(np.abs(x).sum()) + margin  # |score| <= B ||x||_1
        b.fit = pyo.Constraint(expr=score >= -M * b.e if label > 0 else score <= -margin + M * b.e)
        return b.e

    return privopt.RecordModel(decision=pyo.Var(range(X.shape[1]), domain=pyo.Integers, bounds=(-B, B)),
                               record=record, records=zip(X, y), loss_range=(0, 1))


data_rng = np.random.default_rng(SEED)
n, d = 150, 2
X = data_rng.integers(-3, 4, size=(n, d)).astype(float)
y = np.where(X @ np.array([1.0, 2.0]) >= 0, 1, -1)
y[data_rng.random(n) < 0.1] *= -1
model = my_zero_one_model(X, y)
model.records[0].fit.pprint()  # record 0's row, on its own block: ordinary Pyomo components
print(get_info(model))

D, G, tau = math.sqrt(5), 1.0, 1.0
epsilon, delta = 1.0, 1.0 / n**2
report = solve(model, "highs")
w_nonprivate = np.array([pyo.value(model.w[j]) for j in range(d)]).round()
print(f"non-private (for comparison only): w = {w_nonprivate}, {report.objective:g} mistakes; {report}")

# %% [markdown]
# ## Way 1: the transformation, with noise you draw yourself
#
# `TransformationFactory("privopt.objective_perturbation")` is an ordinary Pyomo transformation:
# `apply_to(model, ...)` changes the model in place, `create_using(model, ...)` returns a transformed
# clone. It replaces the objective $L(w)$ by $L(w) - \langle\eta, \pi(w)\rangle$ with the exact
# encoding of $\pi$ (notebook 2). Here *you* calibrate with `opdisc_sigma` (privopt's proven
# calibration of [NRVW20, Algorithm 1]'s noise, which needs the dimension $d$),
# $\eta \sim \mathcal N(0, \sigma^2 I_{d+1})$. Then any
# solver: `privopt.solvers.solve(model, name)` translates time limit and gap options to each
# solver's own names and reports whether the optimum is certified.

# %%
sigma = opdisc_sigma(epsilon, delta, lipschitz=G, norm_bound=D, separation=tau, dim=d)
eta = np.random.default_rng(SEED).normal(0.0, sigma, size=d + 1)
xfrm = pyo.TransformationFactory("privopt.objective_perturbation")

way1 = {}
for s in usable:
    private_model = xfrm.create_using(model, noise=eta, norm_bound=D)  # a clone; `model` is untouched
    rep = solve(private_model, s, time_limit=60)
    assert rep.certified_optimal, rep
    w = np.array([pyo.value(private_model.w[j]) for j in range(d)]).round()
    revert(private_model)  # back to the plain loss, to evaluate L at the private w
    way1[s] = w
    way1_objective = rep.objective
    print(f"{s:6s} w = {w}, certified = {rep.certified_optimal}, perturbed objective = {rep.objective:.4f}, "
          f"true loss L(w) = {pyo.value(private_model.loss):g}")
print(f"sigma = {sigma:.1f}, eta = {np.round(eta, 2)}")
assert all(np.array_equal(w, way1[usable[0]]) for w in way1.values()), "solvers disagree"
print("same noise -> the same private w from every solver  ✓")

# %% [markdown]
# ## Way 2: `privopt.opdisc`
#
# `opdisc` does all of the above and keeps the books: it validates every parameter before any
# solve, calibrates $\sigma$, draws $\eta$ (securely unless you pass a seed), transforms a clone,
# solves with gap 0, **refuses to release an uncertified answer**, and returns a `PrivateResult`
# with the weights and the privacy spent. The solve's report (objective, bound, gap, time) is
# computed from the data and is not covered by the guarantee, so it comes back only when asked
# for, `keep_report=True`: the data curator's diagnostics, never the analyst's (a call charged to
# a `PrivacyLedger` refuses it). Same seed, three solvers, the reports asked for:

# %%
results = {}
for s in usable:
    # n, and that w's bounds (-B..B) are public, come from the model's ModelInfo: nothing to declare
    results[s] = privopt.opdisc(model, epsilon=epsilon, delta=delta, norm_bound=D, lipschitz=G, solver=s,
                                random_state=SEED, keep_report=True)
    print(f"{s:6s} {results[s]}")
first = results[usable[0]]
assert all(np.array_equal(r.weights, first.weights) for r in results.values())
print("parameters:", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in first.parameters.items()})
if math.isclose(first.report.objective, way1_objective, rel_tol=1e-9, abs_tol=1e-6):
    print(f"perturbed objective {first.report.objective:.4f}, as in way 1: with an integer seed opdisc drew eta "
          "from numpy's default_rng(seed), exactly as we did by hand")

# %% [markdown]
# The `SolveReport`s side by side (`SolveReport.as_dict()`). They are diagnostics for whoever holds
# the data: objective values depend on the data and the noise and are **not** part of the release.

# %%
keys = list(first.report.as_dict())


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "—" if v is None else str(v)


table = ["| | " + " | ".join(usable) + " |", "|---|" + "---|" * len(usable)]
table.append("| **private w** | " + " | ".join(str(results[s].weights) for s in usable) + " |")
for k in keys:
    table.append(f"| {k} | " + " | ".join(fmt(results[s].report.as_dict()[k]) for s in usable) + " |")
display(Markdown("\n".join(table)))

# %% [markdown]
# ## Way 3: decorate the model builder
#
# `@privopt.private("opdisc", epsilon=..., delta=..., ...)` turns a function that *builds* a model into
# one that returns a private result. Facts that depend on the call (here $n$) travel with the model
# in its `ModelInfo` (which `RecordModel` wrote), read by every mechanism for the arguments you leave
# out. The plain builder stays available as `.builder`.

# %%
@privopt.private("opdisc", epsilon=epsilon, delta=delta, norm_bound=D, lipschitz=G, solver="highs",
                 random_state=SEED)
def private_classifier(X, y):
    return my_zero_one_model(X, y)  # its ModelInfo carries n = len(y)


res3 = private_classifier(X, y)
print(res3)
print("plain builder still there:", type(private_classifier.builder(X, y)).__name__)
assert np.array_equal(res3.weights, first.weights)
print("decorator, opdisc and every solver agree  ✓")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [1.1, 1]})
ax = axes[0]
cells, inv, cnt = np.unique(X, axis=0, return_inverse=True, return_counts=True)
share = np.bincount(inv.ravel(), weights=(y == 1)) / cnt
sc = ax.scatter(cells[:, 0], cells[:, 1], c=share, s=25 * cnt, cmap="coolwarm", vmin=0, vmax=1, edgecolor="k", lw=0.4)
t = np.linspace(-3.5, 3.5, 2)
for w, style, label in [(w_nonprivate, "k--", "non-private w"), (first.weights, "g-", "private w (all solvers)")]:
    if abs(w[1]) > 1e-9:
        ax.plot(t, -w[0] * t / w[1], style, label=f"{label} = {w.astype(int).tolist()}")
    else:
        ax.axvline(0, color=style[0], ls=style[1:], label=f"{label} = {w.astype(int).tolist()}")
ax.set(xlim=(-3.6, 3.6), ylim=(-3.6, 3.6), xlabel="$x_1$", ylabel="$x_2$", title=r"decision boundaries $\langle w, x\rangle = 0$")
ax.legend(fontsize=8, loc="lower left")
fig.colorbar(sc, ax=ax, label="share of label +1")
ax = axes[1]
times = [results[s].report.wall_time for s in usable]
ax.bar(usable, times, color=["C0", "C1", "C2"][: len(usable)])
for i, tm in enumerate(times):
    ax.text(i, tm, f"{tm:.2f} s", ha="center", va="bottom", fontsize=9)
ax.set(ylabel="seconds (model writing + solve)", title=f"one OPDisc solve per solver (n = {n} records)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The failure policy: no certificate, no release
#
# The privacy proof of OPDisc is about the **exact** minimizer of the perturbed objective
# (`privopt.oracle`). A solver stopped by a time limit returns some feasible point, whose
# distribution nobody has analysed; releasing it silently would break the guarantee. So privopt
# asks for gap 0, reads the termination status and the bound, and by default raises
# `NotCertifiedError` instead of releasing anything. The exception is an output too: its message
# holds no value computed from the data, and its `report` is None unless `keep_report=True`.
#
# A harder instance of the same model (400 records, 4 features with values in {-5, ..., 5}) with a time limit far too small:

# %%
hard_rng = np.random.default_rng(1)
Xh = hard_rng.integers(-5, 6, size=(400, 4)).astype(float)
yh = np.where(Xh @ np.array([1.0, -1.0, 1.0, 1.0]) >= 0, 1, -1)
yh[hard_rng.random(400) < 0.2] *= -1
hard = my_zero_one_model(Xh, yh)
kwargs = {"epsilon": 1.0, "delta": 1.0 / 400**2, "norm_bound": 2.0, "lipschitz": 1.0, "solver": "highs",
          "random_state": SEED, "time_limit": 0.3}
try:
    privopt.opdisc(hard, **kwargs)
    print("HiGHS certified the optimum within 0.3 s on this machine: nothing to show here.")
except NotCertifiedError as exc:
    print("NotCertifiedError:", exc)
    print("\nits report (None: keep_report was not asked for):", exc.report)
except NoSolutionError as exc:  # a very slow machine may not even find a feasible point in 0.3 s
    print("NoSolutionError (no feasible point within the limit):", exc)

# %% [markdown]
# For experiments that must record such runs (never for a release), `on_failure="return"` returns
# the uncertified answer marked `certified=False` and warns with `UncertifiedReleaseWarning`:

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", UncertifiedReleaseWarning)
    try:
        r = privopt.opdisc(hard, on_failure="return", keep_report=True, **kwargs)
        print(r)
        print("certified:", r.certified, "| termination:", r.report.termination.name,
              "| gap:", fmt(r.report.abs_gap_achieved))
    except NoSolutionError as exc:
        print("NoSolutionError:", exc)
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %% [markdown]
# What to do instead: raise `time_limit`, try another solver (`privopt solvers` lists what is
# installed), or make the model easier — merge identical rows and put the features on a coarse
# public grid (`privopt.models.zero_one_halfspace`, `privopt.models.discretize_features`; see the
# docstring of `privopt.models.halfspace`). Never publish the uncertified answer.
#
# ## Take-aways
#
# * Any Pyomo loss model with a finite (integer or declared) grid of weights can be made private:
#   by the transformation (you draw the noise), by `privopt.opdisc`, or by decorating its builder.
# * Built with `privopt.RecordModel` (the decision, the public part, then one block per record), the
#   model says by construction what is public and how many records it sums; a model written by hand
#   declares both instead (`public_constraints=`, `n_samples=`; see docs/own_model.md).
# * The solver is a name. With the same noise, HiGHS, GLPK and CBC return the same certified argmin.
# * Uncertified answers are never released silently; seeded runs like these are never private.

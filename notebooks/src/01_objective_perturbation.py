# Source of notebooks/01_objective_perturbation.ipynb (see notebooks/build.py).

# %% [markdown]
# # 1. Objective perturbation from scratch
#
# privopt releases a *differentially private* minimizer of a learning loss. The idea is
# **objective perturbation**: instead of the exact minimizer of the loss, publish the exact
# minimizer of the loss **plus a random linear term**. This notebook builds that idea by hand
# on a problem small enough to enumerate, and checks at every step that privopt computes the
# same thing with a MILP solver.
#
# **OPDisc** ([NRVW20, Algorithm 1]; Neel, Roth, Vietri, Wu, *Oracle Efficient Private
# Non-Convex Optimization*, ICML 2020). Let $W_\tau \subset \mathbb{R}^d$ be a finite,
# $\tau$-separated set of parameters with $\|w\|_2 \le D$, and $L(w) = \sum_{i=1}^n \ell_i(w)$
# a loss whose per-record terms are $G$-Lipschitz on $W_\tau$. Draw
# $\eta \sim \mathcal{N}(0, \sigma^2 I_{d+1})$ with
#
# $$\sigma = \frac{7\, G\, D^2 \sqrt{\ln(1/\delta)}}{\tau\, \varepsilon}$$
#
# and output
#
# $$\hat w = \arg\min_{w \in W_\tau}\; L(w) - \langle \eta, \pi(w) \rangle,
# \qquad \pi(w) = \frac{1}{D}\Big(w_1, \dots, w_d, \sqrt{D^2 - \|w\|_2^2}\Big).$$
#
# Then $\hat w$ is $(\varepsilon, \delta)$-differentially private **provided the argmin is
# exact** — which is why privopt asks the solver for a certified optimum. (Why $\pi$ and not
# just $w$? That is notebook 2.)
#
# > **Seeds.** Every random draw in this notebook is seeded so that you see the same pictures
# > as we do. **A seeded run is not private**: whoever knows the seed can recompute the noise
# > and undo it. privopt's default, `random_state=None`, draws the noise from the operating
# > system's cryptographically secure source (`os.urandom`); use it for anything you publish.

# %%
# %matplotlib inline
import itertools
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pyomo.environ as pyo

import privopt
from privopt.calibration import opdisc_sigma, opdisc_utility_bound
from privopt.exceptions import NoiseDisclosureWarning
from privopt.models import build_stats, get_info, predict_halfspace, zero_one_halfspace
from privopt.perturbation import pi_value
from privopt.solvers import solve

SEED = 2020  # teaching only: a known seed makes the output NOT private
rng = np.random.default_rng(SEED)
plt.rcParams.update({"figure.dpi": 90, "axes.titlesize": 11})
print("privopt", privopt.__version__)

# %% [markdown]
# ## A 2-D toy classification problem
#
# $n = 2000$ points with integer features $x \in \{-3, \dots, 3\}^2$, labels from the planted
# halfspace $w^\star = (2, -1)$ with 15% of the labels flipped. The classifier is
# $\mathrm{pred}(w, x) = +1$ iff $\langle w, x\rangle \ge 0$ (a score of exactly 0 predicts
# $+1$; privopt's tie rule), and the loss is the number of mistakes,
#
# $$L(w) = \sum_{i=1}^n \mathbf{1}[\mathrm{pred}(w, x_i) \ne y_i].$$
#
# Integer features make every score an integer, so the MILP below encodes the rule exactly
# (no tolerance on "$\ge 0$").

# %%
n = 2000
X = rng.integers(-3, 4, size=(n, 2)).astype(float)
w_planted = np.array([2.0, -1.0])
y = np.where(X @ w_planted >= 0, 1, -1)
flip = rng.random(n) < 0.15
y[flip] = -y[flip]

# the data live on a 7 x 7 lattice: draw each lattice point once, coloured by its share of +1 labels
cells, inverse = np.unique(X, axis=0, return_inverse=True)
inverse = inverse.ravel()
count = np.bincount(inverse)
share_pos = np.bincount(inverse, weights=(y == 1)) / count

fig, ax = plt.subplots(figsize=(5, 4.4))
sc = ax.scatter(cells[:, 0], cells[:, 1], c=share_pos, s=8 * count, cmap="coolwarm", vmin=0, vmax=1,
                edgecolor="k", linewidth=0.5)
xs = np.linspace(-3.4, 3.4, 2)
ax.plot(xs, 2 * xs, "k--", lw=1, label=r"planted boundary $\langle w^\star, x\rangle = 0$")
ax.set(xlim=(-3.6, 3.6), ylim=(-3.6, 3.6), xlabel="$x_1$", ylabel="$x_2$",
       title=f"toy data: n = {n} (marker area ~ number of records)")
fig.colorbar(sc, ax=ax, label="share of label +1")
ax.legend(loc="lower right", fontsize=8)
plt.show()

# %% [markdown]
# ## The parameter set and the non-private optimum
#
# $W_\tau = \{w \in \{-2, \dots, 2\}^2 : \|w\|_2 \le D\}$ with $D = \sqrt 5$ (the four corners
# $(\pm 2, \pm 2)$ are outside the ball): 21 points, separation $\tau = 1$. Each $\ell_i$ takes
# values in $\{0, 1\}$, so it is $G = 1/\tau = 1$ Lipschitz on $W_\tau$ (two distinct points are
# at distance $\ge \tau$ and the loss changes by at most 1).
#
# `privopt.models.zero_one_halfspace` writes $\min_{w\in W_\tau} L(w)$ as a MILP: identical
# feature rows are merged (49 distinct rows instead of 2000 records), one binary per row says
# whether the row is predicted as its minority label, and one big-M constraint links it to the
# score (docstring of `privopt.models.halfspace`). `privopt.solvers.solve` sends it to HiGHS and reports whether the
# optimum is **certified** (solver says optimal, and incumbent and bound agree).

# %%
D = math.sqrt(5)
model = zero_one_halfspace(X, y, grid=2, norm_bound=D)  # grid=2: each w_j in {-2, ..., 2}
info = get_info(model)
stats = build_stats(model)
print(f"{n} records -> {stats['n_rows']} distinct rows, {stats['n_binaries']} row binaries, "
      f"{stats['n_chain_cuts']} chain cuts")
print(f"public facts the mechanism reads: tau = {info.separation}, D = {info.norm_bound:.4f}, "
      f"G = {info.lipschitz}, n = {info.n_samples}")

report = solve(model, "highs")
w_opt = np.array([pyo.value(model.w[j]) for j in range(2)]).round()
print(report)
print("non-private optimum w* =", w_opt, " L(w*) =", report.objective)

# %% [markdown]
# **Check by enumeration.** $W_\tau$ has 21 points: evaluate $L$ on all of them with
# `predict_halfspace` (the same decision rule as the MILP) and compare.

# %%
W = np.array([w for w in itertools.product(range(-2, 3), repeat=2) if w[0] ** 2 + w[1] ** 2 <= D**2 + 1e-9],
             dtype=float)
L = np.array([np.sum(predict_halfspace(w, X, info) != y) for w in W], dtype=float)
best = np.flatnonzero(L == L.min())
print(f"{len(W)} grid points; min L = {L.min():g} at {[tuple(W[i].astype(int).tolist()) for i in best]}")
assert L.min() == round(report.objective), "solver and enumeration disagree on the optimum value"
assert any(np.array_equal(W[i], w_opt) for i in best), "the solver's w is not an enumerated argmin"
print("solver optimum == enumerated optimum  ✓")


# %%
def on_grid(values):
    """Put one value per point of W on the 5 x 5 grid (NaN outside the ball)."""
    img = np.full((5, 5), np.nan)
    for (a, b), v in zip(W.astype(int), values):
        img[b + 2, a + 2] = v
    return img


def show_grid(ax, values, title, cmap="viridis", mark=None, fmt="{:.0f}", **kw):
    """Heat map of one value per grid point, each annotated with fmt (a format string or a function)."""
    im = ax.imshow(on_grid(values), origin="lower", extent=(-2.5, 2.5, -2.5, 2.5), cmap=cmap, **kw)
    for (a, b), v in zip(W.astype(int), values):
        text = fmt(v) if callable(fmt) else fmt.format(v) if fmt else ""
        if text:  # dark text on light cells, light text on dark cells
            r, g, bl, _ = im.cmap(im.norm(v))
            ax.text(a, b, text, ha="center", va="center", fontsize=7,
                    color="k" if 0.299 * r + 0.587 * g + 0.114 * bl > 0.5 else "w")
    if mark is not None:
        ax.plot(*mark, marker="s", ms=17, mfc="none", mec="red", mew=2)
    ax.set(xticks=range(-2, 3), yticks=range(-2, 3), xlabel="$w_1$", ylabel="$w_2$", title=title)
    return im


fig, ax = plt.subplots(figsize=(4.6, 4))
im = show_grid(ax, L, "0/1 loss L(w) on $W_\\tau$ (red: the optimum)", mark=w_opt)
fig.colorbar(im, ax=ax, label="mistakes")
plt.show()

# %% [markdown]
# ## The perturbed objective
#
# One draw of the noise at $\varepsilon = 1$, $\delta = 1/n^2$ (the paper's choice). The
# calibration is `privopt.calibration.opdisc_sigma`. Algorithm 1 of [NRVW20] prints
# $\sigma = 7 G D^2 \sqrt{\ln(1/\delta)} / (\tau\varepsilon)$, but the printed proof of that value has a
# gap; privopt's default (`calibration="proven"`) is the smallest $\sigma$ for which a complete
# privacy-loss argument gives $\delta$ (the derivation is in the docstring of
# `opdisc_sigma_proven`). In $d + 1 = 3$ noise dimensions it is a little *smaller* than the
# paper's value; in high dimensions it is larger. The perturbed objective is
# $J(w) = L(w) - \langle \eta, \pi(w)\rangle$; the private answer is its minimizer.

# %%
epsilon, delta = 1.0, 1.0 / n**2
sigma = opdisc_sigma(epsilon, delta, lipschitz=1.0, norm_bound=D, separation=1.0, dim=2)
sigma_paper = opdisc_sigma(epsilon, delta, lipschitz=1.0, norm_bound=D, separation=1.0, calibration="paper")
print(f"sigma: proven {sigma:.1f}, paper's Algorithm 1 {sigma_paper:.1f}")
PI = np.array([pi_value(w, D) for w in W])  # 21 x 3: pi(w) for every grid point, ||pi(w)|| = 1
assert np.allclose(np.linalg.norm(PI, axis=1), 1.0)

eta = rng.normal(0.0, sigma, size=3)
J = L - PI @ eta
print(f"sigma = {sigma:.1f}; eta = {np.round(eta, 1)}; private answer = {W[np.argmin(J)]}")

fig, axes = plt.subplots(1, 3, figsize=(13, 3.9))
noise_term = -PI @ eta
lim = np.abs(noise_term).max()
for ax, vals, title, kw in [(axes[0], L, "loss L(w)", {}),
                            (axes[1], noise_term, r"noise term $-\langle\eta, \pi(w)\rangle$",
                             {"cmap": "PuOr_r", "vmin": -lim, "vmax": lim}),
                            (axes[2], J, r"perturbed $J(w) = L(w) - \langle\eta,\pi(w)\rangle$", {})]:
    im = show_grid(ax, vals, title, mark=W[np.argmin(vals)], **kw)
    fig.colorbar(im, ax=ax, shrink=0.85)
fig.suptitle(f"one noise draw at epsilon = {epsilon:g} (red square: the argmin of each panel)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ### privopt does exactly this
#
# `privopt.opdisc` draws $\eta$, applies the `privopt.objective_perturbation` Pyomo
# transformation to a clone of the model (it adds the term $-\langle\eta, \pi(w)\rangle$ with an
# exact MILP encoding of $\pi$; notebook 2) and asks HiGHS for a certified optimum. For
# teaching, `return_noise=True` hands back the $\eta$ it drew (it warns: publishing $\eta$ voids
# privacy), so we can enumerate the same perturbed objective and compare.

# %%
rows = []
with warnings.catch_warnings():
    warnings.simplefilter("ignore", NoiseDisclosureWarning)
    for seed in range(6):
        res = privopt.opdisc(model, epsilon=epsilon, delta=delta, solver="highs", random_state=seed,
                             return_noise=True, keep_report=True)   # the report: the curator's, for the time
        w_enum = W[np.argmin(L - PI @ res.noise)]
        assert np.array_equal(res.weights, w_enum), (seed, res.weights, w_enum)
        rows.append((seed, res.weights, w_enum, res.report.wall_time))
print("seed  privopt.opdisc  enumeration  solve time")
for seed, w_solver, w_enum, t in rows:
    print(f"{seed:4d}  {w_solver!s:>14}  {w_enum!s:>11}  {t:8.3f} s")
print("every certified MILP answer equals the enumerated argmin  ✓")
print("parameters:", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.parameters.items()})

# %% [markdown]
# ## The private answers over many noise draws
#
# The output $\hat w$ is a random variable. Because $W_\tau$ is tiny we can draw many $\eta$'s and
# enumerate each argmin ($J = L - \Pi\eta$ for a whole batch is one matrix product). Left: how
# often each grid point is released. Right: the first 400 answers as a scatter, jittered so that
# repeated answers are visible.

# %%
def private_answers(epsilon, draws=4000, rng=rng):
    """Indices into W of the OPDisc outputs for `draws` independent noise vectors."""
    s = opdisc_sigma(epsilon, delta, lipschitz=1.0, norm_bound=D, separation=1.0, dim=2)
    etas = rng.normal(0.0, s, size=(draws, 3))
    return np.argmin(L[None, :] - etas @ PI.T, axis=1), s


def prob_text(p):
    return f"{p:.2f}" if p >= 0.005 else ""


idx, _ = private_answers(1.0)
freq = np.bincount(idx, minlength=len(W)) / len(idx)

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
im = show_grid(axes[0], freq, "P(output = w), 4000 draws, epsilon = 1", cmap="magma", mark=w_opt,
               fmt=prob_text, vmin=0)
fig.colorbar(im, ax=axes[0], shrink=0.85)
jitter = rng.uniform(-0.25, 0.25, size=(400, 2))
axes[1].scatter(*(W[idx[:400]] + jitter).T, s=6, alpha=0.5)
axes[1].plot(*w_opt, marker="s", ms=17, mfc="none", mec="red", mew=2, label="non-private optimum")
axes[1].set(xlim=(-2.6, 2.6), ylim=(-2.6, 2.6), xticks=range(-2, 3), yticks=range(-2, 3), aspect="equal",
            xlabel="$w_1$", ylabel="$w_2$", title="400 private answers (jittered)")
axes[1].legend(loc="upper right", fontsize=8, markerscale=0.5)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## What epsilon does
#
# $\sigma \propto 1/\varepsilon$: a smaller $\varepsilon$ (more privacy) means more noise, and the
# released $\hat w$ spreads over the grid; a larger $\varepsilon$ concentrates it on the good
# parameters. Note that the noise competes with the loss *summed* over $n$ records: with
# $n$ ten times larger the same $\sigma$ would matter ten times less.

# %%
epsilons = [0.05, 0.2, 0.5, 2.0]
fig, axes = plt.subplots(1, len(epsilons), figsize=(15, 3.8))
for ax, eps in zip(axes, epsilons):
    idx, s = private_answers(eps)
    f = np.bincount(idx, minlength=len(W)) / len(idx)
    im = show_grid(ax, f, f"epsilon = {eps:g}  (sigma = {s:.0f})", cmap="magma", mark=w_opt, fmt=prob_text,
                   vmin=0, vmax=1)
fig.colorbar(im, ax=axes, shrink=0.85, label="P(output = w)")
fig.suptitle("distribution of the OPDisc output over $W_\\tau$ (4000 draws each; red: non-private optimum)")
plt.show()

# %% [markdown]
# The same story in numbers: the excess error rate $(L(\hat w) - \min L)/n$ of the released
# classifier, against the utility guarantee of [NRVW20, Theorem 5], which says that with
# probability at least $1-\beta$
#
# $$\frac{L(\hat w) - \min_{W_\tau} L}{n} \le \alpha =
# \frac{2 \sigma \sqrt{2(d+1)\ln(4/\beta)}}{n}$$
#
# (`privopt.calibration.opdisc_utility_bound`, evaluated at the $\sigma$ actually used; with the
# paper's $\sigma$ it is the theorem's $14 G D^2 \sqrt{2(d+1)\ln(4/\beta)\ln(1/\delta)} / (n\tau\varepsilon)$). The bound is loose at this small $n$ (below
# $\varepsilon \approx 1$ it exceeds every possible excess and leaves the plot), but it has the
# right $1/(n\varepsilon)$ shape; the measured error falls much faster once the noise can no
# longer overturn the loss gap between the best and the second-best parameter.

# %%
eps_grid = np.geomspace(0.05, 20, 14)
mean_excess, q95_excess, p_opt, bound = [], [], [], []
for eps in eps_grid:
    idx, s_eps = private_answers(eps)
    excess = (L[idx] - L.min()) / n
    mean_excess.append(excess.mean())
    q95_excess.append(np.quantile(excess, 0.95))
    p_opt.append(np.mean(L[idx] == L.min()))
    bound.append(opdisc_utility_bound(s_eps, n, 2, beta=0.05))

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
axes[0].semilogx(eps_grid, mean_excess, "o-", label="mean excess error rate")
axes[0].semilogx(eps_grid, q95_excess, "s-", label="95% quantile")
axes[0].semilogx(eps_grid, bound, "k--", label=r"Theorem 5 bound $\alpha$ ($\beta$ = 0.05)")
axes[0].set(xlabel="epsilon", ylabel="(L(w_hat) - min L) / n", ylim=(0, 1.2 * max(q95_excess)),
            title="excess 0/1 error rate of the private answer")
axes[0].legend(fontsize=8)
axes[1].semilogx(eps_grid, p_opt, "o-")
axes[1].set(xlabel="epsilon", ylabel="probability", ylim=(0, 1.02),
            title="P(the private answer is a non-private optimum)")
for ax in axes:
    ax.grid(alpha=0.3, which="both")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Take-aways
#
# * Objective perturbation releases the **exact** argmin of $L(w) - \langle\eta, \pi(w)\rangle$,
#   $\eta \sim \mathcal N(0, \sigma^2 I_{d+1})$ [NRVW20, Algorithm 1], with $\sigma$ proportional to
#   $G D^2/\tau$ and calibrated by a complete proof (`calibration="proven"`; the paper's printed
#   value is available as `calibration="paper"`). privopt builds that objective on your Pyomo model and refuses to release
#   an answer the solver did not certify (notebook 3).
# * The noise is calibrated to one record's influence ($G$, $\tau$, $D$), not to $n$: with more
#   records the same noise hurts less, and the excess error falls like $1/(n\varepsilon)$.
# * Everything above used fixed seeds so that you can reproduce it — and is therefore **not
#   private**. In real use leave `random_state=None`.

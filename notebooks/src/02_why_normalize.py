# Source of notebooks/02_why_normalize.ipynb (see notebooks/build.py).

# %% [markdown]
# # 2. Why normalize? $\pi(w)$, the auxiliary variable $s$ and its exact MILP encoding
#
# OPDisc [NRVW20, Algorithm 1] does not perturb the objective with $\langle \eta, w\rangle$ but with
# $\langle \eta, \pi(w)\rangle$, where
#
# $$\pi(w) = \frac{1}{D}\Big(w_1, \dots, w_d,\ \underbrace{\sqrt{D^2 - \|w\|_2^2}}_{s}\Big)
# \in \mathbb{R}^{d+1}, \qquad \|\pi(w)\|_2 = 1 \text{ for every } \|w\|_2 \le D .$$
#
# This notebook shows (1) what $\pi$ does geometrically, (2) how privopt writes the square root
# *exactly* into a MILP with an auxiliary variable $s$, for either sign of the last noise
# coordinate, and (3) on the smallest possible example why without $\pi$
# **no finite $\varepsilon$** is possible, by enumerating the output distributions on two
# neighbouring data sets.
#
# > **Seeds.** All draws below are seeded so that the figures are reproducible; **a seeded run
# > is not private**. privopt's default `random_state=None` draws from the operating system's
# > secure source.

# %%
# %matplotlib inline
import itertools
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pyomo.environ as pyo
from IPython.display import Markdown, display
from scipy import integrate, stats

import privopt
from privopt.calibration import opdisc_sigma
from privopt.exceptions import NoiseDisclosureWarning, ParameterError
from privopt.perturbation import get_noise, get_normalization, get_perturbation_block, pi_value, revert
from privopt.solvers import solve

SEED = 7  # teaching only: a known seed makes the output NOT private
rng = np.random.default_rng(SEED)
plt.rcParams.update({"figure.dpi": 90, "axes.titlesize": 11})

# %% [markdown]
# ## 1. $\pi(w)$ lives on the unit sphere
#
# Left: $d = 1$, $W = \{-2, \dots, 2\}$, $D = 2$: the five points $\pi(w) = (w, \sqrt{4 - w^2})/2$
# lie on the upper unit half-circle. Right: $d = 2$, $W = \{-1, 0, 1\}^2$, $D = \sqrt 2$: nine points
# on the upper unit hemisphere (the corners $\|w\| = D$ sit on the equator, $s = 0$).
#
# Why this matters: with a flat loss the private answer is $\arg\max_w \langle \eta, \pi(w)\rangle$,
# the point whose direction is closest to $\eta$. **Every point of a sphere is an extreme point
# of the convex hull**, so every $w$ has an open cone of noise vectors that selects it. Without
# $\pi$, $\arg\max_w \langle\eta, w\rangle$ can only be a vertex of the convex hull of $W$: an
# interior point such as $w = 0$ is never selected (except for noise in a set of probability zero).

# %%
fig = plt.figure(figsize=(11, 4.4))
ax = fig.add_subplot(1, 2, 1)
t = np.linspace(0, np.pi, 200)
ax.plot(np.cos(t), np.sin(t), color="0.7")
for w in range(-2, 3):
    p = pi_value([w], 2.0)
    ax.plot([0, p[0]], [0, p[1]], color="C0", lw=0.8)
    ax.plot(*p, "o", color="C0")
    ax.annotate(f"w = {w}", p, textcoords="offset points", xytext=(0, 8), ha="center", fontsize=9)
ax.plot(np.arange(-2, 3) / 2, np.zeros(5), "s", color="C3", label="w / D (no normalization)")
ax.set(aspect="equal", xlim=(-1.25, 1.25), ylim=(-0.15, 1.25), xlabel=r"$w / D$", ylabel=r"$s / D$",
       title=r"d = 1: $\pi(w) = (w, \sqrt{D^2 - w^2}) / D$, D = 2")
ax.legend(loc="lower center", fontsize=8)

ax3 = fig.add_subplot(1, 2, 2, projection="3d")
u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 40), np.linspace(0, np.pi / 2, 12))
ax3.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.8", lw=0.5)
P2 = np.array([pi_value(w, math.sqrt(2)) for w in itertools.product([-1, 0, 1], repeat=2)])
ax3.scatter(*P2.T, color="C0", s=40, depthshade=False)
for p, w in zip(P2, itertools.product([-1, 0, 1], repeat=2)):
    ax3.text(*(p * 1.12), str(w), fontsize=7, ha="center")
ax3.set(xlabel=r"$w_1/D$", ylabel=r"$w_2/D$", zlabel=r"$s/D$", xticks=[-1, 0, 1], yticks=[-1, 0, 1], zticks=[0, 1],
        title=r"d = 2: $W = \{-1,0,1\}^2$, $D = \sqrt{2}$")
ax3.view_init(elev=22, azim=-60)
fig.tight_layout()
plt.show()

# %% [markdown]
# The same point in noise space, for the example of section 3 below ($d = 1$, $W = \{-1, 0, 1\}$,
# $D = 1$, so $\pi(-1) = (-1, 0)$, $\pi(0) = (0, 1)$, $\pi(1) = (1, 0)$). Two neighbouring data sets:
# on $\mathcal D$ the loss is $L = (1, 0, 1)$ on $(-1, 0, 1)$; on its neighbour $\mathcal D'$ one record
# raises $L(0)$ by one, $L' = (1, 1, 1)$. Each panel colours the noise values by the output they
# produce.
#
# * **Without** $\pi$ ($\eta \in \mathbb R$, objective $L(w) - \eta w$): on $\mathcal D$, $w = 0$
#   wins iff $|\eta| \le 1$; on $\mathcal D'$ it wins only at $\eta = 0$ — probability **zero**.
# * **With** $\pi$ ($\eta \in \mathbb R^2$, objective $L(w) - \langle\eta, \pi(w)\rangle$): $w = 0$
#   wins iff $\eta_2 > L(0) - 1 + |\eta_1|$, an open region on both data sets; the neighbour only
#   shifts it by one unit.

# %%
W1 = np.array([-1.0, 0.0, 1.0])
L_D = np.array([1.0, 0.0, 1.0])   # data set D:  L(-1) = L(1) = L(0) + 1
L_Dp = np.array([1.0, 1.0, 1.0])  # neighbour D': one record raises L(0) by 1
PI1 = np.array([pi_value([w], 1.0) for w in W1])  # rows (-1, 0), (0, 1), (1, 0)
colors = plt.matplotlib.colors.ListedColormap(["#4c72b0", "#dd8452", "#55a868"])

fig, axes = plt.subplots(2, 2, figsize=(10, 6.4), gridspec_kw={"height_ratios": [1, 4]})
e = np.linspace(-4, 4, 401)
for col, (L, name) in enumerate([(L_D, r"$\mathcal{D}$: L = (1, 0, 1)"), (L_Dp, r"$\mathcal{D}'$: L = (1, 1, 1)")]):
    win = np.argmin(L[None, :] - e[:, None] * W1[None, :], axis=1)
    axes[0, col].imshow(win[None, :], extent=(-4, 4, 0, 1), aspect="auto", cmap=colors, vmin=0, vmax=2,
                        interpolation="nearest")
    axes[0, col].set(yticks=[], xlabel=r"$\eta$", title=f"without $\\pi$ — {name}")
    E1, E2 = np.meshgrid(e, e)
    J = L[None, None, :] - (E1[..., None] * PI1[:, 0] + E2[..., None] * PI1[:, 1])
    axes[1, col].imshow(np.argmin(J, axis=2), origin="lower", extent=(-4, 4, -4, 4), cmap=colors, vmin=0, vmax=2,
                        interpolation="nearest")
    axes[1, col].set(xlabel=r"$\eta_1$", ylabel=r"$\eta_2$", title=f"with $\\pi$ — {name}")
    circle = plt.Circle((0, 0), 1.0, fill=False, ls="--", color="k", lw=0.8)
    axes[1, col].add_patch(circle)
handles = [plt.matplotlib.patches.Patch(color=colors(i), label=f"output w = {int(w)}") for i, w in enumerate(W1)]
fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=9)
fig.suptitle("which output each noise value selects (dashed: one standard deviation for sigma = 1)")
fig.tight_layout(rect=(0, 0.05, 1, 1))
plt.show()

# %% [markdown]
# ## 2. The exact MILP encoding of $\pi(w)$
#
# $\pi$ contains a square root, yet privopt hands the perturbed problem to MILP solvers (HiGHS,
# GLPK, CBC). On a finite grid it can be written **exactly** with linear constraints
# (this is what the authors' code does):
#
# 1. grid encoding: $w_j = \sum_k g_k r_{jk}$, $\sum_k r_{jk} = 1$, $r_{jk} \in \{0,1\}$;
# 2. then $\|w\|^2 = \sum_{j,k} g_k^2 r_{jk}$ is **linear**, and on an integer grid it takes only
#    the integer values $v_m \in \{0, 1, \dots, \lfloor D^2\rfloor\}$; the norm constraint
#    $\|w\|^2 \le D^2$ is linear too;
# 3. the auxiliary variable $s = \sqrt{D^2 - \|w\|^2}$:
#    * **binary** encoding (exact for either sign): binaries $q_m$, $\sum_m q_m = 1$,
#      $\sum_m v_m q_m = \|w\|^2$, $s = \sum_m \sqrt{D^2 - v_m}\, q_m$;
#    * **piecewise** encoding (an LP-only shortcut, exact when $\eta_{d+1} > 0$): the objective
#      term $-\eta_{d+1} s / D$ then pushes $s$ *up*, and the cuts $s \le$ (chords of the concave
#      function $v \mapsto \sqrt{D^2 - v}$ between consecutive levels) stop it exactly at
#      $\sqrt{D^2 - \|w\|^2}$. With $\eta_{d+1} < 0$ the solver would push $s$ down to $0$.
#
# `pi_encoding="auto"` (the default) picks piecewise when $\eta_{d+1} \ge 0$ and binary otherwise.
# (The "convex" form $s \ge 0$, $s^2 + \|w\|^2 \le D^2$ has the same flaw as the piecewise one
# for $\eta_{d+1} < 0$ and needs quadratic constraints besides; privopt does not offer it.)
#
# A user's own small 0/1-loss model (the kind of model notebook 3 is about): $d = 2$,
# $w \in \{-2,\dots,2\}^2$ as **integer variables** (no grid encoding of its own, so the
# transformation adds one), $D = 2$.

# %%
def user_model(X, y, B=2, margin=1.0):
    """Per-record 0/1 loss of sign(<w, x>) (ties -> +1), written by hand."""
    n, d = X.shape
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), domain=pyo.Integers, bounds=(-B, B))
    m.e = pyo.Var(range(n), domain=pyo.Binary)  # e_i = 1: record i is misclassified

    def fit(m, i):
        score = sum(float(X[i, j]) * m.w[j] for j in range(d))
        M = B * float(np.abs(X[i]).sum()) + margin
        return score >= -M * m.e[i] if y[i] > 0 else score <= -margin + M * m.e[i]

    m.fit = pyo.Constraint(range(n), rule=fit)
    m.loss = pyo.Objective(expr=sum(m.e[i] for i in range(n)), sense=pyo.minimize)
    return m


def zero_one(w, X, y):
    return int(np.sum(np.where(X @ w >= 0, 1, -1) != y))


n2, D2 = 40, 2.0
X2 = rng.integers(-2, 3, size=(n2, 2)).astype(float)
y2 = np.where(X2 @ np.array([1, -1]) >= 0, 1, -1)
y2[rng.random(n2) < 0.2] *= -1
model = user_model(X2, y2)
GRID2 = np.array([w for w in itertools.product(range(-2, 3), repeat=2) if w[0] ** 2 + w[1] ** 2 <= D2**2], float)
L2 = np.array([zero_one(w, X2, y2) for w in GRID2], dtype=float)
PI2 = np.array([pi_value(w, D2) for w in GRID2])
print(f"{len(GRID2)} grid points inside ||w|| <= {D2:g}; non-private min L = {L2.min():g}")

# %% [markdown]
# Apply the transformation with a noise vector whose last coordinate is positive, and with one
# whose last coordinate is negative, and list what it added (everything lives on one block, so
# `revert` can take it away again):

# %%
xfrm = pyo.TransformationFactory("privopt.objective_perturbation")
WHAT = {
    "J": "index set of the noise coordinates", "noise": "the noise vector η (d+1 numbers)",
    "K": "index set (j, k) of the grid encoding", "r": "binaries r[j,k]: w_j takes grid value k",
    "one_value": "Σ_k r[j,k] = 1", "link": "w_j = Σ_k g_k r[j,k]",
    "squared_norm": "‖w‖² = Σ g_k² r[j,k] (linear)", "norm_constraint": "‖w‖² ≤ D²",
    "s": "auxiliary variable s = √(D² − ‖w‖²)", "s_cuts": "piecewise: s ≤ chord of √(D² − v)",
    "M": "index set of the levels v_m of ‖w‖²", "q": "binaries q_m: ‖w‖² = v_m",
    "q_one": "Σ_m q_m = 1", "q_level": "Σ_m v_m q_m = ‖w‖²", "s_value": "s = Σ_m √(D² − v_m) q_m",
    "perturbation": "⟨η, π(w)⟩ (linear in w and s)", "objective": "L(w) − ⟨η, π(w)⟩ (the original is deactivated)",
}
sigma2 = 15.0
eta_pos = rng.normal(0, sigma2, size=3)
eta_pos[-1] = abs(eta_pos[-1])
eta_neg = eta_pos * np.array([1, 1, -1])
tables = {}
for label, eta in [("eta_3 > 0", eta_pos), ("eta_3 < 0", eta_neg)]:
    pm = xfrm.create_using(model, noise=eta, norm_bound=D2)  # a transformed clone; `model` is untouched
    blk = get_perturbation_block(pm)
    tables[label] = (get_normalization(pm)["pi_encoding"],
                     [(c.local_name, c.ctype.__name__, len(c))
                      for c in blk.component_objects(descend_into=False)])
lines = ["| component | kind | size | what it is |", "|---|---|---|---|"]
for label, (enc, comps) in tables.items():
    lines.append(f"| **{label}**: `pi_encoding='{enc}'` | | | |")
    lines += [f"| `{name}` | {kind} | {size} | {WHAT.get(name, '')} |" for name, kind, size in comps]
display(Markdown("\n".join(lines)))

# %% [markdown]
# Now solve both with HiGHS and check, for several draws of each sign, that
# (a) at the optimum $s = \sqrt{D^2 - \|w\|^2}$ exactly, and (b) the solver's $w$ is the argmin of
# $L(w) - \langle\eta, \pi(w)\rangle$ found by enumerating the 13 grid points.

# %%
rows = []
for trial in range(5):
    base = rng.normal(0, sigma2, size=3)
    for sign in (+1, -1):
        eta = base.copy()
        eta[-1] = sign * abs(eta[-1])
        pm = xfrm.create_using(model, noise=eta, norm_bound=D2)
        rep = solve(pm, "highs")
        norm = get_normalization(pm)
        w = np.array([pyo.value(pm.w[j]) for j in range(2)]).round()
        s_val = pyo.value(norm["s"])
        s_true = math.sqrt(D2**2 - w @ w)
        w_enum = GRID2[np.argmin(L2 - PI2 @ eta)]
        assert rep.certified_optimal and abs(s_val - s_true) < 1e-6 and np.array_equal(w, w_enum)
        rows.append(f"| {trial} | {'+' if sign > 0 else '−'} | {norm['pi_encoding']} | {w.astype(int).tolist()} | "
                    f"{w_enum.astype(int).tolist()} | {round(s_val, 6) + 0.0:.6f} | {s_true:.6f} |")
display(Markdown("| draw | sign of eta_3 | encoding | w (HiGHS) | w (enumeration) | s at the optimum | "
                 "sqrt(D² − ‖w‖²) |\n|---|---|---|---|---|---|---|\n" + "\n".join(rows)))
print("s = sqrt(D^2 - ||w||^2) at every optimum, and the MILP argmin equals the enumerated argmin  ✓")

# %% [markdown]
# The transformation keeps its bookkeeping readable (`get_noise`, `get_normalization`,
# `get_original_objective`), refuses the encoding that would be wrong, and `revert` undoes it:

# %%
pm = xfrm.create_using(model, noise=eta_neg, norm_bound=D2)
print("noise injected:", np.round(get_noise(pm), 3), "| encoding:", get_normalization(pm)["pi_encoding"])
try:
    xfrm.apply_to(model.clone(), noise=eta_neg, norm_bound=D2, pi_encoding="piecewise")
except ParameterError as exc:
    print("piecewise with eta_3 < 0 is refused:", exc)
solve(pm, "highs")
w_priv = [pyo.value(pm.w[j]) for j in range(2)]
print("perturbed objective at the optimum:", round(pyo.value(get_perturbation_block(pm).objective), 4))
revert(pm)
print("after revert the original loss is active again:", pm.loss.active,
      "-> L(w_hat) =", round(pyo.value(pm.loss)), "=", zero_one(np.array(w_priv), X2, y2), "(numpy)")

# %% [markdown]
# What the wrong encoding would do: if $s$ were only bounded above ($s \le \sqrt{D^2 - \|w\|^2}$,
# as in the piecewise or the convex form) and $\eta_{d+1} < 0$, the minimizer sets $s = 0$ at
# every $w$: the last noise coordinate disappears and the mechanism silently becomes a different
# one. Enumerating both versions for 5000 draws with $\eta_{d+1} < 0$:

# %%
etas = rng.normal(0, sigma2, size=(5000, 3))
etas[:, -1] = -np.abs(etas[:, -1])
exact = np.argmin(L2[None, :] - etas @ PI2.T, axis=1)
naive = np.argmin(L2[None, :] - etas[:, :2] @ GRID2.T / D2, axis=1)  # s pushed to 0
print(f"the naive encoding releases a different w in {np.mean(exact != naive):.1%} of the draws")

# %% [markdown]
# ## 3. An empirical look: neighbouring data sets with and without normalization
#
# Differential privacy asks that for neighbouring data sets $\mathcal D, \mathcal D'$ and every
# output $w$, $P_{\mathcal D}(w) \le e^{\varepsilon} P_{\mathcal D'}(w) + \delta$. On the example
# above ($W = \{-1, 0, 1\}$, $L_{\mathcal D} = (1, 0, 1)$, $L_{\mathcal D'} = (1, 1, 1)$, $D = 1$) we
# enumerate the argmin for 200,000 Gaussian noise draws per case, and compare with the exact
# probabilities:
#
# * without $\pi$: $P_{\mathcal D}(0) = P(|\eta| \le 1) = 2\Phi(1/\sigma) - 1$, $P_{\mathcal D'}(0) = 0$;
# * with $\pi$: $P(0) = \int \phi_\sigma(\eta_1)\, \bar\Phi\big((L(0) - 1 + |\eta_1|)/\sigma\big)\, d\eta_1$
#   and $P(-1) = P(1) = (1 - P(0))/2$ by symmetry.
#
# The log-ratio $\ln P_{\mathcal D}(w) / P_{\mathcal D'}(w)$ is what $\varepsilon$ must bound.
# We use $\sigma = 1$ so that the differences are visible; the calibrated $\sigma$ comes next.

# %%
def exact_probs(L, sigma, normalized):
    """P(output = -1, 0, 1) for L = (a, L0, a) (symmetric), exactly."""
    a, L0 = L[0], L[1]
    if normalized:
        f = lambda e1: stats.norm.pdf(e1, scale=sigma) * stats.norm.sf((L0 - a + abs(e1)) / sigma)
        p0 = 2 * integrate.quad(f, 0, np.inf)[0]
    else:
        p0 = max(0.0, 2 * stats.norm.cdf((a - L0) / sigma) - 1)
    return np.array([(1 - p0) / 2, p0, (1 - p0) / 2])


def empirical_probs(L, sigma, normalized, draws=200_000, rng=rng):
    if normalized:
        etas = rng.normal(0, sigma, size=(draws, 2))
        idx = np.argmin(L[None, :] - etas @ PI1.T, axis=1)
    else:
        etas = rng.normal(0, sigma, size=draws)
        idx = np.argmin(L[None, :] - etas[:, None] * W1[None, :], axis=1)
    return np.bincount(idx, minlength=3) / draws


sigma = 1.0
res = {}
for normalized in (False, True):
    for name, L in (("D", L_D), ("D'", L_Dp)):
        res[normalized, name] = (empirical_probs(L, sigma, normalized), exact_probs(L, sigma, normalized))

fig, axes = plt.subplots(1, 3, figsize=(14, 4))
x = np.arange(3)
for ax, normalized in zip(axes[:2], (False, True)):
    for k, (name, color) in enumerate((("D", "C0"), ("D'", "C1"))):
        emp, ex = res[normalized, name]
        label = r"$P_{\mathcal{D}}(w)$, data set" if name == "D" else r"$P_{\mathcal{D}'}(w)$, neighbour"
        ax.bar(x + (k - 0.5) * 0.38, emp, width=0.38, color=color, label=label + " (200k draws)")
        ax.plot(x + (k - 0.5) * 0.38, ex, "k_", ms=18, mew=2, label="exact" if k else None)
    ax.set(xticks=x, xticklabels=["w = -1", "w = 0", "w = 1"], ylim=(0, 0.75), ylabel="probability",
           title=("with" if normalized else "without") + f" normalization (sigma = {sigma:g})")
    ax.legend(fontsize=8)
ax = axes[2]
cap = 4.0
for k, normalized in enumerate((False, True)):
    pD, pDp = res[normalized, "D"][1], res[normalized, "D'"][1]
    with np.errstate(divide="ignore"):
        lr = np.log(pD / pDp)
    shown = np.where(np.isfinite(lr), lr, cap)
    bars = ax.bar(x + (k - 0.5) * 0.38, shown, width=0.38, color=("C3" if not normalized else "C2"),
                  label="without normalization" if not normalized else "with normalization")
    for xi, v in zip(x + (k - 0.5) * 0.38, lr):
        ax.text(xi, (cap if not np.isfinite(v) else v) + 0.08 * np.sign(v if np.isfinite(v) else 1),
                "∞" if not np.isfinite(v) else f"{v:.2f}", ha="center", va="bottom" if (not np.isfinite(v) or v >= 0) else "top",
                fontsize=11 if not np.isfinite(v) else 8)
ax.axhline(0, color="k", lw=0.8)
ax.set(xticks=x, xticklabels=["w = -1", "w = 0", "w = 1"], ylim=(-1.8, cap + 0.8),
       ylabel=r"$\ln P_{\mathcal{D}}(w) / P_{\mathcal{D}'}(w)$", title="privacy loss per output (exact)")
ax.legend(fontsize=8, loc="upper right")
fig.tight_layout()
plt.show()
for normalized in (False, True):
    print(("with   " if normalized else "without"), "normalization: P_D =", np.round(res[normalized, "D"][1], 4),
          " P_D' =", np.round(res[normalized, "D'"][1], 4))

# %% [markdown]
# Without normalization the output $w = 0$ has positive probability on $\mathcal D$ and probability
# zero on $\mathcal D'$: the log-ratio is infinite, so **no finite $\varepsilon$** works, and the
# whole mass $P_{\mathcal D}(0)$ would have to be paid for by $\delta$. With normalization every
# output keeps an open set of noise vectors on both data sets and the log-ratios are finite.
#
# How do they depend on $\sigma$? The calibrated OPDisc noise for this example ($G = 1/\tau = 1$,
# $D = 1$, $\tau = 1$, $d = 1$; `opdisc_sigma` with privopt's default, proven calibration) at
# $\varepsilon = 1$, $\delta = 10^{-5}$ is printed below (the paper's Algorithm 1 would give
# $7\sqrt{\ln 10^5} \approx 23.7$). Left: the largest $|\ln P_{\mathcal D}(w)/P_{\mathcal D'}(w)|$
# with normalization (exact) falls as $\sigma$ grows. Right: without normalization the log-ratio is
# infinite at every $\sigma$, and the $\delta$ it would need, $P_{\mathcal D}(0) = 2\Phi(1/\sigma) - 1
# \approx 0.8/\sigma$, is far above any meaningful $\delta$.

# %%
sigma_cal = opdisc_sigma(1.0, 1e-5, lipschitz=1.0, norm_bound=1.0, separation=1.0, dim=1)
print(f"calibrated sigma = {sigma_cal:.1f}")
sigmas = np.geomspace(0.3, 100, 25)
max_lr = [np.max(np.abs(np.log(exact_probs(L_D, s, True) / exact_probs(L_Dp, s, True)))) for s in sigmas]
need_delta = [exact_probs(L_D, s, False)[1] for s in sigmas]
lr_cal = np.max(np.abs(np.log(exact_probs(L_D, sigma_cal, True) / exact_probs(L_Dp, sigma_cal, True))))

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
axes[0].loglog(sigmas, max_lr, "o-", color="C2")
axes[0].axvline(sigma_cal, color="k", ls="--", lw=0.8)
axes[0].annotate(f"calibrated sigma = {sigma_cal:.1f}\nmax log-ratio = {lr_cal:.3f}", (sigma_cal, lr_cal),
                 xytext=(-150, -10), textcoords="offset points", fontsize=8, arrowprops={"arrowstyle": "->"})
axes[0].set(xlabel="sigma", ylabel=r"max$_w$ |log-ratio|", title="with normalization: finite, shrinking")
axes[1].loglog(sigmas, need_delta, "o-", color="C3", label=r"$P_{\mathcal{D}}(0)$ = the $\delta$ it would need")
axes[1].axhline(1e-5, color="k", ls=":", lw=1, label=r"$\delta = 10^{-5}$")
axes[1].set(xlabel="sigma", ylabel="probability", title="without normalization: log-ratio = ∞ at every sigma")
axes[1].legend(fontsize=8)
for ax in axes:
    ax.grid(alpha=0.3, which="both")
fig.tight_layout()
plt.show()

# %% [markdown]
# ### privopt runs the same mechanism
#
# The same data set as a Pyomo model (a table of losses over $W = \{-1, 0, 1\}$, one record, so
# $n = 1$), released with `privopt.opdisc` at $\varepsilon = 1$, $\delta = 10^{-5}$: for ten seeds the
# certified MILP answer equals the enumerated argmin for the noise it drew (`return_noise=True`,
# teaching only).

# %%
def table_model(L):
    m = pyo.ConcreteModel()
    m.w = pyo.Var(domain=pyo.Integers, bounds=(-1, 1))
    m.z = pyo.Var(range(3), domain=pyo.Binary)
    m.one = pyo.Constraint(expr=sum(m.z[k] for k in range(3)) == 1)
    m.link = pyo.Constraint(expr=m.w == sum(float(W1[k]) * m.z[k] for k in range(3)))
    m.loss = pyo.Objective(expr=sum(float(L[k]) * m.z[k] for k in range(3)))
    return m


checks = []
with warnings.catch_warnings():
    warnings.simplefilter("ignore", NoiseDisclosureWarning)
    for seed in range(10):
        r = privopt.opdisc(table_model(L_D), weights="w", epsilon=1.0, delta=1e-5, norm_bound=1.0, lipschitz=1.0,
                           n_samples=1, random_state=seed, return_noise=True, public_constraints=["w"])
        w_enum = W1[np.argmin(L_D - PI1 @ r.noise)]
        assert r.weights[0] == w_enum
        checks.append(int(w_enum))
print(f"sigma = {r.parameters['sigma']:.2f} (= {sigma_cal:.2f}); outputs for seeds 0..9: {checks}  ✓ equal to enumeration")

# %% [markdown]
# ## Take-aways
#
# * $\pi$ maps the ball $\|w\| \le D$ onto the unit sphere in $\mathbb R^{d+1}$, where every grid point
#   is an extreme point; that is what lets every output keep positive probability on every data set,
#   and what the $(\varepsilon, \delta)$ proof of OPDisc needs [NRVW20, Algorithm 1].
# * The square root is encoded exactly with binaries (for either sign of $\eta_{d+1}$) or with
#   chords (only when $\eta_{d+1} \ge 0$); privopt picks the right one and refuses the wrong one.
# * Seeded runs, as here, are for teaching; real releases use `random_state=None`.

"""Top-R candidates (Prastakos, Behdin, Mazumder, NeurIPS 2025) against the shipped A*
sampling path (``exponential_mechanism(path="bounded")``) on the facility-location
(|W| = 2^20 - 1) and choose-k siting instances of benchmarks/bench_bounded_selection.py.

The top-R construction, as in the authors' code (``_select_supports`` of
github.com/petrosprastakos/DP-variable-selection, bss_neurips.py): find the R points of W
with the smallest loss L_1 <= ... <= L_R (here: R exact MIP solves, each adding the
no-good cut sum_{j: w*_j = 1} (1 - w_j) + sum_{j: w*_j = 0} w_j >= 1 of the point found
before it); release candidate i with probability proportional to exp(-eps L_i / (2 Delta)),
and the rest of W, as one block, with probability proportional to
(|W| - R) exp(-eps L_R / (2 Delta)); a block draw releases a point uniformly among the
|W| - R points that are not candidates.

What law that is (proved in benchmarks/results/top_r.md and docs/mechanisms.md): every
point w of W is released with probability proportional to exp(-eps min(L(w), L_(R)) /
(2 Delta)), with L_(R) the R-th smallest loss over W.  That is the exponential mechanism
of the *clipped* loss min(L, L_(R)), whose sensitivity is Delta, so the construction is
exactly eps-DP -- provided the R candidates are the exact top R (MIP gap 0) -- but it is
not the exponential mechanism of L: it moves mass from the best points to the block,
and its expected loss is never below the exponential mechanism's (:func:`top_r_law`,
:func:`clipped_law`, :func:`em_law`).

What this script measures:

* on the large instances (``--customers``, ``--instances``): the time to find the top R
  (the R MIP solves, HiGHS through highspy on the model written by Pyomo, gap 0), the law
  over {candidates, block} at each epsilon, its expected excess cost over the optimum
  (exact on the candidates; the block's mean loss by ``--block-samples`` uniform draws,
  each L(w) in closed form) and ``--releases`` draws; next to ``--releases`` releases of
  the shipped bounded path from the same run;
* on a small choose-k instance where W is listed (``--small``): the total variation
  distance between the top-R law and the exponential mechanism's, and the worst ratio of
  release probabilities between neighbouring data sets (one customer's cost row replaced
  by any row of [0, 1]^sites, the loss contract's neighbours), for the exact top R and for
  a variant whose candidates are the optimum and its one-swap neighbours (not the top R).

L(w) in closed form: with the decision y fixed, the rest of the model is one assignment
per customer (sum_j x_ij = 1, 0 <= x_ij <= y_j), so L(w) = const + f.w + sum_i min over
open j of c_ij; the coefficients are read from the Pyomo objective and the formula is
checked against the model solved with the decision fixed (bench_bounded_selection.loss_at)
at every released point.

Results: benchmarks/results/top_r.{md,csv}.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import tempfile
import time

import highspy
import numpy as np
from pyomo.repn import generate_standard_repn

import privopt

import _common
from bench_bounded_selection import loss_at, optimum, siting

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ["model", "sites", "k", "customers", "instance", "n_points", "optimum", "epsilon", "method", "R",
           "seconds", "mip_solves", "lp_solves", "gap_R", "p_block", "expected_excess", "expected_excess_pct",
           "releases_excess_mean", "releases_block", "releases", "run"]
DELTA = 1.0   # loss_range (0, 1): each customer's cost is in [0, 1]


# --- the laws ---------------------------------------------------------------------------------


def _normalize(logw: np.ndarray) -> np.ndarray:
    p = np.exp(logw - np.max(logw))
    return p / p.sum()


def em_law(losses, epsilon: float, delta: float = DELTA) -> np.ndarray:
    """The exponential mechanism's law over listed W: p(w) proportional to exp(-eps L(w) / (2 Delta))."""
    return _normalize(-epsilon * np.asarray(losses, dtype=float) / (2 * delta))


def clipped_law(losses, r: int, epsilon: float, delta: float = DELTA) -> np.ndarray:
    """The law the top-R construction releases, point by point over listed W: the
    exponential mechanism of the clipped loss min(L(w), L_(R)), L_(R) the R-th smallest
    loss (whatever the order among ties)."""
    losses = np.asarray(losses, dtype=float)
    l_r = np.sort(losses)[r - 1]
    return em_law(np.minimum(losses, l_r), epsilon, delta)


def top_r_law(top_losses, n_points: int, epsilon: float, delta: float = DELTA):
    """``(p_candidates, p_block)``: the top-R construction's law over its R candidates
    (losses ``top_losses``, sorted ascending) and the block of the other ``n_points`` - R
    points of W, weighted (|W| - R) exp(-eps L_R / (2 Delta)) with L_R the largest
    candidate loss."""
    top = np.asarray(top_losses, dtype=float)
    r = len(top)
    logw = -epsilon * (top - top[0]) / (2 * delta)
    log_block = math.log(n_points - r) + logw[-1] if n_points > r else -math.inf
    p = _normalize(np.append(logw, log_block))
    return p[:r], float(p[r])


def top_r_points_law(losses, candidates, epsilon: float, delta: float = DELTA) -> np.ndarray:
    """The top-R construction's law point by point over listed W, for any set of
    ``candidates`` (indices into ``losses``): each candidate at its own weight, each other
    point at the block's weight exp(-eps max_candidates L / (2 Delta)), i.e. the block
    mass spread uniformly.  With the exact top R this equals :func:`clipped_law`."""
    losses = np.asarray(losses, dtype=float)
    cand = np.zeros(len(losses), dtype=bool)
    cand[np.asarray(candidates)] = True
    score = np.where(cand, losses, losses[cand].max())
    return em_law(score, epsilon, delta)


# --- the model: coefficients, closed-form loss, W -------------------------------------------------


class SitingLoss:
    """L(w) of a siting model (bench_bounded_selection.siting) in closed form:
    const + f.w + sum_i min_{j open} c_ij, the coefficients read from the Pyomo objective."""

    def __init__(self, model):
        repn = generate_standard_repn(model.obj.expr)
        coef = {id(v): float(c) for v, c in zip(repn.linear_vars, repn.linear_coefs)}
        sites = list(model.J)
        self.c = np.array([[coef.get(id(model.x[i, j]), 0.0) for j in sites] for i in model.I])
        self.f = np.array([coef.get(id(model.y[j]), 0.0) for j in sites])
        self.const = float(repn.constant)

    def __call__(self, w: np.ndarray) -> np.ndarray:
        """Losses of the rows of ``w`` (m x sites, 0/1; each row with a site open)."""
        w = np.atleast_2d(np.asarray(w, dtype=bool))
        out = np.empty(len(w))
        for s in range(0, len(w), 500):
            blk = w[s:s + 500]
            cost = np.where(blk[:, None, :], self.c[None, :, :], np.inf).min(axis=2).sum(axis=1)
            out[s:s + 500] = self.const + blk @ self.f + cost
        return out


def uniform_points(n_sites: int, k: int | None, m: int, rng) -> np.ndarray:
    """``m`` points drawn uniformly from W: nonzero 0/1 vectors (k None) or k-subsets."""
    if k is None:
        out = rng.integers(0, 2, size=(2 * m + 16, n_sites), dtype=np.int8)
        out = out[out.sum(axis=1) > 0]
        while len(out) < m:
            more = rng.integers(0, 2, size=(m, n_sites), dtype=np.int8)
            out = np.vstack([out, more[more.sum(axis=1) > 0]])
        return out[:m]
    keys = rng.random((m, n_sites))
    idx = np.argpartition(keys, k - 1, axis=1)[:, :k]
    out = np.zeros((m, n_sites), dtype=np.int8)
    np.put_along_axis(out, idx, 1, axis=1)
    return out


def n_points(n_sites: int, k: int | None) -> int:
    return 2 ** n_sites - 1 if k is None else math.comb(n_sites, k)


# --- top R by MIP with no-good cuts ------------------------------------------------------------


class TopR:
    """The points of W in increasing loss, one exact MIP solve each (HiGHS through highspy,
    relative and absolute gap 0, on the model written to MPS by Pyomo, read once); after
    each solve the no-good cut of the point found is added, so the next solve finds the
    next best point.  ``solve_seconds[i]`` is the wall time of the i-th solve."""

    def __init__(self, model, decision: str = "y"):
        var = getattr(model, decision)
        self.n = len(var)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.mps")
            _, sid = model.write(path, io_options={"symbolic_solver_labels": True})
            smap = model.solutions.symbol_map[sid]
            self.h = highspy.Highs()
            self.h.setOptionValue("output_flag", False)
            self.h.readModel(path)
        names = list(self.h.getLp().col_names_)
        self.cols = np.array([names.index(smap.getSymbol(v)) for v in var.values()], dtype=np.int32)
        self.h.setOptionValue("mip_rel_gap", 0.0)
        self.h.setOptionValue("mip_abs_gap", 0.0)
        # no "threads" option: HiGHS's scheduler is per process, and a value other than the one it
        # was first started with makes run() fail (status kNotset) once another HiGHS model ran here
        self.points: list[np.ndarray] = []
        self.losses: list[float] = []
        self.solve_seconds: list[float] = []

    def next(self) -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        run_status = self.h.run()
        status = self.h.getModelStatus()
        if run_status == highspy.HighsStatus.kError:
            raise RuntimeError(f"MIP solve {len(self.points) + 1}: HiGHS refused to run ({status})")
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"MIP solve {len(self.points) + 1} not optimal: {status}")
        loss = float(self.h.getInfo().objective_function_value)
        w = np.round(np.asarray(self.h.getSolution().col_value)[self.cols]).astype(np.int8)
        ones = int(w.sum())
        vals = np.where(w == 1, -1.0, 1.0)
        self.h.addRow(1.0 - ones, highspy.kHighsInf, self.n, self.cols, vals)
        self.solve_seconds.append(time.perf_counter() - start)
        self.points.append(w)
        self.losses.append(loss)
        return loss, w


def release_top_r(points, p_top, p_block, n_sites, k, rng) -> tuple[np.ndarray, bool]:
    """One draw of the top-R construction: a candidate, or (block) a uniform point of W
    that is not a candidate (rejection)."""
    i = rng.choice(len(p_top) + 1, p=np.append(p_top, p_block))
    if i < len(p_top):
        return points[i], False
    taken = {tuple(p) for p in points}
    while True:
        w = uniform_points(n_sites, k, 1, rng)[0]
        if tuple(w) not in taken:
            return w, True


# --- large instances ---------------------------------------------------------------------------


def run_instance(kind, n_sites, k, n_cust, seed, args):
    model = siting(n_sites, n_cust, seed, k)
    best = optimum(model)
    closed = SitingLoss(model)
    size = n_points(n_sites, k)
    common = dict(model=kind, sites=n_sites, k=k if k is not None else "", customers=n_cust, instance=seed,
                  n_points=size, optimum=round(best, 4))
    rows = []

    def checked_excess(w) -> float:
        exact = loss_at(model, w)
        assert abs(exact - closed(w)[0]) <= 1e-6 * (1 + abs(exact)), (exact, closed(w)[0])
        return exact - best

    # the shipped path
    for eps in args.epsilons:
        for r in range(args.releases):
            start = time.perf_counter()
            res = privopt.exponential_mechanism(model, weights="y", epsilon=eps, loss_range=(0, 1),
                                                n_samples=n_cust, public_constraints="open", public_term="fixed",
                                                path="bounded", random_state=1000 * seed + r)
            secs = time.perf_counter() - start
            exc = checked_excess(res.weights)
            rows.append({**common, "epsilon": eps, "method": "bounded (A*)", "R": "", "seconds": round(secs, 3),
                         "mip_solves": 0, "lp_solves": res.report.regions_solved,
                         "releases_excess_mean": round(exc, 4), "releases": 1})
            print(rows[-1], flush=True)

    # top R: one sequence of MIP solves serves every R and epsilon (the list does not depend on eps)
    top = TopR(model)
    setup = time.perf_counter()
    r_max = max(args.rs)
    for i in range(r_max):
        top.next()
        if (i + 1) % 25 == 0:
            print(f"  {i + 1} MIP solves, {sum(top.solve_seconds):.1f} s", flush=True)
    assert abs(top.losses[0] - best) <= 1e-6 * (1 + best), (top.losses[0], best)
    assert all(a <= b + 1e-7 for a, b in zip(top.losses, top.losses[1:])), "no-good sequence not sorted"
    print(f"{kind} {seed}: {r_max} MIP solves in {time.perf_counter() - setup:.1f} s", flush=True)
    rng = np.random.default_rng(seed)
    block = uniform_points(n_sites, k, args.block_samples, rng)
    block_losses = closed(block)
    for r in sorted(args.rs):
        losses = np.array(top.losses[:r])
        taken = {tuple(p) for p in top.points[:r]}
        keep = np.array([tuple(b) not in taken for b in block])
        block_mean = float(block_losses[keep].mean())   # uniform over W minus the candidates
        secs = float(np.sum(top.solve_seconds[:r]))
        for eps in args.epsilons:
            p_top, p_block = top_r_law(losses, size, eps)
            expected = float(p_top @ (losses - best) + p_block * (block_mean - best))
            draws, in_block, secs_draw = [], 0, 0.0
            for rel in range(args.releases):
                t0 = time.perf_counter()
                w, was_block = release_top_r(top.points[:r], p_top, p_block, n_sites, k,
                                             np.random.default_rng([seed, r, int(eps * 100), rel]))
                secs_draw += (time.perf_counter() - t0) / args.releases
                draws.append(checked_excess(w))
                in_block += was_block
            rows.append({**common, "epsilon": eps, "method": "top-R", "R": r,
                         "seconds": round(secs + secs_draw, 3), "mip_solves": r, "lp_solves": 0,
                         "gap_R": round(float(losses[-1] - best), 4), "p_block": f"{p_block:.6g}",
                         "expected_excess": round(expected, 4),
                         "expected_excess_pct": round(100 * expected / best, 3),
                         "releases_excess_mean": round(float(np.mean(draws)), 4), "releases_block": in_block,
                         "releases": args.releases})
            print(rows[-1], flush=True)
    return rows


# --- the small instance: privacy check ------------------------------------------------------------


def small_check(args) -> tuple[list[dict], dict]:
    """TV distance to the exponential mechanism and worst neighbour ratio on choose-k of a
    few sites, W listed."""
    n_sites, k, n_cust, seed = args.small
    model = siting(n_sites, n_cust, seed, k)
    closed = SitingLoss(model)
    subsets = np.array(list(itertools.combinations(range(n_sites), k)))
    w_rows = np.zeros((len(subsets), n_sites), dtype=np.int8)
    np.put_along_axis(w_rows, subsets, 1, axis=1)
    losses = closed(w_rows)
    # the MIP with no-good cuts finds the same order as sorting (checked on the first 10)
    top = TopR(model)
    for _ in range(min(10, len(losses))):
        top.next()
    order = np.argsort(losses, kind="stable")
    assert np.allclose(top.losses, losses[order[:len(top.losses)]], atol=1e-6), (top.losses, losses[order[:10]])
    contrib = closed.c[:, subsets].min(axis=2)            # customer x point: its cost at that point
    # neighbours: customer i's row replaced by any 0/1 row (2^sites of them) and random rows of [0, 1]^sites
    rng = np.random.default_rng(seed)
    repl = np.vstack([np.array(list(itertools.product([0.0, 1.0], repeat=n_sites))),
                      rng.random((args.small_random_rows, n_sites))])
    repl_contrib = repl[:, subsets].min(axis=2)           # replacement x point

    index = {tuple(s): i for i, s in enumerate(subsets.tolist())}
    swaps = []
    for best in subsets.tolist():
        nb = [index[tuple(sorted((set(best) - {o}) | {i}))] for o in best for i in range(n_sites) if i not in best]
        swaps.append([index[tuple(best)], *nb])

    def swap_candidates(ls):
        """The optimum and its one-swap neighbours (not the top R in general)."""
        return swaps[int(np.argmin(ls))]

    rows = []
    n_swap = 1 + k * (n_sites - k)
    for eps in args.epsilons:
        em = em_law(losses, eps)
        for r in args.small_rs:
            law = clipped_law(losses, r, eps)
            via_top = top_r_points_law(losses, order[:r], eps)
            assert np.allclose(law, via_top, rtol=1e-12, atol=1e-15)
            worst, worst_em = 0.0, 0.0
            for i in range(n_cust):
                neigh = losses[None, :] - contrib[i][None, :] + repl_contrib      # replacement x point
                l_r = np.sort(neigh, axis=1)[:, r - 1]
                lp_n = -eps * np.minimum(neigh, l_r[:, None]) / (2 * DELTA)
                lp_n -= np.logaddexp.reduce(lp_n, axis=1)[:, None]
                worst = max(worst, float(np.abs(lp_n - np.log(law)[None, :]).max()))
                le_n = -eps * neigh / (2 * DELTA)
                le_n -= np.logaddexp.reduce(le_n, axis=1)[:, None]
                worst_em = max(worst_em, float(np.abs(le_n - np.log(em)[None, :]).max()))
            rows.append({"epsilon": eps, "R": r, "construction": "exact top R",
                         "tv_to_em": 0.5 * float(np.abs(law - em).sum()), "p_block": float(law[order[r:]].sum()),
                         "em_block": float(em[order[r:]].sum()), "worst_log_ratio": worst,
                         "worst_log_ratio_em": worst_em})
            print(rows[-1], flush=True)
        # the variant: candidates = optimum + its one-swap neighbours, block weighted by their largest loss
        law = top_r_points_law(losses, swap_candidates(losses), eps)
        worst = 0.0
        for i in range(n_cust):
            neigh_all = losses[None, :] - contrib[i][None, :] + repl_contrib
            for neigh in neigh_all:
                other = np.log(top_r_points_law(neigh, swap_candidates(neigh), eps))
                worst = max(worst, float(np.abs(other - np.log(law)).max()))
        rows.append({"epsilon": eps, "R": n_swap, "construction": "optimum + one-swap neighbours",
                     "tv_to_em": 0.5 * float(np.abs(law - em).sum()), "p_block": float("nan"),
                     "em_block": float("nan"), "worst_log_ratio": worst, "worst_log_ratio_em": float("nan")})
        print(rows[-1], flush=True)
    info = dict(n_sites=n_sites, k=k, n_cust=n_cust, seed=seed, n_points=len(losses),
                n_neighbours=n_cust * len(repl), spread=float(losses.max() - losses.min()))
    return rows, info


# --- output ------------------------------------------------------------------------------------


def summary(rows, small_rows, small_info, env, args) -> list[str]:
    lines = ["# Top-R candidates vs A* sampling (issue #41)", "", _common.stamp_line(env), "",
             "Top-R (Prastakos, Behdin, Mazumder, *Differentially Private High-dimensional Variable Selection "
             "via Integer Programming*, NeurIPS 2025, arXiv:2510.22062; construction as in the authors' code): "
             "the R best points of W by exact MIP with no-good cuts (HiGHS, gap 0, 1 thread), candidate i "
             "weighted exp(-eps L_i / 2), the other |W| - R points as one block weighted "
             "(|W| - R) exp(-eps L_R / 2), a block draw uniform among them. Bounded (A*): "
             "`exponential_mechanism(path=\"bounded\")` as shipped. Delta = 1 (loss_range (0, 1)). "
             "Instances: the seeds in the table, of bench_bounded_selection.py's builders (a small count of "
             "seeds and of R, to keep the CPU time short: 200 MIP solves took about 7 minutes); "
             f"{args.releases} releases per row. Top-R's time is the R MIP solves (one sequence of "
             "solves serves every R and eps) plus one draw; its expected excess is exact on the candidates "
             f"and uses the mean loss of {args.block_samples:,} uniform points of the block; \"releases\" are "
             "actual draws (how many fell in the block). Excess cost: L(release) - L(optimum), checked "
             "against the model solved with the decision fixed.", "",
             "| model | customers | instance | optimum | eps | method | R | time per release (s) | "
             "MIP solves | LP solves | L_R - L* | P(block) | expected excess (% of opt.) | "
             "excess of releases, mean (in block) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = []
    for r in rows:
        key = (r["model"], r["customers"], r["instance"], r["epsilon"], r["method"], r["R"])
        if key not in keys:
            keys.append(key)
    for key in keys:
        grp = [r for r in rows if (r["model"], r["customers"], r["instance"], r["epsilon"], r["method"], r["R"]) == key]
        g = grp[0]
        t = [float(r["seconds"]) for r in grp]
        exc = [float(r["releases_excess_mean"]) for r in grp]
        if g["method"] == "top-R":
            lines.append(f"| {g['model']} | {g['customers']} | {g['instance']} | {g['optimum']} | {g['epsilon']:g} "
                         f"| top-R | {g['R']} | {t[0]:.2f} | {g['mip_solves']} | - | {g['gap_R']} | "
                         f"{float(g['p_block']):.6f} | {g['expected_excess']} ({g['expected_excess_pct']}%) | "
                         f"{exc[0]:.3f} ({g['releases_block']} of {g['releases']}) |")
        else:
            reg = [float(r["lp_solves"]) for r in grp]
            lines.append(f"| {g['model']} | {g['customers']} | {g['instance']} | {g['optimum']} | {g['epsilon']:g} "
                         f"| bounded (A*) | - | {np.mean(t):.2f} (max {np.max(t):.2f}) | 0 | {np.mean(reg):.0f} | - "
                         f"| - | - | {np.mean(exc):.3f} ({100 * np.mean(exc) / float(g['optimum']):.2f}%) |")
    runs = sorted({r["run"] for r in rows if r.get("run")})
    lines += ["", "Rows made by: " + "; ".join(runs) + "."] + ([args.note] if args.note else [])
    lines += ["", "## What the top-R construction releases, and its privacy", "",
              "Source: the paper's abstract (\"two new pure differentially private estimators\", top-R and "
              "mistakes) and the authors' code (github.com/petrosprastakos/DP-variable-selection, bss_neurips.py, "
              "`_select_supports`: block exponent -eps L_R / (2 delta) times (binom(p, s) - R), a block draw "
              "rejection-sampled uniform among supports not in the list; the candidate list is checked to be the "
              "top R, else no release). The paper's theorem text was not readable here (arXiv:2510.22062, only "
              "its opening pages were available), so the law and the proof below are derived here.", "",
              "1. **Law.** Every w of W is released with probability proportional to exp(-eps u(w) / (2 Delta)), "
              "u(w) = min(L(w), L_(R)), L_(R) the R-th smallest loss: a candidate has L(w) <= L_(R); every other "
              "point has L(w) >= L_(R) and gets the block mass / (|W| - R) = exp(-eps L_(R) / (2 Delta)) / Z "
              "(whatever the order among ties).",
              "2. **Privacy.** If |L_D(w) - L_D'(w)| <= Delta at every w, the R-th smallest values differ by at "
              "most Delta (L_D' <= L_D,(R) + Delta at the R points where L_D <= L_D,(R)), and min is 1-Lipschitz "
              "in each argument, so u has sensitivity Delta and the release is the exponential mechanism of u: "
              "pure eps-DP (delta = 0). This needs the exact top R: with another candidate set T (a MIP stopped "
              "at a gap, a heuristic list) the weight off T is exp(-eps max_T L / (2 Delta)) with T chosen by the "
              "data, and no bound holds (the last row of each eps in the privacy table).",
              "3. **Accuracy.** Never better than the exponential mechanism of L, on any data: both weight the "
              "candidates alike; top-R gives the block more mass (q' >= q, since exp(-eps L_(R) / (2 Delta)) >= "
              "exp(-eps L(w) / (2 Delta)) off the candidates) and spreads it uniformly (block mean U >= the "
              "exponential mechanism's block mean B >= the candidates' mean A), so E_topR L = (1 - q') A + q' U "
              ">= (1 - q) A + q U >= (1 - q) A + q B = E_EM L. R = 1 is the uniform law on W. The two agree only "
              "when (|W| - R) exp(-eps (L_(R) - L*) / (2 Delta)) is negligible, i.e. when the R-th best point is "
              "already about (2 Delta / eps) ln |W| worse than the best."]
    si = small_info
    lines += ["", f"## Privacy check on a listed W: choose-{si['k']}-of-{si['n_sites']}, {si['n_cust']} customers "
              f"(instance {si['seed']}, |W| = {si['n_points']}, max L - min L = {si['spread']:.2f})", "",
              "Top-R law point by point (candidates at their weight, every other point at the block's weight), "
              "its total variation distance to the exponential mechanism's law, the mass of the block (and the "
              "exponential mechanism's mass on the same points), and the worst |ln p_D(w) - ln p_D'(w)| over all "
              f"w and {si['n_neighbours']:,} neighbours D' (each customer's cost row replaced by each 0/1 row and "
              f"{args.small_random_rows} random rows of [0, 1]^sites). eps-DP needs it <= eps. The last row of "
              "each eps: candidates = the optimum and its one-swap neighbours (the candidate set of the "
              "authors' code before its check that they are the top R), block weighted by their largest loss.",
              "", "| eps | candidates | R | TV to exp. mech. | P(block) | exp. mech. on block | worst ln ratio, "
              "top-R | worst ln ratio, exp. mech. |", "|---|---|---|---|---|---|---|---|"]
    def fmt(x: float) -> str:
        return "-" if x != x else f"{x:.4f}"

    for r in small_rows:
        lines.append(f"| {r['epsilon']:g} | {r['construction']} | {r['R']} | {r['tv_to_em']:.4f} | "
                     f"{fmt(r['p_block'])} | {fmt(r['em_block'])} | {r['worst_log_ratio']:.4f} | "
                     f"{fmt(r['worst_log_ratio_em'])} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", type=int, default=20, help="candidate sites of facility location")
    ap.add_argument("--choose-sites", type=int, default=40, help="candidate sites of choose-k siting")
    ap.add_argument("--k", type=int, default=7, help="sites opened in choose-k siting")
    ap.add_argument("--customers", type=int, nargs="+", default=[100])
    ap.add_argument("--instances", type=int, nargs="+", default=[11])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--rs", type=int, nargs="+", default=[10, 50], help="numbers R of candidates")
    ap.add_argument("--releases", type=int, default=3)
    ap.add_argument("--block-samples", type=int, default=20000, help="uniform draws for the block's mean loss")
    ap.add_argument("--small", type=int, nargs=4, default=[10, 3, 30, 11], metavar=("SITES", "K", "CUSTOMERS", "SEED"),
                    help="the listed instance of the privacy check")
    ap.add_argument("--small-rs", type=int, nargs="+", default=[1, 5, 20, 60, 119])
    ap.add_argument("--small-random-rows", type=int, default=200)
    ap.add_argument("--models", nargs="+", choices=["facility", "choose"], default=["facility", "choose"])
    ap.add_argument("--append", action="store_true",
                    help="keep the rows already in the CSV (earlier runs, other instances) and add this run's")
    ap.add_argument("--summary-only", action="store_true",
                    help="no instance: the tables from the CSV (and the privacy check, seconds) only")
    ap.add_argument("--note", default="", help="a line printed under the list of runs")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "top_r.md"))
    args = ap.parse_args(argv)
    env = _common.stamp(argv)
    small_rows, small_info = small_check(args)
    csv_path = os.path.splitext(args.out)[0] + ".csv"
    rows = []
    if args.append or args.summary_only:
        for row in _common.read_csv(csv_path):
            row["epsilon"] = float(row["epsilon"])
            rows.append(row)
    run_line = _common.stamp_line(env).rstrip(".") + f", privopt from {os.path.dirname(privopt.__file__)}"
    new_rows: list[dict] = []
    for n_cust in [] if args.summary_only else args.customers:
        if "facility" in args.models:
            for seed in args.instances:
                new_rows += run_instance("facility location", args.sites, None, n_cust, seed, args)
        if "choose" in args.models:
            for seed in args.instances:
                new_rows += run_instance(f"choose-{args.k} siting", args.choose_sites, args.k, n_cust, seed, args)
    rows += [{**r, "run": run_line} for r in new_rows]
    _common.write_csv(csv_path, rows, COLUMNS)
    _common.write_csv(os.path.splitext(args.out)[0] + "_privacy.csv", small_rows,
                      ["epsilon", "construction", "R", "tv_to_em", "p_block", "em_block", "worst_log_ratio",
                       "worst_log_ratio_em"])
    lines = summary(rows, small_rows, small_info, env, args)
    _common.write_markdown(args.out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

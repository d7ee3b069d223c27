"""The MILP path of the OPDisc oracle on wide one-hot data (issue 29, item 5).

Which change to the 0/1-loss MILP makes HiGHS (and CBC / SCIP) certify the
perturbed oracle problem faster on the suite's wide one-hot instances?  Each
variant is built in this script on a CLONE of the model
``privopt.models.zero_one_halfspace`` builds (privopt's own code is not
changed); ``privopt.opdisc`` then perturbs and solves it as usual, so every
variant solves the same perturbed problem (same noise for a seed) and must
reach the same optimum as the baseline.

Variants (``--variants``):

* ``base``: the model as privopt builds it (merged rows, big-M from the grid
  box and the ball, chain cuts).
* ``bigm``: the exact per-row big-M.  privopt bounds a score <x, w> over W by
  min(box, D ||x||_2); on the integer grid the exact bound is a small knapsack,
  max sum_j |x_j| |w_j| subject to sum_j w_j^2 <= floor(D^2) (w_j in the grid),
  solved by dynamic programming for each row (a row with k ones at D = 2: 4 for
  k >= 2 instead of floor(2 sqrt(k))).
* ``swap``: one-hot cuts.  Two distinct rows a, b with x_a - x_b = e_i - e_j
  (the same categories but one group, whose active category is i in a and j in
  b) have <x_a, w> - <x_b, w> = w_i - w_j; if a is predicted +1 and b is not,
  w_i > w_j, so w_i > 0 or w_j < 0:
  p_a - p_b <= sum_{g > 0} r[i, g] + sum_{g < 0} r[j, g], and symmetrically.
  These extend the chain cuts (rows that differ in ONE coordinate) to rows that
  differ in the active category of one group.  Pairs come from buckets of rows
  equal after dropping one active coordinate: all pairs of a bucket up to 6
  rows, a cycle through larger buckets (all valid; a subset).
* ``warm``: an incumbent for HiGHS.  A greedy local search on the perturbed
  objective (start at w = 0; repeatedly take the best change of one
  coordinate to another grid value inside the ball, scored exactly in numpy on
  the merged rows) gives a point; every variable of the perturbed model is
  set from it (r, e, s, q), checked feasible, and passed to HiGHS as a MIP
  start (Pyomo's appsi HiGHS interface, ``config.warmstart``: HiGHS
  ``setSolution``).  Its time is inside the solve's seconds.  HiGHS only (the
  same HiGHS library through the ``appsi_highs`` interface).
* ``all``: bigm + swap + warm.
* ``cuts``: bigm + swap (what a model builder can do alone, without a start).
* ``privopt``: the model as privopt builds it with the cuts
  (``zero_one_halfspace(..., swap_cuts=True)``; the default ``"auto"`` adds
  them where ``solver="auto"`` would use a MILP solver; its cycles through
  large buckets may pair rows in another order than ``swap``).  ``base`` is
  built with ``swap_cuts=False``.

Identical columns (symmetry) are counted per instance (``--describe``): the
noise of OPDisc differs per coordinate, so two identical columns are not a
symmetry of the perturbed problem; the count says whether there is anything
to exploit at all.

Writes ``benchmarks/results/milp_onehot.csv`` (one row per solve; an
interrupted run resumes) and ``milp_onehot.md`` (command, date, machine,
per-instance table and the comparison against the baseline).  One solve at a
time.

    PRIVOPT_DATA_HOME=<data> python benchmarks/bench_milp_onehot.py
    python benchmarks/bench_milp_onehot.py --describe           # structure of the instances only
    python benchmarks/bench_milp_onehot.py --summary-only
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pyomo.environ as pyo  # noqa: E402
from pyomo.repn import generate_standard_repn  # noqa: E402

import privopt  # noqa: E402
import functools  # noqa: E402

from bench_oracle_suite import BALLS, instance  # noqa: E402
from privopt.models import get_info, zero_one_halfspace  # noqa: E402
from privopt.models._common import ENUMERATION_ATTR, linexpr  # noqa: E402

import _common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

INSTANCES = ("contraception-onehot-69", "mlcchurn-onehot-66", "adult-onehot-44", "benefits-onehot-73",
             "resume-onehot-87", "adult-onehot-58")
VARIANTS = ("base", "bigm", "swap", "warm", "all", "cuts", "privopt")
BALL = "D2=4"
COLUMNS = ["instance", "variant", "solver", "epsilon", "seed", "n", "d", "distinct_rows", "binaries",
           "extra_cuts", "max_big_m", "prep_seconds", "seconds", "certified", "objective", "bound", "gap",
           "status", "warm_objective", "time_limit", "date", "solver_seconds"]


# ----------------------------------------------------------------------------
# reading the model back: one entry per fit row (row values, side, e variable)
# ----------------------------------------------------------------------------

def _fit_terms(model):
    """For every ``fit[k]``: (w indices, w coefficients, e var, side, big-M) with side +1 for a
    row whose majority is +1 (``<x, w> + M e >= t``) and -1 otherwise (``<x, w> - M e <= t - mu``)."""
    wid = {id(model.w[j]): j for j in model.w}
    terms = []
    for k in model.fit:
        c = model.fit[k]
        repn = generate_standard_repn(c.body, compute_values=True)
        idx, coef, e, m = [], [], None, None
        for v, a in zip(repn.linear_vars, repn.linear_coefs):
            if id(v) in wid:
                idx.append(wid[id(v)])
                coef.append(float(a))
            else:
                e, m = v, float(a)
        side = 1 if c.has_lb() else -1
        terms.append((np.array(idx), np.array(coef), e, side, abs(m)))
    return terms


def _knapsack_max(values, grid, cap):
    """max sum_j values_j * |w_j| over w_j in grid with sum_j (w_j)^2 <= cap (integer grid)."""
    mags = sorted({abs(int(g)) for g in grid})
    best = np.zeros(cap + 1)
    for v in values:
        new = best.copy()
        for g in mags:
            c = g * g
            if g == 0 or c > cap:
                continue
            new[c:] = np.maximum(new[c:], best[:cap + 1 - c] + v * g)
        best = new
    return float(best.max())


def tighten_big_m(model):
    """Replace each fit row's big-M by the exact bound over the integer grid in the ball."""
    info = get_info(model)
    grid = info.grid[0]
    assert all(tuple(g) == tuple(grid) for g in info.grid) and list(grid) == [-g for g in reversed(grid)]
    assert info.extra["grid_unit"] == 1.0 and info.extra["exact_margin"]
    cap = int(info.extra["norm_sq_units"])
    t_hi = getattr(model, ENUMERATION_ATTR)["t_hi"]
    mu = info.extra["margin"]
    cache = {}
    biggest = 0.0
    for k, (idx, coef, e, side, m_old) in zip(model.fit, _fit_terms(model)):
        key = tuple(sorted(np.abs(coef).tolist()))
        if key not in cache:
            cache[key] = _knapsack_max(key, grid, cap)
        s_max = cache[key]
        m_new = (t_hi + s_max) if side > 0 else (s_max - t_hi + mu)
        assert m_new <= m_old + 1e-9, (m_new, m_old)
        biggest = max(biggest, m_new)
        ws = [model.w[int(j)] for j in idx]
        if side > 0:
            model.fit[k].set_value((t_hi, linexpr(coef.tolist() + [m_new], ws + [e]), None))
        else:
            model.fit[k].set_value((None, linexpr(coef.tolist() + [-m_new], ws + [e]), t_hi - mu))
    return biggest


def add_swap_cuts(model, full_bucket=6):
    """The one-hot swap cuts (module docstring); returns their number."""
    info = get_info(model)
    grid = info.grid
    terms = _fit_terms(model)
    # predicted-positive indicator p = alpha + beta e of each kept row, keyed by its active set
    rows = {}
    for idx, coef, e, side, _ in terms:
        if not np.all(coef == 1.0):
            continue          # the cut below is for 0/1 rows
        rows[frozenset(idx.tolist())] = (1, -1, e) if side > 0 else (0, 1, e)
    buckets = {}
    for act in rows:
        for i in act:
            buckets.setdefault(act - {i}, []).append((i, act))
    r = model.r
    pos_r = [[r[j, k] for k, g in enumerate(grid[j]) if g > 0] for j in range(len(grid))]
    neg_r = [[r[j, k] for k, g in enumerate(grid[j]) if g < 0] for j in range(len(grid))]
    cuts = []

    def cut(i, a, j, b):
        # p_a - p_b <= sum_{g>0} r[i] + sum_{g<0} r[j]     (x_a = rest + e_i, x_b = rest + e_j)
        al_a, be_a, e_a = rows[a]
        al_b, be_b, e_b = rows[b]
        vs = [e_a, e_b] + pos_r[i] + neg_r[j]
        cs = [be_a, -be_b] + [-1] * (len(pos_r[i]) + len(neg_r[j]))
        cuts.append((None, linexpr(cs, vs), al_b - al_a))

    for members in buckets.values():
        s = len(members)
        if s < 2:
            continue
        pairs = ([(x, y) for n, x in enumerate(members) for y in members[n + 1:]] if s <= full_bucket
                 else [(members[n], members[(n + 1) % s]) for n in range(s)])
        for (i, a), (j, b) in pairs:
            cut(i, a, j, b)
            cut(j, b, i, a)
    con = pyo.Constraint(range(len(cuts)), rule=lambda m, k: cuts[k])
    model.add_component("swap", con)
    return len(cuts)


@functools.lru_cache(maxsize=None)
def model_of(name, ball, new=False):
    """The suite's model (``bench_oracle_suite.model_of``) as privopt built it before this
    benchmark (``new=False``: no swap cuts, big-M from the box and the ball), or with both
    (``new=True``)."""
    X, y, _, _ = instance(name)
    return zero_one_halfspace(X, y, swap_cuts=new, _exact_big_m=new, **BALLS[ball])


def variant_model(name, variant):
    """A clone of the suite's model with the variant's changes, and (extra cuts, max big-M)."""
    if variant == "privopt":     # privopt's own build, with the swap cuts it now adds by default
        model = model_of(name, BALL, True)
        return model, len(model.swap), float(max(abs(t[4]) for t in _fit_terms(model)))
    base = model_of(name, BALL)
    model = base.clone()
    for attr in (ENUMERATION_ATTR,):
        setattr(model, attr, getattr(base, attr))
    cuts = 0
    max_m = float(max(abs(t[4]) for t in _fit_terms(model)))
    if variant in ("bigm", "all", "cuts"):
        max_m = tighten_big_m(model)
    if variant in ("swap", "all", "cuts"):
        cuts = add_swap_cuts(model)
    return model, cuts, max_m


# ----------------------------------------------------------------------------
# warm start: greedy local search on the perturbed objective, then a MIP start for HiGHS
# ----------------------------------------------------------------------------

def _objective_fn(model):
    """Exact perturbed objective of candidate points (columns of W) from the merged rows."""
    from privopt.perturbation.objective_perturbation import get_noise, get_perturbation_block

    data = getattr(model, ENUMERATION_ATTR)
    X, pos, neg, t_hi = data["X"], data["pos"], data["neg"], data["t_hi"]
    blk = get_perturbation_block(model)
    eta, scale, D = get_noise(model), blk._scale, blk._norm_bound
    d = X.shape[1]

    def f(W):
        pred = (X @ W) >= t_hi - 1e-9
        loss = np.where(pred, neg[:, None], pos[:, None]).sum(axis=0)
        s = np.sqrt(np.maximum(0.0, D * D - (W * W).sum(axis=0)))
        return loss - scale * (eta[:d] @ W + eta[d] * s) / D
    return f, d


def pair_extensions(model, w0, cap, grid, top):
    """The ``top`` best points w0 + a e_i + b e_j (i < j outside the support of w0, any grid values
    a, b within the ball), exactly scored on 0/1 data: the merged rows are split by their score
    under w0 and, for each pair (i, j), by (x_i, x_j); the label counts of the four patterns come
    from products X_s^T diag(label) X_s per score value s."""
    from privopt.perturbation.objective_perturbation import get_noise, get_perturbation_block

    data = getattr(model, ENUMERATION_ATTR)
    X, pos, neg, t_hi = data["X"], data["pos"].astype(float), data["neg"].astype(float), data["t_hi"]
    blk = get_perturbation_block(model)
    eta, scale, D = get_noise(model), blk._scale, blk._norm_bound
    d = X.shape[1]
    base = X @ w0
    classes = []
    for s0 in np.unique(base):
        rows = base == s0
        Xs = X[rows]
        per_label = []
        for lab in (pos[rows], neg[rows]):
            c11 = Xs.T @ (Xs * lab[:, None])
            c1 = np.diag(c11).copy()
            c10 = c1[:, None] - c11
            c01 = c1[None, :] - c11
            per_label.append((c11, c10, c01, lab.sum() - c11 - c10 - c01))
        classes.append((s0, per_label))
    free = w0 == 0
    mask = np.triu(np.outer(free, free), 1)
    iu = np.nonzero(mask)
    sq0 = float(w0 @ w0)
    lin0 = float(eta[:d] @ w0)
    found = []
    for a in grid:
        for b in grid:
            if sq0 + a * a + b * b > cap + 1e-9:
                continue
            loss = np.zeros((d, d))
            for s0, (pc, nc) in classes:
                for k, score in enumerate((a + b, a, b, 0.0)):
                    loss += nc[k] if s0 + score >= t_hi - 1e-9 else pc[k]
            val = loss - scale * (lin0 + eta[:d, None] * a + eta[None, :d] * b
                                  + eta[d] * np.sqrt(max(0.0, D * D - sq0 - a * a - b * b))) / D
            v = val[iu]
            # with a or b zero the point repeats over the other index: look further, deduplicate below
            for i in np.argsort(v)[:top * (d if a * b == 0 else 1)]:
                w = w0.copy()
                w[iu[0][i]] += a
                w[iu[1][i]] += b
                found.append((float(v[i]), w))
    found.sort(key=lambda t: t[0])
    out, seen = [], set()
    for v, w in found:
        if w.tobytes() not in seen:
            seen.add(w.tobytes())
            out.append((v, w))
    return out[:top]


def greedy_point(model, cap, grid, top=50, rounds=20):
    """A quick incumbent: on 0/1 data the ``top`` best points with at most two nonzero weights,
    each extended by the best two further coordinates; then the best single-coordinate change
    while one improves.  Returns (w, perturbed objective)."""
    f, d = _objective_fn(model)
    X = getattr(model, ENUMERATION_ATTR)["X"]
    w = np.zeros(d)
    if np.isin(X, (0.0, 1.0)).all():
        found = []
        for _, w1 in pair_extensions(model, np.zeros(d), cap, grid, top):
            found.append((float(f(w1[:, None])[0]), w1))
            if w1 @ w1 < cap:
                found += pair_extensions(model, w1, cap, grid, 1)
        w = min(found, key=lambda t: t[0])[1]
    best = float(f(w[:, None])[0])
    for _ in range(rounds):
        cands = []
        for j in range(d):
            for g in grid:
                if g == w[j]:
                    continue
                v = w.copy()
                v[j] = g
                if (v * v).sum() <= cap + 1e-9:
                    cands.append(v)
        W = np.array(cands).T
        vals = f(W)
        i = int(np.argmin(vals))
        if vals[i] >= best - 1e-12:
            break
        best, w = float(vals[i]), W[:, i].copy()
    return w, best


def set_start(model, w):
    """Set every variable of the perturbed model from the weights w; check feasibility."""
    from privopt.perturbation.objective_perturbation import get_perturbation_block

    info = get_info(model)
    grid = info.grid
    blk = get_perturbation_block(model)
    for j in model.w:
        model.w[j].set_value(float(w[j]))
        for k, g in enumerate(grid[j]):
            model.r[j, k].set_value(1.0 if g == w[j] else 0.0)
    for k in model.e:
        model.e[k].set_value(0.0)
    for k in model.fit:
        c = model.fit[k]
        body = pyo.value(c.body)
        if (c.has_lb() and body < pyo.value(c.lower) - 1e-9) or (c.has_ub() and body > pyo.value(c.upper) + 1e-9):
            for v in generate_standard_repn(c.body).linear_vars:
                if v.parent_component() is model.e:
                    v.set_value(1.0)
    sq = float((np.asarray(w) ** 2).sum())
    D = blk._norm_bound
    blk.s.set_value(float(np.sqrt(max(0.0, D * D - sq))))
    if hasattr(blk, "q"):
        for m in blk.M:
            blk.q[m].set_value(0.0)
        levels = _levels_of(blk)
        blk.q[levels.index(int(round(sq)))].set_value(1.0)
    bad = 0
    for c in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        if (c.has_lb() and body < pyo.value(c.lower) - 1e-6) or (c.has_ub() and body > pyo.value(c.upper) + 1e-6):
            bad += 1
    if bad:
        raise RuntimeError(f"warm start violates {bad} constraints")
    return float(pyo.value(blk.objective))


def _levels_of(blk):
    """The levels of ||w||^2 (in grid units) that ``q`` indexes, as the transformation lists them."""
    from privopt.space import norm_levels

    return [int(v) for v in norm_levels(blk._grids, blk._norm_bound).levels]


_WARM = {}


def _run_appsi_warm(spec, model, *, time_limit, mip_gap, abs_gap, threads, options):
    """privopt's appsi runner plus a MIP start from the greedy point."""
    from privopt.solvers import _dispatch as dp

    info = get_info(model)
    w, val = greedy_point(model, int(info.extra["norm_sq_units"]), info.grid[0])
    _WARM["objective"] = set_start(model, w)
    assert abs(_WARM["objective"] - val) < 1e-6 * (1 + abs(val)), (_WARM["objective"], val)
    solver = dp._make_solver(spec)
    solver.config.load_solution = False
    solver.config.warmstart = True
    if time_limit is not None:
        solver.config.time_limit = float(time_limit)
    solver.config.mip_gap = mip_gap
    solver.highs_options = dict(options)
    res = solver.solve(model)
    tc = dp._APPSI_TC.get(res.termination_condition.name, dp.TerminationCondition.unknown)
    obj = dp._num(res.best_feasible_objective)
    has = obj is not None
    if has:
        res.solution_loader.load_vars()
    status = (dp.SolutionStatus.optimal if has and tc == dp.TerminationCondition.convergenceCriteriaSatisfied
              else dp.SolutionStatus.feasible if has else dp.SolutionStatus.noSolution)
    return tc, status, obj, dp._num(res.best_objective_bound), ""


# ----------------------------------------------------------------------------
# one solve
# ----------------------------------------------------------------------------

def one_solve(name, variant, solver, eps, seed, time_limit):
    from privopt.solvers import _dispatch as dp

    X, y, _, _ = instance(name)
    start = time.perf_counter()
    model, cuts, max_m = variant_model(name, variant)
    prep = time.perf_counter() - start
    warm = variant in ("warm", "all")
    label = solver
    if warm:
        if solver != "highs":
            return None
        label = "appsi_highs"
        saved = dp._RUNNERS["appsi"]
        dp._RUNNERS["appsi"] = _run_appsi_warm
    _WARM.clear()
    try:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = privopt.opdisc(model, epsilon=eps, delta=1.0 / len(y) ** 2, solver=label,
                                 time_limit=time_limit, random_state=seed, on_failure="return")
        secs = time.perf_counter() - start
    finally:
        if warm:
            dp._RUNNERS["appsi"] = saved
    rep = res.report
    gap = (None if rep.objective is None or rep.bound is None or not np.isfinite(rep.bound)
           else round(abs(rep.objective - rep.bound), 6))
    return {"instance": name, "variant": variant, "solver": solver, "epsilon": eps, "seed": seed, "n": len(y),
            "d": X.shape[1], "distinct_rows": getattr(model, ENUMERATION_ATTR)["X"].shape[0],
            "binaries": len(model.e), "extra_cuts": cuts, "max_big_m": max_m, "prep_seconds": round(prep, 3),
            "seconds": round(secs, 3), "solver_seconds": round(rep.wall_time, 3),
            "certified": bool(res.certified), "objective": rep.objective,
            "bound": rep.bound, "gap": gap, "status": rep.termination.name,
            "warm_objective": _WARM.get("objective"), "time_limit": time_limit,
            "date": datetime.datetime.now().isoformat(timespec="seconds")}


# ----------------------------------------------------------------------------
# structure of the instances
# ----------------------------------------------------------------------------

def describe(name):
    X, y, _, _ = instance(name)
    model = model_of(name, BALL)
    data = getattr(model, ENUMERATION_ATTR)
    Xu = data["X"]
    binary = bool(np.isin(X, (0.0, 1.0)).all())
    cols = {}
    for j in range(X.shape[1]):
        cols.setdefault(X[:, j].tobytes(), []).append(j)
    ident = sum(len(v) - 1 for v in cols.values() if len(v) > 1)
    zero = int((X.sum(axis=0) == 0).sum())
    ones = X.sum(axis=1)
    terms = _fit_terms(model)
    bigm = model.clone()
    setattr(bigm, ENUMERATION_ATTR, data)
    m_new = tighten_big_m(bigm)
    m_old = np.array([t[4] for t in terms])
    m_tight = np.array([t[4] for t in _fit_terms(bigm)])
    swap = model.clone()
    setattr(swap, ENUMERATION_ATTR, data)
    n_swap = add_swap_cuts(swap)
    return {"instance": name, "n": len(y), "d": X.shape[1], "binary": binary,
            "distinct_rows": Xu.shape[0], "binaries": len(model.e),
            "chain_cuts": len(model.chain) if hasattr(model, "chain") else 0,
            "ones_per_row": f"{ones.min():g}-{ones.max():g}", "identical_columns": ident, "zero_columns": zero,
            "mean_big_m": float(m_old.mean()), "mean_big_m_exact": float(m_tight.mean()),
            "rows_tightened": int((m_tight < m_old - 1e-9).sum()), "max_big_m_exact": m_new,
            "swap_cuts": n_swap}


# ----------------------------------------------------------------------------
# summary
# ----------------------------------------------------------------------------

def _f(x):
    return None if x in (None, "", "None") else float(x)


def write_summary(rows, args, described):
    for r in rows:
        r["certified"] = str(r["certified"]) in ("True", "true", "1")
        for k in ("seconds", "prep_seconds", "time_limit", "epsilon"):
            r[k] = float(r[k])
        r["seed"] = int(r["seed"])
    base = {(r["instance"], r["solver"], r["epsilon"], r["seed"]): r for r in rows if r["variant"] == "base"}
    cmd = "python benchmarks/bench_milp_onehot.py " + " ".join(args.argv_shown)
    lines = [
        "# The MILP path on wide one-hot data",
        "",
        f"`{cmd.strip()}`",
        "",
        f"Run {min(str(r['date']) for r in rows)[:16]} to {max(str(r['date']) for r in rows)[:16]} (UTC) on "
        f"{platform.node() or 'a'} ({platform.machine()}, {os.cpu_count()} cores shared with other work, one "
        f"solve at a time), Python {platform.python_version()}, privopt {privopt.__version__}.  "
        "Each solve is `privopt.opdisc` (delta = 1/n^2, ball D = 2 on the grid -2..2) on a clone of the "
        "suite's model with the variant's change (see the script's docstring); a seed fixes the noise, so "
        "all variants of a seed solve the same perturbed problem.  Seconds: the solve (with the warm "
        "start's local search where it applies), a solve not certified counts at the time limit; prep: "
        "building the variant (not counted in seconds).",
        "",
    ]
    if described:
        lines += ["## Structure", "",
                  "| instance | n | d | distinct rows | binaries e | chain cuts | ones per row | identical columns "
                  "| mean big-M (privopt) | mean exact big-M | rows tightened | swap cuts |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for s in described:
            lines.append(f"| {s['instance']} | {s['n']} | {s['d']} | {s['distinct_rows']} | {s['binaries']} | "
                         f"{s['chain_cuts']} | {s['ones_per_row']} | {s['identical_columns']} | "
                         f"{s['mean_big_m']:.2f} | {s['mean_big_m_exact']:.2f} | {s['rows_tightened']} | "
                         f"{s['swap_cuts']} |")
        lines.append("")
    lines += ["## Solves", "",
              "| instance | solver | variant | certified | seconds (per seed) | prep s | final gap (uncertified) "
              "| same optimum as base | time vs base (per seed) |",
              "|---|---|---|--:|---|--:|---|---|---|"]
    groups = {}
    for r in rows:
        groups.setdefault((r["instance"], r["solver"], r["variant"]), []).append(r)
    order_i = {n: i for i, n in enumerate(INSTANCES)}
    order_v = {v: i for i, v in enumerate(VARIANTS)}
    ratios = {}
    for key in sorted(groups, key=lambda k: (order_i.get(k[0], 99), k[1], order_v.get(k[2], 99))):
        g = sorted(groups[key], key=lambda r: (r["epsilon"], r["seed"]))
        secs = [r["seconds"] if r["certified"] else r["time_limit"] for r in g]
        same, rat, b_cert = [], [], []
        for r in g:
            b = base.get((r["instance"], r["solver"], r["epsilon"], r["seed"]))
            if b is None:
                continue
            b_cert.append(b["certified"])
            tb = b["seconds"] if b["certified"] else b["time_limit"]
            tr = r["seconds"] if r["certified"] else r["time_limit"]
            rat.append(tr / tb)
            if r["certified"] and b["certified"]:
                ob = float(b["objective"])
                same.append(abs(float(r["objective"]) - ob) <= 1e-6 * (1 + abs(ob)))
            elif r["certified"] and _f(b["objective"]) is not None and _f(b["bound"]) is not None:
                # base stopped at the limit: the certified optimum must lie in its [bound, incumbent]
                o = float(r["objective"])
                same.append(float(b["bound"]) - 1e-6 <= o <= float(b["objective"]) + 1e-6)
            if not (r["certified"] or b["certified"]):
                rat[-1] = None      # both at the limit: no ratio
        if key[2] != "base":
            ratios.setdefault((key[1], key[2]), []).extend(x for x in rat if x is not None)
        gaps = [f"{_f(r['gap']):.1f}" for r in g if not r["certified"] and _f(r["gap"]) is not None]
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {sum(r['certified'] for r in g)}/{len(g)} | "
            f"{' / '.join(f'{s:.1f}' for s in secs)} | {np.median([r['prep_seconds'] for r in g]):.1f} | "
            f"{', '.join(gaps) or '-'} | "
            f"{('-' if key[2] == 'base' else ('yes' if same and all(same) else ('NO' if same else 'n/a')))}"
            f"{' (within base bound..incumbent)' if key[2] != 'base' and same and not any(b_cert) else ''} | "
            f"{'-' if key[2] == 'base' else ' / '.join('both at limit' if x is None else f'{x:.2f}x' for x in rat)} |")
    lines += ["", "## Against the baseline", "",
              "Time ratio variant / base per (instance, seed) where at least one of the two certified "
              "(an uncertified solve counts at the time limit, so a ratio involving one is a bound).  The "
              "bar for keeping a variant (issue 29, item 5): median ratio <= 1/1.5 = 0.67 and no ratio above 1.2.", "",
              "| solver | variant | pairs | median ratio | max ratio | meets the bar |", "|---|---|--:|--:|--:|---|"]
    for (solver, variant), rs in sorted(ratios.items(), key=lambda kv: (kv[0][0], order_v.get(kv[0][1], 99))):
        if not rs:
            continue
        med, mx = float(np.median(rs)), float(np.max(rs))
        kept = "yes" if med <= 1 / 1.5 and mx <= 1.2 else "no"  # the decision itself is in docs/oracle.md
        lines.append(f"| {solver} | {variant} | {len(rs)} | {med:.2f} | {mx:.2f} | {kept} |")
    if args.notes:
        lines += ["", args.notes]
    _common.write_markdown(os.path.join(args.out, f"{args.prefix}.md"), lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", default=",".join(INSTANCES))
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--solvers", default="highs")
    p.add_argument("--epsilons", default="1")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--time-limit", type=float, default=120.0)
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--prefix", default="milp_onehot")
    p.add_argument("--describe", action="store_true", help="only the structure table (no solves)")
    p.add_argument("--summary-only", action="store_true")
    p.add_argument("--notes", default="")
    args = p.parse_args(argv)
    shown, skip = [], False
    for a in argv:          # the command in the summary: without --summary-only and --notes TEXT
        if skip or a == "--summary-only":
            skip = False
            continue
        if a == "--notes":
            skip = True
            continue
        if not a.startswith("--notes="):
            shown.append(a)
    args.argv_shown = shown
    os.makedirs(args.out, exist_ok=True)
    names = args.instances.split(",")
    described = []
    dpath = os.path.join(args.out, f"{args.prefix}_structure.csv")
    if os.path.exists(dpath):
        with open(dpath) as fh:
            described = list(csv.DictReader(fh))
    if args.describe or not described:
        described = []
        for name in names:
            s = describe(name)
            described.append(s)
            print(s, flush=True)
        _common.write_csv(dpath, described, list(described[0]))
        if args.describe:
            return 0
    for s in described:
        for k in ("mean_big_m", "mean_big_m_exact"):
            s[k] = float(s[k])
    path = os.path.join(args.out, f"{args.prefix}.csv")
    done = {(r["instance"], r["variant"], r["solver"], float(r["epsilon"]), int(r["seed"])): r
            for r in _common.read_csv(path)}
    if not args.summary_only:
        from privopt.solvers import available_solvers

        installed = {s.name for s in available_solvers() if s.available}
        solvers = [s for s in args.solvers.split(",") if s in installed]
        for s in set(args.solvers.split(",")) - set(solvers):
            print(f"skip solver {s}: not installed", flush=True)
        new = not os.path.exists(path)
        if not new:     # an older file with fewer columns: rewrite it with the current header
            with open(path) as fh:
                header = next(csv.reader(fh))
            if header != COLUMNS:
                with open(path, "w", newline="") as fh:
                    wr = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
                    wr.writeheader()
                    wr.writerows(done.values())
        with open(path, "a", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            if new:
                wr.writeheader()
            for name in names:
                for seed in range(args.seeds):
                    for eps in (float(e) for e in args.epsilons.split(",")):
                        for solver in solvers:
                            for variant in args.variants.split(","):
                                key = (name, variant, solver, eps, seed)
                                if key in done:
                                    continue
                                row = one_solve(name, variant, solver, eps, seed, args.time_limit)
                                if row is None:
                                    continue
                                wr.writerow(row)
                                fh.flush()
                                done[key] = row
                                print(f"{name:24s} {solver:6s} {variant:5s} eps={eps:g} seed={seed} "
                                      f"{'certified' if row['certified'] else 'NOT certified':13s} "
                                      f"{row['seconds']:7.1f} s prep {row['prep_seconds']:.1f} s gap={row['gap']} "
                                      f"obj={row['objective']} warm={row['warm_objective']}", flush=True)
    write_summary(list(done.values()), args, described)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``solver="enumerate"``: the exact argmin over W_tau by vectorized enumeration.

For the 0/1-loss halfspace models of :func:`privopt.models.zero_one_halfspace`
the oracle problem of OPDisc ([NRVW20], Algorithm 1),

    minimize  L(D, w) - scale * <eta, pi(w)>   over  w in W_tau,

W_tau = {w : w_j in grid_j, ||w||_2 <= D}, can be solved without a MILP when
W_tau is small: every point of W_tau is listed (integer arithmetic on the
squared norm, the same levels the Pyomo transformation encodes), the scores
<w, x_k> of every distinct row are computed in blocks by one matrix product,
and the loss is counted exactly with the model's own decision rule
(:mod:`privopt.models.halfspace`).  The answer is the exact minimizer (ties
have probability zero under continuous noise; the first of equal values is
returned), so the report is ``certified_optimal`` with objective = bound.

How large W_tau is depends only on the public grid and D
(:func:`enumeration_size`): with the integer grid {-3..3}^10 and D^2 = 10 it
has 327,829 points; {-5..5}^23 with D^2 = 23 has 2.2e13 (no enumeration: use
a MILP solver), but with D^2 = 4 only 156,953.

It solves only the model privopt built: the builder records the model's
components, and a model with added components, deactivated constraints,
fixed weights or changed weight bounds is refused (a MILP solver solves it
instead).  A constraint whose expression was edited in place is not
detected: edit a model, then solve it with a MILP solver.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyomo.environ as pyo

from ..exceptions import ModelError, ParameterError
from ..models._common import ENUMERATION_ATTR

__all__ = [
    "ENUMERATION_ATTR",
    "AUTO_MAX_WORK",
    "choose_solver",
    "DEFAULT_MAX_POINTS",
    "enumeration_size",
    "count_grid_points",
    "run_enumeration",
]

#: Refuse to enumerate more grid points than this (``options={"max_points": ...}``).
DEFAULT_MAX_POINTS = 20_000_000

#: Score entries evaluated per block (rows x points): bounds the memory to a
#: few hundred MB.
_BLOCK_ENTRIES = 8_000_000


#: ``solver="auto"`` enumerates when grid points x distinct rows is at most
#: this (about 10-20 s on one core at the 1-2e8 score entries per second
#: measured in benchmarks/bench_oracle_suite.py), else it uses the MILP.
AUTO_MAX_WORK = 2_000_000_000


def choose_solver(model, fallback: str = "highs") -> str:
    """The solver ``solver="auto"`` means for ``model``: ``"enumerate"`` for a
    model of :func:`privopt.models.zero_one_halfspace` whose W_tau is small
    enough (grid points x distinct rows <= :data:`AUTO_MAX_WORK`), otherwise
    ``fallback``.  Both give the exact argmin, so the choice changes the time
    a solve takes, never its answer."""
    if getattr(model, ENUMERATION_ATTR, None) is None:
        return fallback
    points, rows = enumeration_size(model)
    return "enumerate" if points * max(rows, 1) <= AUTO_MAX_WORK and points <= DEFAULT_MAX_POINTS else fallback


def count_grid_points(coef, bound: int) -> int:
    """Number of index tuples (k_1..k_d) with sum_j coef[j][k_j] <= bound
    (integer squared-norm units), by dynamic programming over coordinates."""
    counts = np.zeros(bound + 1, dtype=object)
    counts[0] = 1
    for c in coef:
        new = np.zeros(bound + 1, dtype=object)
        for x in c:
            if x <= bound:
                new[x:] += counts[: bound + 1 - x]
        counts = new
    return int(counts.sum())


def _levels(data, norm_bound=None):
    """(coef, bound, unit, D) of the squared norm in integer units."""
    from ..perturbation._grid import norm_levels

    lv = norm_levels(data["grid"], data["norm_bound"] if norm_bound is None else norm_bound)
    if not lv.exact:
        raise ModelError("solver='enumerate' needs grid values that are multiples of a common step.", "model")
    # the builder's ball and the transformation's (the same D unless the caller
    # gave another): the feasible set is their intersection, as in the MILP
    bound = min(int(lv.bound), int(math.floor(data["norm_sq_bound"] / lv.unit + 1e-9)))
    return lv.coef, bound, lv.unit, lv.norm_bound


def enumeration_size(model) -> tuple[int, int]:
    """(number of grid points in W_tau, number of distinct rows) of a model
    built by :func:`privopt.models.zero_one_halfspace`: the work of
    ``solver="enumerate"`` is about their product times d."""
    data = _data(model)
    coef, bound, _, _ = _levels(data)
    return count_grid_points(coef, bound), int(data["X"].shape[0])


def _data(model) -> dict:
    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        raise ModelError(
            "solver='enumerate' solves the 0/1-loss models of privopt.models.zero_one_halfspace "
            "only; use a MILP solver (e.g. 'highs') for this model.", "model")
    return data


def _check_unchanged(model, data, block):
    """Refuse a model that is not the one the builder made (plus the
    perturbation block): the enumeration would ignore the change."""
    known = set(data["components"])
    for comp in model.component_objects((pyo.Constraint, pyo.Objective, pyo.Var, pyo.Block),
                                        active=True, descend_into=False):
        if comp is block:
            continue
        if comp.local_name not in known:
            raise ModelError(
                f"model: it has a component the builder did not make ({comp.local_name!r}); "
                "solver='enumerate' would ignore it. Use a MILP solver for a modified model.", "model")
    for j, v in enumerate(model.w.values()):
        g = data["grid"][j]
        if v.fixed or v.lb is None or v.ub is None or v.lb > g[0] + 1e-9 or v.ub < g[-1] - 1e-9:
            raise ModelError(
                f"model: weight w[{j}] was fixed or its bounds changed; solver='enumerate' "
                "enumerates the builder's grid. Use a MILP solver for a modified model.", "model")
    deactivated = sorted({c.parent_component().local_name
                          for c in model.component_data_objects(pyo.Constraint, descend_into=False)
                          if not c.active})
    if deactivated:
        raise ModelError(
            f"model: constraints {deactivated[:3]} are deactivated; solver='enumerate' solves the "
            "model as built. Use a MILP solver for a modified model.", "model")


def _grid_points(grid, coef, bound):
    """All grid points with sum of squared-norm units <= bound: (values, units)."""
    d = len(grid)
    # minimal units still needed by the coordinates after j
    rest = np.zeros(d + 1, dtype=np.int64)
    for j in range(d - 1, -1, -1):
        rest[j] = rest[j + 1] + min(coef[j])
    idx = np.zeros((1, 0), dtype=np.int16)
    used = np.zeros(1, dtype=np.int64)
    for j in range(d):
        parts_idx, parts_used = [], []
        for k, c in enumerate(coef[j]):
            keep = used + c + rest[j + 1] <= bound
            if keep.any():
                sel = idx[keep]
                parts_idx.append(np.hstack([sel, np.full((sel.shape[0], 1), k, dtype=np.int16)]))
                parts_used.append(used[keep] + c)
        idx = np.vstack(parts_idx)
        used = np.concatenate(parts_used)
    values = np.empty(idx.shape, dtype=np.float64)
    for j in range(d):
        values[:, j] = np.asarray(grid[j], dtype=np.float64)[idx[:, j]]
    return values, used


def _loss(S, data):
    """Exact 0/1 loss of every column of the score matrix S (rows x points)."""
    pos, neg = data["pos"], data["neg"]
    if data["exact"]:
        positive = S >= data["theta"]                 # +1 iff score >= theta (= t - mu/2)
        return float(pos.sum()) - (pos - neg).astype(np.float64) @ positive
    tol = 1e-9 * (1.0 + abs(data["t_hi"]))
    wrong_pos = S < data["t_hi"] - tol                # +1 correct iff score >= t
    wrong_neg = S > data["t_hi"] - data["mu"] + tol   # -1 correct iff score <= t - mu
    return pos.astype(np.float64) @ wrong_pos + neg.astype(np.float64) @ wrong_neg


def _op():
    from ..perturbation import objective_perturbation as op

    return op


def check_enumerable(model, options=None):
    """Everything ``solver="enumerate"`` checks before it starts (raises a
    :class:`~privopt.exceptions.ModelError` or ``ParameterError`` naming the
    problem).  Returns (data, noise, scale, normalize, levels, n_points)."""
    op = _op()
    data = _data(model)
    opts = dict(options or {})
    max_points = opts.pop("max_points", DEFAULT_MAX_POINTS)
    if opts:
        raise ParameterError(f"options: solver='enumerate' takes only 'max_points', got {sorted(opts)}.",
                             "options")
    block = op._find_block(model)
    d = len(data["grid"])
    if block is None:
        noise, scale, normalize, norm_bound = np.zeros(d), 0.0, False, None
        objective = model.find_component(data["objective"])
        if objective is None or not objective.active:
            raise ModelError("model: its loss objective is not active; solver='enumerate' minimizes it.",
                             "model")
    else:
        if list(block._weight_names) != [v.name for v in model.w.values()]:
            raise ModelError("model: the perturbation is not on the weights w; solver='enumerate' "
                             "needs weights=model.w.", "model")
        noise = op.get_noise(model)
        scale, normalize = float(block._scale), bool(block._normalize)
        norm_bound = block._norm_bound if normalize else None
    _check_unchanged(model, data, block)
    levels = _levels(data, norm_bound)
    n_points = count_grid_points(levels[0], levels[1])
    if n_points > max_points:
        raise ParameterError(
            f"solver='enumerate': W_tau has {n_points:,} grid points, more than max_points="
            f"{max_points:,}. Use a MILP solver (e.g. 'highs'), a smaller norm_bound or a coarser "
            "grid, or raise options={'max_points': ...}.", "solver")
    return data, noise, scale, normalize, levels, n_points


def run_enumeration(spec, model, *, time_limit, mip_gap, abs_gap, threads, options, plan=None):
    """The runner behind ``solve(model, "enumerate")``: returns (termination,
    solution status, objective, bound, message) like the other runners and
    loads w (with its grid encoding r and, when normalized, s) into the model.
    ``plan``: the result of :func:`check_enumerable` for this model, if made."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    start = time.perf_counter()
    if plan is None:   # solve() passes the checks it already made
        plan = check_enumerable(model, options)
    data, noise, scale, normalize, (coef, bound, unit, D), n_points = plan
    block = _op()._find_block(model)
    d = len(data["grid"])
    W, used = _grid_points(data["grid"], coef, bound)
    assert W.shape[0] == n_points
    if normalize:
        s = np.sqrt(np.maximum(0.0, D * D - used * unit))
        perturbation = (W @ noise[:d] + noise[d] * s) / D
    else:
        s = None
        perturbation = W @ noise[:d]
    X = data["X"]
    rows = max(1, X.shape[0])
    block_size = max(1, _BLOCK_ENTRIES // rows)
    best_val, best_idx = math.inf, -1
    for lo in range(0, n_points, block_size):
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"time limit after {lo:,} of {n_points:,} grid points"
            if best_idx < 0:
                return TerminationCondition.maxTimeLimit, SolutionStatus.noSolution, None, None, message
            _load(model, data, W[best_idx], block, s[best_idx] if s is not None else None)
            return (TerminationCondition.maxTimeLimit, SolutionStatus.feasible, best_val, -math.inf,
                    message)
        hi = min(n_points, lo + block_size)
        J = _loss(X @ W[lo:hi].T, data) - scale * perturbation[lo:hi]
        k = int(np.argmin(J))
        if J[k] < best_val:
            best_val, best_idx = float(J[k]), lo + k
    _load(model, data, W[best_idx], block, s[best_idx] if s is not None else None)
    message = f"exact enumeration of {n_points:,} grid points x {X.shape[0]:,} distinct rows"
    return TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.optimal, best_val, best_val, message


def _load(model, data, w, block, s_value):
    r = model.find_component("r")
    for j, v in enumerate(model.w.values()):
        v.set_value(float(w[j]), skip_validation=True)
        if r is not None:
            for k, g in enumerate(data["grid"][j]):
                r[j, k].set_value(1 if abs(g - w[j]) <= 1e-12 else 0, skip_validation=True)
    if block is not None and s_value is not None:
        block.s.set_value(float(s_value), skip_validation=True)

"""The 0/1 loss of a linear classifier (halfspace) as a MILP.

Two builders share one construction:

* :func:`zero_one_halfspace` -- w on a tau-separated grid inside the ball
  ||w||_2 <= D, encoded by binaries ``r[j, k]``; the model OPDisc
  ([NRVW20], Algorithm 1 and Section 5) perturbs.
* :func:`rspm_halfspace` -- w in {-1, 0, 1}^d encoded as w_j = p_j - n_j,
  the model of RSPM ([NRW18]; [NRVW20] Section 3.1).

and :func:`predict_halfspace` applies the decision rule both models encode.

Decision rule and tie rule
--------------------------
Labels are mapped to {-1, +1} with ``classes[1] -> +1`` (the larger label,
as :func:`privopt._validation.check_binary_labels` does).  The classifier
predicts

    +1  iff  <w, x> >= info.extra["threshold"]  (= theta),   else -1.

theta sits half a lattice step below the requested threshold t (default 0):
theta = t - mu/2.  When the features are integer-valued and the grid values
are integer multiples of a rational step h_g (h_g = 1 for integral grids),
every score <w, x> is an integer multiple of mu = h_g (mu = 1 on an
integer grid), so on such data the rule is exactly

    +1  iff  <w, x> >= t;   a score equal to t (e.g. w = 0, t = 0) predicts +1,

and it is robust to floating-point rounding of the score by up to mu/2.  The
MILP encodes exactly this rule with the exact margin mu: a row predicted +1
has score >= t, a row predicted -1 has score <= t - mu.

Real-valued features break the lattice: then the builders raise a
:class:`~privopt.exceptions.ParameterError` pointing to
:func:`privopt.models.discretize_features` (map features clipped to PUBLIC
bounds onto an integer grid), unless the caller states a
``margin`` explicitly.  With an explicit margin mu the per-record loss is the
margin loss

    l(w; x, +1) = 1[<w, x> < t],     l(w; x, -1) = 1[<w, x> > t - mu],

a [0, 1]-valued loss of each record alone (so OPDisc applies unchanged): a
score in the band (t - mu, t) counts as an error for either label.  It is an
upper bound on the 0/1 loss of the rule above (theta = t - mu/2) and equals it
when no score falls in the band.  Because the band is wrong for both labels,
a merged row holding both labels gets two binaries in this mode (one per
label, weights P_k and N_k, tied by e_plus + e_minus >= 1, which is valid at
every w and gives the LP relaxation back the min(P_k, N_k) that the exact mode
has as a constant), and tie rows are kept.  mu must
exceed 2 * 1e-5 * (1 + max_k M_k) so that a binary within the solvers'
integrality tolerance (GLPK: 1e-5) cannot move a score across theta.  This is
the approach of the authors' code, which tied theta to the solver's IntFeasTol;
we recommend the exact integer lattice instead.

The MILP (merged rows)
----------------------
Let x_1..x_m be the distinct rows of X, P_k / N_k the number of +1 / -1 labels
on row k.  Row k contributes min(P_k, N_k) whatever w is, plus |P_k - N_k| when
it is predicted as its minority label, so

    L(D, w) = sum_i 1[pred(w, x_i) != y_i]
            = sum_k min(P_k, N_k) + sum_{k: P_k != N_k} |P_k - N_k| e_k,

with one binary e_k (minority prediction) and ONE big-M constraint per row:

    majority +1:   <x_k, w> + M_k e_k >= t
    majority -1:   <x_k, w> - M_k e_k <= t - mu.

Rows with P_k = N_k are constant and dropped; rows whose prediction cannot
depend on w inside W (e.g. x_k = 0) are folded into the constant.  (Explicit
margin: each row has one such binary and row per label present, with weight
P_k for the +1 side and N_k for the -1 side, no constant, and ``band[k]``:
e_plus + e_minus >= 1 on rows with both labels.)  M_k is the
tight bound on the violation over W: with s_max = min(box max of <x_k, w>,
sqrt(D^2) ||x_k||_2) and s_min the symmetric lower bound (box:
per-coordinate extreme grid values; ball: ||w||_2 <= D), M_k = t - s_min for
a majority +1 row and M_k = s_max - t + mu for a majority -1 row; both are at
most min(B ||x_k||_1, D ||x_k||_2) + mu with B = max |grid value|, and on the lattice s_max, s_min are
rounded to it exactly.  :func:`zero_one_halfspace` takes s_max, s_min exact: the
largest and smallest <x_k, w> over the grid points of the ball, by a knapsack over
||w||^2 in grid units (dp[c] = best score with ||w||^2 = c; at most
``EXACT_BOUND_WORK`` steps, else the box and ball bounds above).  On 0/1 rows with
k ones at D = 2 on the grid -2..2 this is min(k, 4) for k >= 2 against
floor(2 sqrt(k)), smaller from k = 7 on.

Chain (monotonicity) cuts.  With p_k = 1 - e_k (majority +1) or p_k = e_k
(majority -1) the predicted-positive indicator, two distinct rows with
x_b = x_a + delta e_j (delta > 0) satisfy <x_b, w> - <x_a, w> = delta w_j, hence

    p_a - p_b <= sum_{g_k < 0} r[j, k]   and   p_b - p_a <= sum_{g_k > 0} r[j, k].

The rows are grouped by all coordinates but j and sorted by x_j, and both cuts
are added for each consecutive pair (each row takes part through the binary of
its majority side).  They hold at every optimum (where e_k is
exactly the minority-prediction indicator because its cost |P_k - N_k| is
positive), so they do not change the optimum, also when the objective
perturbation adds terms in w, r (never in e) -- but they cut off non-optimal
feasible points.  With an explicit (non-lattice) margin the thresholds of the two
row kinds differ, and the cut that could then be invalid (a majority -1 row below
a majority +1 row in the direction of the cut) is omitted.

Swap (one-hot) cuts (:func:`zero_one_halfspace` only).  Two distinct rows with
x_a - x_b = e_i - e_j (i != j: on one-hot data, the same categories but in one
group, whose active category is i in a and j in b) have
<x_a, w> - <x_b, w> = w_i - w_j; if a is predicted +1 and b is not, then
w_i > w_j, so w_i > 0 or w_j < 0:

    p_a - p_b <= sum_{g_k > 0} r[i, k] + sum_{g_k < 0} r[j, k]

and the same with a and b exchanged.  Pairs come from bucketing the rows by
x - e_i (each i with x_i >= 1); a bucket of at most six rows gives all its
pairs, a larger one the pairs of a cycle through it.  Like the chain cuts they
hold at every optimum, and with an explicit margin the cut from a majority -1
row to a majority +1 row is omitted.  The chain cuts miss these pairs (the
rows differ in two coordinates); on wide one-hot data the swap cuts made
HiGHS certify the perturbed oracle problem several times faster
(docs/oracle.md).

Sources: [NRVW20] Neel, Roth, Vietri, Wu, ICML 2020, Section 5 (0/1 loss of
halfspaces, OPDisc over {-B..B}^d with B = floor(sqrt(d)), ||w|| <= sqrt(d));
[NRW18] Neel, Roth, Wu (RSPM over {-1, 0, 1}^d).
"""

from __future__ import annotations

import dataclasses
import math
import time
import types
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo

from .._limits import AUTO_MAX_BOUND_WORK, ZERO_ONE_MAX_FEATURES, check_width
from .._validation import check_binary_labels, check_bool, check_positive, check_real
from ..exceptions import ModelError, ParameterError, ParameterTypeError
from ..search import HalfspaceData, bound_search_work
from ..space import DecisionSpace, public_w
from ._common import (
    ENUMERATION_ATTR,
    STATS_ATTR as _STATS_ATTR,
    INT_TOL,
    SNAP_TOL,
    add_constraints,
    add_intercept,
    check_name,
    check_X,
    column_codes,
    linear_rows,
    linexpr,
    one_coordinate_pairs,
    is_integral,
    unique_rows,
)
from ._info import ModelInfo, attach_info, get_info

__all__ = [
    "zero_one_halfspace",
    "zero_one_loss",
    "ZeroOneLoss",
    "rspm_halfspace",
    "predict_halfspace",
    "halfspace_decision_function",
]

# ----------------------------------------------------------------------------
# shared 0/1 construction
# ----------------------------------------------------------------------------

def _check_zero_one_width(X) -> None:
    """The widest X a 0/1-loss model takes (from its public shape)."""
    check_width(X, what="a 0/1-loss halfspace model (zero_one_halfspace, zero_one_loss, rspm_halfspace)",
                max_features=ZERO_ONE_MAX_FEATURES, fix=(
                    "Give fewer features (select or aggregate columns of X); for a linear classifier on many "
                    "features, the convex baselines of privopt.baselines scale linearly in them."))


def _check_common(X, y, fit_intercept, threshold, margin, merge_rows, chain_cuts, name, classes=None):
    _check_zero_one_width(X)
    Xa = check_X(X)
    classes, y_pm = check_binary_labels(y, Xa.shape[0], classes=classes)
    fit_intercept = check_bool(fit_intercept, "fit_intercept")
    merge_rows = check_bool(merge_rows, "merge_rows")
    chain_cuts = check_bool(chain_cuts, "chain_cuts")
    threshold = check_real(threshold, "threshold")
    margin = check_positive(margin, "margin", allow_none=True)
    check_name(name)
    if fit_intercept:
        Xa = add_intercept(Xa)
    return Xa, classes, y_pm, fit_intercept, threshold, margin, merge_rows, chain_cuts


def _score_lattice(X: np.ndarray, unit: Fraction, margin, integral: bool | None = None):
    """(mu, exact): the margin and whether it is exact (scores on mu*Z); ``integral``:
    whether X is integral, where already known (else read from X)."""
    if margin is not None:
        return float(margin), False
    if not (is_integral(X) if integral is None else integral):
        raise ParameterError(
            "X has non-integer features, so the scores <w, x> are not on a lattice and the "
            "0/1 loss has no exact margin. Map the features onto an integer grid from PUBLIC "
            "bounds first, e.g. X_int = privopt.models.discretize_features(X, bounds=(lo, hi), "
            "levels=10), or state a margin explicitly (margin=1e-3; see the docstring).",
            "X",
        )
    return float(unit), True


def _merge(X, y_pm, merge_rows):
    n = X.shape[0]
    if merge_rows:
        Xu, inv = unique_rows(X)
        pos = np.bincount(inv, weights=(y_pm == 1), minlength=Xu.shape[0]).astype(np.int64)
        neg = np.bincount(inv, weights=(y_pm == -1), minlength=Xu.shape[0]).astype(np.int64)
    else:
        Xu = X
        pos = (y_pm == 1).astype(np.int64)
        neg = (y_pm == -1).astype(np.int64)
    assert int(pos.sum() + neg.sum()) == n
    return Xu, pos, neg


#: the exact score bounds (a knapsack per row) are computed up to this many elementary steps
EXACT_BOUND_WORK = 2e8


def _exact_score_bounds(Xu, grid_t, units, n_units):
    """(s_max, s_min): the exact max and min of <x_k, w> over W = {w_j in grid_j,
    sum_j units_j^2 <= n_units} for every row, by a knapsack over the squared norm
    (dp[c] = best score with ||w||^2 = c units); None where that would exceed
    ``EXACT_BOUND_WORK`` steps."""
    m, d = Xu.shape
    cap = int(n_units)
    work = 2 * m * (cap + 1) * sum(len(g) for g in grid_t)
    if m == 0 or work > EXACT_BOUND_WORK:
        return None
    Z = np.vstack([Xu, -Xu])
    dp = np.full((2 * m, cap + 1), -np.inf)
    dp[:, 0] = 0.0
    for j in range(d):
        col = Z[:, j]
        new = np.full_like(dp, -np.inf)
        for g, u in zip(grid_t[j], units[j]):
            c = int(u) * int(u)
            if c > cap:
                continue
            cand = dp[:, :cap + 1 - c] + col[:, None] * float(g)
            np.maximum(new[:, c:], cand, out=new[:, c:])
        dp = new
    best = dp.max(axis=1)
    return best[:m], -best[m:]


#: The per-record rows :func:`_build_zero_one_rows` adds (declared in the
#: models' info so that the public-constraint check need not read them).
_RECORD_CONSTRAINTS = ("fit", "band", "chain", "swap")


@dataclasses.dataclass(frozen=True, eq=False)
class _RowsSpec:
    """What :func:`_build_zero_one_rows` needs: the merged rows (``Xu`` with
    ``pos``/``neg`` label counts), W's box ``lo``..``hi`` and ``ball`` (None: no
    ball), the threshold ``t_hi``, the margin ``mu`` and whether it is exact, the
    binaries saying w_j < 0 and w_j > 0 (``neg_vars``, ``pos_vars``, per j), the
    cuts to add, the exact score bounds (or None) and the big-M factor."""

    Xu: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    ball: float | None
    t_hi: float
    mu: float
    exact: bool
    neg_vars: list
    pos_vars: list
    chain_cuts: bool
    swap_cuts: bool = False
    exact_bounds: tuple | None = None
    big_m_factor: float = 1.0


def _row_score_bounds(spec: _RowsSpec) -> tuple[np.ndarray, np.ndarray]:
    """(s_max, s_min) of each row's score over W: the box (per-coordinate grid
    extremes) intersected with the ball, and with the exact extremes over the
    grid points of the ball where given (never looser than the two)."""
    Xu, lo, hi = spec.Xu, spec.lo, spec.hi
    s_max = np.maximum(Xu * hi, Xu * lo).sum(axis=1)
    s_min = np.minimum(Xu * hi, Xu * lo).sum(axis=1)
    if spec.ball is not None:
        b = spec.ball * np.sqrt((Xu * Xu).sum(axis=1)) * (1 + 1e-12)
        s_max = np.minimum(s_max, b)
        s_min = np.maximum(s_min, -b)
    if spec.exact_bounds is not None:
        hi_b, lo_b = spec.exact_bounds
        s_max = np.minimum(s_max, hi_b + 1e-9 * (1 + np.abs(hi_b)))
        s_min = np.maximum(s_min, lo_b - 1e-9 * (1 + np.abs(lo_b)))
    return s_max, s_min


def _build_zero_one_rows(model, spec: _RowsSpec):
    """Add ``e``, the big-M rows ``fit``, the chain cuts and the objective to
    ``model`` (which already holds ``w``).  Returns the build statistics.

    The loss is a sum of *terms* (row k, side sigma, weight c): c records of
    row k are wrong unless the score is on side sigma (sigma = +1: score >= t;
    sigma = -1: score <= t - mu).  Exact margin: one term per row, the
    majority side with c = |P_k - N_k|, plus the constant min(P_k, N_k); tie
    rows have no term.  Explicit margin: scores in the band (t - mu, t) are
    wrong for both labels, so a row with both labels gets both terms (c = P_k
    and c = N_k) and nothing is constant.  A term whose side holds for every w
    in W is dropped; one whose side holds for none becomes constant.
    """
    Xu, pos, neg, t_hi, mu, exact = spec.Xu, spec.pos, spec.neg, spec.t_hi, spec.mu, spec.exact
    neg_vars, pos_vars, chain_cuts, swap_cuts = spec.neg_vars, spec.pos_vars, spec.chain_cuts, spec.swap_cuts
    w = [model.w[j] for j in range(Xu.shape[1])]
    m_rows = Xu.shape[0]
    rows_idx = np.arange(m_rows)
    if exact:
        sign = np.sign(pos - neg).astype(int)
        ties = sign == 0
        t_row, t_side, t_weight = rows_idx[~ties], sign[~ties], np.abs(pos - neg)[~ties]
        constant = int(np.minimum(pos, neg).sum())
        n_ties = int(ties.sum())
    else:
        has_p, has_n = pos > 0, neg > 0
        t_row = np.concatenate([rows_idx[has_p], rows_idx[has_n]])
        t_side = np.concatenate([np.ones(int(has_p.sum()), int), -np.ones(int(has_n.sum()), int)])
        t_weight = np.concatenate([pos[has_p], neg[has_n]])
        constant = 0
        n_ties = 0

    s_max, s_min = _row_score_bounds(spec)
    if exact:
        s_max = np.floor(s_max / mu + SNAP_TOL) * mu
        s_min = np.ceil(s_min / mu - SNAP_TOL) * mu
        slack = np.zeros(m_rows)
    else:
        slack = 1e-9 * (1.0 + np.abs(s_max) + np.abs(s_min))
    s_max, s_min, slack = s_max[t_row], s_min[t_row], slack[t_row]
    # big-M of each term; <= 0 means its side holds whatever w is
    m_plus = t_hi - s_min + slack
    m_minus = s_max - (t_hi - mu) + slack
    plus = t_side > 0
    always = np.where(plus, m_plus <= 0, m_minus <= 0)
    never = np.where(plus, s_max + slack < t_hi, s_min - slack > t_hi - mu)
    constant += int(t_weight[never].sum())
    keep = ~always & ~never
    big_m = np.where(plus, m_plus, m_minus)[keep] * spec.big_m_factor
    k_row, k_side, k_weight = t_row[keep], t_side[keep], t_weight[keep]
    m = k_row.size
    if m and mu <= 2 * INT_TOL * (1.0 + float(big_m.max())):
        raise ParameterError(
            f"margin {mu:g} is too small for this model's big-M values (set by the records' scores "
            f"over W): a binary within the solvers' integrality tolerance ({INT_TOL:g}) could move a "
            "score across the threshold. Use a larger margin, a coarser grid, or integer features.",
            "margin",
        )
    model.e = pyo.Var(range(m), domain=pyo.Binary)
    e = [model.e[k] for k in range(m)]
    rows = linear_rows(Xu, w)
    fit: list[tuple] = []
    for k, (r, sd, M) in enumerate(zip(k_row.tolist(), k_side.tolist(), big_m.tolist())):
        coefs, vs = rows[r]
        if sd > 0:
            fit.append((t_hi, linexpr(coefs + [M], vs + [e[k]]), None))
        else:
            fit.append((None, linexpr(coefs + [-M], vs + [e[k]]), t_hi - mu))
    add_constraints(model, "fit", fit)
    n_band = 0
    if not exact:
        # A row with both labels: at least one side is violated at every w (t - mu < t), so
        # e_plus + e_minus >= 1.  Implied for integral e, but without it the LP relaxation
        # loses the min(P_k, N_k) that the exact mode has as a constant.
        plus_of = np.full(m_rows, -1)
        minus_of = np.full(m_rows, -1)
        plus_of[k_row[k_side > 0]] = np.nonzero(k_side > 0)[0]
        minus_of[k_row[k_side < 0]] = np.nonzero(k_side < 0)[0]
        both = np.nonzero((plus_of >= 0) & (minus_of >= 0))[0]
        n_band = int(both.size)
        add_constraints(model, "band", [
            (1, linexpr([1, 1], [e[int(plus_of[r])], e[int(minus_of[r])]]), None) for r in both.tolist()])

    n_cuts = n_swap = 0
    if (chain_cuts or swap_cuts) and m > 1:
        # one indicator per row for the cuts: its majority side (ties: +1)
        major = np.where(pos >= neg, 1, -1)[k_row] == k_side
        rep = np.nonzero(major)[0]
        if rep.size > 1 and chain_cuts:
            cuts = _chain_cuts(Xu[k_row[rep]], k_side[rep], [e[k] for k in rep.tolist()],
                               neg_vars, pos_vars, exact)
            n_cuts = len(cuts)
            add_constraints(model, "chain", cuts)
        if rep.size > 1 and swap_cuts:
            cuts = _swap_cuts(Xu[k_row[rep]], k_side[rep], [e[k] for k in rep.tolist()],
                              neg_vars, pos_vars, exact)
            n_swap = len(cuts)
            add_constraints(model, "swap", cuts)
    model.loss = pyo.Objective(expr=linexpr(k_weight.tolist(), e, constant), sense=pyo.minimize)
    n_binary_rows = int(np.unique(k_row).size)
    return {
        "n_rows": int(m_rows),
        "n_tie_rows_dropped": n_ties,
        "n_constant_rows": int(m_rows - n_ties - n_binary_rows),
        "n_binary_rows": n_binary_rows,
        "n_binaries": int(m),
        "n_chain_cuts": int(n_cuts),
        "n_swap_cuts": int(n_swap),
        "n_band_rows": n_band,
        "objective_constant": constant,
        "max_big_m": float(big_m.max()) if m else 0.0,
    }


def _chain_cuts(Xk, sk, e, neg_vars, pos_vars, exact):
    """The monotonicity (chain) cuts described above, on consecutive rows that
    differ in exactly one coordinate (rows are distinct).  ``sk`` is the side
    of each row's indicator binary ``e[k]``: p = 1 - e for +1, p = e for -1."""
    m, d = Xk.shape
    # p_k = alpha_k + beta_k e_k
    alpha = np.where(sk > 0, 1, 0)
    beta = np.where(sk > 0, -1, 1)
    cuts = []
    codes = column_codes(Xk)
    for j in range(d):
        if np.all(codes[:, j] == codes[0, j]):
            continue
        a, b = one_coordinate_pairs(Xk, j, codes)
        a, b = a.tolist(), b.tolist()
        nv, pv = neg_vars[j], pos_vars[j]
        for ia, ib in zip(a, b):
            # cut 1: p_a - p_b <= sum_{g<0} r_j   (valid unless a is -1-majority below a +1-majority b)
            if exact or not (sk[ia] < 0 and sk[ib] > 0):
                cuts.append((None,
                             linexpr([int(beta[ia]), -int(beta[ib])] + [-1] * len(nv), [e[ia], e[ib]] + nv),
                             int(alpha[ib] - alpha[ia])))
            # cut 2: p_b - p_a <= sum_{g>0} r_j
            if exact or not (sk[ib] < 0 and sk[ia] > 0):
                cuts.append((None,
                             linexpr([int(beta[ib]), -int(beta[ia])] + [-1] * len(pv), [e[ib], e[ia]] + pv),
                             int(alpha[ia] - alpha[ib])))
    return cuts


#: buckets of rows up to this size get a cut for every pair, larger ones a cycle through them
SWAP_FULL_BUCKET = 6


def _swap_cuts(Xk, sk, e, neg_vars, pos_vars, exact, full_bucket=SWAP_FULL_BUCKET):
    """The swap (one-hot) cuts described above, on pairs of rows with
    x_a - x_b = e_i - e_j (i != j); ``sk`` and ``e`` as in :func:`_chain_cuts`.

    Rows are bucketed by x - e_i for every coordinate i with x_i >= 1; two
    rows of a bucket reached through different coordinates form such a pair.
    A bucket of at most ``full_bucket`` rows gives every pair, a larger one
    the consecutive pairs of a cycle through it (a valid subset)."""
    alpha = np.where(sk > 0, 1, 0)
    beta = np.where(sk > 0, -1, 1)
    buckets = {}
    for k, row in enumerate(Xk.tolist()):
        nz = [(j, v) for j, v in enumerate(row) if v != 0]
        for pos, (i, v) in enumerate(nz):
            if v < 1:
                continue
            key = tuple((j, u - 1 if q == pos else u) for q, (j, u) in enumerate(nz) if q != pos or u != 1)
            buckets.setdefault(key, []).append((i, k))
    cuts = []

    def add(i, a, j, b):
        # p_a - p_b <= sum_{g>0} r_i + sum_{g<0} r_j; with an explicit margin omitted when a is a
        # -1-majority row and b a +1-majority row (their thresholds differ, as for the chain cuts)
        if not exact and sk[a] < 0 and sk[b] > 0:
            return
        vs = [e[a], e[b]] + pos_vars[i] + neg_vars[j]
        cs = [int(beta[a]), -int(beta[b])] + [-1] * (len(pos_vars[i]) + len(neg_vars[j]))
        cuts.append((None, linexpr(cs, vs), int(alpha[b] - alpha[a])))

    for members in buckets.values():
        s = len(members)
        if s < 2:
            continue
        if s <= full_bucket:
            pairs = [(x, y) for q, x in enumerate(members) for y in members[q + 1:]]
        else:
            pairs = [(members[q], members[(q + 1) % s]) for q in range(s)]
        for (i, a), (j, b) in pairs:
            add(i, a, j, b)
            add(j, b, i, a)
    return cuts


def _threshold_info(threshold, mu, exact):
    if exact:
        t_hi = math.ceil(threshold / mu - SNAP_TOL) * mu
    else:
        t_hi = threshold
    theta = t_hi - mu / 2
    if exact:
        rule = (f"+1 iff <w, x> >= {theta:g} (= threshold); scores are multiples of margin={mu:g}, "
                f"so this is +1 iff <w, x> >= {t_hi:g}: a score equal to {t_hi:g} predicts +1")
    else:
        rule = (f"+1 iff <w, x> >= {theta:g} (= threshold); the model counts a record as correct "
                f"only if its score is >= {t_hi:g} (label +1) or <= {t_hi - mu:g} (label -1)")
    return t_hi, theta, rule


def _rule_extra(theta, threshold, mu, exact, rule, classes, fit_intercept, merge_rows, chain_cuts) -> dict:
    """The ModelInfo.extra entries both 0/1 builders share: the decision and
    tie rule that prediction reads back, and how the model was built."""
    return {
        "loss": "zero_one",
        "threshold": float(theta),
        "requested_threshold": float(threshold),
        "margin": float(mu),
        "exact_margin": bool(exact),
        "tie_rule": rule,
        "classes": _classes_tuple(classes),
        "fit_intercept": fit_intercept,
        "merge_rows": merge_rows,
        "chain_cuts": bool(chain_cuts and merge_rows),
    }


def _classes_tuple(classes):
    return tuple(c.item() if hasattr(c, "item") else c for c in classes)


# ----------------------------------------------------------------------------
# zero_one_halfspace
# ----------------------------------------------------------------------------

def _milp_is_auto(enumeration) -> bool:
    """Would ``solver="auto"`` send OPDisc's oracle on this data to a MILP
    solver (rather than the branch and bound by support)?"""
    try:
        work = bound_search_work(enumeration)
    except ModelError:
        return True
    return work is None or work > AUTO_MAX_BOUND_WORK


def _swap_cuts_pay(enumeration) -> bool:
    """``swap_cuts="auto"``: the cuts where OPDisc's oracle goes to a MILP
    solver (:func:`_milp_is_auto`) AND every feature is 0/1 (one-hot or binary
    data, where they were measured to pay: 1.3x to 7x faster on the slow wide
    one-hot sets).  On data with graded features (the paper's Adult setup,
    numeric features on 0..4 beside one-hot groups) they doubled HiGHS's time
    to certify (140-158 s against 66-71 s for the same perturbed problem), so
    they are left out there (docs/oracle.md).  The choice changes the running
    time only, never the optimum."""
    X = enumeration.X
    return bool(((X == 0.0) | (X == 1.0)).all()) and _milp_is_auto(enumeration)


def zero_one_halfspace(X, y, *, grid=None, norm_bound=None, merge_rows=True, chain_cuts=True,
                       swap_cuts="auto", fit_intercept=False, threshold=0.0, margin=None,
                       name="zero_one_halfspace", classes=None, feature_values=None, coordinate_values=None,
                       _big_m_factor=1.0,
                       _exact_big_m=True):
    """The 0/1 loss of a halfspace over a grid in the ball, as a MILP.

    L(D, w) = sum_i 1[pred(w, x_i) != y_i] minimized over w in W_tau = {w :
    w_j in grid[j], ||w||_2 <= D}: the oracle problem of OPDisc ([NRVW20],
    Algorithm 1, with the 0/1 loss of Section 5).  The construction (merged
    rows, one big-M row per distinct row, tie rows dropped, tight big-M,
    chain cuts) and the decision/tie rule are described in the module
    docstring (:mod:`privopt.models.halfspace`).

    Parameters
    ----------
    X : array (n, d)
        Features; must be integer-valued (or multiples of a common rational
        step) unless ``margin`` is given.  Use :func:`discretize_features`
        with public bounds for real-valued features.
    y : array (n,)
        Two classes, any labels; ``classes[1]`` (the larger) is +1.
    grid : None, int, sequence or sequence of sequences
        None: integers -B..B with B = floor(sqrt(d)) (the paper's choice);
        int B: -B..B; a sequence of values (e.g. a tau-grid
        ``np.arange(-1, 1.01, 0.5)``) for every coordinate; or one sequence
        per coordinate.  Values must be multiples of a common rational step.
    norm_bound : float, optional
        D; default sqrt(d) (d counts the intercept column).  The model holds
        ||w||_2^2 <= D^2 as sum_{j,k} g_k^2 r[j,k] <= D^2, written in integer
        units of the grid step: on an integral grid the right-hand side is
        floor(D^2) computed exactly (D = sqrt(23) gives 23, not the 22 that
        floor(22.999999999999996) would give; D**2 within a relative 1e-9 of
        an integer is snapped to it).
    merge_rows : bool
        Merge identical rows (default).  False builds the per-record model
        (one binary and one big-M row per record) for comparison.
    chain_cuts : bool
        Add the monotonicity cuts (only with ``merge_rows=True``; ignored
        otherwise, since the cuts need distinct rows).
    swap_cuts : {"auto", True, False}
        Add the swap cuts between rows that differ in the active category of
        one one-hot group (only with ``merge_rows=True``).  They never change
        the optimum; on wide one-hot data they cut HiGHS's time to certify the
        perturbed oracle problem (docs/oracle.md, "The MILP path on wide
        one-hot data"), and they cost model size and build time.  ``"auto"``
        (default): add them where ``solver="auto"`` sends OPDisc's oracle on
        this model to a MILP solver and every feature is 0/1; leave them out
        where it takes privopt's branch and bound by support, which does not
        read them (:func:`privopt.solvers.choose_solver`), and on data with
        graded features, where they were measured to slow HiGHS down
        (:func:`_swap_cuts_pay`).
    fit_intercept : bool
        Append a constant feature 1; its weight is the last coordinate
        ``w[d]`` (on the same grid; D then defaults to sqrt(d + 1)).
    threshold : float
        t of the decision rule (default 0); see the module docstring.
    margin : float, optional
        None (default): the exact lattice margin (1 for integer X on an
        integer grid).  A number: the stated margin for real-valued X.
    classes : None or two labels
        The label set, declared public: y may then hold only one of them
        (None: read from y, where both must occur).
    feature_values : None or int >= 2
        The most values a coordinate of a record (the intercept's included)
        takes, declared public (a discretization's levels + 1, plus one for
        the intercept): private selection's split by support and its predicted
        time read it in place of the values present in X (None).
    coordinate_values : None or sequence of int >= 1
        The values each coordinate of a record takes (one entry per coordinate,
        the intercept's included: 1 for it), declared public (a discretization's
        levels + 1, 2 for a 0/1 column): the draw's predicted time reads the
        distinct rows as at most their product; the path never reads it.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Components: ``w[j]`` (Integer on integral grids, else Reals, bounded
        by the grid extremes), ``r[j, k]`` (Binary, k indexes ``grid[j]``),
        ``r_one[j]`` (``sum_k r[j,k] = 1``), ``w_link[j]`` (``w_j - sum_k grid[j][k]
        r[j,k] = 0``), ``norm_ball`` (sum_{j,k} (g_k/u)^2 r[j,k] <= floor(D^2/u^2),
        u = ``info.extra["grid_unit"]``), ``e[k]`` (Binary: row k predicted
        as its minority label, one per kept row; with an explicit margin one
        per kept (row, label) pair), ``fit[k]`` (its big-M row, the same k),
        ``chain[c]`` and ``swap[c]`` (cuts), ``band[c]`` (explicit margin only) and the
        objective ``loss``.  :func:`get_info` gives the :class:`ModelInfo`
        (grid, separation tau, norm_bound D, loss_range (0, 1), lipschitz =
        lipschitz_l1 = 1/tau, diameters, n_samples, grid_encoding "r", and
        extra: threshold, margin, exact_margin, tie_rule, classes,
        fit_intercept, grid_unit, norm_sq_units); :func:`build_stats` the
        data-dependent sizes.
    """
    start = time.perf_counter()
    setup = _zero_one_setup(X, y, _ZeroOneArgs(
        grid=grid, norm_bound=norm_bound, merge_rows=merge_rows, chain_cuts=chain_cuts, swap_cuts=swap_cuts,
        fit_intercept=fit_intercept, threshold=threshold, margin=margin, name=name, classes=classes,
        feature_values=feature_values, coordinate_values=coordinate_values))
    model = _zero_one_milp(setup, big_m_factor=_big_m_factor, exact_big_m=_exact_big_m)
    getattr(model, _STATS_ATTR)["build_time"] = time.perf_counter() - start
    return model


@dataclasses.dataclass(frozen=True, eq=False)
class _ZeroOneSetup:
    """Everything :func:`zero_one_halfspace` computes before it builds Pyomo
    components: the checked arguments, W's units, the merged rows and labels,
    the halfspace data and the public :class:`ModelInfo` (the same for the MILP
    and for :class:`ZeroOneLoss`, which shares this step)."""

    name: str
    grid: tuple
    units: list
    n_units: int
    unit: Fraction
    D: float
    mu: float
    exact: bool
    t_hi: float
    Xu: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    chain_cuts: bool
    swap_cuts: bool
    data: HalfspaceData
    info: ModelInfo
    rows: "_ZeroOneRows"
    args: "_ZeroOneArgs"


@dataclasses.dataclass(frozen=True)
class _ZeroOneArgs:
    """The keywords of :func:`zero_one_halfspace` and :func:`zero_one_loss` as given (checked by
    :func:`_zero_one_setup`)."""

    grid: object = None
    norm_bound: object = None
    merge_rows: object = True
    chain_cuts: object = True
    swap_cuts: object = "auto"
    fit_intercept: object = False
    threshold: object = 0.0
    margin: object = None
    name: str = "zero_one_halfspace"
    classes: object = None
    feature_values: object = None
    coordinate_values: object = None


def _check_feature_values(value) -> int | None:
    """``feature_values``: None or a whole number >= 2 (checked before the data is read)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 2:
        raise ParameterError(f"feature_values must be None or a whole number >= 2 (the most values a record's "
                             f"coordinate takes, declared in public), got {value!r}.", "feature_values")
    return int(value)


def _check_coordinate_values(value, d: int | None = None) -> tuple[int, ...] | None:
    """``coordinate_values``: None or one whole number >= 1 per coordinate of w (d of them,
    the intercept's included; the length once d is known), checked before the data is read."""
    if value is None:
        return None
    entries = list(value) if np.ndim(value) == 1 else None
    if (entries is None or not entries
            or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 1 for v in entries)
            or (d is not None and len(entries) != d)):
        count = "one" if d is None else f"{d}, one"
        raise ParameterError(f"coordinate_values must be None or whole numbers >= 1 ({count} per coordinate of w, "
                             f"the intercept's included: the values each takes, declared in public), got "
                             f"{value!r}.", "coordinate_values")
    return tuple(int(v) for v in entries)


@dataclasses.dataclass(frozen=True, eq=False)
class _ZeroOneRows:
    """The part of :func:`_zero_one_setup` that reads X and y and not W: the checked
    arguments, the features (with the intercept's column), whether they are integral,
    and the merged rows with their label counts.  Private (it holds the data); made
    once per feature matrix and shared by every W built on it
    (:meth:`ZeroOneLoss.with_w`), never kept beyond the losses that hold it.  ``n``, ``d``:
    the records and the coordinates (the intercept's included); the records themselves
    are not kept, only their merged rows."""

    n: int
    d: int
    classes: tuple
    fit_intercept: bool
    threshold: float
    margin: float | None
    merge_rows: bool
    chain_cuts: bool
    swap_cuts: object
    integral: bool | None
    Xu: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    X64: np.ndarray
    pos64: np.ndarray
    neg64: np.ndarray


def _zero_one_rows(X, y, args: _ZeroOneArgs) -> _ZeroOneRows:
    """The checks of X, y and the W-free keywords, then the merged rows (:func:`_merge`)."""
    Xa, classes, y_pm, fit_intercept, threshold, margin, merge_rows, chain_cuts = _check_common(
        X, y, args.fit_intercept, args.threshold, args.margin, args.merge_rows, args.chain_cuts, args.name,
        args.classes)
    swap_cuts = args.swap_cuts
    if not (isinstance(swap_cuts, str) and swap_cuts == "auto"):
        swap_cuts = check_bool(swap_cuts, "swap_cuts")
    integral = is_integral(Xa) if margin is None else None
    Xu, pos, neg = _merge(Xa, y_pm, merge_rows)
    return _ZeroOneRows(n=int(Xa.shape[0]), d=int(Xa.shape[1]), classes=classes, fit_intercept=fit_intercept,
                        threshold=threshold, margin=margin, merge_rows=merge_rows, chain_cuts=chain_cuts,
                        swap_cuts=swap_cuts, integral=integral,
                        Xu=Xu, pos=pos, neg=neg, X64=_read_only(np.asarray(Xu, dtype=np.float64)),
                        pos64=np.asarray(pos, dtype=np.int64), neg64=np.asarray(neg, dtype=np.int64))


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``: the halfspace data's rows, which the W's of a ladder share
    and whose distinct values the samplers then work out once
    (:func:`privopt._lattice.kept_unique_values`)."""
    view = a.view()
    view.flags.writeable = False
    return view


def _zero_one_setup(X, y, args: _ZeroOneArgs) -> _ZeroOneSetup:
    """The checks and the public and private data of :func:`zero_one_halfspace`, without Pyomo."""
    _check_feature_values(args.feature_values)
    _check_coordinate_values(args.coordinate_values)
    return _zero_one_setup_on(_zero_one_rows(X, y, args), args)


def _zero_one_setup_on(rows: _ZeroOneRows, args: _ZeroOneArgs) -> _ZeroOneSetup:
    """:func:`_zero_one_setup` on rows already checked and merged: W (``args.grid``,
    ``args.norm_bound``), the decision rule on W's lattice, the halfspace data and the info."""
    feature_values = _check_feature_values(args.feature_values)
    grid, norm_bound, name = args.grid, args.norm_bound, args.name
    classes, fit_intercept, threshold, margin = rows.classes, rows.fit_intercept, rows.threshold, rows.margin
    merge_rows, chain_cuts, swap_cuts = rows.merge_rows, rows.chain_cuts, rows.swap_cuts
    n, d = rows.n, rows.d
    coordinate_values = _check_coordinate_values(args.coordinate_values, d)
    w = public_w(grid, d, norm_bound, min_values=2, exact_units=True)     # one record per process for plain numbers
    pw = w.exact_units
    grid_t, unit, D, n_units, units = pw.grid, pw.unit, pw.D, pw.n_units, [list(u) for u in pw.units]
    mu, exact = _score_lattice(rows.Xu, unit, margin, rows.integral)
    t_hi, theta, rule = _threshold_info(threshold, mu, exact)
    Xu, pos, neg = rows.Xu, rows.pos, rows.neg
    data = HalfspaceData(
        X=rows.X64, pos=rows.pos64, neg=rows.neg64, exact=bool(exact), mu=float(mu),
        t_hi=float(t_hi), theta=float(theta),
        w=w.on_units, objective="loss",
        feature_values=feature_values, coordinate_values=coordinate_values)
    if isinstance(swap_cuts, str):
        swap_cuts = _swap_cuts_pay(data)
    tau = pw.tau
    info = ModelInfo(
        weights="w",
        grid=grid_t,
        separation=tau,
        norm_bound=float(D),
        loss_range=(0.0, 1.0),
        lipschitz=1.0 / tau,
        lipschitz_l1=1.0 / tau,
        linf_diameter=pw.linf_diameter,
        l2_diameter=pw.l2_diameter,
        l1_diameter=pw.l1_diameter,
        n_samples=int(n),
        grid_encoding="r",
        public_constraints=("r_one", "w_link", "norm_ball"),   # from the grid and the ball only
        record_constraints=_RECORD_CONSTRAINTS,
        extra={
            **_rule_extra(theta, threshold, mu, exact, rule, classes, fit_intercept, merge_rows, chain_cuts),
            "swap_cuts": bool(swap_cuts and merge_rows),
            "grid_unit": float(unit),
            "norm_sq_units": int(n_units),
            "norm_sq_bound": float(n_units * unit * unit),
        },
    )
    return _ZeroOneSetup(name=name, grid=grid_t, units=units, n_units=n_units, unit=unit, D=float(D), mu=mu,
                         exact=exact, t_hi=t_hi, Xu=Xu, pos=pos, neg=neg, chain_cuts=chain_cuts and merge_rows,
                         swap_cuts=bool(swap_cuts and merge_rows), data=data, info=info, rows=rows, args=args)


def _zero_one_milp(setup: _ZeroOneSetup, *, big_m_factor=1.0, exact_big_m=True):
    """The Pyomo MILP of :func:`zero_one_halfspace` from its setup, with the info, the
    halfspace data (its components named) and the build statistics attached."""
    grid_t, units, n_units = setup.grid, setup.units, setup.n_units
    d = len(grid_t)
    model = pyo.ConcreteModel(name=setup.name)
    integral = setup.unit == 1
    lo = np.array([g[0] for g in grid_t], dtype=float)
    hi = np.array([g[-1] for g in grid_t], dtype=float)
    model.w = pyo.Var(range(d), domain=pyo.Integers if integral else pyo.Reals,
                      bounds=lambda m, j: (grid_t[j][0], grid_t[j][-1]))
    r_index = [(j, k) for j in range(d) for k in range(len(grid_t[j]))]
    model.r = pyo.Var(r_index, domain=pyo.Binary)
    r = model.r
    model.r_one = pyo.Constraint(range(d), rule=lambda m, j: (
        1, linexpr([1] * len(grid_t[j]), [r[j, k] for k in range(len(grid_t[j]))]), 1))
    model.w_link = pyo.Constraint(range(d), rule=lambda m, j: (
        0, linexpr([1] + [-v for v in grid_t[j]], [model.w[j]] + [r[j, k] for k in range(len(grid_t[j]))]), 0))
    model.norm_ball = pyo.Constraint(expr=(
        None, linexpr([units[j][k] ** 2 for j, k in r_index], [r[j, k] for j, k in r_index]), n_units))
    neg_vars = [[r[j, k] for k, v in enumerate(grid_t[j]) if v < 0] for j in range(d)]
    pos_vars = [[r[j, k] for k, v in enumerate(grid_t[j]) if v > 0] for j in range(d)]
    ball = math.sqrt(float(n_units * setup.unit * setup.unit))
    stats = _build_zero_one_rows(model, _RowsSpec(
        setup.Xu, setup.pos, setup.neg, lo=lo, hi=hi, ball=ball, t_hi=setup.t_hi, mu=setup.mu,
        exact=setup.exact, neg_vars=neg_vars, pos_vars=pos_vars, chain_cuts=setup.chain_cuts,
        swap_cuts=setup.swap_cuts,
        exact_bounds=_exact_score_bounds(setup.Xu, grid_t, units, n_units) if exact_big_m else None,
        big_m_factor=big_m_factor))
    attach_info(model, setup.info)
    setattr(model, ENUMERATION_ATTR, dataclasses.replace(
        setup.data, components=tuple(c.local_name for c in model.component_objects(descend_into=False))))
    setattr(model, _STATS_ATTR, stats)
    return model



@dataclasses.dataclass(frozen=True, eq=False)
class ZeroOneLoss:
    """The model of :func:`zero_one_halfspace` without its MILP: what private
    selection reads (:func:`privopt.mixture_selection`), built by
    :func:`zero_one_loss`.

    ``data``: the :class:`privopt.search.HalfspaceData` (the distinct rows and
    their label counts, the decision rule, and W, read as ``w``: private, as the
    model is); ``info``: the :class:`ModelInfo` the MILP would carry (equal to
    ``get_info(zero_one_halfspace(...))`` with the same arguments); ``labels``:
    the weights' labels, ``0..d-1`` as for ``model.w``.  :meth:`milp` builds the
    Pyomo MILP on demand (e.g. for a MILP solver), each call a new model.

    Nothing but privopt's builder makes one, so W is the grid and the ball of
    its arguments, public by construction: the checks of a Pyomo model's
    constraints (:func:`privopt.models.check_public_constraints`) have nothing
    to read here.  Building the MILP (tens of thousands of Pyomo constraints on
    a few thousand distinct rows) is most of the cost of a model that private
    selection never solves.
    """

    data: HalfspaceData
    info: ModelInfo
    _setup: _ZeroOneSetup = dataclasses.field(repr=False)

    @property
    def w(self) -> DecisionSpace:
        """W, the grid and the ball of the arguments (:class:`privopt.space.DecisionSpace`,
        the one its halfspace data holds)."""
        return self.data.w

    @property
    def labels(self) -> tuple:
        """The weights' labels: ``0..d-1`` (the indices of ``model.w``)."""
        return tuple(range(self.w.d))

    def milp(self):
        """The Pyomo MILP of :func:`zero_one_halfspace` with the same arguments (a new model)."""
        return _zero_one_milp(self._setup)

    def with_w(self, *, grid=None, norm_bound=None, feature_values=None, coordinate_values=None) -> ZeroOneLoss:
        """The 0/1 loss of the same records under another W: equal to
        :func:`zero_one_loss` with this loss's X, y and keywords but ``grid``,
        ``norm_bound``, ``feature_values`` and ``coordinate_values`` (the same checks of these), without
        checking and merging the rows again: the new loss shares this one's
        distinct rows and label counts (the same arrays, not copies), so a ladder of W's on one feature
        matrix merges it once."""
        args = dataclasses.replace(self._setup.args, grid=grid, norm_bound=norm_bound,
                                   feature_values=feature_values, coordinate_values=coordinate_values)
        setup = _zero_one_setup_on(self._setup.rows, args)
        return ZeroOneLoss(data=setup.data, info=setup.info, _setup=setup)

    def with_constant_feature(self, value, *, grid=None, norm_bound=None, feature_values=None,
                              coordinate_values=None) -> ZeroOneLoss:
        """The 0/1 loss of the same records with one more feature equal to ``value`` in
        every record (after the features, before the intercept's column), under the W of
        ``grid``, ``norm_bound``, ``feature_values``, ``coordinate_values``: equal to :func:`zero_one_loss` of
        ``np.column_stack([X, np.full(n, value)])`` with this loss's y and keywords.  A
        constant column changes neither which rows are equal nor their lexicographic
        order, so the merged rows are these with the column inserted, their label counts
        these (shared), without merging the records again."""
        value = check_real(value, "value")
        rows = self._setup.rows
        at = rows.d - 1 if rows.fit_intercept else rows.d
        _check_zero_one_width(types.SimpleNamespace(shape=(rows.n, at + 1)))     # the features and the new one
        Xu = np.insert(rows.Xu, at, value, axis=1)
        integral = None if rows.integral is None else bool(rows.integral and float(value).is_integer())
        wider = dataclasses.replace(rows, d=rows.d + 1, integral=integral, Xu=Xu,
                                    X64=_read_only(np.asarray(Xu, dtype=np.float64)))
        args = dataclasses.replace(self._setup.args, grid=grid, norm_bound=norm_bound,
                                   feature_values=feature_values, coordinate_values=coordinate_values)
        setup = _zero_one_setup_on(wider, args)
        return ZeroOneLoss(data=setup.data, info=setup.info, _setup=setup)


    def with_affine_features(self, scale, offset, *, grid=None, norm_bound=None, feature_values=None,
                             coordinate_values=None) -> ZeroOneLoss:
        """The 0/1 loss of the same records with every feature (not the intercept's column)
        mapped to ``scale * x + offset + 0.0`` (``scale`` > 0), under the W of ``grid``,
        ``norm_bound``, ``feature_values``, ``coordinate_values``: equal to
        :func:`zero_one_loss` of ``scale * X + offset + 0.0`` with this loss's y and
        keywords (e.g. the centred steps 2 z - L of :func:`discretize_features` from the
        steps z on {0..L}).  An increasing map of each column changes neither which rows are
        equal nor their lexicographic order, so the merged rows are these mapped (the same
        floating-point operations on the same values), their label counts these (shared),
        without merging the records again."""
        scale, offset = check_positive(scale, "scale"), check_real(offset, "offset")
        rows = self._setup.rows
        at = rows.d - 1 if rows.fit_intercept else rows.d
        Xu = np.array(rows.Xu, dtype=np.float64)
        Xu[:, :at] = scale * Xu[:, :at] + offset + 0.0
        integral = None if rows.integral is None else is_integral(Xu)
        mapped = dataclasses.replace(rows, integral=integral, Xu=Xu, X64=_read_only(Xu))
        args = dataclasses.replace(self._setup.args, grid=grid, norm_bound=norm_bound,
                                   feature_values=feature_values, coordinate_values=coordinate_values)
        setup = _zero_one_setup_on(mapped, args)
        return ZeroOneLoss(data=setup.data, info=setup.info, _setup=setup)


def zero_one_loss(X, y, *, grid=None, norm_bound=None, merge_rows=True, chain_cuts=True, swap_cuts="auto",
                  fit_intercept=False, threshold=0.0, margin=None, name="zero_one_halfspace",
                  classes=None, feature_values=None, coordinate_values=None) -> ZeroOneLoss:
    """The 0/1 loss of a halfspace over a grid in the ball, as data: the
    :class:`ZeroOneLoss` of :func:`zero_one_halfspace`'s arguments (the same
    checks, rows, W and :class:`ModelInfo`), with no Pyomo model built;
    ``.milp()`` builds it when a MILP solver needs it.  ``feature_values``: the most
    values a coordinate of a record (the intercept's included) can take, declared in
    public (a discretization's levels + 1, plus one for the intercept), or None: private
    selection then splits W by support and predicts its time from it, not from the values
    present in X (:attr:`privopt.search.HalfspaceData.feature_values`).  ``coordinate_values``:
    the values each coordinate of a record takes (one whole number per coordinate, the
    intercept's included: 1 for it), declared in public (the estimator's levels + 1, 2 for a
    declared 0/1 column), or None: read by the predicted time of the draw only
    (:attr:`privopt.search.HalfspaceData.coordinate_values`), never by the path."""
    setup = _zero_one_setup(X, y, _ZeroOneArgs(
        grid=grid, norm_bound=norm_bound, merge_rows=merge_rows, chain_cuts=chain_cuts, swap_cuts=swap_cuts,
        fit_intercept=fit_intercept, threshold=threshold, margin=margin, name=name, classes=classes,
        feature_values=feature_values, coordinate_values=coordinate_values))
    return ZeroOneLoss(data=setup.data, info=setup.info, _setup=setup)

# ----------------------------------------------------------------------------
# rspm_halfspace
# ----------------------------------------------------------------------------

def rspm_halfspace(X, y, *, merge_rows=True, chain_cuts=True, fit_intercept=False, threshold=0.0,
                   margin=None, name="rspm_halfspace", classes=None):
    """The 0/1 loss of a halfspace over w in {-1, 0, 1}^d, for RSPM.

    The oracle of RSPM ([NRW18]; [NRVW20] Section 3.1) minimizes
    err(w, D) + sum_j (xi_j h_w(e_j) + xi'_j h_w(-e_j)) over {-1, 0, 1}^d
    with h_w(e_j) = 1 iff w_j = 1 and h_w(-e_j) = 1 iff w_j = -1.  This model
    encodes w_j = p_j - n_j with binaries p_j + n_j <= 1 (so h_w(e_j) = p_j,
    h_w(-e_j) = n_j and the perturbation sum_j xi_j p_j + xi'_j n_j is
    linear) and the 0/1 loss err(w, D) with the same merged construction,
    decision rule and tie rule as :func:`zero_one_halfspace` (module
    docstring); the chain cuts use n_j and p_j in place of sum_{g<0} r[j,k]
    and sum_{g>0} r[j,k].  RSPM has no norm constraint: ``info.norm_bound``
    = sqrt(d) is the largest ||w||_2 on {-1, 0, 1}^d and purely informational.

    Components: ``w[j]`` (Integer in [-1, 1]), ``p[j]``, ``n[j]`` (Binary),
    ``pn_excl[j]`` (p_j + n_j <= 1), ``w_link[j]`` (w_j - p_j + n_j = 0),
    ``e[k]``, ``fit[k]``, ``chain[c]``, objective ``loss``;
    ``info.extra["separator_vars"] == ("p", "n")``.
    """
    start = time.perf_counter()
    Xa, classes, y_pm, fit_intercept, threshold, margin, merge_rows, chain_cuts = _check_common(
        X, y, fit_intercept, threshold, margin, merge_rows, chain_cuts, name, classes)
    n, d = Xa.shape
    mu, exact = _score_lattice(Xa, Fraction(1), margin)
    t_hi, theta, rule = _threshold_info(threshold, mu, exact)

    model = pyo.ConcreteModel(name=name)
    model.w = pyo.Var(range(d), domain=pyo.Integers, bounds=(-1, 1))
    model.p = pyo.Var(range(d), domain=pyo.Binary)
    model.n = pyo.Var(range(d), domain=pyo.Binary)
    model.pn_excl = pyo.Constraint(range(d), rule=lambda m, j: (None, linexpr([1, 1], [m.p[j], m.n[j]]), 1))
    model.w_link = pyo.Constraint(range(d), rule=lambda m, j: (
        0, linexpr([1, -1, 1], [m.w[j], m.p[j], m.n[j]]), 0))
    Xu, pos, neg = _merge(Xa, y_pm, merge_rows)
    stats = _build_zero_one_rows(model, _RowsSpec(
        Xu, pos, neg, lo=-np.ones(d), hi=np.ones(d), ball=None, t_hi=t_hi, mu=mu, exact=exact,
        neg_vars=[[model.n[j]] for j in range(d)], pos_vars=[[model.p[j]] for j in range(d)],
        chain_cuts=chain_cuts and merge_rows))
    info = ModelInfo(
        weights="w",
        grid=((-1, 0, 1),) * d,
        separation=1.0,
        norm_bound=math.sqrt(d),
        loss_range=(0.0, 1.0),
        lipschitz=1.0,
        lipschitz_l1=1.0,
        linf_diameter=2.0,
        l2_diameter=2.0 * math.sqrt(d),
        l1_diameter=2.0 * d,
        n_samples=int(n),
        grid_encoding=None,
        public_constraints=("pn_excl", "w_link"),   # the encoding of {-1, 0, 1} only
        record_constraints=_RECORD_CONSTRAINTS,
        extra={
            **_rule_extra(theta, threshold, mu, exact, rule, classes, fit_intercept, merge_rows, chain_cuts),
            "separator_vars": ("p", "n"),
        },
    )
    attach_info(model, info)
    stats["build_time"] = time.perf_counter() - start
    setattr(model, _STATS_ATTR, stats)
    return model


# ----------------------------------------------------------------------------
# prediction
# ----------------------------------------------------------------------------

def _info_of(info):
    if isinstance(info, ModelInfo):
        return info
    got = get_info(info)
    if got is None:
        raise ParameterTypeError("info must be a ModelInfo or a model built by privopt.models.", "info")
    return got


def halfspace_decision_function(w, X, info) -> np.ndarray:
    """<w, x> - theta for each row of X (theta = ``info.extra["threshold"]``;
    the intercept column is appended when the model was built with
    ``fit_intercept=True``).  A value >= 0 predicts ``classes[1]``."""
    info = _info_of(info)
    extra = info.extra
    if "threshold" not in extra:
        raise ParameterError("info does not describe a halfspace classifier (no extra['threshold']).", "info")
    Xa = check_X(X)
    if extra.get("fit_intercept"):
        Xa = add_intercept(Xa)
    try:
        wa = np.asarray(w, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"w must be a vector of numbers: {exc}", "w") from exc
    if wa.size != Xa.shape[1]:
        raise ParameterError(
            f"w has {wa.size} entries but the model has {Xa.shape[1]} coordinates"
            + (" (including the intercept)" if extra.get("fit_intercept") else "") + ".", "w")
    if not np.all(np.isfinite(wa)):
        raise ParameterError("w contains NaN or infinite values.", "w")
    return Xa @ wa - extra["threshold"]


def predict_halfspace(w, X, info, *, pm: bool = False) -> np.ndarray:
    """Apply the decision rule of a halfspace model: ``classes[1]`` iff
    <w, x> >= ``info.extra["threshold"]``, else ``classes[0]`` (or +1/-1 when
    ``pm=True``).  See the module docstring for the tie rule.  ``info`` is the
    model's :class:`ModelInfo` (or the model itself)."""
    info = _info_of(info)
    positive = halfspace_decision_function(w, X, info) >= 0
    if pm:
        return np.where(positive, 1, -1)
    classes = info.extra.get("classes", (-1, 1))
    out = np.empty(positive.shape[0], dtype=np.asarray(classes).dtype)
    out[positive] = classes[1]
    out[~positive] = classes[0]
    return out

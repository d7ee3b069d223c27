r"""L(w) in closed form for models that fall apart into "choose one" blocks once the
decision is fixed: every point of W at once, without one LP per point.

Fix the decision w of a linear model and the remaining (non-decision) variables are
linked only through the constraints that hold two or more of them.  The connected
components of that graph (:func:`connected_blocks`) are independent problems: L(w) is
the sum of their optima, plus the objective's terms on the decision and its constant.
A p-median with its decision fixed falls into one block per customer.

One kind of block is recognised (:class:`ChooseOneBlocks`), the assignment of one
record: columns x_j >= 0 (lower bound 0 exactly), costs c_j, and

* one *choose row* holding every column of the block and no decision column, with
  positive coefficients alpha_j: sum_j alpha_j x_j == R, or >= R (or a range
  [R, R'] with R' > R) when every cost c_j (in the minimizing sense) is >= 0, R > 0;
* any number of *bound rows*, each holding one column of the block, any decision
  columns and a finite bound on one side only, which makes it an upper bound on that
  column that depends on w: beta x_j + gamma . w <= u with beta > 0 (or >= l with
  beta < 0), i.e. x_j <= (u - gamma . w) / beta;
* the column's own upper bound (any, possibly infinite).

With w fixed, cap_j(w) = min(column upper bound, the bound rows' (u - gamma . w) / beta).

**The closed form (proof).**  Substitute z_j = alpha_j x_j: minimize
sum_j (c_j / alpha_j) z_j subject to sum_j z_j = R, 0 <= z_j <= alpha_j cap_j(w) =: k_j.
It is infeasible iff some k_j < 0 (x_j >= 0 and x_j <= cap_j < 0) or sum_j k_j < R (the
row cannot be met).  Otherwise, with the columns in increasing order of the unit cost
r_j = c_j / alpha_j (ties in any order), the greedy fill z_j = min(k_j, max(0, R -
sum_{l before j} k_l)) is optimal: it is feasible, and for any feasible z, if some z_j
< greedy_j while z_l > greedy_l for a later l (r_l >= r_j; one exists since both sum to
R and the greedy fills the earlier columns to capacity), moving min(greedy_j - z_j, z_l
- greedy_l) from l to j keeps z feasible and changes the cost by a multiple of r_j - r_l
<= 0; repeating (each move makes one more coordinate equal to the greedy's) reaches the
greedy without raising the cost.  For a row ``>= R`` (or a range starting at R) with
every r_j >= 0, lowering any z beyond sum R to sum exactly R (z is non-negative) never
raises the cost, so the optimum has sum R and is the same greedy.  For 0/1 decisions
and unit capacities (x_ij <= y_j, sum_j x_ij == 1) this is min_j {c_ij : y_j = 1}.
Integer columns: when every column of a block is integer with alpha_j = 1 and R an
integer, x_j <= cap_j is x_j <= floor(cap_j), and the greedy fill with those integer
capacities is integral, so it is also the integer optimum (an integral point that is
optimal for the relaxation); other integer blocks are not recognised.

A maximized objective is the negated minimum of -c.  Capacities a rounding below 0
(within 1e-9 relative to the row's numbers) are read as 0, and a row met to within 1e-9
relative counts as met, as any LP solver's feasibility tolerance would; the losses are
floating-point sums of the greedy's terms, in a fixed order.

The structure is verified from the model's rows (the matrix the HiGHS session read,
:func:`lp_arrays`) before anything is evaluated; a model with any block of another
shape, any row on the decision alone that is not relaxed, or a quadratic objective is
not recognised (:meth:`ChooseOneBlocks.detect` returns None and why), and the caller
solves one LP per point as before.  Pure numpy and scipy (the graph's components);
lives in the solvers layer because what it needs is the LP arrays of the model as read
into the solver, and what it returns is what a solve would: L(w) at each point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LinearArrays", "lp_arrays", "connected_blocks", "ChooseOneBlocks", "BLOCKS_ENGINE", "closed_form_blocks",
           "RecordBlocks", "record_blocks"]

#: ``SelectionReport.engine`` when the losses come from :class:`ChooseOneBlocks`.
BLOCKS_ENGINE = "blocks (closed form)"

#: Relative tolerance of a capacity read as 0 and of a choose row read as met.
_TOL = 1e-9


@dataclass(frozen=True)
class LinearArrays:
    """A linear model  min (or max) cost . x + offset  s.t.  row_lower <= A x <= row_upper,
    col_lower <= x <= col_upper, as arrays: ``A`` in coordinates (``rows``, ``cols``,
    ``vals``, no zero entries), ``integer`` the integrality of each column, ``decision`` the
    columns of the decision in W's coordinate order, ``quadratic`` whether the objective
    has a quadratic part (then nothing here applies)."""

    n_rows: int
    n_cols: int
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    cost: np.ndarray
    offset: float
    maximize: bool
    integer: np.ndarray
    decision: np.ndarray
    quadratic: bool = False


def lp_arrays(session) -> LinearArrays | None:
    """The model a :class:`privopt.solvers.HighsFixedSession` holds, as
    :class:`LinearArrays` (read from HiGHS, the matrix the session built; the
    relaxed rows have infinite bounds there), or None when HiGHS does not give it."""
    try:
        import highspy

        model = session._h.getModel()
        lp = model.lp_
        a = lp.a_matrix_
        start = np.asarray(a.start_, dtype=np.int64)
        index = np.asarray(a.index_, dtype=np.int64)
        value = np.asarray(a.value_, dtype=np.float64)
        n_rows, n_cols = int(lp.num_row_), int(lp.num_col_)
        outer = np.repeat(np.arange(len(start) - 1), np.diff(start))
        if a.format_ == highspy.MatrixFormat.kRowwise:
            rows, cols = outer, index
        elif a.format_ == highspy.MatrixFormat.kColwise:
            rows, cols = index, outer
        else:
            return None
        integrality = list(lp.integrality_)
        integer = (np.array([v != highspy.HighsVarType.kContinuous for v in integrality], dtype=bool)
                   if integrality else np.zeros(n_cols, dtype=bool))
        hessian = getattr(model, "hessian_", None)
        quadratic = bool(hessian is not None and int(getattr(hessian, "dim_", 0)) > 0)
        keep = value != 0.0
        return LinearArrays(
            n_rows=n_rows, n_cols=n_cols, rows=rows[keep], cols=cols[keep], vals=value[keep],
            row_lower=np.asarray(lp.row_lower_, dtype=np.float64),
            row_upper=np.asarray(lp.row_upper_, dtype=np.float64),
            col_lower=np.asarray(lp.col_lower_, dtype=np.float64),
            col_upper=np.asarray(lp.col_upper_, dtype=np.float64),
            cost=np.asarray(lp.col_cost_, dtype=np.float64), offset=float(lp.offset_),
            maximize=lp.sense_ == highspy.ObjSense.kMaximize, integer=integer,
            decision=np.asarray(session._cols, dtype=np.int64), quadratic=quadratic)
    except (AttributeError, ImportError, TypeError, ValueError):
        return None


def connected_blocks(n_rows: int, n_cols: int, rows, cols, decision) -> tuple[np.ndarray, int]:
    """``(label, count)``: the block of every column once the ``decision`` columns are
    fixed, the connected components of the graph whose nodes are the other columns,
    two of them linked when a row holds both (a row of ``(rows, cols)`` coordinates);
    ``label[j]`` is -1 for a decision column, else in ``range(count)``, numbered in
    the order of each block's first column."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    free = np.ones(n_cols, dtype=bool)
    free[np.asarray(decision, dtype=np.int64)] = False
    keep = free[cols]
    r, c = rows[keep], cols[keep]
    # the bipartite graph of rows and free columns: its components restricted to the columns
    n = n_cols + n_rows
    graph = coo_matrix((np.ones(len(r)), (c, n_cols + r)), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    label = np.full(n_cols, -1, dtype=np.int64)
    fc = np.flatnonzero(free)
    _, first, inverse = np.unique(comp[fc], return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    label[fc] = rank[inverse]
    return label, len(first)


def _block_groups(free_cols, unit, alpha, label, n_blocks, size, all_int, n_cols):
    """``(cols_sorted, pos, groups)`` of :meth:`ChooseOneBlocks.detect`: the blocks'
    columns ordered by block, then by unit cost (stable: the greedy's order), each
    column's place in that order (-1 for the decision's), and the blocks grouped by
    size: ``(blocks, positions, unit costs, coefficients, all-integer)`` for each size."""
    order = np.lexsort((free_cols, unit[free_cols], label[free_cols]))
    cols_sorted = free_cols[order]
    pos = np.full(n_cols, -1, dtype=np.int64)
    pos[cols_sorted] = np.arange(len(cols_sorted))
    blk = label[cols_sorted]
    starts = np.searchsorted(blk, np.arange(n_blocks))
    groups = []
    for s in np.unique(size):
        bs = np.flatnonzero(size == s)
        positions = starts[bs][:, None] + np.arange(s)[None, :]
        pc = cols_sorted[positions]
        groups.append((bs, positions, unit[pc], alpha[pc], all_int[bs]))
    return cols_sorted, pos, groups


def _bound_rows(a, entries, is_bound, beta, col_of, pos):
    """The bound rows of :meth:`ChooseOneBlocks.detect` as ``(positions, rhs, G, scale)``,
    ordered by their column's place ``pos`` (stable): the cap on the row's column is
    ``rhs - G w`` (``(bound - gamma . w) / beta``, ``gamma`` the row's coefficients on the
    decision ``w``), ``scale`` = ``|rhs| + sum |G|`` of each row.  ``entries``: the live
    rows' entries ``(row, column, value, on the decision)``."""
    from scipy.sparse import csr_matrix

    r, c, v, dec_ent = entries
    lo, up, d = a.row_lower, a.row_upper, len(a.decision)
    brows = np.flatnonzero(is_bound)
    rhs = np.where(beta[brows] > 0, up[brows], lo[brows]) / beta[brows]
    dec_index = np.full(a.n_cols, -1, dtype=np.int64)
    dec_index[a.decision] = np.arange(d)
    b_index = np.full(a.n_rows, -1, dtype=np.int64)
    b_index[brows] = np.arange(len(brows))
    g_ent = dec_ent & is_bound[r]
    G = csr_matrix((v[g_ent] / beta[r[g_ent]], (b_index[r[g_ent]], dec_index[c[g_ent]])),
                   shape=(len(brows), d))
    scale = np.abs(rhs) + abs(G).sum(axis=1).A1
    bpos = pos[col_of[brows]]
    ob = np.argsort(bpos, kind="stable")
    return bpos[ob], rhs[ob], G[ob], scale[ob]


class ChooseOneBlocks:
    """The closed-form evaluator of a model whose every block is a choose-one block
    (the module's docstring: the form, and the proof); :meth:`detect` builds it from
    :class:`LinearArrays` after checking every row, :meth:`losses` evaluates L at many
    points of W at once."""

    def __init__(self, n_blocks, groups, bound, col_upper, need, decision_cost, offset, maximize, d):
        self.n_blocks = n_blocks
        self._groups = groups          # per block size: (positions (blocks x size), unit costs, alpha, integer)
        self._bound = bound            # (position, h, G (sparse rows x d), scale): cap = h - G w per bound row
        self._col_upper = col_upper    # per position (blocks' columns, ordered by block then unit cost)
        self._need = need              # per position's block: R
        self._decision_cost = decision_cost
        self._offset = offset
        self._maximize = maximize
        self.d = d

    @classmethod
    def detect(cls, arrays: LinearArrays) -> tuple[ChooseOneBlocks | None, str]:
        """``(evaluator, why)``: the evaluator when every block of ``arrays`` with the
        decision fixed is a choose-one block, else ``(None, why not)``.  Reads the
        structure only (which rows hold which columns, signs, bounds); the costs are read
        only for the sign condition of a ``>=`` choose row."""
        a = arrays
        if a.quadratic:
            return None, "the objective is quadratic"
        d = len(a.decision)
        label, n_blocks = connected_blocks(a.n_rows, a.n_cols, a.rows, a.cols, a.decision)
        if n_blocks == 0:
            return None, "no variable besides the decision"
        is_dec = label < 0
        free_cols = np.flatnonzero(~is_dec)
        if np.any(a.col_lower[free_cols] != 0.0):
            return None, "a variable besides the decision has a lower bound other than 0"
        cost = -a.cost if a.maximize else a.cost      # minimizing sense
        lo, up = a.row_lower, a.row_upper
        live = np.isfinite(lo) | np.isfinite(up)      # free rows (the relaxed ones) are not part of the model
        ent = live[a.rows]
        r, c, v = a.rows[ent], a.cols[ent], a.vals[ent]
        dec_ent = is_dec[c]
        n_free = np.bincount(r[~dec_ent], minlength=a.n_rows)
        n_dec = np.bincount(r[dec_ent], minlength=a.n_rows)
        if np.any(live & (n_free == 0)):
            return None, "a row on the decision alone is part of the model (not relaxed)"
        # bound rows: one free column, a finite bound on one side only, an upper bound on that column
        one = live & (n_free == 1)
        free_ent = ~dec_ent
        beta = np.zeros(a.n_rows)
        col_of = np.full(a.n_rows, -1, dtype=np.int64)
        sel = free_ent & one[r]
        beta[r[sel]] = v[sel]
        col_of[r[sel]] = c[sel]
        fin_lo, fin_up = np.isfinite(lo), np.isfinite(up)
        upper_only = ((beta > 0) & ~fin_lo & fin_up) | ((beta < 0) & fin_lo & ~fin_up)
        is_bound = one & upper_only
        # every other row must be the choose row of its block
        other = live & ~is_bound
        if np.any(other & (n_dec > 0)):
            return None, "a row holding the decision and the other variables is not an upper bound on one variable"
        o_ent = other[r]
        if np.any(v[o_ent] <= 0):
            return None, "a row joining several variables has a coefficient that is not positive"
        R = lo
        if np.any(other & ~(fin_lo & (R > 0))):
            return None, "a row joining several variables is not sum >= R or == R with R > 0"
        row_block = np.full(a.n_rows, -1, dtype=np.int64)
        row_block[r[o_ent]] = label[c[o_ent]]
        choose = np.flatnonzero(other)
        per_block = np.bincount(row_block[choose], minlength=n_blocks)
        if np.any(per_block != 1):
            return None, ("a block has no choose row" if np.any(per_block == 0)
                          else "a block has more than one row joining its variables")
        size = np.bincount(label[free_cols], minlength=n_blocks)
        if np.any(n_free[choose] != size[row_block[choose]]):
            return None, "a block's row joining its variables does not hold every variable of the block"
        chooser = np.empty(n_blocks, dtype=np.int64)
        chooser[row_block[choose]] = choose
        alpha = np.zeros(a.n_cols)
        alpha[c[o_ent]] = v[o_ent]
        unit = np.zeros(a.n_cols)
        unit[free_cols] = cost[free_cols] / alpha[free_cols]
        ranged = up[chooser] != lo[chooser]
        if np.any(up[chooser] < lo[chooser]):
            return None, "a row joining several variables has an empty range"
        neg = np.zeros(n_blocks, dtype=bool)
        np.logical_or.at(neg, label[free_cols], unit[free_cols] < 0)
        if np.any(ranged & neg):
            return None, "a row sum >= R (not == R) has a variable of negative cost"
        integ = np.zeros(n_blocks, dtype=np.int64)
        np.add.at(integ, label[free_cols], a.integer[free_cols].astype(np.int64))
        all_int = integ == size
        if np.any((integ > 0) & ~all_int):
            return None, "a block mixes integer and continuous variables"
        if np.any(all_int):
            ib = np.flatnonzero(all_int)
            int_cols = free_cols[all_int[label[free_cols]]]
            need_b = lo[chooser[ib]]
            if np.any(alpha[int_cols] != 1.0) or np.any(need_b != np.round(need_b)):
                return None, "a block of integer variables is not sum_j x_j == R with R an integer"
        cols_sorted, pos, groups = _block_groups(free_cols, unit, alpha, label, n_blocks, size, all_int, a.n_cols)
        bound = _bound_rows(a, (r, c, v, dec_ent), is_bound, beta, col_of, pos)
        need = lo[chooser]
        return cls(n_blocks, groups, bound, a.col_upper[cols_sorted], need, a.cost[a.decision], a.offset,
                   a.maximize, d), f"{n_blocks:,} independent choose-one blocks"

    def capacities(self, points) -> tuple[np.ndarray, np.ndarray]:
        """``(caps, infeasible)``: each column's capacity cap_j(w) at each point (rows of
        ``points``; columns in the greedy's order) and whether some capacity is below 0
        there (that point is infeasible)."""
        w = np.asarray(points, dtype=np.float64)
        caps = np.broadcast_to(self._col_upper, (w.shape[0], len(self._col_upper))).copy()
        bpos, h, G, scale = self._bound
        bad = np.zeros(w.shape[0], dtype=bool)
        if len(bpos):
            rc = h[None, :] - (G @ w.T).T                          # points x bound rows
            wmax = np.abs(w).max(axis=1, initial=0.0)[:, None]
            tol = _TOL * (1.0 + scale[None, :] * np.maximum(1.0, wmax))
            bad |= np.any(rc < -tol, axis=1)
            rc = np.where(rc < 0, 0.0, rc)
            cut = np.flatnonzero(np.r_[True, bpos[1:] != bpos[:-1]])
            caps[:, bpos[cut]] = np.minimum(caps[:, bpos[cut]], np.minimum.reduceat(rc, cut, axis=1))
        bad |= np.any(caps < 0, axis=1)
        return caps, bad

    def losses(self, points) -> tuple[np.ndarray, np.ndarray]:
        """``(losses, infeasible)`` at every row of ``points``: L(w) by the greedy fill of
        every block plus the decision's own costs and the constant (the model's sense),
        and whether the model with the decision at w is infeasible (then its loss is NaN)."""
        w = np.asarray(points, dtype=np.float64)
        caps, bad = self.capacities(w)
        total = np.zeros(w.shape[0])
        for _, per_block in self._fills(caps, bad):
            total += per_block.sum(axis=1)
        # total is the blocks' minimum in the minimizing sense (costs -c for a maximized objective)
        out = (w @ self._decision_cost + self._offset) + (-total if self._maximize else total)
        out[bad] = np.nan
        return out, bad

    def block_values(self, points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(values, rest, infeasible)`` at every row of ``points``: each block's optimum
        in the model's sense (points x blocks, in the blocks' order), the rest of L(w) (the
        decision's own costs and the constant), and whether the point is infeasible: L(w)
        is ``rest + values.sum(axis=1)`` (summed in another order than :meth:`losses`)."""
        w = np.asarray(points, dtype=np.float64)
        caps, bad = self.capacities(w)
        values = np.zeros((w.shape[0], self.n_blocks))
        for bs, per_block in self._fills(caps, bad):
            values[:, bs] = -per_block if self._maximize else per_block
        return values, w @ self._decision_cost + self._offset, bad

    def _fills(self, caps, bad):
        """``(blocks, cost)`` for each group of blocks of one size: the greedy fill's cost of
        each block at each point (points x blocks, minimizing sense); marks in ``bad`` the
        points where some block's row cannot be met."""
        for bs, positions, unit, alpha, integral in self._groups:
            k = caps[:, positions]                                   # points x blocks x size
            if np.any(integral):    # integer columns: x_j <= cap_j is x_j <= floor(cap_j)
                k = np.where(integral[None, :, None], np.floor(k + _TOL * (1.0 + np.abs(k))), k)
            need = self._need[bs][None, :]
            k = np.minimum(k * alpha[None], need[..., None])          # z-capacities, never above R
            k = np.maximum(k, 0.0)
            cum = np.cumsum(k, axis=2)
            bad |= np.any(cum[:, :, -1] < need * (1.0 - _TOL) - _TOL, axis=1)
            take = np.clip(need[..., None] - (cum - k), 0.0, k)
            yield bs, (take * unit[None]).sum(axis=2)


def closed_form_blocks(session) -> tuple[ChooseOneBlocks | None, str]:
    """``(evaluator, why)`` for the model a :class:`privopt.solvers.HighsFixedSession`
    holds (its decision the session's columns): the closed-form evaluator when every block
    is a choose-one block (:meth:`ChooseOneBlocks.detect`), else ``(None, why not)``."""
    arrays = lp_arrays(session)
    if arrays is None:
        return None, "HiGHS did not give the model's arrays"
    return ChooseOneBlocks.detect(arrays)


@dataclass(frozen=True)
class RecordBlocks:
    """The blocks of a linear model with the decision fixed that hold a column of the
    objective (:func:`connected_blocks`), read so that each one's part of the objective
    can be taken from a solution: with the decision fixed the blocks are independent
    problems, so at an optimum of the whole model each block's columns are an optimum of
    its own problem, and the objective is ``rest(w) + values(x).sum()``.  ``label[j]`` is
    the block of column j among the ``n_blocks`` objective blocks (-1 for the decision and
    for columns of blocks with no objective column); ``cost`` and ``offset`` are the
    objective's, in the model's sense; ``decision`` the decision's columns."""

    label: np.ndarray
    n_blocks: int
    cost: np.ndarray
    offset: float
    decision: np.ndarray

    def values(self, x) -> np.ndarray:
        """Each objective block's part of the objective at the solution ``x`` (every
        column's value, in the model's sense), in the blocks' order."""
        x = np.asarray(x, dtype=np.float64)
        keep = self.label >= 0
        return np.bincount(self.label[keep], weights=self.cost[keep] * x[keep], minlength=self.n_blocks)

    def rest(self, point, x=None) -> float:
        """The objective's terms on the decision (at ``point``) and its constant, and with
        the solution ``x`` the costs of the columns in no record's block (a variable
        declared part of the decision)."""
        out = float(self.cost[self.decision] @ np.asarray(point, dtype=np.float64) + self.offset)
        if x is not None:
            other = self.label < 0
            other[self.decision] = False
            if other.any():
                out += float(self.cost[other] @ np.asarray(x, dtype=np.float64)[other])
        return out


def record_blocks(session, columns) -> tuple[RecordBlocks | None, str]:
    """``(blocks, why)`` for the model a :class:`privopt.solvers.HighsFixedSession` holds,
    with the records' blocks found by the model's contract
    (:func:`privopt.models.record_split`, the one finder) and given as ``columns``:
    ``{column: block}`` for the session's columns (:meth:`HighsFixedSession.column_of`).
    The blocks are renumbered in the order of their first column, so that the sum of their
    parts runs in the columns' order.  ``(None, why not)`` when HiGHS does not give the
    model's arrays or the objective is quadratic (a block's part is then not read from the
    column costs).  Reads the structure and the objective's costs only."""
    a = lp_arrays(session)
    if a is None:
        return None, "HiGHS did not give the model's arrays"
    if a.quadratic:
        return None, "the objective is quadratic"
    label = np.full(a.n_cols, -1, dtype=np.int64)
    for col, block in columns.items():
        if 0 <= col < a.n_cols:
            label[col] = block
    used = label >= 0
    if not used.any():
        return RecordBlocks(label, 0, a.cost.copy(), a.offset, a.decision.copy()), ""
    blocks = np.unique(label[used])
    first = np.array([np.flatnonzero(label == b)[0] for b in blocks])
    rank = np.full(int(blocks.max()) + 1, -1, dtype=np.int64)
    rank[blocks[np.argsort(first, kind="stable")]] = np.arange(len(blocks))
    out = np.where(used, rank[np.maximum(label, 0)], -1)
    return RecordBlocks(out, len(blocks), a.cost.copy(), a.offset, a.decision.copy()), ""

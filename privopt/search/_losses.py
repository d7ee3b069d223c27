"""The exact 0/1 loss of every point of W_tau of a 0/1-loss halfspace model, without Pyomo:
streamed in the enumeration's order (:func:`iter_losses`) by one of two engines with the
same numbers, dense (one matrix product per block with the distinct rows, or the compiled
integer scorer :class:`IntegerLattice` where features and grid are integers) or sparse
(the losses tabulated per support, :class:`SparseTables`), the cheaper chosen from public
sizes (:func:`choose_engine`, :func:`scoring_costs`).  Read by OPDisc's exact oracle
(:mod:`privopt.solvers`, ``solver="enumerate"``) and by private selection's scoring and
branch and bound (:mod:`privopt.search._argmax`)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._limits import SPARSE_MAX_PATTERNS
from .._numba import lazy_kernel
from ..space import count_grid_points, iter_grid_blocks, uniform_grid

__all__ = ["block_points_for", "choose_engine", "iter_losses", "IntegerLattice", "SparseTables",
           "sparse_applicable", "scoring_costs"]

#: Score entries evaluated per block (rows x points): bounds the memory to a
#: few hundred MB.
_BLOCK_ENTRIES = 8_000_000


def block_points_for(rows: int) -> int:
    """Points per scoring block for ``rows`` distinct rows (memory bound)."""
    return max(1, _BLOCK_ENTRIES // max(1, rows))


def choose_engine(data, coef, bound, n_points=None) -> str:
    """``"sparse"`` or ``"dense"``: the engine with the smaller work estimate
    (:func:`scoring_costs`) for this model.  Both return the same losses in
    the same order, so the choice changes the time only."""
    if not sparse_applicable(data):
        return "dense"
    if n_points is None:
        n_points = count_grid_points(coef, bound)
    X = data.X
    base = len(np.unique(X))
    dense, sparse = scoring_costs(n_points, X.shape[0], X.shape[1], coef, bound, data.grid, base)
    if sparse is None or sparse >= dense:
        return "dense"
    zero = uniform_grid(data.grid).index(0.0)
    umin = min(c for k, c in enumerate(coef[0]) if k != zero)
    kmax = min(X.shape[1], int(bound // umin)) if umin > 0 else X.shape[1]
    return "sparse" if base ** kmax <= SPARSE_MAX_PATTERNS else "dense"


def iter_losses(data, coef, bound, block_points=None, engine="auto"):
    """The exact 0/1 loss of every point of W_tau, streamed: yields
    ``(values, units, losses)`` per block, in the order of
    :func:`iter_grid_blocks`.  ``losses`` is the number of misclassified
    training records minus a constant that does not depend on w (rows with as
    many positive as negative labels are dropped by the model builder).

    ``engine``: ``"dense"`` scores each block by one matrix product with the
    distinct rows; ``"sparse"`` tabulates the losses per support first
    (:class:`SparseTables`); ``"auto"`` takes the cheaper
    (:func:`choose_engine`).  The losses are identical."""
    X = data.X
    if engine == "auto":
        engine = choose_engine(data, coef, bound)
    tables = SparseTables(data, coef, bound) if engine == "sparse" else None
    if block_points is None:
        block_points = (block_points_for(X.shape[0]) if tables is None
                        else max(1, _BLOCK_ENTRIES // (8 * max(1, X.shape[1]))))
    lattice = IntegerLattice.of(data) if tables is None else None
    for vals, units in iter_grid_blocks(data.grid, coef, bound, block_points):
        if tables is not None:
            losses = tables.losses(vals)
        elif lattice is not None:
            losses = lattice.losses(vals)
        else:
            losses = _loss(X @ vals.T, data)
        yield vals, units, losses


def _build_dense_kernel(numba):
    """The compiled dense scorer of :class:`IntegerLattice` (None without numba)."""

    @numba.njit(cache=True)
    def kernel(xt, diff, total_pos, thr, vals, out):   # pragma: no cover - compiled
        # level[j, r] = sum_{i >= j} x[r, i] w_i of the current point; a point that shares
        # coordinates h+1.. with the previous one (the enumeration's order: coordinate 0
        # fastest) updates levels h..1 only, then scores coordinate 0 against every row
        d, rows = xt.shape
        level = np.zeros((d + 1, rows), dtype=np.int64)
        prev = np.zeros(d, dtype=np.int64)
        w = np.zeros(d, dtype=np.int64)
        for p in range(vals.shape[0]):
            for j in range(d):
                w[j] = np.int64(vals[p, j])
            h = d - 1 if p == 0 else 0
            if p > 0:
                for j in range(d - 1, 0, -1):
                    if w[j] != prev[j]:
                        h = j
                        break
            for j in range(h, 0, -1):
                wj = w[j]
                for r in range(rows):
                    level[j, r] = level[j + 1, r] + xt[j, r] * wj
            w0 = w[0]
            acc = np.int64(0)
            for r in range(rows):
                acc += diff[r] * np.int64(level[1, r] + xt[0, r] * w0 >= thr)
            out[p] = np.float64(total_pos - acc)
            for j in range(d):
                prev[j] = w[j]

    return kernel


_dense_kernel = lazy_kernel(_build_dense_kernel)

#: Largest |score| the integer scorer accepts: every <w, x> and every partial sum is then
#: an exact integer in int64 and in float64 (whose comparison with theta numpy makes).
_MAX_INTEGER_SCORE = 2 ** 52


class IntegerLattice:
    """The dense engine's losses in exact integer arithmetic, compiled.

    Where the rule is exact and every feature value and grid value is an
    integer, every score <w, x> is an integer, so ``score >= theta`` is
    ``score >= ceil(theta)`` and the loss is ``sum(pos) - sum of (pos - neg)
    over the rows predicted +1``: integers, the same numbers :func:`_loss`
    computes in floating point from the same comparisons (exact below 2^52).
    The kernel keeps each row's partial score over the coordinates 1..d-1 and
    updates it only where the point changes (consecutive points of the
    enumeration differ mostly in coordinate 0), so a point costs about one
    pass over the rows.  Built by :meth:`of` where it applies and numba is
    installed, else None (the caller takes the numpy path)."""

    def __init__(self, data, kernel):
        X = np.asarray(data.X)
        self.xt = np.ascontiguousarray(X.T.astype(np.int64))
        self.diff = np.asarray(data.pos - data.neg, dtype=np.int64)
        self.total_pos = int(np.asarray(data.pos).sum())
        self.thr = int(math.ceil(data.theta))
        self.kernel = kernel

    @classmethod
    def of(cls, data):
        """The scorer for this enumeration data, or None where it does not apply."""
        if not data.exact or not math.isfinite(data.theta):
            return None
        X = np.asarray(data.X, dtype=np.float64)
        values = np.array([v for g in data.grid for v in g], dtype=np.float64)
        if X.size == 0 or not (np.all(X == np.round(X)) and np.all(values == np.round(values))):
            return None
        largest = float(np.abs(X).sum(axis=1).max()) * float(np.abs(values).max(initial=0.0))
        if largest >= _MAX_INTEGER_SCORE or abs(data.theta) >= _MAX_INTEGER_SCORE:
            return None
        kernel = _dense_kernel()
        return None if kernel is None else cls(data, kernel)

    def losses(self, vals):
        """The loss of every point (row) of ``vals``, in its order: float64, as :func:`_loss`."""
        out = np.empty(vals.shape[0], dtype=np.float64)
        self.kernel(self.xt, self.diff, self.total_pos, self.thr, np.ascontiguousarray(vals, dtype=np.float64),
                    out)
        return out


def _loss(S, data):
    """Exact 0/1 loss of every column of the score matrix S (rows x points)."""
    pos, neg = data.pos, data.neg
    if data.exact:
        positive = S >= data.theta                 # +1 iff score >= theta (= t - mu/2)
        return float(pos.sum()) - (pos - neg).astype(np.float64) @ positive
    tol = 1e-9 * (1.0 + abs(data.t_hi))
    wrong_pos = S < data.t_hi - tol                # +1 correct iff score >= t
    wrong_neg = S > data.t_hi - data.mu + tol   # -1 correct iff score <= t - mu
    return pos.astype(np.float64) @ wrong_pos + neg.astype(np.float64) @ wrong_neg


# ---------------------------------------------------------------------------
# Sparse scoring: losses tabulated per support, looked up in the dense order
# ---------------------------------------------------------------------------

#: Fixed work of setting up the sparse engine (its compiled kernel, the
#: tables), in multiply-add units: small problems stay dense.
_SPARSE_SETUP_COST = 2_000_000_000
#: Work units of one (point, coordinate) of the dense point stream that the
#: sparse engine still pays (generation of the point in the dense order and
#: its table lookup), relative to one multiply-add of the dense engine:
#: measured at about 100 by ``benchmarks/bench_selection.py`` (1.7 million
#: points at d = 41 read back in 4.6 s).
_SPARSE_POINT_COST = 100


def _build_numba_hist(numba):
    """The compiled pattern-histogram kernel (compiled on first use; None without numba)."""

    @numba.njit(parallel=True, cache=True)
    def kernel(xdig_t, diff, supports, base, npat):   # pragma: no cover - compiled
        m, k = supports.shape
        rows = xdig_t.shape[1]
        hist = np.zeros((m, npat))
        for s in numba.prange(m):
            for r in range(rows):
                code = 0
                mul = 1
                for i in range(k):
                    code += xdig_t[supports[s, i], r] * mul
                    mul *= base
                hist[s, code] += diff[r]
        return hist

    return kernel


_numba_hist = lazy_kernel(_build_numba_hist)


def _pattern_histograms(xdig, xdig_t, diff, S, base, npat, use_numba=True):
    """hist[s, p] = sum of diff over the rows whose values on support S[s]
    have pattern code p = sum_i digit_i base^i (numba kernel or numpy)."""
    kernel = _numba_hist() if use_numba else None
    if kernel is not None:
        return kernel(xdig_t, diff, S, base, npat)
    k = S.shape[1]
    codes = (xdig[:, S] * (base ** np.arange(k))).sum(axis=2)               # (rows, m)
    codes += (np.arange(S.shape[0]) * npat)[None, :]
    return np.bincount(codes.ravel(), weights=np.repeat(diff, S.shape[0]),
                       minlength=S.shape[0] * npat).reshape(S.shape[0], npat)


class SparseTables:
    """The exact 0/1 loss of every point of W_tau, computed per support.

    A point's score on a row depends only on the row's values on the point's
    support S (its nonzero coordinates).  On a ball of small radius every
    support is small (at D = 2 on an integer grid, at most 4 coordinates), and
    the rows restricted to S collapse to at most base^|S| patterns (base = the
    number of distinct feature values).  For each support the pattern
    histogram of (positive - negative) counts is built once, and the loss of
    every value vector on S is one small matrix product with the pattern
    matrix's prediction table, for all supports of a size at once.

    The table is then read in the order of :func:`iter_grid_blocks` (the
    dense engine's order), by the colexicographic rank of each point's support
    and the rank of its value vector, so both engines return the same losses
    for the same points in the same order: the choice of engine changes the
    time, never the answer.  It needs the exact decision rule and one grid
    shared by every coordinate, with 0 in it.
    """

    def __init__(self, data, coef, bound, chunk_entries=4_000_000, use_numba=True):
        grid = uniform_grid(data.grid)
        if grid is None or not data.exact:
            raise ValueError("sparse scoring needs the exact rule and one grid with 0 for every coordinate")
        X = data.X
        self.d = d = X.shape[1]
        zero = grid.index(0.0)
        nz_idx = [k for k in range(len(grid)) if k != zero]
        self.nz_values = np.array([grid[k] for k in nz_idx])
        units = np.array([coef[0][k] for k in nz_idx], dtype=np.int64)
        G = len(nz_idx)
        self.G = G
        U, Xdig = np.unique(X, return_inverse=True)
        Xdig = Xdig.reshape(X.shape).astype(np.int64)
        Xdig_t = np.ascontiguousarray(Xdig.T.astype(np.uint8 if len(U) <= 255 else np.int64))
        base = len(U)
        rows = X.shape[0]
        diff = (data.pos - data.neg).astype(np.float64)
        total_pos = float(data.pos.sum())
        theta = data.theta
        kmax = int(bound // units.min()) if units.min() > 0 else d
        kmax = min(kmax, d)
        if base ** kmax > SPARSE_MAX_PATTERNS:
            raise ValueError("too many row patterns for sparse scoring")
        from math import comb

        self.binom = np.array([[comb(j, t) for t in range(d + 2)] for j in range(d + 1)], dtype=np.int64)
        self.tables, self.lookup, self.offsets = [], [], []
        offset = 0
        for k in range(kmax + 1):
            # value vectors on a support of size k, ordered by code sum_i digit_i G^i
            if k == 0:
                V = np.zeros((1, 0))
                lookup = np.zeros(1, dtype=np.int64)
            else:
                digits = np.array(list(itertools.product(range(G), repeat=k)))[:, ::-1]  # digit i at column i
                codes = (digits * (G ** np.arange(k))).sum(axis=1)
                order = np.argsort(codes)
                digits, codes = digits[order], codes[order]
                keep = units[digits].sum(axis=1) <= bound
                digits, codes = digits[keep], codes[keep]
                V = self.nz_values[digits]
                lookup = np.full(G ** k, -1, dtype=np.int64)
                lookup[codes] = np.arange(len(codes))
            nV = V.shape[0]
            if nV == 0:
                break
            n_supports = comb(d, k)
            # patterns: code sum_i digit_i base^i -> values U[digit_i]
            if k == 0:
                positive = (np.zeros((1, 1)) >= theta).astype(np.float64)       # score 0 on every row
                table = np.full((1, 1), total_pos - diff.sum() * positive[0, 0])
            else:
                pdig = np.array(list(itertools.product(range(base), repeat=k)))[:, ::-1]
                P = U[pdig]                                       # (base^k, k)
                positive = (P @ V.T >= theta).astype(np.float64)  # (base^k, nV)
                supports = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64)
                ranks = self._colex(supports)
                supports = supports[np.argsort(ranks)]
                table = np.empty((n_supports, nV))
                npat = base ** k
                m = max(1, chunk_entries // max(rows if not use_numba else 1, npat))
                for lo in range(0, n_supports, m):
                    S = supports[lo:lo + m]
                    hist = _pattern_histograms(Xdig, Xdig_t, diff, S, base, npat, use_numba)
                    table[lo:lo + m] = total_pos - hist @ positive
            self.tables.append(table.ravel())
            self.lookup.append(lookup)
            self.offsets.append(offset)
            offset += table.size
        self.flat = np.concatenate(self.tables)
        self.kmax = len(self.tables) - 1
        self.nV = [len(t) // max(1, comb(d, k)) for k, t in enumerate(self.tables)]

    def _colex(self, supports):
        """Colexicographic rank of sorted index tuples: sum_i C(c_i, i + 1)."""
        k = supports.shape[1]
        return sum(self.binom[supports[:, i], i + 1] for i in range(k)) if k else np.zeros(len(supports), int)

    def losses(self, vals):
        """Losses of the points ``vals`` (rows of a dense block) from the tables."""
        nz = vals != 0
        ordinal = np.cumsum(nz, axis=1)                       # 1-based position among the nonzeros
        k = ordinal[:, -1]
        cols = np.arange(self.d)[None, :]
        rank = np.where(nz, self.binom[cols, np.where(nz, ordinal, 0)], 0).sum(axis=1)
        digit = np.searchsorted(self.nz_values, vals)          # index among the nonzero values
        code = np.where(nz, digit * (self.G ** np.maximum(ordinal - 1, 0)), 0).sum(axis=1)
        out = np.empty(vals.shape[0])
        for kk in np.unique(k):
            sel = k == kk
            vidx = self.lookup[kk][code[sel]]
            out[sel] = self.flat[self.offsets[kk] + rank[sel] * self.nV[kk] + vidx]
        return out


def sparse_applicable(data) -> bool:
    """Whether :class:`SparseTables` can score this model (exact rule, one grid with 0)."""
    return bool(data.exact) and uniform_grid(data.grid) is not None


def scoring_costs(n_points: int, rows: int, d: int, coef, bound, grid=None, base=None):
    """(dense, sparse) work estimates in multiply-add units for ``rows``
    distinct rows (sparse is None where it does not apply): dense
    |W| rows (d + 18); sparse sum_k C(d, k) (rows (k + 2) + P_k V_k) for the
    pattern histograms and their products with the prediction tables (P_k =
    min(base^k, rows) patterns, V_k value vectors on a support of size k),
    plus |W| d * 100 for reading the table back in the dense order."""
    from math import comb

    dense = n_points * max(1, rows) * (d + 18)
    g = uniform_grid(grid) if grid is not None else None
    if g is None:
        return dense, None
    zero = g.index(0.0)
    umin = min(c for k, c in enumerate(coef[0]) if k != zero)
    kmax = min(d, int(bound // umin)) if umin > 0 else d
    nonzero_units = [c for k, c in enumerate(coef[0]) if k != zero]
    b = max(1, rows) if base is None else base
    hist = 0
    for k in range(1, kmax + 1):
        # value vectors on a support of size k: k-tuples of nonzero values within the bound
        n_values = count_grid_points([nonzero_units] * k, bound)
        hist += comb(d, k) * (max(1, rows) * (k + 2) + min(b ** k, max(1, rows)) * n_values)
    return dense, _SPARSE_SETUP_COST + hist + n_points * d * _SPARSE_POINT_COST

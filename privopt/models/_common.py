"""Shared helpers of the model catalogue: argument checks, grids, exact
lattices, row merging and fast construction of linear constraints.

Nothing here is public API; the builders in :mod:`privopt.models.halfspace`
and :mod:`privopt.models.convex` use it.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

# SNAP_TOL: relative tolerance used to snap a squared norm bound or a lattice coordinate onto
# the exact integer it represents (sqrt(23)**2 is 22.999999999999996; it means 23).
from .._lattice import SNAP_TOL, check_grid_size, grid_separation, snapped_floor  # noqa: F401  (re-exported)
from .._lattice import unique_values
from .. import space
from .._validation import check_array_2d, check_positive
from ..exceptions import ParameterError, ParameterTypeError, PrivacyLeakWarning
from ._info import get_info

__all__: list[str] = []

#: A conservative bound on the integrality tolerance of the solvers privopt
#: drives with their default settings (GLPK tol_int 1e-5; HiGHS, CBC, SCIP
#: 1e-6).  A binary e_k may be as far as this from 0 or 1 in a returned
#: "integral" solution, which moves a big-M constraint by M * INT_TOL.
INT_TOL = 1e-5


STATS_ATTR = "_privopt_build_stats"
#: Attribute holding what ``solver="enumerate"`` and the exact search engine need
#: (a :class:`privopt.search.HalfspaceData`, set by zero_one_halfspace).
ENUMERATION_ATTR = "_privopt_enumeration"


def build_stats(model) -> dict:
    """Size statistics recorded while building a catalogue model (rows after
    merging, dropped tie rows, chain cuts, objective constant, build time).

    They are computed from the private data: diagnostics for whoever holds
    the data, not part of any release (unlike the :class:`ModelInfo`).
    """
    return dict(getattr(model, STATS_ATTR, {}) or {})


def get_weights(model) -> np.ndarray:
    """The values of ``model.w`` (after a solve) as a vector; on discrete
    models each value is snapped to the nearest value of its coordinate grid
    (a solver returns integers only up to its integrality tolerance)."""
    info = get_info(model)
    name = info.weights if info is not None else "w"
    var = getattr(model, name, None)
    if var is None:
        raise ParameterError(f"the model has no component {name!r}.", "model")
    keys = sorted(var.keys())
    vals = np.array([np.nan if var[k].value is None else float(var[k].value) for k in keys])
    if np.any(np.isnan(vals)):
        raise ParameterError("model.w has no value; solve the model first.", "model")
    if info is not None and info.grid is not None:
        for j, g in enumerate(info.grid):
            ga = np.asarray(g, dtype=float)
            vals[j] = ga[np.argmin(np.abs(ga - vals[j]))]
    return vals


# ----------------------------------------------------------------------------
# small argument checks
# ----------------------------------------------------------------------------

def check_name(value, name: str = "name") -> str:
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a string, got {type(value).__name__}.", name)
    return value


def check_X(X, name: str = "X") -> np.ndarray:
    """Finite 2-D float copy of X with -0.0 normalized to 0.0 (so that
    identical rows compare equal byte-wise)."""
    arr = check_array_2d(X, name)
    arr += 0.0
    return arr


def add_intercept(X: np.ndarray) -> np.ndarray:
    return np.hstack([X, np.ones((X.shape[0], 1))])


def check_target(y, n_rows: int, name: str = "y") -> np.ndarray:
    """A finite 1-D float copy of a regression target with ``n_rows`` entries."""
    try:
        arr = np.array(y, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be a 1-D array of numbers: {exc}", name) from exc
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ParameterError(f"{name} must be 1-D, got shape {arr.shape}.", name)
    if arr.shape[0] != n_rows:
        raise ParameterError(
            f"{name} has {arr.shape[0]} values but X has {n_rows} rows; they must match.", name
        )
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite values; remove or impute them.", name)
    return arr


def per_feature_bound(value, d: int, name: str, data_abs_max: np.ndarray | None, *, what: str) -> np.ndarray:
    """A public bound on |x_j| per feature: a scalar or a length-d sequence of
    positive numbers.  ``None`` infers it from the data (``data_abs_max``) and
    emits a :class:`PrivacyLeakWarning`."""
    if value is None:
        warnings.warn(
            f"{name} was not given, so the bound on {what} is taken from the private data; "
            f"the loss scale then depends on the data and the privacy guarantee does not "
            f"hold as stated. Pass {name} from public knowledge of the feature ranges.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        out = np.asarray(data_abs_max, dtype=float).copy()
        out[out <= 0] = 1.0  # an all-zero column: any positive bound is valid
        return out
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = check_positive(value, name)
        return np.full(d, v)
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be a positive number or a sequence of {d} of them.", name) from exc
    if arr.shape != (d,):
        raise ParameterError(
            f"{name} must be a number or have one entry per feature ({d}), got shape {arr.shape}.", name)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ParameterError(f"{name} must contain finite numbers > 0, got {arr.tolist()}.", name)
    return arr


# ----------------------------------------------------------------------------
# exact lattices
# ----------------------------------------------------------------------------

def is_integral(values) -> bool:
    arr = np.asarray(values, dtype=float)
    return bool(np.all(arr == np.round(arr)))


# ----------------------------------------------------------------------------
# grids
# ----------------------------------------------------------------------------

def parse_grid(grid, d: int, name: str = "grid") -> tuple:
    """Per-coordinate grids of a catalogue model (one sorted tuple per
    coordinate): :func:`privopt.space.parse_grid` with at least two values
    per coordinate, each integral coordinate as Python ints (the exact
    margin reads them as integers).  ``None``: the integers -B..B with
    B = floor(sqrt(d)) ([NRVW20], Section 5)."""
    return space.integral_typed(space.parse_grid(grid, d, name, min_values=2))


# ----------------------------------------------------------------------------
# merging
# ----------------------------------------------------------------------------

#: Widest sum of the columns' integer spans :func:`column_codes` counts in one table.
_CODES_SPAN = 1 << 20


def column_codes(X: np.ndarray) -> np.ndarray:
    """Integer codes of X's values, column by column (equal values, equal codes;
    order preserved): each column's :func:`privopt._lattice.unique_values` inverse.  Where
    every entry is an integer and the columns' spans sum to at most :data:`_CODES_SPAN`
    (discretized features), all columns are counted in one table at once, the same codes."""
    C = _integer_column_codes(X)
    if C is not None:
        return C
    C = np.empty(X.shape, dtype=np.int64)
    for j in range(X.shape[1]):
        C[:, j] = unique_values(X[:, j])[1]
    return C


def column_extremes(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X.min(axis=0), X.max(axis=0))`` of a 2-D array, the same values, read from a
    column-major copy where X is row-major with several rows: numpy reduces a C-ordered
    (n, d) table of few columns along its rows an order of magnitude slower than along
    contiguous columns (2,000 x 7: about 140 us against 15 us with the copy)."""
    F = np.asfortranarray(X) if X.ndim == 2 and X.shape[0] > 1 else X
    return F.min(axis=0), F.max(axis=0)


def _integer_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(X as float64, each column's smallest, each column's span hi - lo + 1)`` of a
    non-empty 2-D X of finite whole numbers, else None (the codes' and keys' shortcuts)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.size == 0:
        return None
    Xf = np.asarray(X, dtype=np.float64)
    lo, hi = column_extremes(Xf)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or not np.array_equal(Xf, np.round(Xf)):
        return None
    return Xf, lo, hi - lo + 1


def _integer_column_codes(X: np.ndarray) -> np.ndarray | None:
    """:func:`column_codes` of an integer-valued X of small spans in one table (the rank of
    each entry among its column's distinct values), or None where it does not apply."""
    table = _integer_columns(X)
    if table is None or float(table[2].sum()) > _CODES_SPAN:
        return None
    Xf, lo, spans = table
    offset = np.concatenate([[0], np.cumsum(spans[:-1])]).astype(np.int64)
    flat = (Xf - lo).astype(np.int64) + offset
    present = np.bincount(flat.reshape(-1), minlength=int(spans.sum())) > 0
    cum = np.cumsum(present)
    before: np.ndarray = cum[offset] - present[offset]          # distinct values of the columns to the left
    return cum[flat] - 1 - before


def unique_rows(X: np.ndarray):
    """Distinct rows of X in lexicographic order, and the inverse map (X ==
    Xu[inv]).  Same result as ``np.unique(X, axis=0, return_inverse=True)``
    but much faster: rows are sorted by their per-column integer codes, read
    as one mixed-radix integer per row (one sort), or with ``np.lexsort`` where
    that integer would not fit in int64, instead of an argsort of byte strings."""
    n = X.shape[0]
    key = _offset_row_keys(X)      # integer features of small spans: no codes needed
    C = None
    if key is None:
        C = column_codes(X)
        key = _row_keys(C)
    if key is None:
        assert C is not None
        order = np.lexsort(C.T[::-1])
        Cs = C[order]
        new = np.ones(n, dtype=bool)
        new[1:] = np.any(Cs[1:] != Cs[:-1], axis=1)
    else:       # one integer per row, in the same order: one sort instead of a sort per column
        order = np.argsort(key, kind="stable")
        ks = key[order]
        new = np.ones(n, dtype=bool)
        new[1:] = ks[1:] != ks[:-1]
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return X[order[new]], inv


def _offset_row_keys(X: np.ndarray) -> np.ndarray | None:
    """Each row as one integer in mixed radix over its entries less their column's
    smallest (radix: the column's span), where X is integer-valued and the spans' product
    is below 2^62; else None.  Each column's map is increasing, so the keys sort the rows
    exactly as the codes of :func:`_row_keys` do (the same order, the same ties)."""
    table = _integer_columns(X)
    if table is None or float(np.prod(table[2])) >= 2.0 ** 61:
        return None
    Xf, lo, spans = table
    codes = (Xf - lo).astype(np.int64)
    key = np.zeros(X.shape[0], dtype=np.int64)
    for j in range(X.shape[1]):
        key = key * int(spans[j]) + codes[:, j]
    return key


def _row_keys(C: np.ndarray) -> np.ndarray | None:
    """Each row's column codes as one integer in mixed radix (the first column most
    significant: the rows' lexicographic order), or None where the radices' product
    would pass 2^62."""
    radix = C.max(axis=0, initial=0) + 1 if C.size else np.ones(C.shape[1], dtype=np.int64)
    if math.prod(int(r) for r in radix) >= 2 ** 62:
        return None
    key = np.zeros(C.shape[0], dtype=np.int64)
    for j in range(C.shape[1]):
        key = key * int(radix[j]) + C[:, j]
    return key


def one_coordinate_pairs(X: np.ndarray, j: int, codes: np.ndarray | None = None):
    """Pairs (a, b) of rows of X (distinct rows) that agree on every
    coordinate but j, consecutive when each such group is sorted by x_j, so
    x_b = x_a + t e_j with t > 0."""
    C = column_codes(X) if codes is None else codes
    d = X.shape[1]
    others = [c for c in range(d) if c != j]
    keys = [C[:, j]] + [C[:, c] for c in reversed(others)]
    order = np.lexsort(keys)
    a, b = order[:-1], order[1:]
    if others:
        same = np.all(C[a][:, others] == C[b][:, others], axis=1)
    else:
        same = np.ones(a.size, dtype=bool)
    same &= C[b, j] > C[a, j]
    return a[same], b[same]


# ----------------------------------------------------------------------------
# fast construction
# ----------------------------------------------------------------------------

def linear_rows(X: np.ndarray, variables: list) -> list:
    """For each row of X, the pair (coefficients, variables) of its nonzero
    entries: the linear form <x, w> as plain Python lists."""
    nz_rows, nz_cols = np.nonzero(X)
    vals = X[nz_rows, nz_cols].tolist()
    cols = nz_cols.tolist()
    starts = np.searchsorted(nz_rows, np.arange(X.shape[0] + 1)).tolist()
    out = []
    for k in range(X.shape[0]):
        a, b = starts[k], starts[k + 1]
        out.append((vals[a:b], [variables[c] for c in cols[a:b]]))
    return out


def linexpr(coefs, variables, constant=0.0) -> LinearExpression:
    """constant + sum_i coefs[i] * variables[i] as one LinearExpression (no
    operator overloading: the fast path for building thousands of rows)."""
    args = [MonomialTermExpression((c, v)) for c, v in zip(coefs, variables)]
    if constant:
        args.insert(0, constant)
    return LinearExpression(args)


def add_constraints(block, name: str, triples: list) -> None:
    """Add ``block.<name>[k]`` for k in range(len(triples)) where triples[k]
    is (lower, LinearExpression, upper) with None for a missing side."""
    con = pyo.Constraint(range(len(triples)), rule=lambda m, k: triples[k])
    block.add_component(name, con)

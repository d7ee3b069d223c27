"""Convex losses over a box, normalized to [0, 1]: hinge (LP), absolute (LP)
and squared (QP) loss of a linear predictor.

OPSamp ([NRVW20], Algorithm 2) needs per-example losses
with values in [0, 1] that are G-Lipschitz with respect to l1 on a parameter
set W of known l_inf and l2 diameters.  These builders take W = [-b, b]^d
(``bound`` = b, continuous w) and divide each loss by a constant C computed
from PUBLIC bounds, which keeps it convex (a positive multiple of a convex
function) and puts it in [0, 1] on W.

Normalization
-------------
Let beta_j be a public bound on |x_j| (``x_bound``; the data are clipped to
[-beta_j, beta_j], a per-record map that costs no privacy), X_1 = sum_j beta_j,
X_inf = max_j beta_j, X_2 = sqrt(sum_j beta_j^2).  For w in W and any x,
|<w, x>| <= ||w||_inf ||x||_1 <= b X_1 (Hoelder).

* hinge:     l_i(w) = max(0, 1 - y_i <w, x_i>) / C,       C = 1 + b X_1.
  0 <= 1 - y <w, x> <= 1 + b X_1 on its positive part, so l_i in [0, 1].
* absolute:  l_i(w) = |y_i - <w, x_i>| / C,                C = Y + b X_1,
  with |y_i| <= Y (``y_bound``; y clipped to [-Y, Y]).
* squared:   l_i(w) = (y_i - <w, x_i>)^2 / C^2,            C = Y + b X_1.

Lipschitz constants
-------------------
For hinge and absolute loss the map u -> max(0, 1 - y u) (resp. |y - u|) is
1-Lipschitz in the score u = <w, x>, and |<w - w', x>| <= ||w - w'||_1
||x||_inf <= ||w - w'||_1 X_inf, and <= ||w - w'||_2 X_2 (Cauchy-Schwarz), so

    lipschitz_l1 = X_inf / C,    lipschitz (l2) = X_2 / C.

For the squared loss, |a^2 - a'^2| = |a - a'| |a + a'| <= |a - a'| 2C with
a = y - <w, x> in [-C, C], so lipschitz_l1 = 2 X_inf / C and lipschitz =
2 X_2 / C.

Diameters of W: linf_diameter = 2b, l2_diameter = 2b sqrt(d); ||w||_2 <=
b sqrt(d) = info.norm_bound.  With ``fit_intercept=True`` a constant feature 1
(beta = 1) is appended and its weight is the last coordinate.

Identical records (same x and same y) are merged into one term with a count
weight (``merge_rows=True``), which changes nothing in the loss.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyomo.environ as pyo

from .._limits import MODEL_MAX_TERMS, check_width
from .._validation import check_binary_labels, check_bool, check_positive
from ._common import (
    STATS_ATTR as _STATS_ATTR,
    add_constraints,
    add_intercept,
    check_name,
    check_target,
    check_X,
    linear_rows,
    linexpr,
    per_feature_bound,
    unique_rows,
)
from ._info import ModelInfo, attach_info

__all__ = ["hinge_halfspace", "absolute_regression", "squared_regression"]

#: The fix of a model too wide for a Pyomo builder.
_FEWER = ("Give fewer features (select or aggregate columns of X); for a linear classifier on "
          "many features, the convex baselines of privopt.baselines (e.g. OutputPerturbationLogisticRegression) "
          "scale linearly in them.")


def _check_width(X, name: str) -> None:
    """Refuse, from X's shape alone, a model of more than :data:`privopt._limits.MODEL_MAX_TERMS`
    feature terms (one per record and feature, the intercept included), before X is read."""
    check_width(X, what=f"{name}'s Pyomo model", fix=_FEWER, max_terms=MODEL_MAX_TERMS, extra_columns=1)


def _check_quadratic_width(X) -> None:
    """squared_regression writes d(d+1)/2 terms of X^T X whatever n is: refuse, from X's
    shape alone, a d with more than :data:`privopt._limits.MODEL_MAX_TERMS` of them
    (d up to 2,000), before X is read (and the d x d Gram matrix built)."""
    check_width(X, what="squared_regression's Pyomo model (d(d+1)/2 quadratic terms)", fix=_FEWER,
                max_features=math.isqrt(2 * MODEL_MAX_TERMS) - 1)


def _prepare(X, fit_intercept, x_bound):
    Xa = check_X(X)
    fit_intercept = check_bool(fit_intercept, "fit_intercept")
    d0 = Xa.shape[1]
    beta = per_feature_bound(x_bound, d0, "x_bound", np.abs(Xa).max(axis=0), what="|x_j|")
    Xa = np.clip(Xa, -beta, beta) + 0.0
    if fit_intercept:
        Xa = add_intercept(Xa)
        beta = np.append(beta, 1.0)
    return Xa, beta, fit_intercept


def _y_bound(y_bound, y):
    if y_bound is None:
        return float(per_feature_bound(None, 1, "y_bound", np.array([np.abs(y).max()]), what="|y|")[0])
    return check_positive(y_bound, "y_bound")


def _box_model(name, d, bound):
    check_name(name)
    model = pyo.ConcreteModel(name=name)
    model.w = pyo.Var(range(d), domain=pyo.Reals, bounds=(-bound, bound))
    return model


def _merge_xy(Xa, y, merge_rows):
    if not merge_rows:
        return Xa, y, np.ones(Xa.shape[0], dtype=np.int64)
    rows, inv = unique_rows(np.hstack([Xa, y[:, None].astype(float)]))
    counts = np.bincount(inv, minlength=rows.shape[0])
    return rows[:, :-1], rows[:, -1], counts


def _info(*, d, n, bound, beta, C, factor, extra):
    X2 = float(np.sqrt((beta ** 2).sum()))
    return ModelInfo(
        weights="w",
        grid=None,
        separation=None,
        norm_bound=float(bound * math.sqrt(d)),
        loss_range=(0.0, 1.0),
        lipschitz=float(factor * X2 / C),
        lipschitz_l1=float(factor * beta.max() / C),
        linf_diameter=float(2 * bound),
        l2_diameter=float(2 * bound * math.sqrt(d)),
        l1_diameter=float(2 * bound * d),
        n_samples=int(n),
        grid_encoding=None,
        record_constraints=("hinge", "abs_up", "abs_down"),   # per-record rows; no decision constraint
        public_constraints=("w",),   # the box [-bound, bound]^d, from the builder's public argument
        extra=extra,
    )


def hinge_halfspace(X, y, *, bound=1.0, x_bound=None, merge_rows=True, fit_intercept=False,
                    name="hinge_halfspace"):
    """Normalized hinge loss of a halfspace over the box [-bound, bound]^d (LP).

    L(D, w) = sum_i max(0, 1 - y_i <w, x_i>) / C with C = 1 + bound * sum_j
    beta_j, y_i in {-1, +1} (``classes[1]`` -> +1); each term lies in [0, 1]
    on the box and is (max_j beta_j / C)-Lipschitz in l1 (derivation in the
    module docstring).  For OPSamp ([NRVW20], Algorithm 2).

    Parameters
    ----------
    X, y : features (n, d) and two-class labels (n,).
    bound : float
        b: w_j in [-b, b].
    x_bound : float or sequence of d floats, optional
        Public bound beta_j on |x_j|; X is clipped to it.  ``None`` takes
        max_i |x_ij| from the data and emits a PrivacyLeakWarning.
    merge_rows : bool
        Merge identical (x, y) records into one weighted term.
    fit_intercept : bool
        Append a constant feature 1 (last coordinate of w).

    Returns
    -------
    ConcreteModel with ``w[j]`` (Reals in [-b, b]), ``xi[k]`` (>= 0),
    ``hinge[k]``: xi_k + y_k <x_k, w> >= 1, objective ``loss`` =
    sum_k count_k xi_k / C; info.extra holds loss="hinge", scale=C, bound,
    x_bound, classes, fit_intercept and the decision rule (threshold 0: +1 iff
    <w, x> >= 0) used by :func:`privopt.models.predict_halfspace`.
    """
    start = time.perf_counter()
    _check_width(X, "hinge_halfspace")
    Xa0 = check_X(X)
    classes, y_pm = check_binary_labels(y, Xa0.shape[0])
    bound = check_positive(bound, "bound")
    merge_rows = check_bool(merge_rows, "merge_rows")
    Xa, beta, fit_intercept = _prepare(Xa0, fit_intercept, x_bound)
    n, d = Xa.shape
    C = 1.0 + bound * float(beta.sum())
    Xk, yk, ck = _merge_xy(Xa, y_pm, merge_rows)
    model = _box_model(name, d, bound)
    m = Xk.shape[0]
    model.xi = pyo.Var(range(m), domain=pyo.NonNegativeReals)
    w = [model.w[j] for j in range(d)]
    rows = linear_rows(Xk * yk[:, None], w)
    add_constraints(model, "hinge", [
        (1.0, linexpr(coefs + [1.0], vs + [model.xi[k]]), None) for k, (coefs, vs) in enumerate(rows)])
    model.loss = pyo.Objective(expr=linexpr((ck / C).tolist(), [model.xi[k] for k in range(m)]),
                               sense=pyo.minimize)
    attach_info(model, _info(d=d, n=n, bound=bound, beta=beta, C=C, factor=1.0, extra={
        "loss": "hinge", "scale": C, "bound": bound, "x_bound": tuple(beta.tolist()),
        "classes": tuple(c.item() if hasattr(c, "item") else c for c in classes),
        "fit_intercept": fit_intercept, "threshold": 0.0, "margin": None,
        "tie_rule": "+1 iff <w, x> >= 0 (a zero score predicts +1)",
    }))
    setattr(model, _STATS_ATTR, {"n_rows": int(m), "build_time": time.perf_counter() - start})
    return model


def absolute_regression(X, y, *, bound=1.0, x_bound=None, y_bound=None, merge_rows=True,
                        fit_intercept=False, name="absolute_regression"):
    """Normalized absolute loss of a linear predictor over [-bound, bound]^d (LP).

    L(D, w) = sum_i |y_i - <w, x_i>| / C with C = Y + bound * sum_j beta_j;
    each term lies in [0, 1] on the box, is (max_j beta_j / C)-Lipschitz in l1
    and (||beta||_2 / C) in l2 (module docstring).  ``y_bound`` = Y is a
    public bound on |y| (y clipped to it; ``None`` infers max |y_i| with a
    PrivacyLeakWarning); ``x_bound`` as in :func:`hinge_halfspace`.

    Components: ``w[j]``, ``t[k]`` (>= 0), ``abs_up[k]``: t_k + <x_k, w> >= y_k,
    ``abs_down[k]``: t_k - <x_k, w> >= -y_k, objective ``loss`` =
    sum_k count_k t_k / C.
    """
    start = time.perf_counter()
    _check_width(X, "absolute_regression")
    Xa0 = check_X(X)
    yv = check_target(y, Xa0.shape[0])
    bound = check_positive(bound, "bound")
    merge_rows = check_bool(merge_rows, "merge_rows")
    Xa, beta, fit_intercept = _prepare(Xa0, fit_intercept, x_bound)
    Y = _y_bound(y_bound, yv)
    yv = np.clip(yv, -Y, Y)
    n, d = Xa.shape
    C = Y + bound * float(beta.sum())
    Xk, yk, ck = _merge_xy(Xa, yv, merge_rows)
    model = _box_model(name, d, bound)
    m = Xk.shape[0]
    model.t = pyo.Var(range(m), domain=pyo.NonNegativeReals)
    w = [model.w[j] for j in range(d)]
    rows = linear_rows(Xk, w)
    yl = yk.tolist()
    add_constraints(model, "abs_up", [
        (yl[k], linexpr(coefs + [1.0], vs + [model.t[k]]), None) for k, (coefs, vs) in enumerate(rows)])
    add_constraints(model, "abs_down", [
        (-yl[k], linexpr([-c for c in coefs] + [1.0], vs + [model.t[k]]), None)
        for k, (coefs, vs) in enumerate(rows)])
    model.loss = pyo.Objective(expr=linexpr((ck / C).tolist(), [model.t[k] for k in range(m)]),
                               sense=pyo.minimize)
    attach_info(model, _info(d=d, n=n, bound=bound, beta=beta, C=C, factor=1.0, extra={
        "loss": "absolute", "scale": C, "bound": bound, "x_bound": tuple(beta.tolist()),
        "y_bound": Y, "fit_intercept": fit_intercept,
    }))
    setattr(model, _STATS_ATTR, {"n_rows": int(m), "build_time": time.perf_counter() - start})
    return model


def squared_regression(X, y, *, bound=1.0, x_bound=None, y_bound=None, fit_intercept=False,
                       name="squared_regression"):
    """Normalized squared loss of a linear predictor over [-bound, bound]^d (convex QP).

    L(D, w) = sum_i (y_i - <w, x_i>)^2 / C^2 with C = Y + bound * sum_j beta_j;
    each term lies in [0, 1] on the box, is (2 max_j beta_j / C)-Lipschitz in
    l1 and (2 ||beta||_2 / C) in l2 (module docstring).  Bounds as in
    :func:`absolute_regression`.

    The objective is written through the Gram matrix, whatever n is:
    (w^T G w - 2 g^T w + s) / C^2 with G = X^T X, g = X^T y, s = y^T y --
    d(d+1)/2 quadratic terms, a convex QP that HiGHS solves.  Only ``w[j]``
    and the objective ``loss`` are created.
    """
    start = time.perf_counter()
    _check_quadratic_width(X)
    Xa0 = check_X(X)
    yv = check_target(y, Xa0.shape[0])
    bound = check_positive(bound, "bound")
    Xa, beta, fit_intercept = _prepare(Xa0, fit_intercept, x_bound)
    Y = _y_bound(y_bound, yv)
    yv = np.clip(yv, -Y, Y)
    n, d = Xa.shape
    C = Y + bound * float(beta.sum())
    G = Xa.T @ Xa
    g = Xa.T @ yv
    s = float(yv @ yv)
    model = _box_model(name, d, bound)
    w = model.w
    c2 = C * C
    quad = []
    for j in range(d):
        if G[j, j] != 0:
            quad.append(float(G[j, j]) / c2 * w[j] * w[j])
        for k in range(j + 1, d):
            if G[j, k] != 0:
                quad.append(2.0 * float(G[j, k]) / c2 * w[j] * w[k])
    lin = linexpr((-2.0 * g / c2).tolist(), [w[j] for j in range(d)], s / c2)
    model.loss = pyo.Objective(expr=pyo.quicksum(quad, linear=False) + lin, sense=pyo.minimize)
    attach_info(model, _info(d=d, n=n, bound=bound, beta=beta, C=C, factor=2.0, extra={
        "loss": "squared", "scale": C, "bound": bound, "x_bound": tuple(beta.tolist()),
        "y_bound": Y, "fit_intercept": fit_intercept,
    }))
    setattr(model, _STATS_ATTR, {"n_rows": int(n), "build_time": time.perf_counter() - start})
    return model

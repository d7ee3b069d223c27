"""A user's own small 0/1-loss model and its brute-force solution, for tests."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo

from privopt.models import ModelInfo, attach_info
from privopt.perturbation import pi_value


def toy_data(n=6, d=2, seed=0, values=(-2, -1, 0, 1, 2)):
    rng = np.random.default_rng(seed)
    X = rng.choice(np.asarray(values), size=(n, d))
    y = rng.choice([-1, 1], size=n)
    return X.astype(float), y


def zero_one_model(X, y, *, grid, margin):
    """Per-record 0/1 loss of sign(<w, x>) with ties -> +1, as a user would write it.

    ``grid``: the values each w_j takes.  Integer grids use an Integer
    variable; other grids a continuous variable (the grid is passed to
    privopt).  ``margin``: the smallest positive |score| possible.
    """
    n, d = X.shape
    g = np.asarray(grid, dtype=float)
    integral = np.allclose(g, np.round(g))
    B = float(np.max(np.abs(g)))
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), domain=pyo.Integers if integral else pyo.Reals, bounds=(g.min(), g.max()))
    m.e = pyo.Var(range(n), domain=pyo.Binary)

    def rule(m, i):
        score = sum(float(X[i, j]) * m.w[j] for j in range(d))
        M = B * float(np.abs(X[i]).sum()) + margin
        if y[i] > 0:
            return score >= -M * m.e[i]
        return score <= -margin + M * m.e[i]

    m.c = pyo.Constraint(range(n), rule=rule)
    m.loss = pyo.Objective(expr=sum(m.e[i] for i in range(n)))
    # the user's word that w's bounds (the public grid's ends) are fixed before the data
    attach_info(m, ModelInfo(public_constraints=("w",)))
    return m


def zero_one_loss(w, X, y):
    pred = np.where(X @ w >= 0, 1, -1)
    return int(np.sum(pred != y))


def brute_force(X, y, grid, norm_bound, eta, scale=1.0):
    """All grid points in the ball, sorted by L(w) - scale * <eta, pi(w)>."""
    d = X.shape[1]
    rows = []
    for w in itertools.product(grid, repeat=d):
        w = np.asarray(w, dtype=float)
        if w @ w > norm_bound**2 * (1 + 1e-9):
            continue
        val = zero_one_loss(w, X, y) - scale * float(eta @ pi_value(w, norm_bound))
        rows.append((val, tuple(w)))
    rows.sort()
    return rows


def separated(rows, tol=1e-5):
    """Whether the best point is unique by a safe margin."""
    return len(rows) == 1 or rows[1][0] - rows[0][0] > tol


__all__ = ["toy_data", "zero_one_model", "zero_one_loss", "brute_force", "separated", "math"]

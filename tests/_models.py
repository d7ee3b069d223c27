"""User models shared by the tests of selection on a user's Pyomo model."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo


def pmedian(n_sites, n_customers, k=2, seed=0, *, binary_assign=False):
    """Pyomo's p-median example, re-created: open k of n_sites sites (the
    decision ``open``, binary), assign each customer to an open site, cost the
    distance (random 2-D points, clipped to [0, 1]).  Returns (model, dist)."""
    rng = np.random.default_rng(seed)
    cust, sites = rng.random((n_customers, 2)), rng.random((n_sites, 2))
    dist = np.minimum(1.0, np.linalg.norm(cust[:, None] - sites[None], axis=2))
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n_customers - 1), pyo.RangeSet(0, n_sites - 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.assign = pyo.Var(m.I, m.J, domain=pyo.Binary) if binary_assign else pyo.Var(m.I, m.J, bounds=(0, 1))
    m.p = pyo.Constraint(expr=sum(m.open[j] for j in m.J) == k)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.assign[i, j] <= m.open[j])
    m.cost = pyo.Objective(expr=sum(float(dist[i, j]) * m.assign[i, j] for i in m.I for j in m.J))
    return m, dist


def tiny_halfspace(grid=1, norm_bound=1.0):
    """privopt's 0/1-loss model on ten one-feature records (W: the grid in the ball)."""
    from privopt.models import zero_one_halfspace

    x = np.array([0, 0, 1, 1, 2, 2, 2, 0, 1, 2], dtype=float)[:, None]
    y = np.array([-1, -1, 1, 1, 1, 1, -1, 1, -1, 1])
    return zero_one_halfspace(x, y, grid=grid, norm_bound=norm_bound)


def tiny_quadratic():
    """A user's model: one integer decision in 0..3, a sum of five squared distances / 9."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.obj = pyo.Objective(expr=sum((m.x - a) ** 2 for a in (0, 1, 3, 3, 2)) / 9)
    return m

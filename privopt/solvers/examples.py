"""Small example models for tests, demos and benchmarks of the solver layer."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

__all__ = ["small_milp", "market_split", "infeasible_milp", "unbounded_lp"]


def small_milp():
    """A 3-variable integer program with the unique optimum x = (-2, 1, -2), objective -6.4."""
    m = pyo.ConcreteModel(name="small_milp")
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-2, 2))
    m.c = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] - m.x[2] >= 1.5)
    m.obj = pyo.Objective(expr=3 * m.x[0] + m.x[1] + 0.7 * m.x[2])
    return m


def market_split(n_constraints: int = 4, n_vars: int = 40, seed: int = 0, feasibility: bool = False):
    """A market-split instance (Cornuejols and Dawande, 1999): famously hard for
    branch and bound, used to check that time limits stop a solver.

    sum_j a_ij x_j + s_i^+ - s_i^- = floor(sum_j a_ij / 2), x binary.  With
    ``feasibility=False`` the objective is sum_i (s_i^+ + s_i^-) (x = 0 is
    feasible, so a time-limited solve has an incumbent); with ``True`` the
    slacks are fixed to 0 and the objective is 0, so a time-limited solve
    usually ends without any feasible point.
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(n_constraints, n_vars))
    d = a.sum(axis=1) // 2
    m = pyo.ConcreteModel(name="market_split")
    m.I = pyo.RangeSet(0, n_constraints - 1)
    m.J = pyo.RangeSet(0, n_vars - 1)
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.sp = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.sm = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(
        m.I, rule=lambda m, i: sum(int(a[i, j]) * m.x[j] for j in m.J) + m.sp[i] - m.sm[i] == int(d[i])
    )
    if feasibility:
        for i in m.I:
            m.sp[i].fix(0)
            m.sm[i].fix(0)
        m.obj = pyo.Objective(expr=sum(0 * m.x[j] for j in m.J) + m.x[0] - m.x[0])
    else:
        m.obj = pyo.Objective(expr=sum(m.sp[i] + m.sm[i] for i in m.I))
    return m


def infeasible_milp():
    """x + y >= 3 with binary x, y."""
    m = pyo.ConcreteModel(name="infeasible_milp")
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m


def unbounded_lp():
    """min -x with x >= 0 unbounded above."""
    m = pyo.ConcreteModel(name="unbounded_lp")
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.Binary)
    m.obj = pyo.Objective(expr=-m.x + m.y)
    return m

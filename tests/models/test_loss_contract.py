"""The loss contract: a mean where a sum of n per-record terms is expected draws a
LossContractWarning, from the objective's structure alone, before any solve."""

from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import LossContractWarning, ParameterError
from privopt.mechanisms._checks import objective_scale, warn_if_mean_objective
from privopt.models import zero_one_halfspace


def _sites(mean: bool, n_customers=12, n_sites=5, k=2, seed=0):
    """The site-selection model of tests/mechanisms/test_selection.py, as a sum or as a mean."""
    rng = np.random.default_rng(seed)
    cust, sites = rng.random((n_customers, 2)), rng.random((n_sites, 2))
    dist = np.minimum(1.0, np.linalg.norm(cust[:, None, :] - sites[None, :, :], axis=2))
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n_customers - 1), pyo.RangeSet(0, n_sites - 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.assign = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.budget = pyo.Constraint(expr=sum(m.open[j] for j in m.J) == k)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.assign[i, j] <= m.open[j])
    total = sum(float(dist[i, j]) * m.assign[i, j] for i in m.I for j in m.J)
    m.cost = pyo.Objective(expr=total / n_customers if mean else total)
    return m


def test_selection_warns_on_a_mean_and_not_on_the_sum():
    with pytest.warns(LossContractWarning, match="MEAN"):
        res = privopt.exponential_mechanism(_sites(mean=True), weights="open", epsilon=1.0, loss_range=(0, 1),
                                            n_samples=12, random_state=0, public_constraints="budget")
    assert res.certified            # still released: private, only noisy
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        privopt.exponential_mechanism(_sites(mean=False), weights="open", epsilon=1.0, loss_range=(0, 1),
                                      n_samples=12, random_state=0, public_constraints="budget")


def test_selection_without_n_is_refused_before_any_check():
    """n is required (the contract counts the records' blocks against it): refused, naming
    n_samples and the model's info, before the mean check or any solve."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        with pytest.raises(ParameterError, match="n_samples.*ModelInfo") as err:
            privopt.exponential_mechanism(_sites(mean=True), weights="open", epsilon=1.0, loss_range=(0, 1),
                                          random_state=0, public_constraints="budget")
    assert err.value.parameter == "n_samples"


def test_opdisc_warns_on_a_mean_and_not_on_the_sum():
    kw = dict(weights="open", epsilon=1.0, delta=1e-4, lipschitz=1.0, norm_bound=2 ** 0.5, n_samples=12,
              random_state=0, public_constraints="budget")
    with pytest.warns(LossContractWarning, match="OPDisc"):
        privopt.opdisc(_sites(mean=True), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        privopt.opdisc(_sites(mean=False), **kw)


def test_the_warning_comes_before_any_solve():
    """The check reads the expression only: called on a model that is never solved."""
    m = _sites(mean=True)
    with pytest.warns(LossContractWarning):
        assert warn_if_mean_objective(m, 12, "test")
    assert all(v.value is None for v in m.open.values())


@pytest.mark.parametrize("build, scale", [
    (lambda x, n: sum(x.values()) / n, 0.25),
    (lambda x, n: (1 / n) * sum(x.values()), 0.25),
    (lambda x, n: sum(x.values()) * (1.0 / n), 0.25),
    (lambda x, n: sum((x[i] - 1) ** 2 for i in x) / n, 0.25),
    (lambda x, n: 2 * sum(x.values()) / n / 2, 0.25),
    (lambda x, n: -(sum(x.values()) / (2 * n)), -0.125),
    (lambda x, n: sum(x.values()), 1.0),
    (lambda x, n: sum(0.25 * x[i] for i in x), 1.0),   # 1/n folded into the coefficients: not read
])
def test_objective_scale_peels_the_outer_constant_only(build, scale):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(0, 1))
    m.e = pyo.Expression(expr=build(m.x, 4))
    c, _ = objective_scale(m.e)
    assert c == pytest.approx(scale)


def test_a_normalizing_constant_is_not_a_mean():
    """sum_i (x - a_i)^2 / 9 puts each term in [0, 1]: 9 is not n (5), so no warning."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.obj = pyo.Objective(expr=sum((m.x - ai) ** 2 for ai in [0, 1, 3, 3, 2]) / 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        assert not warn_if_mean_objective(m, 5, "test")
    with pytest.warns(LossContractWarning):
        assert warn_if_mean_objective(m, 9, "test")     # with n = 9 the same expression is a mean


def test_privopt_models_are_sums():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]])
    y = np.array([1, -1, 1, -1])
    m = zero_one_halfspace(X, y, grid=1, norm_bound=1.0)
    assert objective_scale(m.loss.expr)[0] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        assert not warn_if_mean_objective(m, 4, "test")


def _folded(n=10, factor=None, scenario=False):
    """sum_t k * u_t (k folded into every summand), or the scenario form
    sum_t p_t * (3 u_t + w) with probabilities p_t = k."""
    m = pyo.ConcreteModel()
    m.T = pyo.RangeSet(0, n - 1)
    m.u = pyo.Var(m.T, bounds=(0, 1))
    m.w = pyo.Var(domain=pyo.Integers, bounds=(0, 2))
    k = 1.0 / n if factor is None else factor
    if scenario:
        m.p = pyo.Param(m.T, initialize=k)
        m.obj = pyo.Objective(expr=sum(m.p[t] * (3 * m.u[t] + m.w) for t in m.T))
    else:
        m.obj = pyo.Objective(expr=sum(k * m.u[t] for t in m.T))
    return m


@pytest.mark.parametrize("scenario", [False, True])
def test_a_mean_folded_into_every_summand_warns(scenario):
    with pytest.warns(LossContractWarning, match="each multiplied by 1/10"):
        assert warn_if_mean_objective(_folded(scenario=scenario), 10, "test")
    with pytest.warns(LossContractWarning, match="each multiplied by 1/20"):    # 1/(2n)
        assert warn_if_mean_objective(_folded(factor=1 / 20, scenario=scenario), 10, "test")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        assert not warn_if_mean_objective(_folded(factor=1.0, scenario=scenario), 10, "test")   # a sum
        assert not warn_if_mean_objective(_folded(factor=1 / 7, scenario=scenario), 10, "test")  # 7 is not n


def test_summands_with_differing_factors_are_not_read_as_a_mean():
    m = pyo.ConcreteModel()
    m.u = pyo.Var(range(10), bounds=(0, 1))
    m.obj = pyo.Objective(expr=sum((t + 1) / 10 * m.u[t] for t in range(10)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossContractWarning)
        assert not warn_if_mean_objective(m, 10, "test")

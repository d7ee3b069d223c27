"""Pyomo conventions of the objective-perturbation transformation; opdisc without n_samples (issue 16 item 4)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt.perturbation  # noqa: F401  (registers the transformation)
from privopt.exceptions import ModelError, ParameterError
from privopt.perturbation import get_noise, is_transformed

from tests.conftest import require_solver

T = "privopt.objective_perturbation"


def _block_model():
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.w = pyo.Var([0, 1], bounds=(-1, 1))
    m.b.obj = pyo.Objective(expr=m.b.w[0] + m.b.w[1])
    return m


def test_apply_to_sub_block_returns_none_and_perturbs_the_block():
    require_solver("highs")
    m = _block_model()
    out = pyo.TransformationFactory(T).apply_to(m.b, weights=[m.b.w[0], m.b.w[1]],
                                                noise=np.array([2.0, 0.0]), normalize=False)
    assert out is None
    assert is_transformed(m.b) and not m.b.obj.active
    np.testing.assert_allclose(get_noise(m.b), [2.0, 0.0])
    pyo.SolverFactory("appsi_highs").solve(m)
    # w0 + w1 - 2 w0 = -w0 + w1 is minimized at (1, -1); unperturbed it would be (-1, -1)
    np.testing.assert_allclose([pyo.value(m.b.w[0]), pyo.value(m.b.w[1])], [1.0, -1.0], atol=1e-6)


def test_create_using_returns_a_new_model_and_leaves_the_old():
    m = _block_model()
    new = pyo.TransformationFactory(T).create_using(m, weights=[m.b.w[0], m.b.w[1]],
                                                    noise=np.array([0.4, -0.6]), normalize=False)
    assert new is not m and is_transformed(new) and not is_transformed(m) and m.b.obj.active


def test_weights_in_a_deactivated_block_are_refused():
    m = _block_model()
    m.obj = pyo.Objective(expr=m.b.w[0])
    m.b.deactivate()
    with pytest.raises(ModelError, match="deactivated block 'b'") as err:
        pyo.TransformationFactory(T).apply_to(m, weights=[m.b.w[0], m.b.w[1]],
                                              noise=np.array([0.1, 0.2]), normalize=False)
    assert err.value.parameter == "weights" and not is_transformed(m)


def test_opdisc_without_n_samples_is_refused_naming_it():
    """n is required (the contract counts the records' blocks against it), refused before any
    noise; given, it sets the per-record bound and not the release."""
    require_solver("highs")
    from privopt import opdisc
    m = pyo.ConcreteModel()
    m.w = pyo.Var([0, 1], domain=pyo.Integers, bounds=(-1, 1))
    m.obj = pyo.Objective(expr=m.w[0] - m.w[1])
    with pytest.raises(ParameterError, match="n_samples") as err:
        opdisc(m, epsilon=1.0, delta=1e-5, lipschitz=1.0, norm_bound=1.5, separation=1.0,
               weights=m.w, random_state=0, public_constraints="w")
    assert err.value.parameter == "n_samples"

"""A user's Set initialized from ``dict.keys()``: Pyomo's ``model.clone()`` logs
"Unable to clone Pyomo component attribute" (an ERROR) although the copy is
complete.  Every path of privopt that clones a user's model goes through
:func:`privopt.models.quiet_clone`, which drops exactly that record during
that clone; these tests run each path and check that no such record appears,
and that a direct ``model.clone()`` afterwards still logs it (the filter does
not leak, and the model does trigger the message)."""

from __future__ import annotations

import ast
import logging
import math
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.visitor import identify_variables

import privopt
from privopt.audit import NeighbouringPair, OPDiscTarget
from privopt.models import quiet_clone, rspm_halfspace
from privopt.perturbation import is_transformed

from tests.conftest import require_solver

NOTICE = "Unable to clone"

X = np.array([[1.0, -1.0], [2.0, 1.0], [-1.0, 2.0], [0.0, -2.0], [1.0, 1.0], [-2.0, 0.0]])
Y = np.array([1, 1, -1, -1, 1, -1])


def _user_model():
    """A user's 0/1-loss halfspace whose weights are indexed by ``features.keys()``."""
    features = {"age": 0, "hours": 1}
    m = pyo.ConcreteModel()
    m.F = pyo.Set(initialize=features.keys())               # Pyomo cannot copy this initializer
    m.w = pyo.Var(m.F, domain=pyo.Integers, bounds=(-2, 2))
    m.e = pyo.Var(range(len(Y)), domain=pyo.Binary)

    def rule(m, i):
        score = sum(float(X[i, features[f]]) * m.w[f] for f in m.F)
        big = 2.0 * float(np.abs(X[i]).sum()) + 1.0
        return score >= -big * m.e[i] if Y[i] > 0 else score <= -1.0 + big * m.e[i]

    m.c = pyo.Constraint(range(len(Y)), rule=rule)
    m.loss = pyo.Objective(expr=sum(m.e[i] for i in range(len(Y))))
    return m


def _with_dict_keys_set(model):
    """``model`` with one more Set built from ``dict.keys()`` (unused by the loss)."""
    model.labels = pyo.Set(initialize={"pos": 1, "neg": -1}.keys())
    return model


def _notices(caplog):
    return [r for r in caplog.records if r.getMessage().startswith(NOTICE)]


def _assert_quiet_then_loud(caplog, model):
    """No notice so far; a direct clone of ``model`` now logs it (the filter is gone)."""
    assert not _notices(caplog), [r.getMessage() for r in _notices(caplog)]
    model.clone()
    assert len(_notices(caplog)) == 1 and _notices(caplog)[0].levelno == logging.ERROR


def test_a_dict_keys_set_makes_pyomos_clone_log_the_error(caplog):
    """The premise: without privopt, cloning this model logs the ERROR (so the
    tests below can fail)."""
    with caplog.at_level(logging.ERROR, logger="pyomo"):
        _user_model().clone()
    assert _notices(caplog) and _notices(caplog)[0].name == "pyomo.core"


def test_quiet_clone_is_a_complete_copy_and_removes_its_filter(caplog):
    m = _user_model()
    with caplog.at_level(logging.ERROR, logger="pyomo"):
        c = quiet_clone(m)
        assert c is not m and list(c.F) == ["age", "hours"] and c.w["age"] is not m.w["age"]
        assert len(c.c) == len(Y)
        _assert_quiet_then_loud(caplog, m)
    assert not logging.getLogger("pyomo.core").filters


def test_an_unconstructed_component_still_raises(caplog):
    """An abstract model's uncopyable initializer is not silenced: Pyomo's CloneError
    is raised, and the filter is removed all the same."""
    m = pyo.AbstractModel()
    m.S = pyo.Set(initialize={"a": 1}.keys())
    with pytest.raises(Exception, match="Uncopyable attribute") as err:
        quiet_clone(m)
    assert type(err.value).__name__ == "CloneError"
    assert not logging.getLogger("pyomo.core").filters


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
def test_opdisc_on_a_user_model_logs_no_clone_error(caplog):
    require_solver("highs")
    m = _user_model()
    with caplog.at_level(logging.ERROR, logger="pyomo"):
        res = privopt.opdisc(m, epsilon=20.0, delta=0.1, lipschitz=1.0, norm_bound=math.sqrt(5),
                             n_samples=len(Y), solver="highs", random_state=0, public_constraints="w")
        assert res.certified and res.weights.shape == (2,)
        assert not is_transformed(m)                        # the user's model is untouched
        _assert_quiet_then_loud(caplog, m)


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
def test_rspm_logs_no_clone_error(caplog):
    require_solver("highs")
    m = _with_dict_keys_set(rspm_halfspace(X, Y))
    with caplog.at_level(logging.ERROR, logger="pyomo"):
        res = privopt.rspm(m, epsilon=3.0, solver="highs", random_state=0)
        assert res.certified and set(res.weights) <= {-1.0, 0.0, 1.0}
        _assert_quiet_then_loud(caplog, m)


def test_the_transformations_create_using_logs_no_clone_error(caplog):
    """``create_using`` clones (Pyomo's convention); the options naming the original's
    components still map onto the copy's."""
    m = _user_model()
    xfrm = pyo.TransformationFactory("privopt.objective_perturbation")
    with caplog.at_level(logging.ERROR, logger="pyomo"):
        new = xfrm.create_using(m, weights=[m.w["age"], m.w["hours"]], noise=[0.5, -0.25], normalize=False)
        assert new is not m and is_transformed(new) and not is_transformed(m)
        assert not any(name.startswith("_kwds") for name in vars(m)) and not any(
            name.startswith("_kwds") for name in vars(new))
        obj = next(new.component_data_objects(pyo.Objective, active=True))
        used = {id(v) for v in identify_variables(obj.expr)}
        assert id(new.w["age"]) in used and id(m.w["age"]) not in used
        _assert_quiet_then_loud(caplog, m)


def test_the_audited_opdisc_oracle_logs_no_clone_error(caplog):
    """The audit's OPDisc target with a scaled sigma solves a clone of its model."""
    require_solver("highs")
    Xp, Yp = X.copy(), Y.copy()
    Yp[0] = -Y[0]
    target = OPDiscTarget(NeighbouringPair(X, Y, Xp, Yp, name="quiet_clone"), epsilon=5.0, delta=0.1,
                          noise_factor=2.0)
    model = _with_dict_keys_set(target.models[0])
    with caplog.at_level(logging.ERROR, logger="pyomo"):
        w = target.run_mechanism(0, np.random.default_rng(0))
        assert any(np.array_equal(w, c) for c in target.candidates)
        _assert_quiet_then_loud(caplog, model)


def test_privopt_clones_only_through_quiet_clone():
    """No ``<model>.clone()`` call in privopt outside privopt/models/_clone.py: a new
    clone of a user's model goes through :func:`privopt.models.quiet_clone`."""
    root = Path(privopt.__file__).parent
    found = []
    for path in root.rglob("*.py"):
        if path == root / "models" / "_clone.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "clone" and not node.args):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found


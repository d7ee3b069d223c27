"""Shared fixtures: which solvers are installed, and the CI rule that the
solvers named in PRIVOPT_REQUIRE_SOLVERS must be present (a missing one fails
instead of skipping)."""

from __future__ import annotations

import os

import pytest

from privopt.solvers import available_solvers

_INFO = {row.name: row for row in available_solvers()}
REQUIRED = [s.strip() for s in os.environ.get("PRIVOPT_REQUIRE_SOLVERS", "").split(",") if s.strip()]

#: MILP solvers the suite exercises whenever they are installed.
MILP_SOLVERS = ["highs", "glpk", "cbc", "scip"]


def solver_available(name: str) -> bool:
    return bool(_INFO.get(name) and _INFO[name].available)


def require_solver(name: str) -> None:
    """Skip (visibly) when ``name`` is missing -- or fail when CI requires it."""
    if solver_available(name):
        return
    hint = _INFO[name].install_hint if name in _INFO else ""
    if name in REQUIRED:
        pytest.fail(f"solver {name!r} is required here (PRIVOPT_REQUIRE_SOLVERS) but not installed: {hint}")
    pytest.skip(f"solver {name!r} not installed ({hint})")


@pytest.fixture(params=MILP_SOLVERS)
def milp_solver(request):
    """Each installed MILP solver in turn."""
    require_solver(request.param)
    return request.param


@pytest.fixture
def data_home():
    """The folder holding adult/ (PRIVOPT_DATA_HOME or ../shared/data)."""
    env = os.environ.get("PRIVOPT_DATA_HOME")
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in [env, os.path.join(here, "..", "..", "shared", "data")]:
        if cand and os.path.isfile(os.path.join(cand, "adult", "adult.data")):
            return os.path.abspath(cand)
    pytest.skip("UCI Adult files not found: set PRIVOPT_DATA_HOME to a folder holding adult/")

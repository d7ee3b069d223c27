"""What privopt knows about each solver: how to reach it through Pyomo, how
to spell the uniform options in its own language, what it can solve and how
to install it.

Option names: time limit -- HiGHS ``time_limit``, GLPK
``tmlim``, CBC ``sec``, SCIP ``limits/time``, Gurobi ``TimeLimit``, CPLEX
``timelimit``; relative gap -- ``mip_rel_gap``, ``mipgap``, ``ratio``,
``limits/gap``, ``MIPGap``, ``mipgap``.  Solvers behind Pyomo's API v2
(``highs``, ``scip_direct``, ``gurobi_*``) take ``time_limit``, ``rel_gap``,
``abs_gap`` and ``threads`` uniformly through their config, which privopt
uses; for those the seed still goes through ``solver_options``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["SolverSpec", "REGISTRY", "ALIASES", "resolve_name"]


@dataclass(frozen=True)
class SolverSpec:
    """How to reach one solver and speak its option language."""

    name: str
    pyomo_name: str
    interface: str  # "contrib" (Pyomo API v2), "appsi" or "legacy"
    problem_classes: tuple
    install_hint: str
    time_limit: str | None = None  # option name (legacy / appsi)
    rel_gap: str | None = None
    abs_gap: str | None = None
    threads: str | None = None
    seed: str | None = None
    integer_time_limit: bool = False
    notes: str = ""
    extra_options: dict = field(default_factory=dict)
    #: Relative precision of the objective and bound the solver reports (0 for
    #: solvers that hand back full doubles).  The certification tolerance adds
    #: ``report_rtol * max(|objective|, |bound|)`` so a true optimum is not
    #: refused because of the solver's rounding (docs/estimators.md).
    report_rtol: float = 0.0

    def translate(self, *, time_limit, mip_gap, abs_gap, threads, seed) -> dict:
        """Solver-specific spelling of the uniform options (for the legacy
        and appsi interfaces; the contrib interface takes most of them in its
        config and only the seed here)."""
        opts: dict = dict(self.extra_options)
        if self.interface != "contrib":
            if time_limit is not None and self.time_limit:
                opts[self.time_limit] = (
                    max(1, int(math.ceil(time_limit))) if self.integer_time_limit else float(time_limit)
                )
            if mip_gap is not None and self.rel_gap:
                opts[self.rel_gap] = float(mip_gap)
            if abs_gap is not None and self.abs_gap:
                opts[self.abs_gap] = float(abs_gap)
            if threads is not None and self.threads:
                opts[self.threads] = int(threads)
        if seed is not None and self.seed:
            opts[self.seed] = int(seed)
        return opts


_MILP = ("LP", "MILP")

REGISTRY: dict[str, SolverSpec] = {
    "highs": SolverSpec(
        "highs", "highs", "contrib", ("LP", "MILP", "QP"),
        "pip install highspy", seed="random_seed",
    ),
    "appsi_highs": SolverSpec(
        "appsi_highs", "appsi_highs", "appsi", ("LP", "MILP", "QP"),
        "pip install highspy",
        # appsi's own config.time_limit is also set; the HiGHS option is passed
        # as well because appsi_highs was seen ignoring config.time_limit.
        time_limit="time_limit", rel_gap="mip_rel_gap", abs_gap="mip_abs_gap",
        threads="threads", seed="random_seed",
    ),
    "glpk": SolverSpec(
        "glpk", "glpk", "legacy", _MILP,
        "apt-get install glpk-utils (Debian/Ubuntu) or conda install -c conda-forge glpk",
        time_limit="tmlim", rel_gap="mipgap", integer_time_limit=True,
        notes="single-threaded; time limit in whole seconds; no absolute-gap option",
    ),
    "cbc": SolverSpec(
        "cbc", "cbc", "legacy", _MILP,
        "apt-get install coinor-cbc (Debian/Ubuntu) or conda install -c conda-forge coin-or-cbc",
        time_limit="sec", rel_gap="ratio", abs_gap="allow", threads="threads",
        seed="randomCbcSeed",
        # CBC's "sec" counts CPU seconds unless told otherwise; on a loaded
        # machine that overruns the wall-clock limit.
        extra_options={"timeMode": "elapsed"},
        # CBC prints its objective and bound with about 8 significant digits:
        # a proven optimum of -28.706882198 came back with bound -28.70688043.
        report_rtol=1e-7,
        notes="time limit in wall-clock seconds (timeMode elapsed); objective/bound reported to ~8 digits",
    ),
    "scip": SolverSpec(
        "scip", "scip_direct", "contrib", ("LP", "MILP", "QP", "MIQP", "NLP"),
        "pip install pyscipopt  (or: pip install privopt[scip])",
        seed="randomization/randomseedshift",
    ),
    "scip_persistent": SolverSpec(
        "scip_persistent", "scip_persistent", "contrib", ("LP", "MILP", "QP", "MIQP", "NLP"),
        "pip install pyscipopt  (or: pip install privopt[scip])",
        seed="randomization/randomseedshift",
    ),
    "gurobi": SolverSpec(
        "gurobi", "gurobi_direct", "contrib", ("LP", "MILP", "QP", "MIQP"),
        "pip install gurobipy (size-limited licence included; or: pip install privopt[gurobi])",
        seed="Seed",
    ),
    "gurobi_persistent": SolverSpec(
        "gurobi_persistent", "gurobi_persistent", "contrib", ("LP", "MILP", "QP", "MIQP"),
        "pip install gurobipy (or: pip install privopt[gurobi])",
        seed="Seed",
    ),
    "cplex": SolverSpec(
        "cplex", "cplex", "legacy", ("LP", "MILP", "QP", "MIQP"),
        "install IBM ILOG CPLEX and put the cplex executable on PATH",
        time_limit="timelimit", rel_gap="mipgap", abs_gap="mip_tolerances_absmipgap",
        threads="threads", seed="randomseed",
    ),
    "enumerate": SolverSpec(
        "enumerate", "privopt.enumerate", "enumerate", (),
        "built into privopt (models of privopt.models.zero_one_halfspace only)",
        notes="exact search over every grid point of W_tau; for small W_tau (privopt.solvers.enumeration_size)",
    ),
}

ALIASES = {
    "scip_direct": "scip",
    "gurobi_direct": "gurobi",
    "coin-or-cbc": "cbc",
    "coinor-cbc": "cbc",
    "glpsol": "glpk",
    "highspy": "highs",
}


def resolve_name(name: str) -> str:
    """Canonical privopt name for ``name`` (case-insensitive aliases)."""
    key = name.strip().lower()
    return ALIASES.get(key, key)

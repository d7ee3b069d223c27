"""``privopt demo``: the main job in small.

Until the Adult experiment lands, the demo solves privopt's example model
with every available solver and prints the solve reports side by side.
"""

from __future__ import annotations

from .solvers import available_solvers, solve
from .solvers.examples import small_milp


def run_demo(out: str = "privopt-demo", time_limit: float = 120.0, solver: str = "highs", runs: int = 3) -> int:
    from .cli import _print_table

    rows = []
    for info in available_solvers():
        if not info.available:
            rows.append([info.name, "not installed", "-", "-", "-"])
            continue
        model = small_milp()
        report = solve(model, info.name, time_limit=time_limit)
        x = [round(model.x[i].value) for i in model.x]
        rows.append([info.name, report.termination.name, str(report.certified_optimal),
                     f"{report.objective:.4g}", str(x)])
    _print_table(rows, ["solver", "termination", "certified", "objective", "x"])
    return 0

"""Fast checks of the refit of benchmarks/bench_predictions.py (not of its results): the records
it writes into privopt/search/_costs.py are the records it fitted, with their provenance, and the
rest of the file is left as it was."""

import ast
import dataclasses
import inspect
import math
import os

import pytest

from privopt.search import _costs
from tests._bench import load_benchmark

HERE = os.path.dirname(os.path.abspath(__file__))
bench = load_benchmark("bench_predictions")


def _records(text: str) -> dict:
    """{name: {field: value}} of the records assigned in ``text`` (parsed, not run)."""
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.targets[0].id.endswith("_COST"):
            out[node.targets[0].id] = {k.arg: ast.literal_eval(k.value) for k in node.value.keywords}
    return out


def test_written_records_are_the_fitted_ones_with_their_command(tmp_path):
    fitted = {"TOPDOWN_COST": _costs.TopDownCost(overhead=1.234e-3, support_seconds=5.678e-6, row_exponent=0.5,
                                                 point_seconds=1e-7, pattern_exponent=0.25, row_share=0.75),
              "BRANCH_AND_BOUND_COST": _costs.BranchAndBoundCost(overhead=2e-4, point_seconds=3e-8, row_exponent=0.9,
                                                                 row_share=0.8, noise_seconds=4.5e-9)}
    lines = ["- top down, d > 2 (9 W's): `x`: worst ratio 2.00, at most 1.50 times the spread",
             "- branch and bound (3 W's): `y`: worst ratio 1.80, at most 1.20 times the spread"]
    original = inspect.getsource(_costs)
    path = tmp_path / "_costs.py"
    path.write_text(original)
    bench.write_constants(fitted, lines, "python benchmarks/bench_predictions.py --repeats 3 --fit --write",
                          "`python benchmarks/bench_predictions.py --repeats 3` on a day", str(path))
    text = path.read_text()
    got = _records(text)
    for name, cost in fitted.items():
        assert got[name] == pytest.approx(dataclasses.asdict(cost), rel=5e-3)     # 3 significant digits
    # the block holds the records given, and nothing else
    assert "ONE_FEATURE_COST" not in got
    head, tail = original.split(bench.COSTS_BEGIN)[0], original.split(bench.COSTS_END)[1]
    assert text.startswith(head) and text.endswith(tail)
    block = text[text.index(bench.COSTS_BEGIN):text.index(bench.COSTS_END)]
    assert block.count("--repeats 3 --fit --write") == 2 and "worst ratio 1.80" in block
    assert max(len(line) for line in text.splitlines()) <= 120


def _row(table, w, path, cpu, d=7, n_points=953):
    return {"table": table, "w": w, "path": path, "d": d, "n_points": n_points, "cpu_s": cpu}


def test_speed_lines_are_the_ratios_of_the_medians_of_the_same_ws():
    now = [_row("t", 0, "topdown", c) for c in (1.0, 2.0, 9.0)] + [_row("t", 1, "topdown", 4.0),
                                                                    _row("t", 2, "enumerate", 3.0, n_points=10)]
    before = [_row("t", 0, "topdown", 4.0), _row("t", 1, "topdown", 1.0), _row("t", 2, "enumerate", 6.0, n_points=10),
              _row("t", 3, "topdown", 5.0)]        # W3 was not drawn now: not matched
    lines = bench.speed_lines(now, before, "before")
    top = next(line for line in lines if line.startswith("| top down, d > 2"))
    # medians 2 / 4 and 4 / 1: geometric mean sqrt(0.5 * 4) = 1.41
    assert top.split("|")[2].strip() == "2" and top.split("|")[3].strip() == "1.41"
    scored = next(line for line in lines if line.startswith("| branch and bound"))
    assert scored.split("|")[3].strip() == "0.50"
    assert not any(line.startswith("| top down, one feature") for line in lines)


def test_the_fit_finds_the_constants_that_made_the_seconds():
    """Seconds made by a known record from the top-down form on varied public sizes: the fit
    (minimax, then least squares from several starts) gives them back, from a start far off."""
    import numpy as np

    true = _costs.TopDownCost(overhead=1e-3, support_seconds=7e-6, row_exponent=0.6, point_seconds=2e-8,
                              pattern_exponent=0.8, row_share=0.85)
    rows = []
    for n, d, sizes, v in [(1000, 5, (4, 4, 8), 5), (2000, 7, (4, 12, 8, 16), 9), (10000, 15, (4, 4, 8, 16), 5),
                           (30000, 9, (4, 12, 8, 16, 32), 9), (3000, 13, (6, 16, 56), 7), (100000, 7, (4, 12, 8), 9),
                           (50000, 13, (4, 4, 8, 16), 5), (1000, 21, (4, 12, 8), 9)]:
        regions = sum(math.comb(d, k) for k in range(len(sizes) + 1))
        rows.append({"n": n, "d": d, "regions": regions, "point_work": 0, "support_points": ";".join(map(str, sizes)),
                     "feature_values": v, "coordinate_values": ";".join([str(v)] * (d - 1) + ["1"])})
    model = bench._topdown_model(rows)
    measured = model(true)
    start = {"overhead": 1e-2, "support_seconds": 1e-5, "row_exponent": 0.9, "point_seconds": 1e-7,
             "pattern_exponent": 0.3, "row_share": 0.6}
    cost, worst, _ = bench._minimax(model, lambda **kw: _costs.TopDownCost(**kw), start, measured,
                                    [0.0] * len(rows))
    assert worst < 1.05
    assert np.allclose(model(cost), measured, rtol=0.05)

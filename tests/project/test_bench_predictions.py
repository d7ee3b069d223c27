"""Fast checks of the refit of benchmarks/bench_predictions.py (not of its results): the records
it writes into privopt/search/_costs.py are the records it fitted, with their provenance, and the
rest of the file is left as it was."""

import ast
import dataclasses
import importlib.util
import inspect
import os
import sys

import pytest

from privopt.search import _costs

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))      # its `import _common`
_spec = importlib.util.spec_from_file_location(
    "bench_predictions", os.path.join(HERE, "..", "..", "benchmarks", "bench_predictions.py"))
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_predictions"] = bench
_spec.loader.exec_module(bench)


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

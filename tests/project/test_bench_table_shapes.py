"""Fast checks of benchmarks/bench_table_shapes.py's per-W summary (not of its results): the
public floor is the square root of the spread of one W's median CPU seconds across the tables
that share its public quantities, and the W's listed as more than 3x off are exactly those."""

import math
import os

import pytest
from tests._bench import load_benchmark

HERE = os.path.dirname(os.path.abspath(__file__))
bench = load_benchmark("bench_table_shapes")


def _w(table, w, cpu, predicted=0.01, rows=100, n=1000, d=6, n_points=953, values="5;5;1", seed=0):
    return {"table": table, "seed": seed, "w": w, "path": "topdown", "n_points": n_points, "predicted_s": predicted,
            "measured_s": cpu, "cpu_s": cpu, "n": n, "d": d, "coordinate_values": values, "distinct_rows": rows}


def test_public_floor_is_the_root_of_the_spread_of_the_medians_of_one_w():
    rows = [_w("a", 0, c, seed=s) for s, c in enumerate((1.0, 2.0, 30.0))]       # median 2
    rows += [_w("b", 0, c, seed=s) for s, c in enumerate((8.0, 9.0))]            # median 8.5
    rows += [_w("c", 0, 50.0, values="2;2;1")]           # declared otherwise: another W
    rows += [_w("d", 0, 50.0, n=2000)]                   # another n: another W
    rows += [_w("a", 1, 3.0, n_points=1713), _w("b", 1, 3.0, n_points=1713)]
    floors = bench.public_floors(rows)
    assert floors[("a", 0)] == pytest.approx(math.sqrt(8.5 / 2.0))
    assert floors[("b", 0)] == floors[("a", 0)]
    assert floors[("c", 0)] == floors[("d", 0)] == 1.0
    assert floors[("a", 1)] == 1.0
    # an older run's rows, without n and d: no floor
    old = [{k: v for k, v in r.items() if k not in ("n", "d")} for r in rows]
    assert bench.public_floors(old) == {}


def test_the_ws_listed_as_off_are_those_more_than_3x_from_their_median_cpu():
    rows = [_w("a", 0, 0.04, predicted=0.01, rows=900), _w("a", 1, 0.029, predicted=0.01),
            _w("b", 0, 0.002, predicted=0.01, rows=90), _w("b", 1, 0.01, predicted=0.01)]
    lines = bench.outside_lines(rows)
    listed = [line for line in lines if line.startswith("| a ") or line.startswith("| b ")]
    assert [line.split("|")[1:3] for line in listed] == [[" a ", " 0 "], [" b ", " 0 "]]
    assert "4.0 under" in listed[0] and "b: 0.002 s, 90 rows" in listed[0] and "| 900 |" in listed[0]
    assert "5.0 over" in listed[1] and listed[1].rstrip().endswith(f"| {math.sqrt(20.0):.1f} |")
    assert bench.outside_lines([_w("a", 0, 0.02, predicted=0.01)]) == []


def test_only_now_declares_the_integer_columns():
    now = bench._estimator("now", 0, [0.0], [1.0], [0, 2])
    assert now.integer_features == [0, 2] and now.keep_report
    assert bench._estimator("now", 0, [0.0], [1.0], []).integer_features is None
    assert not hasattr(bench._estimator("dpsgd", 0, [0.0], [1.0], [0, 2]), "integer_features")

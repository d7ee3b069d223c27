"""Faults around a sweep: two sweeps on one folder, a results.csv with a cut or stray line or
a run recorded twice, bad command-line values, and bench_audit's noise column."""

from __future__ import annotations

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# --- 3. bench_audit's noise column ----------------------------------------------------------------------------

def test_bench_audit_describes_the_noise_of_every_case():
    spec = importlib.util.spec_from_file_location("bench_audit", os.path.join(ROOT, "benchmarks", "bench_audit.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for target, _ in bench.cases():
        text = bench._noise(target)
        assert text and "=" in text, target
        if target.mechanism.startswith("scoring"):
            assert text == f"s=2Delta/eps={target.parameters['noise_scale']:.4g}"

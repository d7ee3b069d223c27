"""Loading a benchmark script (benchmarks/ is not a package) as a module for its tests."""

from __future__ import annotations

import importlib.util
import os
import sys

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def load_benchmark(name: str):
    """``benchmarks/<name>.py`` executed as the module ``name`` (registered in
    ``sys.modules``, which dataclasses look their module up in), with benchmarks/ on
    ``sys.path`` for its ``import _common``."""
    if BENCHMARKS not in sys.path:
        sys.path.insert(0, BENCHMARKS)
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCHMARKS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

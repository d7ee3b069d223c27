"""The first fit of a fresh process: numba's kernel cache hits in a second
process, and the baselines' accounting cache gives the uncached numbers and
never fails a fit (privopt/_numba.py, privopt/_cache.py,
privopt/baselines/_accounting.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from privopt import _cache
from privopt.baselines import NoisySGDClassifier
from privopt.baselines import _accounting as acc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAS_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba (the 'fast' extra) is not installed")
needs_accounting = pytest.mark.skipif(
    importlib.util.find_spec("dp_accounting") is None or importlib.util.find_spec("PLD_accounting") is None,
    reason="dp_accounting / PLD_accounting (the 'learn' extra) are not installed")


def _kernels():
    from privopt.scoring import _engine
    from privopt.search import _patterns
    from privopt.search import _argmax, _losses

    out = []
    for getter in (_patterns._numba_kernel, _patterns._minima_kernels, _engine._numba_kernel,
                   _losses._numba_hist, _argmax._argmax_kernel, _argmax._ball_bounds_kernel,
                   _argmax._split_bounds_kernel, _argmax._sparse_table_kernel):
        k = getter()
        out.extend(k if isinstance(k, tuple) else (k,))
    return out


@needs_numba
def test_kernels_close_over_no_compiled_function():
    """numba's cache key pickles a kernel's closure, and a dispatcher pickles
    with a per-process identifier: a kernel closing over another compiled
    function misses the cache in every new process (what made each first fit
    recompile).  Every kernel privopt builds is cacheable and closes over none."""
    from numba.core.dispatcher import Dispatcher

    kernels = _kernels()
    # the pattern kernels (five of them the top-down sampler's), the scorers, the branch and bound's four
    assert len(kernels) == 12
    for k in kernels:
        assert type(k._cache).__name__ == "FunctionCache", k.py_func.__qualname__   # cache=True
        cells = k.py_func.__closure__ or ()
        assert not [c for c in cells if isinstance(c.cell_contents, Dispatcher)], k.py_func.__qualname__


_CHILD = textwrap.dedent("""
    import json
    import numpy as np
    from privopt.search import _patterns

    rng = np.random.default_rng(0)
    digits_t = rng.integers(0, 2, size=(4, 60)).astype(np.int64)
    pos = rng.integers(0, 2, size=60).astype(np.int64)
    neg = 1 - pos
    supports = np.array([[0, 1], [0, 2], [1, 3]], dtype=np.int64)
    V = np.array([[1.0, -1.0], [1.0, 1.0]])
    noise = np.zeros(4)
    extra = np.zeros(2)
    _patterns.pattern_lower_bounds(digits_t, 2, pos, neg, supports)
    records = _patterns.records_of(digits_t, 2, [0.0, 1.0], pos, neg)
    points = _patterns.points_of(V, 0.5, noise, extra)
    _patterns.region_minima(records, supports, points)
    _patterns.support_values(records, supports[0], points)
    bounds = _patterns._numba_kernel()
    minima, one = _patterns._minima_kernels()[:2]    # (the screened minima are the sampler's: not called here)
    print(json.dumps({k.py_func.__name__: [sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]
                      for k in (bounds, minima, one)}))
""")


@needs_numba
@pytest.mark.slow
def test_second_fresh_process_loads_the_kernels_from_the_cache(tmp_path):
    """The first process compiles the selection kernels into an empty
    NUMBA_CACHE_DIR; a second fresh process loads every one of them (hits)
    and compiles none (misses), whatever it calls them with."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=ROOT)

    def run():
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run()
    assert all(miss >= 1 and hit == 0 for hit, miss in first.values()), first
    second = run()
    assert all(hit >= 1 and miss == 0 for hit, miss in second.values()), second


@needs_numba
@pytest.mark.slow
def test_kernels_build_when_no_default_cache_location_is_writable(tmp_path):
    """Neither numba's user-wide cache nor (here, by configuration) the package
    directory is writable: numba refuses to define a cached kernel, and
    privopt points NUMBA_CACHE_DIR at its own cache directory instead of failing."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = dict(os.environ, PYTHONPATH=ROOT, XDG_CACHE_HOME=str(blocker / "cache"),
               NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator,UserWideCacheLocator",
               PRIVOPT_CACHE_DIR=str(tmp_path / "privopt"))
    env.pop("NUMBA_CACHE_DIR", None)
    code = ("import os; from privopt.search import _patterns; k = _patterns._numba_kernel(); "
            "print(k is not None, os.environ.get('NUMBA_CACHE_DIR'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", str(tmp_path / "privopt" / "numba")]


# ---------------------------------------------------------------------------
# the accounting cache
# ---------------------------------------------------------------------------
@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "privopt-cache"
    monkeypatch.setenv(_cache.CACHE_DIR_ENV, str(path))
    return path


def _entries(path):
    with open(path / "accounting.json") as fh:
        return json.load(fh)


def test_cache_dir_follows_the_environment_variable(cache_dir, monkeypatch):
    assert _cache.cache_dir() == str(cache_dir)
    monkeypatch.delenv(_cache.CACHE_DIR_ENV)
    default = _cache.cache_dir()
    assert default != str(cache_dir) and "privopt" in default


@needs_accounting
def test_allocation_noise_is_read_back_equal_to_the_uncached_computation(cache_dir, monkeypatch):
    disk = acc._allocation_noise_multiplier.__wrapped__       # below the in-process lru_cache
    raw = disk.__wrapped__                                     # no cache at all
    args = (2.0, 1e-3, 3)
    expected = raw(*args)
    assert disk(*args) == expected                             # computed and stored
    (key, value), = _entries(cache_dir).items()
    assert value == expected and json.loads(key)[2:] == list(args)

    real, calls = acc.noisy_sgd_allocation_delta, []

    def counting(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(acc, "noisy_sgd_allocation_delta", counting)
    assert disk(*args) == expected                             # read back, bit for bit
    assert calls == [(expected, 3, 2.0)]                       # after one forward check, no search
    disk(2.0, 2e-3, 3)                                         # another delta is another key
    assert len(calls) > 5


@needs_accounting
def test_dpsgd_calibration_from_the_cache_is_rechecked(cache_dir):
    """A cached noise multiplier is used only if it still meets epsilon: a
    larger (more private) value written into the file is returned, a smaller
    one that misses epsilon is discarded and the uncached value computed."""
    disk = acc.dpsgd_calibrate_noise_multiplier.__wrapped__
    raw = disk.__wrapped__
    args = (2.0, 1e-3, 0.5, 2, "shuffle", 1)
    expected = raw(*args)
    assert disk(*args) == expected
    (key, value), = _entries(cache_dir).items()
    assert value == expected

    def write(v):
        with open(cache_dir / "accounting.json", "w") as fh:
            json.dump({key: v}, fh)

    write(expected * 1.5)
    assert disk(*args) == expected * 1.5
    write(expected / 2)   # would spend more than epsilon
    assert acc.dpsgd_epsilon(expected / 2, 0.5, 2, 1e-3, "shuffle", 1, "replace_one",
                             acc.pld_discretization_interval(2.0)) > 2.0
    assert disk(*args) == expected
    assert _entries(cache_dir)[key] == expected


@needs_accounting
@pytest.mark.parametrize("damage", ["unwritable", "corrupt"])
def test_a_broken_cache_never_fails_a_fit(tmp_path, monkeypatch, damage):
    if damage == "unwritable":   # a regular file where the directory should be (as root, too)
        blocker = tmp_path / "a-file"
        blocker.write_text("")
        monkeypatch.setenv(_cache.CACHE_DIR_ENV, str(blocker / "cache"))
    else:
        (tmp_path / "c").mkdir()
        (tmp_path / "c" / "accounting.json").write_text('{"truncated": ')
        monkeypatch.setenv(_cache.CACHE_DIR_ENV, str(tmp_path / "c"))
    assert _cache.JsonCache("accounting").get("x") is None
    stored = _cache.JsonCache("accounting").put("x", 1.0)
    assert stored is (damage == "corrupt")   # a corrupt file is replaced, an unwritable place skipped
    acc._allocation_noise_multiplier.cache_clear()
    raw = acc._allocation_noise_multiplier.__wrapped__.__wrapped__
    assert acc._allocation_noise_multiplier(2.0, 1e-3, 3) == raw(2.0, 1e-3, 3)
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int)
    est = NoisySGDClassifier(epsilon=2.0, delta=1e-3, batch_size=20, bounds=(0.0, 1.0), random_state=0,
                             accounting="allocation").fit(X, y)
    assert est.n_steps_ == 3 and est.epsilon_spent_ <= 2.0
    assert est.noise_std_ == raw(2.0, 1e-3, 3)


def test_json_cache_refuses_values_it_cannot_store_exactly(cache_dir):
    c = _cache.JsonCache("t")
    assert c.put("a", float("nan")) is False and c.get("a") is None
    assert c.put("a", 0.1 + 0.2) and c.get("a") == 0.1 + 0.2
    (cache_dir / "t.json").write_text(json.dumps({"b": "text", "c": True, "d": [1]}))
    assert c.get("b") is None and c.get("c") is None and c.get("d") is None


def test_demo_reports_the_warm_up_apart(tmp_path, monkeypatch, capsys):
    """The demo compiles (or loads) the kernels before the timed runs and says
    how long that took, on its own line; a demo without a kernel method skips it."""
    import privopt.datasets
    import privopt.demo as demo

    def no_adult(*a, **k):
        raise privopt.datasets.DatasetNotFoundError("no Adult files here")

    monkeypatch.setattr(privopt.datasets, "load_adult", no_adult)
    # the demo and the experiment import it at module level
    monkeypatch.setattr("privopt.demo.load_adult", no_adult)
    monkeypatch.setattr("privopt.experiments.adult.load_adult", no_adult)
    kw = dict(runs=1, n_train=200, epsilons=(1.0,), progress=False)
    monkeypatch.setattr(demo, "DEMO_METHODS", ("permute_and_flip",))
    demo.run_demo(out=str(tmp_path / "a"), **kw)
    out = capsys.readouterr().out
    assert out.count("warm-up: ") == 1
    assert out.index("warm-up: ") < out.index("How to read this")
    monkeypatch.setattr(demo, "DEMO_METHODS", ("nonprivate_lr",))
    demo.run_demo(out=str(tmp_path / "b"), **kw)
    assert "warm-up" not in capsys.readouterr().out


@needs_numba
@pytest.mark.slow
def test_privopt_compile_leaves_nothing_for_a_default_fit_to_compile(tmp_path):
    """``privopt compile`` fills an empty NUMBA_CACHE_DIR; a later process's default fit
    (another size than the command's tables) then adds no kernel to it."""
    cache = tmp_path / "numba"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "privopt", "compile"], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0 and "compiled and cached" in out.stdout, out.stderr
    compiled = sorted(p.name for p in cache.rglob("*.nbc"))
    assert compiled
    fit = textwrap.dedent("""
        import numpy as np, privopt
        rng = np.random.default_rng(1)
        X = rng.uniform(size=(3000, 9)); y = (X @ rng.normal(size=9) > 0).astype(int)
        privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), random_state=1).fit(X, y)
    """)
    out = subprocess.run([sys.executable, "-c", fit], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in cache.rglob("*.nbc")) == compiled


def test_privopt_compile_without_numba_says_so(monkeypatch, capsys):
    from privopt import cli

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else object())
    assert cli.main(["compile"]) == 0
    assert "numba is not installed" in capsys.readouterr().out

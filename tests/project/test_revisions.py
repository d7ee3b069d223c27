"""Numbers cannot drift silently: each method of privopt/_revisions.py is run on a
tiny fixed input with a fixed seed, and its output is compared with the value
pinned in tests/data/revision_pins.json next to the revision it was pinned under.

* output as pinned, revision as pinned: pass;
* output changed, revision not bumped: FAIL -- set a new revision for the method
  in privopt/_revisions.py (in the same commit as the change), then regenerate;
* revision changed (or a method without a pin): FAIL until the pins are
  regenerated, so that a bump and the change it records land together.

Regenerate with ``python tests/project/test_revisions.py --update`` (from the repository
root).  It refuses to overwrite a pin whose output changed while its revision did
not; ``--update METHOD ...`` limits it to some methods.

Each method is built exactly as the Adult experiment builds it (its
``_make_estimator`` and ``Task``), fitted on the input of :func:`tiny_data`, and
reduced to its fitted coefficients and intercept (rounded to 1e-9) and its training
accuracy.  Pins are compared with a tolerance of 2e-9 (relative above 1), so
that a value on a rounding boundary does not flip.

``--force METHOD ...`` overwrites those methods' pins even when their revision did
not change: only for a revision that was never committed (a change still in
progress under a revision already bumped in the working tree).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import warnings

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = os.path.join(os.path.dirname(HERE), "data", "revision_pins.json")
SEED = 20261125
EPSILON = 1.0
DELTA = 1e-4
TOL = 2e-9


def tiny_data():
    """30 records, 3 features in [0, 1] (some one-hot-like), labels from a noisy halfspace."""
    rng = np.random.default_rng(7)
    n = 30
    X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 2, n), np.round(rng.uniform(0, 1, n), 2)])
    y = np.where(X @ np.array([1.0, -1.0, 1.5]) - 0.6 + rng.normal(0, 0.4, n) > 0, 1, 0)
    return X.astype(float), y


def _experiment():
    """The experiment module holding ``Task`` and ``_make_estimator`` (wherever in
    privopt.experiments they live)."""
    import privopt.experiments as pkg

    names = ["privopt.experiments.adult"] + [
        f"privopt.experiments.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]
    for name in names:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(mod, "_make_estimator") and hasattr(mod, "Task"):
            return mod
    raise RuntimeError("privopt.experiments has no _make_estimator/Task: update tests/project/test_revisions.py")


def methods() -> list[str]:
    from privopt._revisions import REVISIONS

    return list(REVISIONS)


def revision(method: str) -> str:
    from privopt._revisions import REVISIONS

    return REVISIONS[method]


def run_method(method: str) -> dict:
    """The method's output on the tiny input: coef, intercept (rounded to 1e-9), train accuracy."""
    exp = _experiment()
    X, y = tiny_data()
    task = exp.Task(method=method, epsilon=EPSILON, run=0, seed=SEED, delta=DELTA, solver="highs",
                    time_limit=60.0, levels=None)
    est = exp._make_estimator(task, X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in getattr(exp, "TUNED_METHODS", ()):   # the experiment's grid search, as it runs it
            est, _ = exp._tuned(est, task, X, y)
        else:
            est.fit(X, y)
    coef = np.ravel(np.asarray(getattr(est, "coef_", []), dtype=float))
    intercept = np.ravel(np.asarray(getattr(est, "intercept_", [0.0]), dtype=float))
    return {"coef": [round(float(c), 9) for c in coef],
            "intercept": [round(float(c), 9) for c in intercept],
            "train_accuracy": round(float(est.score(X, y)), 9)}


def same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for key in a:
        x, z = np.atleast_1d(np.asarray(a[key], dtype=float)), np.atleast_1d(np.asarray(b[key], dtype=float))
        if x.shape != z.shape or not np.all(np.abs(x - z) <= TOL * np.maximum(1.0, np.abs(z))):
            return False
    return True


def load_pins() -> dict:
    if not os.path.exists(PINS):
        return {}
    with open(PINS) as fh:
        return json.load(fh)


def check(method: str, pins: dict, output: dict | None = None) -> str | None:
    """None when the method agrees with its pin, else what is wrong."""
    pin = pins.get(method)
    rev = revision(method)
    if pin is None:
        return (f"{method}: no pin in tests/data/revision_pins.json; run "
                "`python tests/project/test_revisions.py --update` and commit the pin.")
    output = run_method(method) if output is None else output
    if pin["revision"] != rev:
        return (f"{method}: revision {rev!r} in privopt/_revisions.py but the pin was taken under "
                f"{pin['revision']!r}; run `python tests/project/test_revisions.py --update {method}` and commit the "
                "pin with the change it records.")
    if not same(output, pin["output"]):
        return (f"{method}: its output on the fixed input changed but its revision did not "
                f"(still {rev!r}).\n  pinned: {json.dumps(pin['output'])}\n  now:    {json.dumps(output)}\n"
                f"If the change is intended, set a new revision for {method!r} in privopt/_revisions.py "
                "(privopt/_revisions.py says how) and run `python tests/project/test_revisions.py --update`.")
    return None


@pytest.mark.parametrize("method", methods())
def test_output_is_pinned_to_its_revision(method):
    from tests.conftest import require_solver

    require_solver("highs")
    problem = check(method, load_pins())
    if problem:
        pytest.fail(problem, pytrace=False)


def update(only=None, force=()) -> int:
    """Regenerate pins; refuse a changed output under an unchanged revision
    (unless the method is in ``force``)."""
    pins = load_pins()
    refused = []
    for method in methods():
        if only and method not in only:
            continue
        output = run_method(method)
        pin = pins.get(method)
        if pin is not None and pin["revision"] == revision(method) and not same(output, pin["output"]):
            if method not in force:
                refused.append(check(method, pins, output))
                continue
            print(f"{method}: FORCED over a pin of the same revision {revision(method)!r}", file=sys.stderr)
        pins[method] = {"revision": revision(method), "output": output}
        print(f"{method}: {revision(method)} {json.dumps(output)}")
    for method in list(pins):
        if method not in methods():   # a method removed from _revisions.py
            del pins[method]
    os.makedirs(os.path.dirname(PINS), exist_ok=True)
    with open(PINS, "w") as fh:
        json.dump(pins, fh, indent=1, sort_keys=True)
        fh.write("\n")
    for message in refused:
        print("REFUSED " + message, file=sys.stderr)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    args = sys.argv[1:]
    if args[:1] == ["--update"]:
        sys.exit(update(set(args[1:]) or None))
    if args[:1] == ["--force"] and len(args) > 1:
        sys.exit(update(set(args[1:]), force=set(args[1:])))
    print(__doc__)
    sys.exit(2)

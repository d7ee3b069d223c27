"""Private selection on a user's own p-median model: the old fix-and-solve path against the
new one, side by side in one run.

The model (a faithful p-median: ``--sites`` candidate sites, ``--customers`` customers with
random 2-D coordinates, ``assign[i, j] <= open[j]``, ``sum_j assign[i, j] == 1``, cost = sum of
distance * assign with each customer's distance clipped into loss_range = (0, 1), ``--k``
sites open by the declared public constraint ``sum(open) == k``) is released by
permute-and-flip at epsilon 1 on both paths, same seed:

* **before**: W listed as the product grid and filtered (the old path needs
  ``norm_bound=sqrt(k)`` here, since without it the product of 2^sites points is refused),
  every point scored through Pyomo (``Var.fix`` and a persistent HiGHS solve);
* **after**: W listed through the declared constraint (no norm bound), every point scored by
  one HiGHS model re-solved warm with the decision's columns fixed
  (:class:`privopt.solvers.HighsFixedSession`), the closed form of the blocks turned off;
* **blocks** (the default path since): the same session's rows read once, the model with the
  decision fixed recognised as one choose-one block per customer, and every point's loss
  computed by the closed form (:class:`privopt.solvers.ChooseOneBlocks`), no solve; timed
  against "after" on ``--blocks-customers`` (default: ``--customers`` and twice that), the
  same seeds, run in turn, with where its time goes (reading the model into HiGHS, checking
  the rows, evaluating every point).

It reports seconds per release (median of ``--repeats``), that both release the same point
for the same seed, and where the old path's time goes (cProfile of one release: Pyomo's
update of the rows of the fixed variables, loading the solution back into the model, and
HiGHS's own runs).

``--executor N``: the new path also on the caller's executor, in the same run: in this
process (``executor=None``) against a ``ProcessPoolExecutor(N)`` made once and warmed up,
the same seeds in turn, each release's seconds and whether both release the same point.
On the executor, W's points are cut into one shard per worker, each worker loads its own
copy of the pickled model and reads it into its own HiGHS session; the noise is drawn in
the calling process.  Results: benchmarks/results/own_model_speed.md.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pyomo.environ as pyo

import _common
import privopt
from privopt.mechanisms.selection import _decision, _evaluate
from privopt.perturbation import resolve_grids
from privopt.solvers import HighsFixedSession, closed_form_blocks

OUT = os.path.join(_common.HERE, "results", "own_model_speed.md")


def pmedian(n_sites, n_customers, k, seed):
    rng = np.random.default_rng(seed)
    cust, sites = rng.random((n_customers, 2)), rng.random((n_sites, 2))
    dist = np.minimum(1.0, np.linalg.norm(cust[:, None] - sites[None], axis=2))   # each term in [0, 1]
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, n_customers - 1), pyo.RangeSet(0, n_sites - 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.assign = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.p = pyo.Constraint(expr=sum(m.open[j] for j in m.J) == k)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.assign[i, j] <= m.open[j])
    m.cost = pyo.Objective(expr=sum(float(dist[i, j]) * m.assign[i, j] for i in m.I for j in m.J))
    return m


class OldPath:
    """The path before: product then filter, Pyomo's fix and persistent solve."""

    def __enter__(self):
        self.saved = (_decision.count_constrained_points, HighsFixedSession.__dict__["build"])
        _decision.count_constrained_points = lambda *a, **k: None      # W's one count, in its decision set
        HighsFixedSession.build = classmethod(lambda cls, *a, **k: None)
        return self

    def __exit__(self, *exc):
        _decision.count_constrained_points, HighsFixedSession.build = self.saved


class NoBlocks:
    """The HiGHS session's solves, the closed form of the blocks turned off."""

    def __enter__(self):
        self.saved = _evaluate.closed_form_blocks
        _evaluate.closed_form_blocks = lambda *a, **k: (None, "turned off by the benchmark")
        return self

    def __exit__(self, *exc):
        _evaluate.closed_form_blocks = self.saved


def release(model, args, seed, old, executor=None, blocks=False, n=None):
    kw = dict(weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=args.customers if n is None else n,
              method="permute_and_flip", random_state=seed, public_constraints=["p"], keep_report=True)
    if old:
        with OldPath():
            return privopt.exponential_mechanism(model, norm_bound=args.k ** 0.5, **kw)
    if blocks:
        return privopt.exponential_mechanism(model, executor=executor, **kw)
    with NoBlocks():
        return privopt.exponential_mechanism(model, executor=executor, **kw)


def blocks_rows(args):
    """The HiGHS session's solves against the closed form of the blocks, on p-medians of
    ``args.blocks_customers`` customers, the same seeds in turn: Markdown lines."""
    lines = [
        "",
        "## The closed form of the blocks against the HiGHS session",
        "",
        f"The same p-median ({args.sites} sites, {args.k} open), W listed through the constraint, scored either "
        "by the HiGHS session (one warm LP per point, the closed form turned off) or by the closed form of the "
        "blocks (the session's rows read once: one choose-one block per customer, every point evaluated at "
        "once, no solve). Permute-and-flip at epsilon 1, the same seeds, run in turn, one process.",
        "",
        f"| customers | L(w) scored by | points of W | solves | seconds per release (median of {args.repeats}) | "
        "all runs (s) |",
        "|---|---|---|---|---|---|",
    ]
    notes, parts_rows = [], []
    for n in args.blocks_customers:
        model = pmedian(args.sites, n, args.k, args.seed)
        release(model, args, 0, False, blocks=True, n=n)       # first-use costs out of the timings
        times: dict = {"session": [], "blocks": []}
        same, reports = [], {}
        for r in range(args.repeats):
            outs = {}
            for name in ("session", "blocks"):
                start = time.perf_counter()
                res = release(model, args, r, False, blocks=name == "blocks", n=n)
                times[name].append(time.perf_counter() - start)
                outs[name], reports[name] = res.weights, res.report
            same.append(bool(np.array_equal(outs["session"], outs["blocks"])))
            print(f"{n} customers, repeat {r}: session {times['session'][-1]:.2f} s, blocks "
                  f"{times['blocks'][-1]:.2f} s, same release {same[-1]}", flush=True)
        for name in ("session", "blocks"):
            rep = reports[name]
            lines.append(f"| {n} | {rep.engine} | {rep.n_points:,} | {rep.solves:,} | "
                         f"{statistics.median(times[name]):.3f} | " + ", ".join(f"{t:.2f}" for t in times[name])
                         + " |")
        sess, blk = statistics.median(times["session"]), statistics.median(times["blocks"])
        notes.append(f"{n} customers: **{sess / blk:.1f}x** ({sess:.3f} -> {blk:.3f} s per release); the same "
                     f"released point for the same seed on every repeat: **{all(same)}**.")
        # where the closed form's time goes (timed once)
        w = [model.open[j] for j in model.J]
        start = time.perf_counter()
        session = HighsFixedSession.build(model, w, relax=[model.p])
        built = time.perf_counter() - start
        start = time.perf_counter()
        ev, why = closed_form_blocks(session)
        checked = time.perf_counter() - start
        pts = _evaluate.FixAndSolveEvaluator(model, w, resolve_grids(w),
                                             public_constraints=[model.p]).points
        start = time.perf_counter()
        ev.losses(pts)
        evaluated = time.perf_counter() - start
        parts_rows.append(f"| {n} | {built:.3f} | {checked:.3f} ({why}) | {evaluated:.3f} ({len(pts)} points) |")
    lines += [""] + [f"- {note}" for note in notes] + [
        "",
        "Where the closed form's time goes (one release's steps, timed once):",
        "",
        "| customers | reading the model into HiGHS (s) | reading its rows and checking every block (s) | "
        "evaluating every point (s) |",
        "|---|---|---|---|",
    ] + parts_rows + [
        "",
        "With the closed form, most of a release is reading the model into HiGHS (Pyomo's `set_instance`), "
        "which the session path pays too; the rows are then read from HiGHS, not parsed a second time.",
    ]
    return lines


def executor_rows(model, args):
    """The new path in this process against a process pool of ``args.executor`` workers,
    the same seeds in turn: Markdown lines."""
    times: dict = {"serial": [], "pool": []}
    same, reports = [], {}
    with ProcessPoolExecutor(args.executor) as pool:
        release(model, args, 0, False, pool)          # the workers' imports out of the timings
        for r in range(args.repeats):
            outs = {}
            for name, ex in (("serial", None), ("pool", pool)):
                start = time.perf_counter()
                res = release(model, args, r, False, ex)
                times[name].append(time.perf_counter() - start)
                outs[name], reports[name] = res.weights, res.report
            same.append(bool(np.array_equal(outs["serial"], outs["pool"])))
            print(f"repeat {r}: serial {times['serial'][-1]:.2f} s, {args.executor} processes "
                  f"{times['pool'][-1]:.2f} s, same release {same[-1]}", flush=True)
    serial, pool_t = statistics.median(times["serial"]), statistics.median(times["pool"])
    lines = [
        "",
        f"## Scoring on the caller's executor (`--executor {args.executor}`)",
        "",
        "The new path (W listed through the constraint, HiGHS session, the closed form of the blocks turned "
        "off: on an executor the workers solve) in this process against a "
        f"`ProcessPoolExecutor({args.executor})` made once and warmed up: W cut into one shard per worker, each "
        "worker loading its own copy of the pickled model and reading it into its own HiGHS session, the noise "
        "drawn in the calling process in W's order. Same seeds, run in turn.",
        "",
        f"| scoring | workers | solves | predicted (s) | seconds per release (median of {args.repeats}) | "
        "all runs (s) |",
        "|---|---|---|---|---|---|",
    ]
    for name, label, workers in (("serial", "executor=None", 1), ("pool", "ProcessPoolExecutor", args.executor)):
        rep = reports[name]
        lines.append(f"| {label} | {workers} | {rep.solves:,} | {rep.predicted_time:.2f} | "
                     f"{statistics.median(times[name]):.3f} | " + ", ".join(f"{t:.2f}" for t in times[name]) + " |")
    lines += [
        "",
        f"Serial / {args.executor} processes: **{serial / pool_t:.2f}x** (median seconds per release {serial:.3f} "
        f"-> {pool_t:.3f}). Same released point for the same seed on every repeat: **{all(same)}**.",
        "",
        "The fixed cost of a release on the executor (timed once here, in this process):",
        "",
        "| step | where | seconds |",
        "|---|---|---|",
    ] + [f"| {step} | {where} | {sec:.3f} |" for step, where, sec in overheads(model)]
    return lines


def overheads(model):
    """Seconds of the executor path's fixed steps: serializing the model (once per
    release), loading it and reading it into HiGHS (once per worker and release)."""
    import pickle

    from privopt._runtime import dumps_model

    start = time.perf_counter()
    blob = dumps_model(model)
    dump = time.perf_counter() - start
    start = time.perf_counter()
    copy = pickle.loads(blob)
    load = time.perf_counter() - start
    start = time.perf_counter()
    HighsFixedSession.build(copy, [copy.open[j] for j in copy.J], relax=[copy.p])
    build = time.perf_counter() - start
    return [(f"pickling the model ({len(blob) / 1e6:.1f} MB)", "calling process", dump),
            ("loading the model", "each worker", load),
            ("reading it into a HiGHS session", "each worker (and the serial path, once)", build)]


def profile_old(model, args):
    prof = cProfile.Profile()
    prof.enable()
    start = time.perf_counter()
    release(model, args, 0, True)
    total = time.perf_counter() - start
    prof.disable()
    st = pstats.Stats(prof)
    parts = {"Pyomo: update of the fixed variables' rows (update_parameters)": "update_parameters",
             "Pyomo: loading the solution into the model (load_vars)": "load_vars",
             "HiGHS: run": "run"}
    out = {}
    for label, fname in parts.items():
        out[label] = sum(v[3] for k, v in st.stats.items()   # type: ignore[attr-defined]
                         if (k[2] == fname if fname != "run" else ("highspy" in k[2] and k[2].endswith(".run>"))))
    return total, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", type=int, default=20)
    ap.add_argument("--customers", type=int, default=200)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="the instance's seed")
    ap.add_argument("--executor", type=int, default=0,
                    help="also compare the new path in this process with a process pool of this many workers")
    ap.add_argument("--blocks-customers", default=None,
                    help="comma-separated numbers of customers on which the closed form of the blocks is timed "
                         "against the HiGHS session (default: --customers and twice that; 'none' to skip)")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    if args.blocks_customers is None:
        args.blocks_customers = [args.customers, 2 * args.customers]
    elif args.blocks_customers.strip().lower() == "none":
        args.blocks_customers = []
    else:
        args.blocks_customers = [int(x) for x in args.blocks_customers.split(",") if x.strip()]
    env = _common.stamp()
    model = pmedian(args.sites, args.customers, args.k, args.seed)
    release(model, args, 0, False)        # imports and first-use costs out of the timings
    times: dict = {"before": [], "after": []}
    same = []
    reports = {}
    for r in range(args.repeats):
        outs = {}
        for name in ("before", "after"):
            start = time.perf_counter()
            res = release(model, args, r, name == "before")
            times[name].append(time.perf_counter() - start)
            outs[name], reports[name] = res.weights, res.report
        same.append(bool(np.array_equal(outs["before"], outs["after"])))
        print(f"repeat {r}: before {times['before'][-1]:.2f} s, after {times['after'][-1]:.2f} s, "
              f"same release {same[-1]}", flush=True)
    total, parts = profile_old(model, args)
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    lines = [
        "# Private selection on a user's p-median model: before / after",
        "",
        _common.stamp_line(env),
        "",
        f"p-median: {args.sites} candidate sites, {args.customers} customers (random 2-D coordinates, "
        f"distance clipped to [0, 1]), {args.k} open by the declared public constraint sum(open) == {args.k}; "
        "permute-and-flip at epsilon 1, the same seed on both paths, one process, run in turn.",
        "",
        "| path | W listed | L(w) scored by | norm_bound | points of W | solves | seconds per release (median of "
        f"{args.repeats}) | all runs (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, nb in (("before", f"sqrt({args.k}) (needed)"), ("after", "none")):
        rep = reports[name]
        lines.append(f"| {name} | {rep.listing} | {rep.engine} | {nb} | {rep.n_points:,} | {rep.solves:,} | "
                     f"{statistics.median(times[name]):.3f} | "
                     + ", ".join(f"{t:.2f}" for t in times[name]) + " |")
    lines += [
        "",
        f"Speed-up: **{before / after:.1f}x** (median seconds per release {before:.3f} -> {after:.3f}). "
        f"Same released point for the same seed on every repeat: **{all(same)}**.",
        "",
        f"Where the old path's time goes (cProfile of one release, {total:.2f} s under the profiler):",
        "",
        "| part | seconds |",
        "|---|---|",
    ] + [f"| {label} | {sec:.2f} |" for label, sec in parts.items()] + [
        "",
        "The old path fixes the decision with `Var.fix`; Pyomo's persistent HiGHS interface treats fixed "
        "variables as parameters and rewrites the bounds of every row they appear in before each solve, then "
        "loads every variable's value back into the model. The new path loads the model into HiGHS once with "
        "the decision's columns free, sets their bounds to each point and re-runs HiGHS warm; each optimum is "
        "certified by privopt's rule as before.",
    ]
    if args.executor > 0:
        lines += executor_rows(model, args)
    if args.blocks_customers:
        lines += blocks_rows(args)
    _common.write_markdown(args.out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

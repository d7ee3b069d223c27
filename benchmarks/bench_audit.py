"""Empirical privacy audit of every shipped mechanism and of deliberately broken variants.

For each case, :func:`privopt.audit.audit` runs the mechanism ``--n`` times
on each of two neighbouring data sets (fast enumeration oracle: the
mechanism's own noise draw and calibration, exact argmin over the tiny
instance) and reports a lower confidence bound on epsilon (Clopper-Pearson,
event chosen on a separate half of the runs), with the plug-in estimate and a
two-sided interval for the worst event's epsilon.  The shipped mechanisms
must show no violation (bound <= claimed epsilon); the broken variants must
exceed it.

Each case is also cross-checked against the real mechanism: on
``--cross-check-seeds`` per-run seeds, the enumeration oracle and the real
``privopt.opdisc`` / ``opsamp`` / ``rspm`` with the HiGHS solver must return
the same outputs (column ``solver_cross_check``).

A second table checks OPSamp's sensitivity step on the probability simplex
(:func:`simplex_sensitivity`): the paper's Lemma 9 event against its claim,
and privopt's replacement bound.

Writes ``benchmarks/results/audit.csv``, ``audit.md`` and
``audit_opsamp_simplex.csv`` / ``.md`` (``--out``).

Run:  python benchmarks/bench_audit.py                  (several minutes: without the cross-checks,
                                                        half of the 36 cases took 200 s on 2 shared cores)
      python benchmarks/bench_audit.py --n 4000000 --confidence 0.99
      python benchmarks/bench_audit.py --n 2000 --cross-check-seeds 4 --simplex-trials 10 --out /tmp/audit
                                    (a smoke run, 40 s: every case and file, but too few runs to
                                     detect every broken variant, so it exits 1)
"""

from __future__ import annotations

import argparse
import datetime as _dt
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import privopt
from privopt import audit
from privopt.audit import (
    NeighbouringPair,
    OPDiscTarget,
    OPSampTarget,
    RSPMTarget,
    ScoringTarget,
    SelectionTarget,
    design_instance,
    hinge_instance,
    opsamp_instance,
    selection_instance,
)
from privopt.solvers import available_solvers

import _common

HERE = Path(__file__).resolve().parent

COLUMNS = ["mechanism", "variant", "instance", "claimed_epsilon", "delta", "confidence", "epsilon_lower_bound",
           "event_epsilon_estimate", "event_epsilon_ci_low", "event_epsilon_ci_high", "violation", "expected",
           "as_expected", "n_samples", "n_evaluation", "selection", "worst_event", "k1", "n1", "k2", "n2",
           "noise", "solver_cross_check", "seconds", "python", "privopt", "date"]


def random_pair(d=2, n=8, seed=0) -> NeighbouringPair:
    """A random integer data set in {-1, 0, 1}^d and a neighbour (first record flipped)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(n, d)).astype(float)
    y = np.array([1, -1] * (n // 2))
    Xp, yp = X.copy(), y.copy()
    Xp[0] = -X[0] if np.any(X[0]) else np.ones(d)
    yp[0] = -y[0]
    return NeighbouringPair(X, y, Xp, yp, name=f"random_d{d}_n{n}")


def cases():
    """(target, expected violation) for every case of the table."""
    design = design_instance()
    out = []
    for eps, delta in ((5.0, 0.1), (1.0, 0.01)):
        out += [
            (OPDiscTarget(design, epsilon=eps, delta=delta), False),
            (OPDiscTarget(design, epsilon=eps, delta=delta, calibration="paper"), False),
            (OPDiscTarget(design, epsilon=eps, delta=delta, normalize=False), True),
            # sigma / 10 violates (5, 0.1) on this instance but is still (1, 0.01)-DP there
            # (the calibration covers every instance; this one is far from the worst case)
            (OPDiscTarget(design, epsilon=eps, delta=delta, noise_factor=0.1), eps >= 5.0),
        ]
    out.append((OPDiscTarget(random_pair(), epsilon=2.0, delta=1e-3), False))
    for eps in (1.0, 2.0):
        out += [
            (RSPMTarget(design, epsilon=eps), False),
            (RSPMTarget(design, epsilon=eps, noise_factor=0.1), True),
        ]
    out.append((RSPMTarget(random_pair(seed=1), epsilon=2.0), False))
    pair = opsamp_instance()
    out += [
        (OPSampTarget(pair, epsilon=1.0, delta=0.01), False),
        (OPSampTarget(pair, epsilon=1.0, delta=0.01, noise_factor=0.1), None),  # not detectable here
        (OPSampTarget(pair, epsilon=1.0, delta=0.01, noise_factor=0.0), True),
        (OPSampTarget(hinge_instance(), epsilon=1.0, delta=0.01, n_oracle_calls=8), False),
    ]
    sel = selection_instance()
    for method in ("exponential", "permute_and_flip"):
        for eps in (1.0, 2.0):
            out += [
                (SelectionTarget(sel, epsilon=eps, method=method), False),
                (SelectionTarget(sel, epsilon=eps, method=method, sensitivity_factor=0.5), True),
                (ScoringTarget(sel, epsilon=eps, method=method), False),
                (ScoringTarget(sel, epsilon=eps, method=method, sensitivity_factor=0.5), True),
            ]
        out.append((SelectionTarget(random_pair(seed=2), epsilon=1.0, method=method), False))
    return out


def _noise(target) -> str:
    """The noise column: each mechanism's scale (ScoringTarget's mechanism is
    "scoring (<method>)"); a target this table does not know yet gets its numeric
    parameters rather than a KeyError after the whole run."""
    p = target.parameters
    if target.mechanism == "opdisc":
        return f"sigma={p['sigma']:.4g}"
    if target.mechanism == "rspm":
        return f"b={p['noise_scale']:.4g}"
    if target.mechanism in ("exponential", "permute_and_flip") or target.mechanism.startswith("scoring"):
        return f"s=2Delta/eps={p['noise_scale']:.4g}"
    if target.mechanism == "opsamp":
        return f"m={p['n_oracle_calls']}, eta={p['eta']:.3g}, laplace={p['laplace_scale']:.4g}"
    return ", ".join(f"{k}={v:.4g}" for k, v in p.items() if isinstance(v, (int, float)) and not isinstance(v, bool))


def cross_check(target, n_seeds: int) -> str:
    """Same per-run seeds through the enumeration oracle and the real mechanism."""
    if n_seeds <= 0:
        return ""
    if target.mechanism == "opsamp" and target.noise_factor != 1.0:
        return "n/a (variant not in the shipped API)"
    if target.mechanism == "opsamp":
        n_seeds = max(1, n_seeds // 4)  # m solves per run
    seeds = np.random.SeedSequence(20261122).spawn(n_seeds)
    same = total = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for which in (0, 1):
            fast = audit.sample_outputs(target, which, None, oracle="enumerate", seeds=seeds)
            real = audit.sample_outputs(target, which, None, oracle="solver", seeds=seeds)
            same += int(np.sum(np.all(np.abs(fast - real) <= 1e-7, axis=1)))
            total += len(seeds)
    return f"{same}/{total} identical"


def simplex_sensitivity(trials: int, seed: int) -> list[dict]:
    """OPSamp's sensitivity step on the probability simplex in R^100 at small m.

    Exact oracle by numpy: the answer for sigma is the vertex e_j maximizing
    sigma_j - c_j (c the summed losses of the vertices); constant losses on D,
    one record's loss raised by 1 on half of the vertices on D'.  Columns: the
    frequency of the paper's Lemma 9 event (average more than 2 D_inf gamma from
    its mean in l1; the paper claims at most delta/2) and of privopt's bound
    failing (coupled sensitivity above lambda = min(D_1, A + min(t_H, t_B));
    proven at most delta), with the paper's lambda 4 D_inf gamma + A beside
    privopt's."""
    from privopt.calibration import opsamp_parameters

    d, delta, n = 100, 1e-3, 10**9
    rng = np.random.default_rng(seed)
    c_D = np.zeros(d)
    c_Dp = c_D.copy()
    c_Dp[: d // 2] += 1.0
    rows = []
    for m in (10, 100, 1000):
        p = opsamp_parameters(1.0, delta, 1.0, 1.0, np.sqrt(2.0), n, d, n_oracle_calls=m, l1_diameter=2.0)
        lemma9 = fails = 0
        start = time.perf_counter()
        for _ in range(trials):
            sig = rng.exponential(1.0 / p.eta, size=(m, d))
            a = np.bincount(np.argmax(sig - c_D, axis=1), minlength=d) / m
            b = np.bincount(np.argmax(sig - c_Dp, axis=1), minlength=d) / m
            lemma9 += np.abs(a - 1.0 / d).sum() > 2.0 * p.gamma
            fails += np.abs(a - b).sum() > p.lambda_
        rows.append({"d": d, "m": m, "delta": delta, "trials": trials, "gamma": p.gamma,
                     "lemma9_frequency": lemma9 / trials, "lemma9_claim": delta / 2,
                     "privopt_failure_frequency": fails / trials,
                     "paper_lambda": 4.0 * p.gamma + p.stability_bound, "privopt_lambda": p.lambda_,
                     "seconds": round(time.perf_counter() - start, 2)})
        print(f"simplex d={d} m={m:5d}: Lemma 9 event {lemma9 / trials:.3f} (claimed <= {delta / 2:g}); "
              f"privopt bound failed {fails / trials:.3f}; lambda paper {rows[-1]['paper_lambda']:.3f} "
              f"privopt {p.lambda_:.3f}", flush=True)
    return rows


def write_simplex(rows, out: Path):
    _common.write_csv(out / "audit_opsamp_simplex.csv", rows, list(rows[0]))
    lines = [
        "# OPSamp's sensitivity step on the simplex",
        "",
        simplex_sensitivity.__doc__.split("\n\n", 1)[1].replace("\n    ", " ").strip(),
        "",
        "| d | m | trials | gamma | Lemma 9 event frequency | paper's claim | privopt bound failures | "
        "paper's lambda | privopt's lambda |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        lines.append(f"| {r['d']} | {r['m']} | {r['trials']} | {r['gamma']:.4f} | **{r['lemma9_frequency']:.3f}** | "
                     f"<= {r['lemma9_claim']:g} | {r['privopt_failure_frequency']:.3f} | {r['paper_lambda']:.4f} | "
                     f"{r['privopt_lambda']:.4f} |")
    lines += ["", "On this W (D_1 = 2 D_inf) privopt's lambda is no larger than the paper's; on a box "
              "(D_1 = d D_inf) it is up to d/2 times larger, the price of a bound that holds.", ""]
    (out / "audit_opsamp_simplex.md").write_text("\n".join(lines))


def run(args) -> list[dict]:
    rows = []
    stamp = dict(python=platform.python_version(), privopt=privopt.__version__,
                 date=_dt.datetime.now().isoformat(timespec="seconds"))
    for i, (target, expected) in enumerate(cases()):
        start = time.perf_counter()
        res = audit.audit(target, n_samples=args.n, confidence=args.confidence, random_state=args.seed + i)
        row = res.as_row()
        row.update(stamp)
        row["seconds"] = round(time.perf_counter() - start, 2)
        row["noise"] = _noise(target)
        row["expected"] = {True: "violation", False: "no violation", None: "(not detectable)"}[expected]
        row["as_expected"] = expected is None or res.violation == expected
        row["solver_cross_check"] = cross_check(target, args.cross_check_seeds)
        rows.append(row)
        print(f"{target.mechanism:7s} {target.variant:40s} {target.pair.name:18s} eps={target.epsilon:<4g} "
              f"delta={target.delta:<6g} lb={res.epsilon_lower_bound:7.3f} "
              f"{'VIOLATION' if res.violation else 'ok':9s} expected {row['expected']:17s} "
              f"{row['solver_cross_check']:17s} {row['seconds']:.1f}s", flush=True)
    return rows


def _f(x, nd=3):
    if isinstance(x, float):
        if x == float("inf"):
            return "inf"
        if x == float("-inf"):
            return "-inf"
        return f"{x:.{nd}f}"
    return str(x)


def write(rows, out: Path, args):
    out.mkdir(parents=True, exist_ok=True)
    _common.write_csv(out / "audit.csv", rows, COLUMNS, extrasaction="ignore")
    version = {row.name: row.version for row in available_solvers(["highs"])}.get("highs")
    r0 = rows[0]
    lines = [
        "# Empirical privacy audit",
        "",
        f"`python benchmarks/bench_audit.py --n {args.n} --confidence {args.confidence}` "
        f"(privopt {r0['privopt']}, Python {r0['python']}, {r0['date']}).",
        "",
        f"Each row: {args.n:,} runs of the mechanism on each of two neighbouring data sets "
        "(enumeration oracle: the mechanism's own noise draw and calibration, exact argmin). "
        f"`eps_lb` is a lower bound on the mechanism's epsilon at its delta holding with probability "
        f">= {args.confidence} (Clopper-Pearson, the event chosen on one half of the runs and "
        "evaluated on the other); `estimate [CI]` is the plug-in epsilon of that event with its "
        "two-sided interval.  A violation is `eps_lb > claimed`.  `cross-check`: runs with identical "
        f"output from the enumeration oracle and the real mechanism (HiGHS {version or ''}) on the same seeds.",
        "",
        "| mechanism | variant | instance | claimed eps | delta | eps_lb | estimate [CI] | violation | expected | "
        "worst event | noise | cross-check |",
        "|---|---|---|--:|--:|--:|---|---|---|---|---|---|",
    ]
    for r in rows:
        ci = f"{_f(r['event_epsilon_estimate'])} [{_f(r['event_epsilon_ci_low'])}, {_f(r['event_epsilon_ci_high'])}]"
        event = r["worst_event"].replace("|", "\\|")
        if len(event) > 70:
            event = event[:67] + "..."
        lines.append(
            f"| {r['mechanism']} | {r['variant']} | {r['instance']} | {r['claimed_epsilon']:g} | {r['delta']:g} | "
            f"**{_f(r['epsilon_lower_bound'])}** | {ci} | {'**yes**' if r['violation'] else 'no'} | "
            f"{r['expected']} | {event} | {r['noise']} | {r['solver_cross_check']} |")
    lines += [
        "",
        "Instances (privopt.audit): `normalization_d1` is `design_instance()` (d = 1, W = {-1, 0, 1}, "
        "L = (2, 1, 2) on D, (2, 2, 2) on D'); `random_d2_n8` a random pair in {-1, 0, 1}^2; "
        "`opsamp_kink` a hinge-loss pair where OPSamp's oracle answers alone are not private "
        "(constant loss on D, slope 1/C on D'); `hinge_n2001` a hinge-loss pair whose oracle answers "
        "vary with the noise; `selection_d1_k4` is `selection_instance()` (d = 1, W = {-1, 0, 1}, "
        "L = (5, 2, 2) on D, (6, 1, 1) on D': one loss up by 1 and the others down by 1, near the worst "
        "case of private selection, where its shipped bound comes close to the claimed epsilon).",
        "",
        "Reading the table: the shipped mechanisms' bounds are far below their claimed epsilon, because "
        "the calibrations hold for every data set and these tiny instances are far from the worst case "
        "(OPSamp's Laplace step alone nearly suffices on them; private selection on `selection_d1_k4` is "
        "the exception, by design), so some broken variants remain private "
        "on a given instance: sigma/10 for OPDisc at (1, 0.01) and OPSamp's Laplace scale / 10.  "
        "`paper calibration` is Algorithm 1's printed sigma, audited next to privopt's proven default; "
        "an audit cannot show the gap in the paper's proof (it is a missing argument, not a measured "
        "leak).  No audit can find a violation that does not exist; the variants that do violate are "
        "all found.",
        "",
    ]
    (out / "audit.md").write_text("\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="runs per data set (default 1,000,000)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cross-check-seeds", type=int, default=20,
                        help="per-run seeds compared with the real mechanism (0: skip)")
    parser.add_argument("--simplex-trials", type=int, default=1000,
                        help="trials per m of the OPSamp simplex sensitivity check")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args(argv)
    rows = run(args)
    write(rows, Path(args.out), args)
    write_simplex(simplex_sensitivity(args.simplex_trials, args.seed), Path(args.out))
    bad = [r for r in rows if not r["as_expected"]]
    print(f"\nwrote {args.out}/audit.csv and audit.md; {len(rows) - len(bad)}/{len(rows)} cases as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

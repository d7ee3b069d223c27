"""Figures of the Adult experiment: accuracy vs epsilon (mean and standard
deviation of certified runs, as in [NRVW20] Figure 1) and the time of every
run per method (what [NRVW20] Figure 2 shows as a histogram).  Uncertified
runs are drawn apart, never averaged in."""

from __future__ import annotations

import math

import numpy as np

from ._methods import method_label
from .._optional import require

__all__ = ["plot_accuracy", "plot_runtimes", "figures_unavailable", "FiguresSkippedWarning"]


class FiguresSkippedWarning(UserWarning):
    """A sweep asked for figures but cannot draw them (matplotlib is not installed):
    it runs and writes its results and summary without them."""


def figures_unavailable() -> str | None:
    """Why no figure can be drawn here (matplotlib missing, and how to install it), or None."""
    try:
        require("matplotlib")
    except ImportError as exc:
        return str(exc)
    return None

#: Non-private reference points, drawn as horizontal lines.
REFERENCE = ("nonprivate_lr", "majority", "nonprivate_01", "nonprivate_01_default")
#: Their dash patterns, one per reference (so that lines at one height stay apart).
_REFERENCE_DASHES = ("--", ":", "-.", (0, (6, 2, 1, 2, 1, 2)))


def _label(r) -> str:
    return method_label(r["method"], r.get("calibration") or "")


def _plt():
    matplotlib = require("matplotlib")

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_accuracy(rows, path, title=""):
    """Two panels (training, held-out): mean ± std over certified runs per method,
    uncertified runs as crosses."""
    plt = _plt()
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    methods = sorted({_label(r) for r in rows})
    all_eps = sorted({r["epsilon"] for r in rows if math.isfinite(r["epsilon"])})
    fig, axes = plt.subplots(1, 2, figsize=(13.5, 4.2), sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    private = [lab for lab in methods if lab not in REFERENCE]
    for ax, key, label in [(axes[0], "train_accuracy", "training"), (axes[1], "test_accuracy", "held-out")]:
        for i, m in enumerate(methods):
            c = colors[i % len(colors)]
            # past the colour cycle, another marker and line style tell two methods of one colour apart
            marker, ls = (("o", "-"), ("s", ":"), ("^", "-."))[(i // len(colors)) % 3]
            rs = [r for r in rows if _label(r) == m]
            if m in REFERENCE:
                vals = [r[key] for r in rs if r["status"] == "ok"]
                best_found = any(r["certified"] is False for r in rs if r["status"] == "ok")
                if vals:
                    # each reference its own dash pattern, and its value in the legend: two references
                    # at the same accuracy (e.g. the two 0/1 optima) still show as two lines
                    dash = _REFERENCE_DASHES[REFERENCE.index(m) % len(_REFERENCE_DASHES)]
                    ax.axhline(np.mean(vals), color=c, ls=dash, lw=1.4,
                               label=f"{m} (not private{', best found' if best_found else ''}): "
                                     f"{np.mean(vals):.3f}")
                continue
            # methods sit side by side around each epsilon (log axis) so error bars do not hide each other
            dodge = math.exp(0.025 * (private.index(m) - (len(private) - 1) / 2))
            eps = sorted({r["epsilon"] for r in rs})
            mean, std, xs = [], [], []
            for e in eps:
                vals = [r[key] for r in rs if r["epsilon"] == e and r["status"] == "ok"]
                if vals:
                    xs.append(e)
                    mean.append(np.mean(vals))
                    std.append(np.std(vals))
            n_unc = sum(r["status"] == "uncertified" for r in rs)
            n_err = sum(r["status"] == "error" for r in rs)
            note = "".join([f", {n_unc} uncertified" if n_unc else "", f", {n_err} failed" if n_err else ""])
            if xs:
                ax.errorbar([x * dodge for x in xs], mean, yerr=std, marker=marker, ls=ls, capsize=3, color=c,
                            label=f"{m}{note}")
            unc = [r for r in rs if r["status"] == "uncertified" and not math.isnan(r[key])]
            if unc:
                ax.scatter([r["epsilon"] * dodge for r in unc], [r[key] for r in unc], marker="x", color=c,
                           label=None if xs else f"{m}{note}")
        ax.set_xscale("log")
        ax.set_xticks(all_eps)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("epsilon")
        ax.set_title(f"{label} accuracy")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy")
    fig.text(0.5, 0.005, "mean ± std over certified runs; x = runs the solver did not certify "
             "(not private, not averaged)", ha="center", fontsize=8)
    # outside the panels, so that it never hides a point
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_runtimes(rows, path, title=""):
    """Seconds per run, one row per method (log scale): every run a dot (a cross when the
    solver did not certify it), the median a bar.  Rows never overlap, so no colour
    blends into another (a stacked histogram of eight methods did)."""
    plt = _plt()
    methods = sorted({_label(r) for r in rows})
    secs = [r["seconds"] for r in rows if r["seconds"] > 0]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(methods) + 1.4))
    if not secs:
        plt.close(fig)
        return path
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    rng = np.random.default_rng(0)  # vertical jitter of the dots only
    for i, m in enumerate(methods):
        rs = [r for r in rows if _label(r) == m and r["seconds"] > 0]
        if not rs:
            continue
        c = colors[i % len(colors)]
        ok = [r["seconds"] for r in rs if r["status"] != "uncertified"]
        unc = [r["seconds"] for r in rs if r["status"] == "uncertified"]
        ax.scatter(ok, i + rng.uniform(-0.18, 0.18, len(ok)), s=14, color=c, alpha=0.7)
        if unc:
            ax.scatter(unc, i + rng.uniform(-0.18, 0.18, len(unc)), s=30, marker="x", color=c)
        med = float(np.median([r["seconds"] for r in rs]))
        ax.plot([med, med], [i - 0.32, i + 0.32], color="k", lw=2)
        ax.annotate(f"median {med:.2g} s" + (f", {len(unc)} uncertified" if unc else ""),
                    (max(secs) * 1.15, i), va="center", fontsize=7)
    ax.set_yticks(range(len(methods)))
    ax.set_yticklabels(methods, fontsize=8)
    ax.set_ylim(-0.6, len(methods) - 0.4)
    ax.set_xscale("log")
    ax.set_xlim(min(secs) / 1.5, max(secs) * 8)
    ax.set_xlabel("seconds per run (dots: runs; black bar: median; x: not certified)")
    ax.grid(alpha=0.3, axis="x")
    ax.set_title(title or "run times", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

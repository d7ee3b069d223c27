"""PrivateScoringSystem: a differentially private risk score."""

from __future__ import annotations

import warnings

import numpy as np

from .._optional import require, require_installed

require_installed("sklearn")

from .._random import check_random_state  # noqa: E402
from .._sklearn import (PrivoptClassifier, check_fitted, check_public_input, refuse_fit_params,  # noqa: E402
                       validate_fit, validate_predict)
from .._validation import check_bool, check_choice, check_epsilon  # noqa: E402
from ..calibration import risk_table_noise, split_risk_epsilon  # noqa: E402
from ..mechanisms import draw_grid_noise, release_on_grid  # noqa: E402
from ..exceptions import ParameterError  # noqa: E402
from ..ledger import estimator_key, refuse_kept_report, release  # noqa: E402
from ..result import report_wanted, reports_kept  # noqa: E402
from ._select import check_binary_matrix, check_scoring_width, select_scoring_system  # noqa: E402

__all__ = ["PrivateScoringSystem", "ScoreCard"]

_MECHANISMS = ("permute_and_flip", "exponential")


class PrivateScoringSystem(PrivoptClassifier):
    r"""A differentially private scoring system (risk score).

    A scoring system gives each binary item an integer number of points in
    -P..P, uses at most k items, and predicts the positive class when a
    record's total reaches a threshold: the models of medicine, credit and
    criminal justice that a person can read and apply by hand (RiskSLIM
    [UR19], FasterRisk [LZLSR22]).  This estimator selects the points and the
    threshold privately from the public set W of all such scoring systems:

        W = {(p, t) : p in {-P..P}^d, at most k nonzero, lo(p) < t <= hi(p)}
            plus the two constant rules,

    by permute-and-flip [MS20] (default) or the exponential mechanism [MT07]
    on the number of training errors (sensitivity 1 under replace-one):
    pure epsilon-DP, and with probability 1 - beta the released system makes
    at most (2 / epsilon)(ln |W| + ln(1/beta)) more training errors than the
    best one in W.  The sampler is exact: supports that cannot win are
    pruned with a bound, not approximated.

    Parameters
    ----------
    epsilon : float, default 1.0
        Total privacy budget (pure DP, delta = 0), including the risk table.
    max_points : int, default 5
        Points per item in -max_points..max_points.
    max_items : int, default 4
        At most this many items get nonzero points.  With 5 a fit takes
        seconds on tens of thousands of records but can take minutes on a few
        hundred records with 30 items, where the noise lets many supports
        compete and each is scored (10^5 points vectors per support of 5
        items at max_points=5); 4 items take about a second on the same sets
        (benchmarks/results/scoring.md).
    signs : None, dict or array-like
        Public domain knowledge: ``{"age >= 60": +1}`` lets an item only add
        points (+1) or only subtract (-1); unspecified items may do either.
    mechanism : {"permute_and_flip", "exponential"}
    risk_share : float in [0, 1), default 0.0
        Share of epsilon spent on a private risk table (the rate of the positive
        class at each total score, Laplace noise on the counts); 0 releases no
        table.  The selection gets the rest; the total is ``epsilon``.
    executor : None, "local", Executor, dask Client or "ray"
        Where the shards of supports run (the answer does not depend on it).
    time_limit : float or None
        Refuse before any work when the predicted bounding pass exceeds it.
    random_state : None, int or Generator
        None (default) draws from the operating system's secure source; a seed
        makes the fit reproducible and NOT private.
    progress : None or bool
        A progress bar (None: when the fit is predicted to take > 10 s).
    keep_report : bool, default False
        Keep ``result_.report``, the sampler's diagnostics (supports scored,
        regions expanded, wall time).  They depend on the data and the noise
        and are **not** private, so by default they are set to None after
        ``fit`` and a pickled estimator does not carry them; keep them only
        while the estimator stays with the data curator.  An exception raised
        by ``fit`` after the data is read carries them only when True.
        Refused under a :class:`~privopt.PrivacyLedger` (an analyst's budget),
        before the fit is reserved.
    classes : None or two labels
        The label set, treated as PUBLIC: None (default) reads it from y
        (both classes must occur, so ``classes_`` and that refusal depend on
        the private labels); declared, ``classes_`` is the sorted pair, a y
        holding one of them is fitted (the selection scores the 0/1 errors
        whatever labels occur), and a label outside them is refused.

    Attributes
    ----------
    coef_ : ndarray of int, shape (n_features,)
        Points per item.
    threshold_ : int
        The total needed to predict ``classes_[1]``.
    points_ : dict
        {item name: points} for the items with nonzero points.
    result_ : PrivateResult
        The selection's account (epsilon, |W|, the utility bound ``alpha``);
        ``result_.report`` is None unless ``keep_report=True``.
    epsilon_spent_, delta_spent_ : float
        Total epsilon spent (selection + risk table), and delta (0: pure).
        ``epsilon_`` is a deprecated alias of ``epsilon_spent_``.
    risk_table_ : list of dict or None
        Per total score: ``score``, noisy ``n``, noisy ``positives``, ``rate``.

    References
    ----------
    [MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
    [MS20] McKenna, Sheldon. Permute-and-flip. NeurIPS 2020.
    [UR19] Ustun, Rudin. Learning optimized risk scores. JMLR 20, 2019.
    [LZLSR22] Liu, Zhong, Li, Seltzer, Rudin. FasterRisk. NeurIPS 2022.
    """

    def __init__(self, epsilon=1.0, max_points=5, max_items=4, signs=None, mechanism="permute_and_flip",
                 risk_share=0.0, executor=None, time_limit=None, random_state=None, progress=None,
                 keep_report=False, classes=None, ledger=None):
        self.epsilon = epsilon
        self.max_points = max_points
        self.max_items = max_items
        self.signs = signs
        self.mechanism = mechanism
        self.risk_share = risk_share
        self.executor = executor
        self.time_limit = time_limit
        self.random_state = random_state
        self.progress = progress
        self.keep_report = keep_report
        self.classes = classes
        self.ledger = ledger

    def _item_names(self, d):
        names = getattr(self, "feature_names_in_", None)
        return [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]

    def _signs(self, names):
        if self.signs is None:
            return None
        if isinstance(self.signs, dict):
            unknown = [k for k in self.signs if k not in names and k not in range(len(names))]
            if unknown:
                raise ParameterError(f"signs: unknown items {unknown!r}; the items are {names!r}.", "signs")
            return np.array([self.signs.get(n, self.signs.get(j, 0)) for j, n in enumerate(names)])
        return np.asarray(self.signs)

    def fit(self, X, y, **fit_params):
        """Select the points and threshold privately; all checks run first.  Under
        a :class:`~privopt.PrivacyLedger` the fit is charged its epsilon (selection and
        risk table: one release) before any work.  ``fit_params`` (e.g. ``sample_weight``)
        are refused, naming them and the fix."""
        refuse_fit_params(self, fit_params)
        name = type(self).__name__
        keep = report_wanted({"keep_report": self.keep_report})     # else fit's exceptions carry no report
        with release(f"{name}.fit", name, lambda: (check_epsilon(self.epsilon), 0.0),
                     ledger=getattr(self, "ledger", None), data=(estimator_key(self), X, y),
                     check=lambda: self._check_public(X)), reports_kept(keep):
            return self._fit(X, y)

    def _check_public(self, X) -> None:
        """The checks a ledger runs before it reserves a fit: X's type, the parameters, and
        no ``keep_report=True`` (the report is the curator's, computed from the data)."""
        check_public_input(X)
        self._check_params()
        refuse_kept_report(f"{type(self).__name__}.fit", {"keep_report": self.keep_report})

    @property
    def epsilon_(self) -> float:
        """Deprecated alias of ``epsilon_spent_``."""
        warnings.warn("PrivateScoringSystem.epsilon_ is deprecated and will be removed; use epsilon_spent_.",
                      DeprecationWarning, stacklevel=2)
        try:
            return vars(self)["epsilon_spent_"]
        except KeyError:
            raise AttributeError("epsilon_") from None

    def _check_params(self) -> tuple[str, bool, float, float]:
        """The constructor's parameters, checked before the data is read (and, under a
        ledger, before the fit is reserved): (mechanism, keep_report, the selection's
        and the risk table's epsilon)."""
        mechanism = check_choice(self.mechanism, "mechanism", _MECHANISMS)
        keep_report = check_bool(self.keep_report, "keep_report")
        eps_select, eps_table = split_risk_epsilon(self.epsilon, self.risk_share)
        return mechanism, keep_report, eps_select, eps_table

    def _fit(self, X, y):
        mechanism, keep_report, eps_select, eps_table = self._check_params()
        check_scoring_width(X)      # from X's shape alone, before any value is read
        Xa, classes, y_pm = validate_fit(self, X, y, classes=self.classes)
        X01 = check_binary_matrix(Xa)
        names = self._item_names(X01.shape[1])
        signs = self._signs(names)
        y01 = (y_pm == 1).astype(int)
        rng = check_random_state(self.random_state)
        result = select_scoring_system(
            X01, y01, epsilon=eps_select, max_points=self.max_points, max_items=self.max_items, signs=signs,
            method=mechanism, random_state=rng, executor=self.executor, progress=self.progress,
            time_limit=self.time_limit, feature_names=names, keep_report=True)
        # the sampler's diagnostics depend on the data and the noise: not kept (nor pickled) unless asked
        self.result_ = result if keep_report else result.without_report()
        self.classes_ = np.asarray(classes)
        w = np.asarray(result.weights)
        self.coef_ = np.rint(w[:-1]).astype(np.int64)
        self.threshold_ = int(round(w[-1]))
        self.points_ = {n: int(c) for n, c in zip(names, self.coef_) if c != 0}
        self.epsilon_spent_ = eps_select + eps_table
        self.delta_spent_ = 0.0
        self.risk_table_ = None
        if eps_table > 0:
            self.risk_table_ = self._risk_table(X01, y01, eps_table, rng)
        return self

    def _risk_table(self, X01, y01, eps_table, rng):
        """Exact discrete Laplace of scale 2 / eps_table on each (score, label)
        count (calibration in privopt.calibration._scoring, sampled with
        integer arithmetic: no floating-point attack); negative noisy counts
        are shown as 0 and rates are post-processing."""
        lo = int(np.minimum(self.coef_, 0).sum())
        hi = int(np.maximum(self.coef_, 0).sum())
        scores = X01.astype(np.int64) @ self.coef_ - lo
        width = hi - lo + 1
        pos = np.bincount(scores[y01 == 1], minlength=width)
        neg = np.bincount(scores[y01 != 1], minlength=width)
        noise = risk_table_noise(eps_table)
        pos_n = np.maximum(release_on_grid(pos, noise, draw_grid_noise(rng, noise, width)), 0.0)
        neg_n = np.maximum(release_on_grid(neg, noise, draw_grid_noise(rng, noise, width)), 0.0)
        rows = []
        for s in range(width):
            n = pos_n[s] + neg_n[s]
            rows.append({"score": lo + s, "n": float(n), "positives": float(pos_n[s]),
                         "rate": float(pos_n[s] / n) if n > 0 else float("nan")})
        return rows

    def decision_function(self, X):
        """Total score minus threshold plus 1/2: > 0 predicts ``classes_[1]``."""
        check_fitted(self, "result_")
        X01 = check_binary_matrix(validate_predict(self, X))
        return X01.astype(np.int64) @ self.coef_ - self.threshold_ + 0.5

    def predict(self, X):
        return np.where(self.decision_function(X) > 0, self.classes_[1], self.classes_[0])

    def scorecard(self) -> ScoreCard:
        """The points table a person would print (see :class:`ScoreCard`)."""
        check_fitted(self, "result_")
        return ScoreCard(self.points_, self.threshold_, positive=self.classes_[1], epsilon=self.epsilon_spent_,
                         mechanism=self.result_.mechanism, risk_table=self.risk_table_)


class ScoreCard:
    """A fitted scoring system as a printable table: ``str(card)`` or
    ``print(card)`` shows item, points and the total needed; ``to_frame()``
    gives a pandas DataFrame; ``plot()`` draws it (matplotlib)."""

    def __init__(self, points, threshold, *, positive=1, epsilon=None, mechanism=None, risk_table=None):
        self.points = dict(points)
        self.threshold = int(threshold)
        self.positive = positive.item() if isinstance(positive, np.generic) else positive
        self.epsilon = epsilon
        self.mechanism = mechanism
        self.risk_table = risk_table

    def rows(self) -> list[tuple[str, int]]:
        return list(self.points.items())

    def __str__(self) -> str:
        rows = self.rows()
        width = max([len("item")] + [len(n) for n, _ in rows])
        head = "Scoring system"
        if self.epsilon is not None:
            head += f" (epsilon = {self.epsilon:g}, {self.mechanism})"
        lines = [head, f"  {'item':<{width}}  points"]
        lines += [f"  {n:<{width}}  {p:+6d}" for n, p in rows]
        if not rows:
            lines.append(f"  {'(no items)':<{width}}")
        lines.append("  " + "-" * (width + 8))
        lines.append(f"  predict {self.positive!r} when the total is >= {self.threshold}")
        if self.risk_table:
            lines.append("")
            lines.append("  total   records  rate   (noisy counts: they need not add up to n)")
            for r in self.risk_table:
                rate = "   -" if r["rate"] != r["rate"] else f"{r['rate']:.2f}"
                lines.append(f"  {r['score']:5d}  {r['n']:8.0f}  {rate}")
        return "\n".join(lines)

    __repr__ = __str__

    def to_frame(self):
        pd = require("pandas")
        return pd.DataFrame({"item": list(self.points), "points": list(self.points.values())})

    def plot(self, ax=None):
        """Horizontal bars of the points, the threshold in the title; with a
        risk table, a second panel of the private rate per total score."""
        plt = require("matplotlib.pyplot")
        if ax is None:
            ncols = 2 if self.risk_table else 1
            fig, axes = plt.subplots(1, ncols, figsize=(5 * ncols, 0.5 + 0.45 * max(1, len(self.points))),
                                     squeeze=False)
            ax = axes[0, 0]
            if self.risk_table:
                rt = [r for r in self.risk_table if r["rate"] == r["rate"]]
                axes[0, 1].plot([r["score"] for r in rt], [r["rate"] for r in rt], "o-")
                axes[0, 1].axvline(self.threshold - 0.5, color="grey", ls="--")
                axes[0, 1].set_xlabel("total score")
                axes[0, 1].set_ylabel(f"rate of {self.positive!r} (private)")
        names = list(self.points)[::-1]
        vals = [self.points[n] for n in names]
        ax.barh(names, vals, color=["tab:red" if v > 0 else "tab:blue" for v in vals])
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xlabel("points")
        ax.set_title(f"predict {self.positive!r} when total >= {self.threshold}")
        return ax

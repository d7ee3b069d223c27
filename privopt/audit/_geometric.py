"""Audit target of private selection over a ladder with a rung on geometric
feature steps (:class:`privopt.PrivateHalfspaceClassifier`'s ladder,
``Resolution(..., geometric=True)``; :func:`privopt.models.discretize_features`,
``spacing="geometric"``)."""

from __future__ import annotations

import numpy as np

from .._validation import check_bool, check_int
from ..calibration import base_measure_log_weights, selection_noise_scale
from ..estimators import Resolution
from ..mechanisms import draw_selection_noise, mixture_selection
from ..models import FeatureDiscretizer, get_info, predict_halfspace, zero_one_halfspace
from ._instances import NeighbouringPair
from ._targets import AuditTarget

__all__ = ["GeometricStepsTarget", "geometric_instance", "GEOMETRIC_AUDIT_BOUNDS"]

#: The public range of the audited feature.
GEOMETRIC_AUDIT_BOUNDS = (0.0, 100.0)
#: The audited ladder: one feature on 1 centred step (z in {-1, 1}: a cut), weights and intercept
#: in {-1, 0, 1}, ||w|| <= 1 (5 points), on equal steps (the cut at 50) and on geometric steps (the
#: cut where u' = 1/2: u = (sqrt(100) - 1) / 99, x = 9.09).
_RUNGS = (Resolution(1, 1, 1.0, centered=True), Resolution(1, 1, 1.0, centered=True, geometric=True))
#: The 5 points (feature weight, intercept) of each rung's W.
_POINTS = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])


def geometric_instance(k: int = 4) -> NeighbouringPair:
    r"""A pair for :class:`GeometricStepsTarget`: one feature on the public range
    [0, 100], k records at x = 5 (label -1), k at x = 20 (label +1) and one
    more record with label -1 at x = 0 in D and at x = 100 in D'.

    The geometric cut (x >= 9.09) separates the two groups in both; the cut at
    the data's median moves from 5 (D: every record but one on the same side)
    to 20 (D': the groups separated), so a map that reads the data changes the
    best training errors of its W from k to 1 between neighbours.
    """
    k = check_int(k, "k", minimum=2)
    X = np.array([[5.0]] * k + [[20.0]] * k + [[0.0]])
    Xp = np.array([[5.0]] * k + [[20.0]] * k + [[100.0]])
    y = np.array([-1] * k + [1] * k + [-1])
    return NeighbouringPair(X, y, Xp, y.copy(), name=f"geometric_median_k{k}",
                            description="x in [0, 100]: 5s (-1), 20s (+1); one record moves from 0 to 100")


def _quantile_steps(X, levels: int):
    """The deliberately broken map: the steps' boundaries at the DATA's quantiles
    (k - 1/2) / L, k = 1..L, centred (for L = 1: z = 1 where x >= the median, else
    -1): every record's z depends on every other record."""
    x = np.asarray(X, dtype=float)[:, 0]
    cuts = np.quantile(x, (np.arange(1, levels + 1) - 0.5) / levels)
    return (2.0 * np.searchsorted(cuts, x, side="right") - levels)[:, None]


class GeometricStepsTarget(AuditTarget):
    """Private selection over the ladder (equal steps, geometric steps) of
    ``_RUNGS`` with the estimator's base measure (equal sizes: pi = 1/2 each),
    on :func:`geometric_instance`; an output is (r, feature weight,
    intercept).  The rungs' features are the estimator's own feature maps
    (:class:`privopt.models.FeatureDiscretizer` with the public bounds and
    ``spacing``), a per-record map: the release is epsilon-DP.

    ``data_steps=True`` is the deliberately broken variant "geometric steps at
    the data's quantiles" (a tempting way to adapt the steps to a skewed
    feature): the second rung's cut is the median of the records' x, so the
    one replaced record moves every record's feature and the losses by more
    than 1.

    Runs: ``outputs_from_noise`` draws one noise value per (r, w) and takes
    argmax -L_r(w)/s + ln mu + noise (the exact law, computed directly from
    the losses); ``run_mechanism`` builds the two 0/1 losses from the feature
    maps and calls :func:`privopt.mixture_selection`.
    """

    def __init__(self, pair, *, epsilon, method="permute_and_flip", data_steps=False):
        self._set_pure_selection(pair, epsilon, method, "geometric rung + {}")
        self.data_steps = check_bool(data_steps, "data_steps")
        self.variant = "steps at the data's quantiles" if self.data_steps else "as shipped"
        self.scale = selection_noise_scale(self.epsilon, 1.0)
        self.support = np.array([[r, a, b] for r in range(2) for a, b in _POINTS])
        self.log_mu = np.repeat(base_measure_log_weights([0.5, 0.5], [5, 5]), 5)
        self.models, self.losses = [], []
        for k in (0, 1):
            X, y = pair.data(k)
            per_r, models = [], []
            for res in _RUNGS:
                Z = self.features(X, res)
                model = zero_one_halfspace(Z, y, grid=1, norm_bound=1.0, fit_intercept=True)
                info = get_info(model)
                per_r.append([float(np.sum(predict_halfspace(w, Z, info) != y)) for w in _POINTS])
                models.append(model)
            self.models.append(tuple(models))
            self.losses.append(np.concatenate(per_r))
        self.parameters = {"noise_scale": self.scale, "sensitivity": 1.0, "n_candidates": 10,
                           "n_records": int(pair.X.shape[0])}

    def features(self, X, res):
        """A rung's features: the estimator's map (or, broken, the data's quantiles)."""
        if res.geometric and self.data_steps:
            return _quantile_steps(X, res.levels)
        disc = FeatureDiscretizer(bounds=GEOMETRIC_AUDIT_BOUNDS, levels=res.levels, center=res.centered,
                                  spacing=res.spacing)
        return disc.fit(X).transform(X)

    def draw_noise(self, rng, size=None):
        return draw_selection_noise(rng, self.method, 10, size=size)

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise, dtype=float).reshape(-1, 10)
        keys = noise - self.losses[which][None, :] / self.scale + self.log_mu[None, :]
        return self.support[np.argmax(keys, axis=1)]

    def run_mechanism(self, which, rng):
        res = mixture_selection(self.models[which], epsilon=self.epsilon, prior=[0.5, 0.5], method=self.method,
                                random_state=rng, progress=False)
        return np.array([float(res.parameters.resolution), *np.asarray(res.weights, dtype=float)])

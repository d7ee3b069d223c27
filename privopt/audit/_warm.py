"""Audit target of the estimator's warm start composed with private selection
(:class:`privopt.PrivateHalfspaceClassifier` with ``warm_start=True``)."""

from __future__ import annotations

import numpy as np

from .._validation import check_bool
from ..baselines import ObjectivePerturbationLogisticRegression
from ..calibration import (base_measure_log_weights, selection_noise_scale,
                           split_warm_start_epsilon)
from ..estimators import (LADDER_PRIOR, PrivateHalfspaceClassifier, Resolution, WarmStartFeature, ladder_prior,
                          warm_start_prior, warm_start_resolution)
from ..exceptions import ParameterError
from ..mechanisms import draw_selection_noise
from ..models import FeatureDiscretizer
from ._instances import NeighbouringPair
from ._targets import AuditTarget

__all__ = ["WarmStartTarget", "warm_start_instance", "WARM_BUCKET"]

#: Width of the buckets of the warm start's released feature weight in the audit's output.
WARM_BUCKET = 0.05
#: The caller's ladder of the audited estimator: features rounded to {0, 1}, weights in {-1, 0, 1}, ||w|| <= 1.
_RUNG = Resolution(1, 1, 1.0)
#: The records at which the output reports the released classifier's labels.
_PROBES = np.array([[0.0], [1.0]])


def warm_start_instance() -> NeighbouringPair:
    r"""A pair for :class:`WarmStartTarget`: one feature in [0, 1] (public
    bounds), six records, not separable on either side (so the logistic fit
    is finite); the last one's label flips, which moves the non-private fit
    (and so the warm start's direction when its noise is left out) by far more
    than a bucket.

    D  = (0, -1), (0, -1), (0, +1), (1, +1), (1, +1), (1, -1)
    D' = the same with the last record (1, +1).
    """
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    y = np.array([-1, -1, 1, 1, 1, -1])
    yp = np.array([-1, -1, 1, 1, 1, 1])
    return NeighbouringPair(X, y, X.copy(), yp, name="warm_start_flip",
                            description="x in {0, 1}; the last label flips; bounds (0, 1)")


class WarmStartTarget(AuditTarget):
    """The estimator's release with a warm start: objective perturbation with
    epsilon_1 = epsilon / 2 releases v, then one private selection with
    epsilon_2 = epsilon / 2 over the caller's W (features rounded to {0, 1},
    weights {-1, 0, 1}, ||w|| <= 1: 5 points) and the warm start's W (the
    halfspaces on v's score in 33 centred steps: 4,489 points), with the
    estimator's prior (:func:`privopt.estimators.warm_start_prior`).  An output is (v's feature weight in buckets of
    ``WARM_BUCKET``, the W released, the released classifier's labels at
    x = 0 and x = 1): v is released too (``warm_start_``), so the audit
    covers the composition.

    ``noiseless_warm_start=True`` is the deliberately broken variant "the warm
    start's noise left out" (its objective perturbation run at epsilon 500
    while the estimator claims epsilon): v is then a deterministic function of
    the data, and on :func:`warm_start_instance` its bucket moves with the
    flipped record.

    Runs: ``outputs_from_noise`` fits the real warm start (privopt's
    objective perturbation, seeded per run) and takes the exact argmax of
    -L/s + ln mu + noise over all 4230 points (the selection's own noise
    draw and calibration); ``run_mechanism`` fits the estimator itself.
    """

    def __init__(self, pair, *, epsilon, method="permute_and_flip", noiseless_warm_start=False):
        self._set_pure_selection(pair, epsilon, method, "warm start + {}")
        self.noiseless = check_bool(noiseless_warm_start, "noiseless_warm_start")
        self.eps_warm, self.eps_select = split_warm_start_epsilon(self.epsilon)
        self.variant = "warm start without its noise" if self.noiseless else "as shipped"
        self.models = ()
        self.support = None
        n = int(pair.X.shape[0])
        self.res = warm_start_resolution()
        L = self.res.levels
        self.points0 = np.array([(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if a * a + b * b <= 1], float)
        self.points1 = np.array([(a, b) for a in range(-L, L + 1) for b in range(-L, L + 1)], float)
        sizes = [len(self.points0), len(self.points1)]
        prior = warm_start_prior(ladder_prior(sizes[:1], self.eps_select, n, LADDER_PRIOR), sizes[:1], sizes[1])
        self.log_mu = np.repeat(base_measure_log_weights(prior, sizes), sizes)
        self.scale = selection_noise_scale(self.eps_select, 1.0)
        self.n_points = sum(sizes)
        self.discretizers, self.losses0 = [], []
        for k in (0, 1):
            X, y = pair.data(k)
            disc = FeatureDiscretizer(bounds=(0.0, 1.0), levels=_RUNG.levels).fit(X)
            self.discretizers.append(disc)
            self.losses0.append(self._losses(disc.transform(X)[:, 0], y, self.points0))
        self.parameters = {"noise_scale": self.scale, "epsilon_warm_start": self.eps_warm,
                           "epsilon_selection": self.eps_select, "n_candidates": self.n_points, "n_records": n}

    @staticmethod
    def _losses(z, y, points):
        """Training errors of every (a, b): +1 iff a z + b >= -1/2 (integer scores)."""
        pred = np.where(points[:, :1] * z[None, :] + points[:, 1:] >= -0.5, 1, -1)
        return np.sum(pred != np.asarray(y)[None, :], axis=1).astype(float)

    def _warm(self, which, seed):
        X, y = self.pair.data(which)
        eps = 500.0 if self.noiseless else self.eps_warm
        return ObjectivePerturbationLogisticRegression(epsilon=eps, bounds=(0.0, 1.0), random_state=int(seed)).fit(
            X, np.where(np.asarray(y) == 1, 1, 0))

    def draw_noise(self, rng, size=None):
        seeds = rng.integers(0, 2**31 - 1, size=size)
        noise = draw_selection_noise(rng, self.method, self.n_points, size=size)
        if size is None:
            return np.concatenate([[float(seeds)], noise])
        return np.column_stack([np.asarray(seeds, dtype=float), noise])

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise, dtype=float).reshape(-1, 1 + self.n_points)
        X, y = self.pair.data(which)
        out = np.empty((noise.shape[0], 4))
        for i, row in enumerate(noise):
            v = self._warm(which, row[0])
            z = WarmStartFeature(v, self.res.levels, self.discretizers[which]).transform(X)[:, 0]
            losses = np.concatenate([self.losses0[which], self._losses(z, y, self.points1)])
            j = int(np.argmax(row[1:] - losses / self.scale + self.log_mu))
            if j < len(self.points0):
                r, (a, b), zp = 0, self.points0[j], self.discretizers[which].transform(_PROBES)[:, 0]
            else:
                r, (a, b) = 1, self.points1[j - len(self.points0)]
                zp = WarmStartFeature(v, self.res.levels, self.discretizers[which]).transform(_PROBES)[:, 0]
            labels = np.where(a * zp + b >= -0.5, 1, -1)
            out[i] = (np.round(float(v.coef_[0, 0]) / WARM_BUCKET), r, labels[0], labels[1])
        return out

    def run_mechanism(self, which, rng):
        if self.noiseless:
            raise ParameterError("the broken variant has no estimator to run; use oracle='enumerate'.", "oracle")
        X, y = self.pair.data(which)
        clf = PrivateHalfspaceClassifier(epsilon=self.epsilon, bounds=(0.0, 1.0), resolutions=[_RUNG],
                                         warm_start=True, mechanism=self.method, random_state=rng).fit(X, y)
        labels = np.where(clf.predict(_PROBES) == 1, 1, -1)
        return np.array([np.round(float(clf.warm_start_.coef_[0, 0]) / WARM_BUCKET),
                         float(bool(clf.resolution_.warm_start)), labels[0], labels[1]])

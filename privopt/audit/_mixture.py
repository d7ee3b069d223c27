"""Audit target of private selection among resolutions
(:func:`privopt.mixture_selection`)."""

from __future__ import annotations

import numpy as np

from .._validation import check_bool
from ..calibration import base_measure_log_weights, selection_noise_scale
from ..mechanisms import draw_selection_noise, mixture_selection

from ..models import get_info, predict_halfspace, zero_one_halfspace
from ._targets import AuditTarget

__all__ = ["MixtureSelectionTarget", "RESOLUTION_MAPS"]

#: The public per-record maps of :func:`~privopt.audit.resolution_instance`'s two resolutions.
RESOLUTION_MAPS = (lambda X: (np.asarray(X) >= 1).astype(float), lambda X: (np.asarray(X) >= 2).astype(float))


class MixtureSelectionTarget(AuditTarget):
    """Private selection among two resolutions with the public base measure
    mu(r, w) = pi_r / |W_r| (:func:`privopt.mixture_selection`), on the pair of
    :func:`~privopt.audit.resolution_instance`: resolution r is
    ``zero_one_halfspace(RESOLUTION_MAPS[r](X), y, grid=1, norm_bound=1)``
    (W_r = {-1, 0, 1}); an output is the pair (r, w).

    As shipped pi is uniform.  ``data_prior=True`` is the deliberately broken
    variant "base measure from the data": pi_r proportional to
    exp(-20 min_w L_r(D, w)), i.e. the resolution that fits the records best
    is all but chosen before the private selection, which then runs at the
    claimed epsilon (a common mistake: tuning W on the data).

    Runs: ``outputs_from_noise`` draws one noise value per (r, w) and takes
    argmax -L_r(w)/s + ln mu(r, w) + noise (the exact law, computed
    directly); ``run_mechanism`` calls :func:`privopt.mixture_selection`.
    """

    def __init__(self, pair, *, epsilon, method="permute_and_flip", data_prior=False):
        self._set_pure_selection(pair, epsilon, method, "mixture {}")
        self.data_prior = check_bool(data_prior, "data_prior")
        self.models = tuple(tuple(zero_one_halfspace(f(pair.data(k)[0]), pair.data(k)[1], grid=1, norm_bound=1.0)
                                  for f in RESOLUTION_MAPS) for k in (0, 1))
        self.scale = selection_noise_scale(self.epsilon, 1.0)
        w = np.array([[-1.0], [0.0], [1.0]])
        self.support = np.array([[r, v] for r in range(2) for v in (-1.0, 0.0, 1.0)])
        self.losses = []            # per data set: the 6 losses in the order of support
        self.priors = []
        for k in (0, 1):
            per_r = []
            for r, f in enumerate(RESOLUTION_MAPS):
                X, y = f(pair.data(k)[0]), pair.data(k)[1]
                info = get_info(self.models[k][r])
                per_r.append(np.array([np.sum(predict_halfspace(v, X, info) != y) for v in w], dtype=float))
            self.losses.append(np.concatenate(per_r))
            if self.data_prior:
                best = np.array([lo.min() for lo in per_r])
                p = np.exp(-20.0 * (best - best.min()))
                self.priors.append(p / p.sum())
            else:
                self.priors.append(np.full(2, 0.5))
        self.variant = "base measure from the data" if self.data_prior else "as shipped"
        self.parameters = {"noise_scale": self.scale, "sensitivity": 1.0, "n_candidates": 6,
                           "n_records": int(pair.X.shape[0])}

    def draw_noise(self, rng, size=None):
        return draw_selection_noise(rng, self.method, 6, size=size)

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise, dtype=float).reshape(-1, 6)
        log_mu = np.repeat(base_measure_log_weights(self.priors[which], [3, 3]), 3)
        keys = noise - self.losses[which][None, :] / self.scale + log_mu[None, :]
        return self.support[np.argmax(keys, axis=1)]

    def run_mechanism(self, which, rng):
        res = mixture_selection(self.models[which], epsilon=self.epsilon, prior=self.priors[which],
                                method=self.method, random_state=rng, progress=False)
        return np.array([float(res.parameters.resolution), float(res.weights[0])])

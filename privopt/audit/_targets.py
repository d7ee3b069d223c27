"""Mechanisms under audit: the real noise, an exact oracle by enumeration, and
the real mechanism for cross-checks.

An audit target holds a mechanism, its privacy parameters and a pair of
neighbouring data sets, and can produce runs in two ways:

* ``oracle="enumerate"``: the noise is drawn by the SAME function the
  mechanism calls (:mod:`privopt.mechanisms._noise`) with the scale computed
  by the SAME calibration function (:mod:`privopt.calibration`), and the
  perturbed objective is minimized exactly by evaluating it at every candidate
  point (vectorized over runs).  Thousands of runs per second.
* ``oracle="solver"``: each run calls the real mechanism
  (:func:`privopt.opdisc`, :func:`privopt.mechanisms.opsamp`,
  :func:`privopt.mechanisms.rspm`) on the real Pyomo model, with a solver.

Given the same per-run generators both paths give the same outputs (tested in
``tests/audit/test_audit.py``), so auditing the enumeration path audits the shipped
mechanism.

Deliberately broken variants, for checking that the audit finds violations:
``noise_factor`` multiplies the noise scale (0.1 = "noise divided by 10");
OPDisc ``normalize=False`` replaces pi(w) by w (the example of :func:`privopt.audit.design_instance`: no
finite epsilon on :func:`~privopt.audit.design_instance`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction
import warnings
from typing import Any
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyomo.environ as pyo

from .._validation import check_bool, check_choice, check_delta, check_epsilon, check_positive, check_real
from ..calibration import (
    OPDISC_CALIBRATIONS,
    check_selection_method,
    opdisc_delta,
    opdisc_sigma,
    opsamp_parameters,
    rspm_noise_scale,
    selection_noise_scale,
)
from ..exceptions import ModelError, ParameterError, ParameterTypeError, UnprovenGuaranteeWarning
from ..mechanisms import (
    FixAndSolveEvaluator,
    draw_opdisc_noise,
    draw_opsamp_noise,
    draw_rspm_noise,
    draw_selection_noise,
    exponential_mechanism,
    opdisc,
    opsamp,
    rspm,
)
from ..models import (
    ENUMERATION_ATTR,
    get_info,
    hinge_halfspace,
    predict_halfspace,
    quiet_clone,
    rspm_halfspace,
    zero_one_halfspace,
)
from ..perturbation import norm_levels, pi_value, resolve_grids, snap_to_grid
from ..solvers import DEFAULT_ABS_GAP
from ._instances import NeighbouringPair
from ..mechanisms.selection import topdown_problem
from ..oracle import certified_solve
from ..scoring import RecordTable, ScoringProblem, check_binary_matrix, check_space, decode, select_scoring_system
from ..search import KeyedStreams, plan_shards, run_shards
from ..space import grid_points

__all__ = ["AuditTarget", "OPDiscTarget", "OPSampTarget", "RSPMTarget", "SelectionTarget",
           "ScoringTarget", "ConstrainedSelectionTarget"]

_PUBLIC_FIELDS = ("grid", "separation", "norm_bound", "loss_range", "lipschitz", "lipschitz_l1",
                  "linf_diameter", "l2_diameter", "n_samples")


def _check_pair(pair):
    if not isinstance(pair, NeighbouringPair):
        raise ParameterTypeError("pair must be a privopt.audit.NeighbouringPair.", "pair")
    return pair


def _same_public_info(models):
    """The public parameters a mechanism reads from the model info must not
    depend on the data: they must be equal on D and D'."""
    a, b = (get_info(m) for m in models)
    for name in _PUBLIC_FIELDS:
        if getattr(a, name) != getattr(b, name):
            raise ModelError(f"model info {name!r} differs between D and D' ({getattr(a, name)!r} vs "
                             f"{getattr(b, name)!r}); a public parameter must not depend on the data.", "pair")
    return a


def _zero_one_losses(candidates, pair, info):
    """0/1 loss of every candidate on D and on D' with the model's own rule."""
    out = []
    for which in (0, 1):
        X, y = pair.data(which)
        out.append(np.array([np.sum(predict_halfspace(w, X, info) != y) for w in candidates], dtype=float))
    return out


class AuditTarget:
    """Base class: a mechanism on a pair of neighbouring data sets.

    Subclasses set ``mechanism``, ``variant``, ``epsilon``, ``delta``,
    ``pair``, ``models`` (the Pyomo models of D and D'), ``parameters`` and
    implement :meth:`draw_noise`, :meth:`outputs_from_noise` and
    :meth:`run_mechanism`.  ``support`` (discrete outputs) or ``bins``
    (continuous outputs) tell the statistics how to form events.
    """

    mechanism = ""
    variant = "as shipped"
    support = None
    bins = None
    # set by each target's __init__
    pair: Any
    models: tuple
    epsilon: float
    delta: float
    parameters: dict

    def draw_noise(self, rng, size=None):  # pragma: no cover - abstract
        raise NotImplementedError

    def stack_noise(self, draws):
        """Stack per-run noise (``size=None`` draws) into one batch."""
        return np.stack(draws)

    def outputs_from_noise(self, which: int, noise) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def run_mechanism(self, which: int, rng) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_pure_selection(self, pair, epsilon, method, mechanism="{}"):
        """The fields every private-selection target sets alike: the pair, epsilon, delta = 0
        (pure DP), the selection method, and ``mechanism`` (formatted with the method)."""
        self.pair = _check_pair(pair)
        self.epsilon = check_epsilon(epsilon)
        self.delta = 0.0
        self.method = check_selection_method(method)
        self.mechanism = mechanism.format(self.method)

    @property
    def is_shipped(self) -> bool:
        return self.variant == "as shipped"

    def describe(self) -> dict:
        return {"mechanism": self.mechanism, "variant": self.variant, "instance": self.pair.name,
                "claimed_epsilon": self.epsilon, "delta": self.delta, **self.parameters}

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(mechanism={self.mechanism!r}, variant={self.variant!r}, "
                f"epsilon={self.epsilon:g}, delta={self.delta:g}, instance={self.pair.name!r})")


def _check_factor(noise_factor):
    return check_positive(noise_factor, "noise_factor")


# ---------------------------------------------------------------------------
# OPDisc
# ---------------------------------------------------------------------------

class OPDiscTarget(AuditTarget):
    """OPDisc [NRVW20, Algorithm 1] on ``zero_one_halfspace`` models of the pair.

    sigma = :func:`privopt.calibration.opdisc_sigma` (epsilon, delta, G, D,
    tau, d, calibration=...) with G, D, tau read from the model info exactly
    as :func:`privopt.opdisc` reads them; eta by
    :func:`privopt.mechanisms._noise.draw_opdisc_noise`; the oracle minimizes
    L(w) - <eta, pi(w)> over every grid point in the ball.

    ``calibration="proven"`` (privopt's default) or ``"paper"`` (Algorithm 1's
    sigma, whose printed proof has a gap): audit both side by side to see
    what the extra noise of the proven calibration buys.

    Variants: ``noise_factor`` multiplies sigma; ``normalize=False`` uses
    L(w) - <eta_{1..d}, w> (pi replaced by w, the last noise coordinate
    unused).  The shipped variant is ``calibration="proven"`` with neither.
    """

    mechanism = "opdisc"

    def __init__(self, pair, *, epsilon, delta, grid=None, norm_bound=None, normalize=True,
                 noise_factor=1.0, calibration="proven", solver="highs"):
        self.pair = _check_pair(pair)
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.calibration = check_choice(calibration, "calibration", OPDISC_CALIBRATIONS)
        self.noise_factor = _check_factor(noise_factor)
        self.normalize = check_bool(normalize, "normalize")
        self.solver = solver
        self.models = tuple(zero_one_halfspace(*pair.data(k), grid=grid, norm_bound=norm_bound) for k in (0, 1))
        info = _same_public_info(self.models)
        self.info = info
        grids = [tuple(float(v) for v in g) for g in info.grid]
        levels = norm_levels(grids, info.norm_bound)
        self.grids = grids
        self.norm_bound = levels.norm_bound
        self.dim = len(grids)
        sigma = opdisc_sigma(self.epsilon, self.delta, info.lipschitz, self.norm_bound, info.separation,
                             self.dim, calibration=self.calibration)
        self.sigma = sigma * self.noise_factor
        cands = []
        for ks in itertools.product(*(range(len(g)) for g in grids)):
            if sum(levels.coef[j][k] for j, k in enumerate(ks)) <= levels.bound:
                cands.append([grids[j][k] for j, k in enumerate(ks)])
        self.candidates = np.array(cands, dtype=float)
        if normalize:
            self.features = np.array([pi_value(w, self.norm_bound) for w in self.candidates])
        else:
            self.features = self.candidates.copy()
        self.losses = _zero_one_losses(self.candidates, pair, info)
        self.support = self.candidates
        parts = []
        if self.calibration != "proven":
            parts.append(f"{self.calibration} calibration")
        if not normalize:
            parts.append("no normalization (pi(w) replaced by w)")
        if self.noise_factor != 1.0:
            parts.append(f"noise scale x {self.noise_factor:g}")
        self.variant = "; ".join(parts) if parts else "as shipped"
        self.parameters = {"calibration": self.calibration, "sigma": self.sigma, "calibrated_sigma": sigma,
                           "provable_delta": opdisc_delta(self.sigma, self.epsilon, info.lipschitz,
                                                          self.norm_bound, info.separation, self.dim),
                           "lipschitz": info.lipschitz,
                           "norm_bound": self.norm_bound, "separation": info.separation, "dim": self.dim,
                           "n_candidates": len(self.candidates), "n_records": info.n_samples}

    def draw_noise(self, rng, size=None):
        return draw_opdisc_noise(rng, self.sigma, self.dim, size=size)

    def outputs_from_noise(self, which, noise):
        eta = np.asarray(noise, dtype=float)
        k = self.features.shape[1]
        values = self.losses[which][None, :] - eta[:, :k] @ self.features.T
        return self.candidates[np.argmin(values, axis=1)]

    def run_mechanism(self, which, rng):
        model = self.models[which]
        if self.normalize and self.noise_factor == 1.0:
            with warnings.catch_warnings():  # the paper variant may warn; the audit measures it
                warnings.simplefilter("ignore", UnprovenGuaranteeWarning)
                res = opdisc(model, epsilon=self.epsilon, delta=self.delta, calibration=self.calibration,
                             solver=self.solver, random_state=rng)
            return np.asarray(res.weights, dtype=float)

        # a scaled sigma or no normalization: the same oracle, fed this target's noise
        eta = self.draw_noise(rng)
        clone = quiet_clone(model)
        weights = [clone.w[j] for j in range(self.dim)]
        if self.normalize:
            pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
                clone, weights=weights, noise=eta, normalize=True, norm_bound=self.norm_bound,
                grid=self.grids, grid_encoding=self.info.grid_encoding)
        else:
            pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
                clone, weights=weights, noise=eta[: self.dim], normalize=False)
        certified_solve(clone, self.solver, what="the audited OPDisc objective")
        return snap_to_grid([pyo.value(clone.w[j]) for j in range(self.dim)], self.grids)


# ---------------------------------------------------------------------------
# RSPM
# ---------------------------------------------------------------------------

class RSPMTarget(AuditTarget):
    """RSPM [NRW18] on ``rspm_halfspace`` models of the pair.

    b = :func:`privopt.calibration.rspm_noise_scale` (epsilon, delta, 2d,
    "laplace", sensitivity = width of the loss range, as
    :func:`~privopt.mechanisms.rspm` reads it); xi by
    :func:`privopt.mechanisms._noise.draw_rspm_noise`; the oracle minimizes
    err(w) + sum_j xi_j 1[w_j = 1] + xi_{d+j} 1[w_j = -1] over {-1, 0, 1}^d.
    ``noise_factor`` multiplies b.
    """

    mechanism = "rspm"

    def __init__(self, pair, *, epsilon, delta=0.0, noise_factor=1.0, solver="highs"):
        self.pair = _check_pair(pair)
        self.epsilon = check_epsilon(epsilon)
        self.requested_delta = check_delta(delta, allow_zero=True)
        self.delta = 0.0  # the Laplace variant is pure DP
        self.noise_factor = _check_factor(noise_factor)
        self.solver = solver
        self.models = tuple(rspm_halfspace(*pair.data(k)) for k in (0, 1))
        info = _same_public_info(self.models)
        self.info = info
        d = len(info.grid)
        self.dim = d
        lo, hi = info.loss_range
        sensitivity = float(hi) - float(lo)
        b = rspm_noise_scale(self.epsilon, self.requested_delta, 2 * d, "laplace", sensitivity=sensitivity)
        self.scale = b * self.noise_factor
        self.candidates = np.array(list(itertools.product((-1.0, 0.0, 1.0), repeat=d)))
        self.features = np.hstack([(self.candidates == 1.0), (self.candidates == -1.0)]).astype(float)
        self.losses = _zero_one_losses(self.candidates, pair, info)
        self.support = self.candidates
        self.variant = "as shipped" if self.noise_factor == 1.0 else f"noise scale x {self.noise_factor:g}"
        self.parameters = {"noise_scale": self.scale, "calibrated_noise_scale": b, "sensitivity": sensitivity,
                           "dim": d, "n_candidates": len(self.candidates), "n_records": info.n_samples}

    def draw_noise(self, rng, size=None):
        return draw_rspm_noise(rng, self.scale, 2 * self.dim, size=size)

    def outputs_from_noise(self, which, noise):
        xi = np.asarray(noise, dtype=float)
        values = self.losses[which][None, :] + xi @ self.features.T
        return self.candidates[np.argmin(values, axis=1)]

    def run_mechanism(self, which, rng):
        res = rspm(self.models[which], epsilon=self.epsilon / self.noise_factor, solver=self.solver,
                   random_state=rng)   # pure DP: no delta
        return np.asarray(res.weights, dtype=float)


# ---------------------------------------------------------------------------
# OPSamp
# ---------------------------------------------------------------------------

class OPSampTarget(AuditTarget):
    """OPSamp [NRVW20, Algorithm 2] on ``hinge_halfspace`` models (d = 1).

    Parameters from :func:`privopt.calibration.opsamp_parameters` with G,
    D_inf, D_2 and n read from the model info and the oracle error
    max(0, abs_gap / n) exactly as :func:`~privopt.mechanisms.opsamp` does;
    (sigma_1..sigma_m, mu) by :func:`privopt.mechanisms._noise.draw_opsamp_noise`.
    Each oracle answer is the exact argmin of the piecewise-linear objective
    L(w) - sigma_k w over [-b, b]: it is attained at an end point or a kink
    w = 1 / (y_i x_i) of a hinge term, and these are enumerated.  The output
    (1/m) sum_k w_k + mu, clipped to [-b, b] as opsamp() projects it, is
    continuous: the statistics bucket it.

    ``x_bound`` is the public bound on |x| given to ``hinge_halfspace``
    (2 for :func:`~privopt.audit.hinge_instance` and
    :func:`~privopt.audit.opsamp_instance`).  ``noise_factor`` multiplies the
    Laplace scale (a broken variant; 0 removes the Laplace step).
    """

    mechanism = "opsamp"

    def __init__(self, pair, *, epsilon, delta, bound=1.0, x_bound=2.0, n_oracle_calls=None,
                 noise_factor=1.0, solver="highs", bins=10):
        self.pair = _check_pair(pair)
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.noise_factor = check_real(noise_factor, "noise_factor")
        if self.noise_factor < 0:
            raise ParameterError("noise_factor must be >= 0 (0: no Laplace step).", "noise_factor")
        self.solver = solver
        self.models = tuple(hinge_halfspace(*pair.data(k), bound=bound, x_bound=x_bound) for k in (0, 1))
        info = _same_public_info(self.models)
        self.info = info
        d = pair.X.shape[1]
        if d != 1:
            raise ParameterError("OPSampTarget enumerates the exact argmin in one dimension only (d = 1).", "pair")
        self.dim = d
        n = info.n_samples
        G = info.lipschitz_l1 if info.lipschitz_l1 is not None else info.lipschitz
        params = opsamp_parameters(self.epsilon, self.delta, G, info.linf_diameter, info.l2_diameter, n, d,
                                   n_oracle_calls=n_oracle_calls, oracle_error=max(0.0, DEFAULT_ABS_GAP / n),
                                   l1_diameter=info.l1_diameter)
        self.params = params
        self.n_oracle_calls = n_oracle_calls  # None: the paper's m and gamma, as in opsamp()
        self.n_calls = params.n_oracle_calls
        self.laplace_scale = params.laplace_scale * self.noise_factor
        self.grid = replace(params.output_grid, parameter=params.output_grid.parameter * Fraction(self.noise_factor)) \
            if self.noise_factor > 0 else params.output_grid
        b = float(info.extra["bound"])
        C = float(info.extra["scale"])
        beta = np.asarray(info.extra["x_bound"], dtype=float)
        self.C = C
        self.bound = b
        points = {-b, b}
        self.losses = []
        for which in (0, 1):
            X, y = pair.data(which)
            yx = np.where(y == info.extra["classes"][1], 1.0, -1.0) * np.clip(X[:, 0], -beta[0], beta[0])
            for v in yx:
                if v != 0 and abs(1.0 / v) < b:
                    points.add(1.0 / v)
            self.losses.append(yx)
        self.candidates = np.array(sorted(points))
        # L(w) at every candidate, on D and D'
        self.losses = [np.maximum(0.0, 1.0 - yx[None, :] * self.candidates[:, None]).sum(axis=1) / C
                       for yx in self.losses]
        self.bins = bins
        self.variant = ("as shipped" if self.noise_factor == 1.0 else "no Laplace step" if self.noise_factor == 0
                        else f"Laplace scale x {self.noise_factor:g}")
        self.parameters = {"n_oracle_calls": self.n_calls, "gamma": params.gamma, "eta": params.eta,
                           "lambda": params.lambda_, "l1_diameter": params.l1_diameter,
                           "laplace_scale": self.laplace_scale, "calibrated_laplace_scale": params.laplace_scale,
                           "lipschitz": G, "n_candidates": len(self.candidates), "n_records": n}
        self._executor = None

    def draw_noise(self, rng, size=None):
        # without the Laplace step (noise_factor 0) mu is 0 and is not drawn
        return draw_opsamp_noise(rng, self.params.eta, self.grid, self.n_calls, self.dim, size=size,
                                 output_noise=self.noise_factor > 0)

    def stack_noise(self, draws):
        return np.stack([s for s, _ in draws]), np.stack([m for _, m in draws])

    def outputs_from_noise(self, which, noise):
        sigmas, mu = noise
        s = np.asarray(sigmas, dtype=float)[..., 0]                      # (N, m)
        values = self.losses[which][None, None, :] - s[..., None] * self.candidates[None, None, :]
        answers = self.candidates[np.argmin(values, axis=2)]             # (N, m)
        step = self.grid.step                   # opsamp() releases gamma (round(w_bar / gamma) + Z)
        out = (np.rint(answers.mean(axis=1) / step) + np.asarray(mu, dtype=float)[:, 0]) * step
        return np.clip(out, -self.bound, self.bound)[:, None]   # opsamp() projects onto the box

    def run_mechanism(self, which, rng):
        if self.noise_factor != 1.0:
            raise ParameterError("oracle='solver' runs the shipped OPSamp; its Laplace scale cannot be "
                                 "changed. Use oracle='enumerate' for this variant.", "oracle")
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1)
        res = opsamp(self.models[which], epsilon=self.epsilon, delta=self.delta, n_oracle_calls=self.n_oracle_calls,
                     solver=self.solver, random_state=rng, executor=self._executor, progress=False)
        return np.asarray(res.weights, dtype=float)

    def __del__(self):
        if getattr(self, "_executor", None) is not None:
            self._executor.shutdown(wait=False)


# ---------------------------------------------------------------------------
# Private selection (exponential mechanism, permute-and-flip)
# ---------------------------------------------------------------------------

class SelectionTarget(AuditTarget):
    """Private selection ([MT07], [MS20]) on ``zero_one_halfspace`` models of the pair.

    The noise scale s = 2 Delta / epsilon is
    :func:`privopt.calibration.selection_noise_scale` with Delta the width of
    the model's declared loss range (as :func:`privopt.exponential_mechanism`
    reads it).  The mechanism's own sampler runs: where the top-down path
    applies (privopt's halfspace models on one grid), each run's noise is a
    :class:`privopt.search._topdown.KeyedStreams` drawn from the run's
    generator and the output is the top-down report-noisy-max over the
    support-split W (:func:`privopt.search._topdown.run_shards`);
    otherwise the per-point noise is drawn by
    :func:`privopt.mechanisms._noise.draw_selection_noise` in the order in
    which the mechanism scores W and the output is argmax_w -L(w)/s + noise_w.

    ``sensitivity_factor`` multiplies the Delta the calibration uses: 0.5 is
    the deliberately broken variant "sensitivity halved" (it spends 2 epsilon).
    """

    mechanism = "exponential"

    def __init__(self, pair, *, epsilon, method="exponential", grid=None, norm_bound=None,
                 sensitivity_factor=1.0):
        self._set_pure_selection(pair, epsilon, method)
        self.sensitivity_factor = _check_factor(sensitivity_factor)
        self.models = tuple(zero_one_halfspace(*pair.data(k), grid=grid, norm_bound=norm_bound) for k in (0, 1))
        info = _same_public_info(self.models)
        self.info = info
        grids = [tuple(float(v) for v in g) for g in info.grid]
        levels = norm_levels(grids, info.norm_bound)
        self.dim = len(grids)
        self.candidates, _ = grid_points(grids, levels.coef, int(levels.bound))
        lo, hi = info.loss_range
        self.sensitivity = float(hi) - float(lo)
        self.scale = selection_noise_scale(self.epsilon, self.sensitivity * self.sensitivity_factor)
        self.losses = _zero_one_losses(self.candidates, pair, info)
        self.support = self.candidates
        self.variant = ("as shipped" if self.sensitivity_factor == 1.0
                        else "sensitivity halved" if self.sensitivity_factor == 0.5
                        else f"sensitivity x {self.sensitivity_factor:g}")
        self.parameters = {"noise_scale": self.scale, "sensitivity": self.sensitivity, "dim": self.dim,
                           "n_candidates": len(self.candidates), "n_records": info.n_samples}

    def _problems(self):
        if not hasattr(self, "_topdown"):
            problems = tuple(topdown_problem(getattr(m, ENUMERATION_ATTR)) for m in self.models)
            self._topdown = problems if all(p is not None for p in problems) else None
        return self._topdown

    def draw_noise(self, rng, size=None):
        if self._problems() is not None:
            return KeyedStreams(rng) if size is None else [KeyedStreams(rng) for _ in range(int(size))]

        return draw_selection_noise(rng, self.method, len(self.candidates), size=size)

    def stack_noise(self, draws):
        return list(draws) if self._problems() is not None else np.stack(draws)

    def outputs_from_noise(self, which, noise):
        problems = self._problems()
        if problems is not None:
            problem = problems[which]
            shards = plan_shards(problem)
            out = np.empty((len(noise), self.dim))
            for i, streams in enumerate(noise):
                best, _ = run_shards(problem, shards, streams=streams, method=self.method,
                                     scale=self.scale)
                out[i] = problem.decode(best[1], best[2])
            return out
        keys = np.asarray(noise, dtype=float) - self.losses[which][None, :] / self.scale
        return self.candidates[np.argmax(keys, axis=1)]

    def run_mechanism(self, which, rng):
        res = exponential_mechanism(self.models[which], epsilon=self.epsilon / self.sensitivity_factor,
                                    method=self.method, random_state=rng, progress=False)
        return np.asarray(res.weights, dtype=float)


class ScoringTarget(AuditTarget):
    """Private scoring systems (:func:`privopt.scoring.select_scoring_system`) on
    the pair, whose features must be 0/1 items.

    W is every scoring system with points in -``max_points``..``max_points`` on
    at most ``max_items`` items and a free threshold; the loss is the error
    count (sensitivity 1), the noise scale s = 2 / epsilon
    (:func:`privopt.calibration.selection_noise_scale`).  The mechanism's own
    top-down sampler runs once per sample: each run's noise is a
    :class:`privopt.search._topdown.KeyedStreams` drawn from the run's
    generator.  ``sensitivity_factor`` = 0.5 is the deliberately broken
    variant "sensitivity halved" (it spends 2 epsilon).
    """

    def __init__(self, pair, *, epsilon, method="permute_and_flip", max_points=1, max_items=1,
                 sensitivity_factor=1.0):
        self._set_pure_selection(pair, epsilon, method, "scoring ({})")
        self.sensitivity_factor = _check_factor(sensitivity_factor)
        self.models = tuple((check_binary_matrix(X), (np.asarray(y) == 1).astype(int))
                            for X, y in (pair.data(k) for k in (0, 1)))
        d = self.models[0][0].shape[1]
        self.space = check_space(d, max_points, max_items, None)
        self.tables = tuple(RecordTable.from_arrays(X, y) for X, y in self.models)
        self.problems = tuple(ScoringProblem(self.space, t) for t in self.tables)
        self.scale = selection_noise_scale(self.epsilon, 1.0 * self.sensitivity_factor)
        self.dim = d + 1
        self._decode = decode
        # every point of W, (points..., threshold), from the problem's own regions and groups
        cands = []
        for size in range(self.space.k + 1):
            for rank, S in enumerate(self.space.supports(size)):
                region = self.space.offset(size) + rank
                _, sizes, _ = self.problems[0].group_errors(S)
                for g, n in enumerate(sizes):
                    for pos in range(int(n)):
                        sup, vec, t = decode(self.space, self.tables[0], region, g, pos)
                        w = np.zeros(d + 1)
                        w[sup] = vec
                        w[d] = t
                        cands.append(w)
        self.support = np.array(cands)
        self.variant = ("as shipped" if self.sensitivity_factor == 1.0
                        else "sensitivity halved" if self.sensitivity_factor == 0.5
                        else f"sensitivity x {self.sensitivity_factor:g}")
        self.parameters = {"noise_scale": self.scale, "sensitivity": 1.0, "dim": self.dim,
                           "n_candidates": len(cands), "n_records": len(self.models[0][1]),
                           "max_points": self.space.P, "max_items": self.space.k}

    def draw_noise(self, rng, size=None):
        return KeyedStreams(rng) if size is None else [KeyedStreams(rng) for _ in range(int(size))]

    def stack_noise(self, draws):
        return list(draws)

    def outputs_from_noise(self, which, noise):
        problem, table = self.problems[which], self.tables[which]
        shards = plan_shards(problem)
        out = np.zeros((len(noise), self.dim))
        for i, streams in enumerate(noise):
            best, _ = run_shards(problem, shards, streams=streams, method=self.method, scale=self.scale)
            sup, vec, t = self._decode(self.space, table, *best[1:])
            out[i, sup] = vec
            out[i, -1] = t
        return out

    def run_mechanism(self, which, rng):
        X, y = self.models[which]
        res = select_scoring_system(X, y, epsilon=self.epsilon / self.sensitivity_factor, method=self.method,
                                    max_points=self.space.P, max_items=self.space.k, random_state=rng,
                                    executor="local", progress=False)
        return np.asarray(res.weights, dtype=float)


def constrained_selection_model(X):
    """The user's model of :class:`ConstrainedSelectionTarget` on one data set:
    w in {0..4}, loss sum_t |w - x_t| (u_t >= +-(w - x_t)), and the constraint
    ``cap``: n w <= sum_t x_t (w at most the records' mean), built from the
    records."""
    x = np.asarray(X, dtype=float)[:, 0]
    m = pyo.ConcreteModel()
    m.T = pyo.RangeSet(0, len(x) - 1)
    m.w = pyo.Var(domain=pyo.Integers, bounds=(0, 4))
    m.u = pyo.Var(m.T, bounds=(0, 4))
    m.up = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= m.w - float(x[t]))
    m.down = pyo.Constraint(m.T, rule=lambda m, t: m.u[t] >= float(x[t]) - m.w)
    m.cap = pyo.Constraint(expr=len(x) * m.w <= float(x.sum()))
    m.loss = pyo.Objective(expr=sum(m.u[t] for t in m.T))
    return m


class ConstrainedSelectionTarget(AuditTarget):
    """Private selection (:func:`privopt.exponential_mechanism`, fix-and-solve
    path) on a user's Pyomo model with a constraint on the decision built from
    the records (:func:`constrained_selection_model`, pair
    :func:`~privopt.audit.data_constraint_instance`).

    As shipped, privopt refuses the model until the constraint is declared
    public or deactivated; the audited release is the one after the fix the
    refusal advises for a data-built constraint (``cap`` deactivated), so W =
    {0..4} on both data sets.  ``declare_data_constraint=True`` is the
    deliberately broken variant "data constraint declared public": W is cut by
    the records' mean, so w = 4 can be released on D' and never on D (no
    finite epsilon).  Candidates and losses come from the mechanism's own
    evaluator (:class:`privopt.mechanisms.selection._evaluate.FixAndSolveEvaluator`, which
    needs HiGHS); each run's noise is
    :func:`privopt.mechanisms._noise.draw_selection_noise` over the five
    values of the grid, of which the mechanism reads the first |W| in W's
    order, as it does in one call.
    """

    def __init__(self, pair, *, epsilon, method="exponential", declare_data_constraint=False):
        self._set_pure_selection(pair, epsilon, method)
        self.declared = check_bool(declare_data_constraint, "declare_data_constraint")
        self.models = tuple(constrained_selection_model(pair.data(k)[0]) for k in (0, 1))
        for m in self.models:
            if not self.declared:
                m.cap.deactivate()
        self.sensitivity = 4.0
        self.scale = selection_noise_scale(self.epsilon, self.sensitivity)
        self.candidates, self.losses = [], []
        for m in self.models:
            scorer = FixAndSolveEvaluator(m, [m.w], resolve_grids([m.w]), solver="highs",
                                          public_constraints=[m.cap] if self.declared else [])
            blocks = list(scorer.blocks())
            self.candidates.append(np.vstack([p for p, _ in blocks]))
            self.losses.append(np.concatenate([lo for _, lo in blocks]))
        self.support = np.arange(5.0)[:, None]
        self.variant = "data constraint declared public" if self.declared else "as shipped"
        self.parameters = {"noise_scale": self.scale, "sensitivity": self.sensitivity, "dim": 1,
                           "n_candidates": [len(c) for c in self.candidates],
                           "n_records": int(pair.X.shape[0])}

    def draw_noise(self, rng, size=None):
        return draw_selection_noise(rng, self.method, 5, size=size)

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise, dtype=float).reshape(-1, 5)
        cands, losses = self.candidates[which], self.losses[which]
        keys = noise[:, :len(cands)] - losses[None, :] / self.scale
        return cands[np.argmax(keys, axis=1)]

    def run_mechanism(self, which, rng):
        res = exponential_mechanism(self.models[which], weights=self.models[which].w, epsilon=self.epsilon,
                                    loss_range=(0.0, 4.0), method=self.method, random_state=rng,
                                    n_samples=self.parameters["n_records"], progress=False,
                                    public_constraints=["cap", "w"] if self.declared else "w")
        return np.asarray(res.weights, dtype=float)

"""Audit target of bounded private selection (``exponential_mechanism(path="bounded")``):
A* sampling over prefixes of the decision, each region bounded by the model's certified
LP relaxation."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo

from .._validation import check_epsilon, check_positive
from ..calibration import check_selection_method, selection_noise_scale
from ..mechanisms import BoundedSampler, exponential_mechanism, relaxation_bound
from ..search import KeyedStreams, PrefixSpace, sample_prefix
from ._instances import NeighbouringPair
from ._targets import AuditTarget, _check_pair

__all__ = ["BoundedSelectionTarget", "bounded_instance", "bounded_model"]

#: The decision's grid: two binary coordinates, W = {0, 1}^2.
_W = np.array(list(itertools.product((0.0, 1.0), repeat=2)))


def bounded_instance() -> NeighbouringPair:
    """Five records of two kinds (label +1: loss (2 w0 + w1) / 3; label -1: one minus
    that), each loss in [0, 1]; D has three of the first kind, D' two (one record's label
    flipped).  L_D(w) = 2 + u and L_D'(w) = 3 - u with u = (2 w0 + w1) / 3: the order of
    W reverses between the neighbours."""
    X = np.ones((5, 1))
    y = np.array([1, 1, 1, -1, -1])
    yp = y.copy()
    yp[0] = -1
    return NeighbouringPair(X, y, X.copy(), yp, name="bounded selection",
                            description="two binary decisions whose order of losses reverses")


def bounded_model(y) -> pyo.ConcreteModel:
    """The Pyomo model of :func:`bounded_instance`'s data ``y``: binary w (the decision),
    z_i >= record i's loss (linear in w), minimize sum z_i."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, len(y) - 1)
    m.w = pyo.Var([0, 1], domain=pyo.Binary)
    m.z = pyo.Var(m.I, bounds=(0, 1))
    u = (2 * m.w[0] + m.w[1]) / 3

    def rule(m, i):
        return m.z[i] >= (u if y[i] > 0 else 1 - u)

    m.rec = pyo.Constraint(m.I, rule=rule)
    m.obj = pyo.Objective(expr=sum(m.z.values()))
    return m


def _losses(y) -> np.ndarray:
    u = (2 * _W[:, 0] + _W[:, 1]) / 3
    a = int(np.sum(np.asarray(y) > 0))
    return a * u + (len(y) - a) * (1 - u)


class _ExactOracle:
    """The bound oracle of the enumeration path: the exact minimum of L over the box
    (which is what the LP relaxation gives on this model), with the shipped slack, times
    ``inflate``."""

    def __init__(self, losses, inflate):
        self.losses, self.inflate = losses, inflate

    def lower_bound(self, lower, upper):
        inside = np.all((_W >= lower) & (_W <= upper), axis=1)
        return relaxation_bound(float(self.losses[inside].min())) * self.inflate

    def loss(self, point):
        return float(self.losses[np.flatnonzero(np.all(_W == point, axis=1))[0]])


class _Secret:
    """A generator stand-in that hands :class:`privopt.search.KeyedStreams` a drawn secret."""

    def __init__(self, words):
        self.words = np.asarray(words, dtype=np.int64)

    def integers(self, *args, **kwargs):
        return self.words


class BoundedSelectionTarget(AuditTarget):
    """Bounded private selection on :func:`bounded_instance` (W = {0, 1}^2, Delta = 1).

    As shipped every region's bound is the certified LP relaxation (valid).
    ``inflate`` > 1 is the deliberately broken variant "a bound that is not valid": every
    bound multiplied by ``inflate`` (above the region's true minimum), so that regions
    holding the winner are pruned; the sampler then chooses w0 by a noisy max at
    ``inflate`` times the scale it claims, and the audit sees an epsilon above the claim.

    Runs: ``outputs_from_noise`` samples with the exact minimum over each box as the
    bound (what the LP relaxation gives on this model; fast); ``run_mechanism`` calls
    :func:`privopt.exponential_mechanism` with ``path="bounded"`` (shipped) or its bounded
    sampler (:class:`privopt.mechanisms.BoundedSampler`) with the Pyomo oracle's inflated
    bounds (broken).  The noise of one run is the
    256-bit secret of its keyed streams, drawn as :class:`privopt.search.KeyedStreams`
    draws it, so the two paths agree run by run on the same seeds.
    """

    def __init__(self, pair=None, *, epsilon, method="exponential", inflate: float = 1.0):
        self.pair = _check_pair(bounded_instance() if pair is None else pair)
        self.epsilon = check_epsilon(epsilon)
        self.delta = 0.0
        self.method = check_selection_method(method)
        self.inflate = check_positive(inflate, "inflate")
        self.mechanism = f"bounded {self.method}"
        self.variant = "as shipped" if self.inflate == 1.0 else f"bounds inflated x{self.inflate:g}"
        self.models = tuple(bounded_model(self.pair.data(k)[1]) for k in (0, 1))
        self.losses = [_losses(self.pair.data(k)[1]) for k in (0, 1)]
        self.scale = selection_noise_scale(self.epsilon, 1.0)
        self.space = PrefixSpace([(0.0, 1.0)] * 2)
        self.support = _W.copy()
        self.parameters = {"noise_scale": self.scale, "sensitivity": 1.0, "n_candidates": 4,
                           "n_records": int(self.pair.X.shape[0]), "inflate": self.inflate}

    def draw_noise(self, rng, size=None):
        return rng.integers(0, 2**63, size=4 if size is None else (size, 4), dtype=np.int64)

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise).reshape(-1, 4)
        oracle = _ExactOracle(self.losses[which], self.inflate)
        return np.array([sample_prefix(self.space, oracle, KeyedStreams(_Secret(row)), self.method, self.scale)[0]
                         for row in noise])

    def run_mechanism(self, which, rng):
        model = self.models[which]
        if self.inflate == 1.0:
            return exponential_mechanism(model, weights="w", epsilon=self.epsilon, loss_range=(0, 1),
                                         n_samples=5, method=self.method, path="bounded",
                                         random_state=rng).weights
        # the mechanism's own bounded sampler, replayed with the Pyomo oracle's bounds inflated
        sampler = BoundedSampler(self.space, model, list(model.w.values()), inflate=self.inflate)
        return sampler.sample(rng, self.method, self.scale).point

"""The scored sampler: every point of W scored (the exact enumeration or fix-and-solve,
:mod:`privopt.mechanisms.selection._evaluate`), the noise drawn block by block in W's order,
or all at once for the branch and bound of :class:`privopt.search.BoundedArgmax`; and the
loss-range contract every scored loss of a user's model meets."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...._limits import format_count
from ...._progress import progress_bar
from ....exceptions import ModelError, NotCertifiedError
from ..._noise import draw_selection_noise
from .base import Draw, Sampler, selection_keys

__all__ = ["ScoredSampler", "RangeCheck"]


@dataclass(frozen=True)
class RangeCheck:
    """The contract every scored loss of a user's model must meet: L(w) less the public
    term (``evaluator.term_values``) in [n a, n b] (``has_term``: whether there is one,
    for the message)."""

    n_samples: int
    loss_range: tuple
    has_term: bool

    def check(self, evaluator, points, losses) -> None:
        n, (lo, hi) = self.n_samples, self.loss_range
        tol = 1e-6 * max(1.0, abs(n * hi))
        records = losses - evaluator.term_values(points)   # the public term is not the records'
        if records.min() < n * lo - tol or records.max() > n * hi + tol:
            raise ModelError(
                f"model: its loss{' less public_term' if self.has_term else ''} at some w is outside [n a, n b] = "
                f"[{n * lo:g}, {n * hi:g}] for n = {n} and loss_range = ({lo:g}, {hi:g}): it is not a sum of n "
                "terms in loss_range, so the guarantee would not hold; nothing is released. Fix loss_range or the "
                "model (a cost that depends on the decision alone and is public can be declared with "
                "public_term=).", "model")


class ScoredSampler(Sampler):
    """Every point of W scored by ``evaluator`` (its ``blocks()`` in W's order), the noise
    drawn block by block; or, with ``argmax`` (:class:`privopt.search.BoundedArgmax`), all
    of W's noise drawn in one call (the same numbers: a seeded generator's stream does not
    depend on how it is cut, the secure generator's draws are i.i.d.) and only the subtrees
    that may hold the winner scored.  ``sense="maximize"`` selects with the loss -U;
    ``check`` (a :class:`RangeCheck`) is applied to every block; ``time_limit`` (seconds
    from the start of sampling) is checked between blocks; ``keys`` draws a block's keys
    (:func:`selection_keys`, as the caller names it)."""

    def __init__(self, evaluator, *, argmax=None, sense: str = "minimize", check: RangeCheck | None = None,
                 time_limit: float | None = None, desc: str = "privopt selection", keys=selection_keys):
        self.evaluator, self.argmax, self.sense, self.range_check = evaluator, argmax, sense, check
        self.time_limit, self.desc, self.keys = time_limit, desc, keys

    def sample(self, rng, method, scale, floor=None, progress=False):
        if self.argmax is not None:
            return self._branch_and_bound(rng, method, scale, floor)
        start = time.perf_counter()
        best_key, best_w = self._blocks(rng, method, scale, start, progress)
        wall = time.perf_counter() - start
        if best_w is None or (floor is not None and best_key <= floor):
            return Draw(None, None, wall)
        return Draw(best_key, np.asarray(best_w, dtype=float) + 0.0, wall)

    def _branch_and_bound(self, rng, method, scale, floor):
        start = time.perf_counter()
        noise = draw_selection_noise(rng, method, self.evaluator.n_points)
        found = self.argmax.best(noise, scale, floor)
        key, point = (None, None) if found.point is None else (float(found.key), found.point + 0.0)
        return Draw(key, point, time.perf_counter() - start, points_scored=found.points_scored)

    def _blocks(self, rng, method, scale, start, progress):
        """``(best key, its point)`` over every block of W."""
        n_points = self.evaluator.n_points
        best_key, best_w, done = -math.inf, None, 0
        with progress_bar(n_points, desc=self.desc, unit="pt", disable=not progress) as bar:
            for pts, losses in self.evaluator.blocks():
                losses = np.asarray(losses, dtype=float)
                if self.range_check is not None:
                    self.range_check.check(self.evaluator, pts, losses)
                # a utility (sense="maximize", checked against the objective) is selected as the loss -U
                keys = self.keys(losses if self.sense == "minimize" else -losses, scale, method, rng)
                k = int(np.argmax(keys))
                if keys[k] > best_key:
                    best_key, best_w = float(keys[k]), np.array(pts[k], dtype=float)
                done += pts.shape[0]
                bar.update(pts.shape[0])
                if self.time_limit is not None and time.perf_counter() - start > self.time_limit and done < n_points:
                    raise NotCertifiedError(
                        f"time_limit: {self.time_limit:g} s ran out before the {format_count(n_points)} points "
                        "were scored (the prediction was too optimistic for this machine); nothing is "
                        "released. Raise time_limit or make W smaller.", None)   # how far it got: not said
        return best_key, best_w

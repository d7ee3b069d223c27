"""The samplers of private selection: one interface, three ways to draw report-noisy-max.

Every sampler draws the released point of W with keys -L(w)/s + Z (Z: Gumbel for the
exponential mechanism, Exponential(1) for permute-and-flip, drawn by
:func:`privopt.mechanisms._noise.draw_selection_noise` or the keyed streams of
:mod:`privopt.search`), and :meth:`Sampler.sample` returns the best key and its point as a
:class:`Draw`, or None when no key is above ``floor`` (the mixture's best total so far):

* :class:`TopDownSampler`: a 0/1-loss halfspace W split by support, drawn top down
  (:func:`privopt.search.sample_top_down`);
* :class:`ScoredSampler`: every point of W scored (the exact enumeration or fix-and-solve,
  :mod:`privopt.mechanisms.selection._evaluate`), the noise drawn block by block in W's order, or
  all at once for the branch and bound of :class:`privopt.solvers.BoundedArgmax`;
* :class:`BoundedSampler`: A* sampling over prefixes of a user's decision, each region
  bounded by the certified LP relaxation (:func:`privopt.search.sample_prefix` with
  :class:`privopt.mechanisms.selection._bounded.PyomoBoundOracle`).

``exponential_mechanism``, ``mixture_selection`` and the audit call them alike; which one
runs is the :class:`privopt.mechanisms.selection._plan.SelectionPlan`'s choice.  A sampler does not
change the law: the keys drawn do not depend on the floor or on how much of W is scored.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..._limits import format_count
from ..._progress import progress_bar
from ...exceptions import ModelError, NotCertifiedError
from ...search import KeyedStreams, sample_prefix, sample_top_down
from ._bounded import PyomoBoundOracle
from .._noise import draw_selection_noise

__all__ = ["Draw", "Sampler", "TopDownSampler", "ScoredSampler", "BoundedSampler", "RangeCheck", "FAR"]

#: A floor candidate's tie-break fields on the top-down path: after every real candidate.
FAR = 2 ** 62


@dataclass(frozen=True)
class Draw:
    """What one sampler run gives: the best ``key`` and its ``point`` (a new float array,
    no -0.0), both None when no key is above the floor; the run's ``wall_time`` and how
    much of W it did: ``regions_expanded``, ``points_scored`` and ``regions_solved`` (None
    where the path has none)."""

    key: float | None
    point: np.ndarray | None
    wall_time: float
    regions_expanded: int | None = None
    points_scored: int | None = None
    regions_solved: int | None = None


def selection_keys(losses, noise_scale, method, rng):
    """Report-noisy-max keys of one block, noise drawn in the block's order
    (:func:`privopt.mechanisms._noise.draw_selection_noise`): -L/s + G
    (Gumbel, the exponential mechanism) or -L/s + E (Exponential(1),
    permute-and-flip), s = 2 Delta / epsilon.  The released point is the
    argmax over all blocks (first on ties, which have probability zero)."""
    return draw_selection_noise(rng, method, losses.shape[0]) - losses / noise_scale


class Sampler:
    """One way to draw report-noisy-max over W (module docstring)."""

    def sample(self, rng, method: str, scale: float, floor: float | None = None, progress: bool = False) -> Draw:
        """The best key over W with fresh noise from ``rng`` (a numpy Generator, or the
        secure source), keys ``-L / scale + noise``, and its point (both None when no key
        is above ``floor``); ``progress`` shows a bar where the sampler has one."""
        raise NotImplementedError


class TopDownSampler(Sampler):
    """A halfspace W split by support (:class:`privopt.search._regions.HalfspaceProblem`),
    drawn top down: supports that cannot win are never scored.  ``predicted`` (seconds,
    from public sizes) decides the executor."""

    def __init__(self, problem, *, executor=None, predicted: float = 0.0, desc: str = "privopt selection"):
        self.problem, self.executor, self.predicted, self.desc = problem, executor, predicted, desc

    def sample(self, rng, method, scale, floor=None, progress=False):
        streams = KeyedStreams(rng)      # a fresh secret: independent of any other W's
        fl = None if floor is None else (float(floor), FAR, FAR, FAR)
        out, expanded, wall = sample_top_down(self.problem, streams, method, scale, executor=self.executor,
                                              predicted=self.predicted, progress=progress, desc=self.desc,
                                              floor=fl)
        key, point = (None, None) if out is None else (float(out[0]), self.problem.decode(out[1], out[2]) + 0.0)
        return Draw(key, point, wall, regions_expanded=expanded[0], points_scored=expanded[1])


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
    drawn block by block; or, with ``argmax`` (:class:`privopt.solvers.BoundedArgmax`), all
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
                        f"time_limit: {self.time_limit:g} s ran out after scoring {done:,} of {format_count(n_points)} "
                        "points (the prediction was too optimistic for this machine); nothing is "
                        "released. Raise time_limit or make W smaller.", None)
        return best_key, best_w


class BoundedSampler(Sampler):
    """A* sampling over prefixes of a user's decision (``space``: a
    :class:`privopt.search.PrefixSpace`), each region bounded by the model's certified LP
    relaxation.  ``oracle_args`` are :class:`PyomoBoundOracle`'s keywords; the oracle is
    built when sampling starts (the clock of ``time_limit`` starts before the model is read
    into the solver) and kept as :attr:`oracle` for the report."""

    def __init__(self, space, model, w_vars, *, time_limit=None, **oracle_args):
        self.space, self.model, self.w_vars = space, model, list(w_vars)
        self.time_limit, self.oracle_args = time_limit, oracle_args
        self.oracle: PyomoBoundOracle | None = None

    def sample(self, rng, method, scale, floor=None, progress=False):
        streams = KeyedStreams(rng)
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        self.oracle = PyomoBoundOracle(self.model, self.w_vars, time_limit=self.time_limit, deadline=deadline,
                                       **self.oracle_args)
        point, key, stats = sample_prefix(self.space, self.oracle, streams, method, scale, deadline=deadline)
        if floor is not None and key <= floor:
            key, point = None, None
        return Draw(None if key is None else float(key), None if point is None else point + 0.0,
                    time.perf_counter() - start, regions_expanded=stats.regions_expanded,
                    points_scored=stats.points_scored, regions_solved=stats.regions_solved)

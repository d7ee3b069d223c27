"""The samplers of private selection: one interface, three ways to draw report-noisy-max.

Every sampler draws the released point of W with keys -L(w)/s + Z (Z: Gumbel for the
exponential mechanism, Exponential(1) for permute-and-flip, drawn by
:func:`privopt.mechanisms._noise.draw_selection_noise` or the keyed streams of
:mod:`privopt.search`), and :meth:`Sampler.sample` returns the best key and its point as a
:class:`Draw`, or None when no key is above ``floor`` (the mixture's best total so far):

* :class:`TopDownSampler` (``topdown.py``): a 0/1-loss halfspace W split by support, drawn top down
  (:func:`privopt.search.sample_top_down`);
* :class:`ScoredSampler` (``scored.py``): every point of W scored (the exact enumeration or fix-and-solve,
  :mod:`privopt.mechanisms.selection._evaluate`), the noise drawn block by block in W's order, or
  all at once for the branch and bound of :class:`privopt.search.BoundedArgmax`;
* :class:`BoundedSampler` (``bounded.py``): A* sampling over prefixes of a user's decision, each region
  bounded by the certified LP relaxation (:func:`privopt.search.sample_prefix` with
  :class:`privopt.mechanisms.selection._bounded.PyomoBoundOracle`).

``exponential_mechanism``, ``mixture_selection`` and the audit call them alike; which one
runs is the :class:`privopt.mechanisms.selection._plan.SelectionPlan`'s choice.  A sampler does not
change the law: the keys drawn do not depend on the floor or on how much of W is scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._noise import draw_selection_noise

__all__ = ["Draw", "Sampler", "selection_keys"]


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

"""The bounded sampler: A* sampling over prefixes of a user's decision, each region
bounded by the certified LP relaxation (:func:`privopt.search.sample_prefix` with
:class:`privopt.mechanisms.selection._bounded.PyomoBoundOracle`)."""

from __future__ import annotations

import time

from ....search import KeyedStreams, sample_prefix
from .._bounded import PyomoBoundOracle
from .base import Draw, Sampler

__all__ = ["BoundedSampler"]


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

    @classmethod
    def of(cls, w, model, w_vars, **kwargs) -> "BoundedSampler":
        """The sampler of W (a :class:`~privopt.mechanisms.selection._w.SelectionW` of a
        user's model counted through its declared constraints: its prefix tree ``prefixes``)."""
        return cls(w.prefixes, model, w_vars, **kwargs)

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

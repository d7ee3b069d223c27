"""The top-down sampler: a 0/1-loss halfspace W split by support, drawn top down
(:func:`privopt.search.sample_top_down`)."""

from __future__ import annotations

from ....search import KeyedStreams, sample_top_down
from .base import Draw, Sampler

__all__ = ["TopDownSampler", "FAR"]

#: A floor candidate's tie-break fields on the top-down path: after every real candidate.
FAR = 2 ** 62


class TopDownSampler(Sampler):
    """A halfspace W split by support (:class:`privopt.search._regions.HalfspaceProblem`),
    drawn top down: supports that cannot win are never scored.  ``predicted`` (seconds,
    from public sizes) decides the executor."""

    def __init__(self, problem, *, executor=None, predicted: float = 0.0, desc: str = "privopt selection"):
        self.problem, self.executor, self.predicted, self.desc = problem, executor, predicted, desc

    @classmethod
    def of(cls, w, **kwargs) -> "TopDownSampler":
        """The sampler of W (a :class:`~privopt.mechanisms.selection._w.SelectionW` split by
        support: its ``problem``)."""
        return cls(w.problem, **kwargs)

    def sample(self, rng, method, scale, floor=None, progress=False):
        streams = KeyedStreams(rng)      # a fresh secret: independent of any other W's
        fl = None if floor is None else (float(floor), FAR, FAR, FAR)
        out, expanded, wall = sample_top_down(self.problem, streams, method, scale, executor=self.executor,
                                              predicted=self.predicted, progress=progress, desc=self.desc,
                                              floor=fl)
        key, point = (None, None) if out is None else (float(out[0]), self.problem.decode(out[1], out[2]) + 0.0)
        return Draw(key, point, wall, regions_expanded=expanded[0], points_scored=expanded[1])

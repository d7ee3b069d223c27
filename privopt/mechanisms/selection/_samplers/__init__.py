"""The samplers of private selection, one module each behind one interface (``base``:
:class:`Draw`, :class:`Sampler`, :func:`selection_keys`): ``topdown``
(:class:`TopDownSampler`), ``scored`` (:class:`ScoredSampler`, with the :class:`RangeCheck`
of a user's model) and ``bounded`` (:class:`BoundedSampler`)."""

from .base import Draw, Sampler, selection_keys
from .bounded import BoundedSampler
from .scored import RangeCheck, ScoredSampler
from .topdown import FAR, TopDownSampler

__all__ = ["Draw", "Sampler", "selection_keys", "TopDownSampler", "ScoredSampler", "BoundedSampler", "RangeCheck",
           "FAR"]

"""Private mechanisms: noise, oracle call(s), output step, PrivateResult."""

import functools

from .opdisc import opdisc
from .opsamp import opsamp
from .rspm import rspm
from .selection import exponential_mechanism

#: Mechanisms by name (used by ``@privopt.private`` and the estimators).
#: ``"exponential"`` and ``"permute_and_flip"`` are
#: :func:`exponential_mechanism` with that ``method``.
MECHANISMS = {
    "opdisc": opdisc,
    "opsamp": opsamp,
    "rspm": rspm,
    "exponential": functools.partial(exponential_mechanism, method="exponential"),
    "permute_and_flip": functools.partial(exponential_mechanism, method="permute_and_flip"),
}

#: The mechanisms that are pure epsilon-DP and take no delta.
PURE_MECHANISMS = ("rspm", "exponential", "permute_and_flip")

__all__ = ["opdisc", "opsamp", "rspm", "exponential_mechanism", "MECHANISMS", "PURE_MECHANISMS"]

"""Private mechanisms: noise, oracle call(s), output step, PrivateResult."""

from .opdisc import opdisc

#: Mechanisms by name (used by ``@privopt.private`` and the estimators).
MECHANISMS = {"opdisc": opdisc}

__all__ = ["opdisc", "MECHANISMS"]

"""Private mechanisms: noise, oracle call(s), output step, PrivateResult."""

from .opdisc import opdisc
from .opsamp import opsamp
from .rspm import rspm

#: Mechanisms by name (used by ``@privopt.private`` and the estimators).
MECHANISMS = {"opdisc": opdisc, "opsamp": opsamp, "rspm": rspm}

__all__ = ["opdisc", "opsamp", "rspm", "MECHANISMS"]

"""Cloning a user's Pyomo model without Pyomo's "Unable to clone" ERROR line.

Every mechanism works on a copy of the user's model (the user's model is never
modified), and so does the ``privopt.objective_perturbation`` transformation's
``create_using``.  This is the one clone they all call: it lives in the model
layer, the lowest layer that knows Pyomo models (``space`` and ``search`` are
without Pyomo), so the perturbation, the mechanisms and the audit may all
import it from :mod:`privopt.models`.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

__all__ = ["quiet_clone", "quiet_cloning"]

#: The start of the one Pyomo record :func:`quiet_clone` drops.
CLONE_NOTICE = "Unable to clone Pyomo component attribute"


class _DropCloneNotice(logging.Filter):
    """Drops Pyomo's "Unable to clone Pyomo component attribute" record."""

    def filter(self, record):
        return not str(record.getMessage()).startswith(CLONE_NOTICE)


@contextmanager
def quiet_cloning():
    """Within this block, Pyomo's "Unable to clone" ERROR record is dropped
    (see :func:`quiet_clone` for why that is safe); the filter is removed on
    leaving the block, also when it raises."""
    logger = logging.getLogger("pyomo.core")
    quiet = _DropCloneNotice()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def quiet_clone(model):
    """``model.clone()`` without Pyomo's "Unable to clone" ERROR line.

    A Set initialized from ``dict.keys()`` keeps its (uncopyable) initializer
    after construction; Pyomo's clone then logs an ERROR and sets that field
    to None on the copy.  On a constructed component the initializer is never
    used again, so the copy is complete; on an unconstructed (abstract) one
    Pyomo raises CloneError, which is not silenced.  Only that one record of
    the ``pyomo.core`` logger is dropped, only during this clone (the filter
    is removed afterwards, also when the clone raises)."""
    with quiet_cloning():
        return model.clone()

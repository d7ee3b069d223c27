"""Pyomo loss models with the metadata privopt's mechanisms read.

See :mod:`privopt.models._info` for the interface every model follows.  The
catalogue:

* :func:`zero_one_halfspace` -- 0/1 loss of a halfspace on a grid in a ball
  (MILP, for OPDisc); :func:`zero_one_loss` -- the same without the MILP
  (what private selection reads; ``.milp()`` builds it);
  :func:`rspm_halfspace` -- the same over {-1, 0, 1}^d (for RSPM);
  :func:`predict_halfspace` applies their decision rule.
* :func:`hinge_halfspace`, :func:`absolute_regression` (LPs) and
  :func:`squared_regression` (QP): convex losses normalized to [0, 1] on a
  box (for OPSamp).
* :func:`RecordModel`: a user's own model written record by record (the decision,
  the public part, then one block per record), the split between the records and the
  public rest known by construction; :func:`check_record_blocks` verifies it.
* :func:`discretize_features` / :class:`FeatureDiscretizer`: map real
  features clipped to public bounds onto an integer grid.
"""

# For privopt's other packages (the mechanisms, solver="enumerate", the audit): not in __all__.
from ._common import ENUMERATION_ATTR as ENUMERATION_ATTR
from ._common import build_stats, get_weights
from ._clone import quiet_clone as quiet_clone
from ._clone import quiet_cloning as quiet_cloning
from ._contract import Asked as Asked
from ._contract import ModelContract as ModelContract
from ._contract import RecordSplit as RecordSplit
from ._contract import check_model_contract as check_model_contract
from ._contract import records_of as records_of
from ._contract import check_public_constraints as check_public_constraints
from ._contract import check_public_term as check_public_term
from ._info import ModelInfo, attach_info, get_info, has_info
from ._records import FAINT_RTOL as FAINT_RTOL
from ._records import RecordModel, check_record_blocks
from .convex import absolute_regression, hinge_halfspace, squared_regression
from .discretize import GEOMETRIC_BASE, SPACINGS, FeatureDiscretizer, discretize_features, geometric_position
from .halfspace import (
    ZeroOneLoss,
    halfspace_decision_function,
    predict_halfspace,
    rspm_halfspace,
    zero_one_halfspace,
    zero_one_loss,
)

__all__ = [
    "ModelInfo",
    "attach_info",
    "get_info",
    "has_info",
    "RecordModel",
    "check_record_blocks",
    "zero_one_halfspace",
    "zero_one_loss",
    "ZeroOneLoss",
    "rspm_halfspace",
    "predict_halfspace",
    "halfspace_decision_function",
    "hinge_halfspace",
    "absolute_regression",
    "squared_regression",
    "discretize_features",
    "FeatureDiscretizer",
    "geometric_position",
    "GEOMETRIC_BASE",
    "SPACINGS",
    "build_stats",
    "get_weights",
]

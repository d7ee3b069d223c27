"""Pyomo loss models with the metadata privopt's mechanisms read.

See :mod:`privopt.models._info` for the interface every model follows.
"""

from ._info import ModelInfo, attach_info, get_info, has_info

__all__ = ["ModelInfo", "attach_info", "get_info", "has_info"]

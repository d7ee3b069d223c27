"""Data sets for privopt's experiments.

* :func:`load_adult` -- UCI Adult, found locally or downloaded, verified by
  SHA-256 and preprocessed as in the Adult experiment of Neel, Roth, Vietri,
  Wu (ICML 2020).  Set ``PRIVOPT_DATA_HOME`` to a folder holding ``adult/`` to
  use a local copy.
* :func:`make_planted_halfspace` -- synthetic labelled points from a planted
  integer halfspace, with label noise.

Both return a :class:`Bunch` with ``X_train``, ``y_train``, ``X_test``,
``y_test``, ``feature_names`` and ``description``.
"""

from ._base import (
    ENV_DATA_HOME,
    Bunch,
    DatasetChecksumError,
    DatasetError,
    DatasetNotFoundError,
    get_cache_home,
    get_data_home,
)
from .adult import ADULT_SHA256, ADULT_URL, FEATURE_SETS, PUBLIC_BOUNDS, load_adult
from .synthetic import make_planted_halfspace

__all__ = [
    "load_adult",
    "make_planted_halfspace",
    "Bunch",
    "DatasetError",
    "DatasetNotFoundError",
    "DatasetChecksumError",
    "get_cache_home",
    "get_data_home",
    "ENV_DATA_HOME",
    "ADULT_URL",
    "ADULT_SHA256",
    "FEATURE_SETS",
    "PUBLIC_BOUNDS",
]

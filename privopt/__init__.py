"""privopt: differentially private optimization as a Pyomo plugin."""

from ._version import __version__
from . import exceptions
from .exceptions import PrivacyLeakWarning, PrivoptError

__all__ = ["__version__", "exceptions", "PrivacyLeakWarning", "PrivoptError"]

"""A read-only mapping that pickles (``types.MappingProxyType`` does not)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

__all__ = ["FrozenDict"]


class FrozenDict(Mapping):
    """An immutable ``dict`` view: no item assignment, picklable, comparable.

    Used for the ``parameters`` of :class:`privopt.PrivateResult` and the
    mappings of :class:`privopt.audit.AuditResult`, so results survive
    ``pickle.dumps``, ``joblib.dump`` and a ``ProcessPoolExecutor``.
    """

    __slots__ = ("_data",)
    _data: dict

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_data", dict(*args, **kwargs))

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name, value):
        raise AttributeError("FrozenDict is read-only")

    def __reduce__(self):
        return (FrozenDict, (self._data,))

    def __eq__(self, other):
        if isinstance(other, Mapping):
            return dict(self._data) == dict(other)
        return NotImplemented

    def __hash__(self):
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

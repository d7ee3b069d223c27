"""A read-only mapping that pickles (``types.MappingProxyType`` does not), and typed
frozen records that read as one."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Iterator

__all__ = ["FrozenDict", "RenamedKeysDict", "FrozenRecord"]


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


class RenamedKeysDict(FrozenDict):
    """A :class:`FrozenDict` that still reads keys it renamed: ``renamed`` maps an old key
    to ``(new key, why)``.  Reading the old key returns the new key's value with a
    :class:`DeprecationWarning` naming the new key; the old key is not listed (iteration,
    ``len``, ``dict(...)`` and equality see the new names only)."""

    __slots__ = ("_renamed",)
    _renamed: dict

    def __init__(self, data, renamed) -> None:
        super().__init__(data)
        object.__setattr__(self, "_renamed", dict(renamed))

    def __getitem__(self, key):
        if key not in self._data and key in self._renamed:
            import warnings

            new, why = self._renamed[key]
            warnings.warn(f"parameters[{key!r}] is deprecated and will be removed: read parameters[{new!r}] "
                          f"({why}).", DeprecationWarning, stacklevel=2)
            return self._data[new]
        return self._data[key]

    def __reduce__(self):
        return (RenamedKeysDict, (self._data, self._renamed))

    def __repr__(self) -> str:
        return f"RenamedKeysDict({self._data!r})"


class FrozenRecord(Mapping):
    """Base of a frozen dataclass that also reads as a read-only mapping of its fields.

    A release's typed ``parameters`` (e.g. :class:`privopt.mechanisms.SelectionParameters`)
    subclass it with ``@dataclass(frozen=True, eq=False)``: code reads typed attributes
    (``result.parameters.noise_scale``), users may keep reading keys
    (``result.parameters["noise_scale"]``, ``dict(result.parameters)``).  A field declared
    with ``metadata={"optional": True}`` is a key only when its value is not None (an entry
    present on some releases only).  A subclass's ``_renamed`` maps an old key to ``(new key,
    why)``, read as :class:`RenamedKeysDict` reads it (a :class:`DeprecationWarning`, the
    old key never listed).  Equal to any mapping with the same items; hashable when its
    values are.  A subclass's ``_field_keys`` maps a field to the key it reads as, for a key
    that cannot be a field's name (``{"lambda_": "lambda"}``).
    """

    __slots__ = ()
    _renamed: ClassVar[dict[str, tuple[str, str]]] = {}
    _field_keys: ClassVar[dict[str, str]] = {}

    def _keys(self) -> tuple:
        return tuple(self._field_keys.get(f.name, f.name) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                     if not (f.metadata.get("optional") and getattr(self, f.name) is None))

    def __getitem__(self, key):
        if isinstance(key, str) and key in self._keys():
            fields = {v: k for k, v in self._field_keys.items()}
            return getattr(self, fields.get(key, key))
        if isinstance(key, str) and key in self._renamed:
            import warnings

            new, why = self._renamed[key]
            warnings.warn(f"parameters[{key!r}] is deprecated and will be removed: read parameters[{new!r}] "
                          f"({why}).", DeprecationWarning, stacklevel=2)
            return self[new]
        raise KeyError(key)

    def __iter__(self) -> Iterator:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __eq__(self, other):
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __hash__(self):
        return hash(tuple(self.items()))

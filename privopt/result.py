"""What a private mechanism returns."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

import numpy as np

from ._frozen import FrozenDict, FrozenRecord

__all__ = ["PrivateResult"]

_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True)
class PrivateResult:
    """The output of a privopt mechanism and an account of what it spent.

    Attributes
    ----------
    weights : numpy.ndarray
        The private decision vector: the only part of the result covered by
        the (epsilon, delta) guarantee.
    mechanism : str
        ``"opdisc"``, ``"opsamp"`` or ``"rspm"``.
    epsilon, delta : float
        The privacy spent, for the stated neighbouring relation and under the
        stated assumptions (exact oracle; the Lipschitz constant and bounds
        given are true and public).
    parameters : mapping
        Noise scales and derived quantities under fixed names (OPDisc:
        ``sigma``, ``alpha``, ...); read-only.  Private selection gives a typed
        record that reads as the same mapping
        (:class:`privopt.mechanisms.SelectionParameters`,
        :class:`privopt.mechanisms.MixtureParameters`).
    report : SolveReport or tuple of SolveReport, selection's report, or None
        None unless the mechanism was called with ``keep_report=True``: then
        the diagnostics of the solve(s) or the sampler, the data curator's
        own.  They are computed from the data and the noise and are **not**
        covered by the guarantee: never hand them to an analyst (a call
        charged to a :class:`~privopt.PrivacyLedger`, an analyst's budget,
        refuses ``keep_report=True``).  The scikit-learn estimators keep them
        after ``fit`` only when created with ``keep_report=True``;
        :meth:`without_report` gives a copy without them.
    certified : bool
        True when every oracle call was certified optimal.  False only under
        ``on_failure="return"``; such a result is not covered by the guarantee.
    noise : numpy.ndarray or None
        The noise vector, only when explicitly requested (``return_noise=True``);
        releasing it voids privacy.
    labels : tuple or None
        The labels of the weights, in the order of ``weights``: the index of
        each variable in its component (``"age"`` for ``m.w["age"]``, ``3``
        for ``m.w[3]``) or its name for scalar variables.
        :attr:`weights_by_label` pairs them with the values.
    neighbouring : str
        ``"replace_one"``: the guarantee compares data sets of the same size
        that differ in one record ([NRVW20], Definition 2.5).  Every mechanism
        and baseline in privopt uses this relation.
    """

    weights: np.ndarray
    mechanism: str
    epsilon: float
    delta: float
    parameters: Any = field(default_factory=dict)
    report: Any = None
    certified: bool = True
    noise: np.ndarray | None = None
    neighbouring: str = "replace_one"
    labels: tuple | None = None

    def without_report(self) -> PrivateResult:
        """A copy with ``report`` set to None: the release and its account
        without the solve's data-dependent diagnostics (what privopt's
        estimators keep by default, and what may leave the data curator)."""
        return dataclasses.replace(self, report=None)

    @property
    def weights_by_label(self) -> dict:
        """{label: weight}, in the order of ``weights`` (labels 0..d-1 when none were recorded)."""
        labels = self.labels if self.labels is not None else tuple(range(len(self.weights)))
        return {label: float(w) for label, w in zip(labels, self.weights)}

    def __post_init__(self):
        object.__setattr__(self, "weights", np.asarray(self.weights, dtype=float).copy())
        self.weights.setflags(write=False)
        if not isinstance(self.parameters, (FrozenRecord, FrozenDict)):     # typed records are frozen already
            object.__setattr__(self, "parameters", FrozenDict(self.parameters))
        if self.labels is not None:
            object.__setattr__(self, "labels", tuple(self.labels))
        if self.noise is not None:
            noise = np.asarray(self.noise, dtype=float).copy()
            noise.setflags(write=False)
            object.__setattr__(self, "noise", noise)

    def __setstate__(self, state):
        # numpy arrays come back writeable from pickle: keep them read-only.
        self.__dict__.update(state)
        for name in ("weights", "noise"):
            arr = state.get(name)
            if isinstance(arr, np.ndarray):
                arr.setflags(write=False)

    def __repr__(self) -> str:
        w = np.array2string(self.weights, precision=4, threshold=8)
        extra = "" if self.certified else ", certified=False (NOT covered by the guarantee)"
        return (
            f"PrivateResult(mechanism={self.mechanism!r}, epsilon={self.epsilon:g}, "
            f"delta={self.delta:g}, neighbouring={self.neighbouring!r}, weights={w}{extra})"
        )


def report_wanted(keywords: Mapping[str, Any]) -> bool:
    """Whether a mechanism call with these keywords asked for its report:
    ``keep_report=True``, or ``options=`` a record whose ``keep_report`` is
    True (the keyword, when given, overrides the record).  Anything but True
    (a bool) is no (the call's own checks refuse a value that is not a bool)."""
    if "keep_report" in keywords:
        keep = keywords["keep_report"]
    else:
        keep = getattr(keywords.get("options"), "keep_report", False)
    return isinstance(keep, (bool, np.bool_)) and bool(keep)


def _drop_reports(exc: BaseException) -> None:
    """Set ``report`` to None on ``exc`` and on every exception it was raised
    from or during (``__cause__``, ``__context__``): each may hold a report
    computed from the data."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if getattr(e, "report", None) is not None:
            e.report = None  # type: ignore[attr-defined]
        stack += [e.__cause__, e.__context__]


@contextlib.contextmanager
def reports_kept(keep: bool) -> Iterator[None]:
    """Run a release's body: unless ``keep``, an exception leaving it carries
    no report (nor does any exception it was raised from).  An exception
    raised after the data is read is an output, and its report is computed
    from the data."""
    try:
        yield
    except BaseException as exc:
        if not keep:
            _drop_reports(exc)
        raise


def curator_reports(func: _F) -> _F:
    """Decorate a mechanism: its :class:`PrivateResult` and the exceptions it
    raises carry ``report=None`` unless the call asked for the report
    (``keep_report=True``, :func:`report_wanted`), the data curator's
    diagnostics, computed from the data and not covered by the guarantee."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        keep = report_wanted(kwargs)
        with reports_kept(keep):
            result = func(*args, **kwargs)
        return result if keep or not isinstance(result, PrivateResult) else result.without_report()

    return wrapper  # type: ignore[return-value]


def weight_labels(variables) -> tuple:
    """The label of each weight variable: its index in its component, or its
    name when it has none (a scalar Var)."""
    out = []
    for v in variables:
        index = v.index() if hasattr(v, "index") else None
        out.append(v.name if index is None else index)
    return tuple(out)

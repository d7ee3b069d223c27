"""What a private mechanism returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._frozen import FrozenDict, FrozenRecord

__all__ = ["PrivateResult"]


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
    report : SolveReport or tuple of SolveReport, or None
        Diagnostics of the solve(s).  They depend on the data and the noise
        and are **not** private: keep them with the data curator.  The
        scikit-learn estimators drop them after ``fit`` (``result_.report`` is
        None, so a pickled estimator does not carry them) unless created with
        ``keep_report=True``; :meth:`without_report` gives such a copy.
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


def weight_labels(variables) -> tuple:
    """The label of each weight variable: its index in its component, or its
    name when it has none (a scalar Var)."""
    out = []
    for v in variables:
        index = v.index() if hasattr(v, "index") else None
        out.append(v.name if index is None else index)
    return tuple(out)

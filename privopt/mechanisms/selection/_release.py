"""The release step of private selection: the typed, frozen records a selection returns.

A selection's sampler gives the released point and what its run did; the release step
builds the :class:`privopt.PrivateResult` with its ``parameters`` (a
:class:`SelectionParameters` or :class:`MixtureParameters`: typed fields that also read as
the documented mapping) and its ``report`` (a :class:`SelectionReport` or
:class:`MixtureReport`), each built whole, once, and never changed after.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..._limits import format_count
from ..._frozen import FrozenRecord

__all__ = ["SelectionParameters", "MixtureParameters", "SelectionReport", "MixtureReport", "MixturePart",
           "noise_distribution"]

#: A field that is a key of the mapping view only when it is not None.
_OPTIONAL = {"optional": True}


def noise_distribution(method: str) -> str:
    """The per-point noise of report-noisy-max for ``method``, as ``parameters`` names it."""
    return "Gumbel(0, 1) per point" if method == "exponential" else "Exponential(1) per point"


@dataclass(frozen=True, eq=False)
class SelectionParameters(FrozenRecord):
    """The ``parameters`` of :func:`privopt.exponential_mechanism` (documented there):
    typed fields, also readable as a mapping (``parameters["alpha"]``).  ``sense`` is a key
    on the scored and bounded paths, ``record_terms`` on a user's model scored by
    fix-and-solve with a range to clip into."""

    method: str
    sensitivity: float
    loss_range: tuple
    noise_scale: float
    n_points: int
    alpha: float
    alpha_per_record: float | None
    beta: float
    n_samples: int | None
    dim: int
    norm_bound: float | None
    path: str
    noise_distribution: str
    sense: str | None = field(default=None, metadata=_OPTIONAL)
    record_terms: str | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True, eq=False)
class MixtureParameters(FrozenRecord):
    """The ``parameters`` of :func:`privopt.mixture_selection` (documented there): typed
    fields, also readable as a mapping.  The estimator's warm start, which spends part of
    the budget before the selection, gives a copy (``dataclasses.replace``) with
    ``epsilon_selection``, ``epsilon_warm_start`` and ``warm_start`` (keys only then)."""

    method: str
    resolution: int
    prior: tuple
    log_base_measure: tuple
    sensitivity: float
    loss_range: tuple
    noise_scale: float
    n_points: tuple
    alpha: float
    alpha_per_record: float
    alpha_by_resolution: tuple
    beta: float
    n_samples: int
    dim: int
    norm_bound: float
    path: str
    noise_distribution: str
    epsilon_selection: float | None = field(default=None, metadata=_OPTIONAL)
    epsilon_warm_start: float | None = field(default=None, metadata=_OPTIONAL)
    warm_start: str | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True)
class SelectionReport:
    """Diagnostics of one private selection (NOT private: they depend on the
    data; keep them with the data curator).  Frozen: built once, by the release step.

    Attributes: ``path`` ("topdown", "enumerate", "fix_and_solve" or "bounded"),
    ``solver``, ``n_points`` (|W|), ``wall_time``, ``predicted_time`` (from
    public quantities; NaN where there is none), ``certified_optimal``
    (always True: a release happens only when every loss was exact); on the
    top-down path also ``n_regions`` (supports), ``regions_expanded`` and
    ``points_scored`` (how much of W was scored; the rest was pruned).

    Which path ran and why: ``reason`` (one sentence), ``listing`` (how W was
    listed on the fix-and-solve path: ``"constraints"``, through the declared
    linear constraints on the decision, counted before listing; or
    ``"product"``, the product grid inside the ball, then filtered),
    ``engine`` (how each L(w) was obtained: ``"highs_fixed"``, one HiGHS model
    re-solved warm with the decision's columns fixed; ``"blocks (closed form)"``,
    that model's rows verified to fall apart into choose-one blocks once the decision
    is fixed and every L(w) computed exactly by their closed form, no solve
    (:class:`privopt.solvers.ChooseOneBlocks`); ``"pyomo_persistent"``
    or ``"pyomo"``, Pyomo's ``Var.fix`` and a persistent or fresh solve;
    ``"direct"``, an objective of the decision alone evaluated; ``"enumerate"``
    and ``"topdown"`` on the 0/1-loss models), ``points_scored`` and
    ``solves`` (certified solves; 0 where no solver ran).  On the bounded
    path (``path="bounded"``: A* sampling over prefixes of the decision) also
    ``regions_solved`` (certified LP relaxations solved as bounds) and
    ``regions_expanded`` (regions split), ``listing`` is ``"prefixes"`` and
    ``predicted_time`` is a lower bound from public quantities (the fewest
    region solves any run needs, and one exact solve, timed from the model's
    rows and columns): the work beyond it depends on how tight the bounds are,
    which depends on the data.  ``wall_time`` there includes reading the model
    into the solver.

    A user's model scored by fix-and-solve also has ``record_terms`` (whether each
    record's term was seen and clipped into ``loss_range``, or assumed in it, and why, read
    from the model's structure and n only).  How many terms lay outside the range depends on
    the data and is not reported."""

    path: str
    solver: str
    n_points: int
    wall_time: float
    predicted_time: float
    reason: str = ""
    listing: str | None = None
    engine: str | None = None
    solves: int = 0
    points_scored: int | None = None
    regions_solved: int | None = None
    regions_expanded: int | None = None
    n_regions: int | None = None
    record_terms: str | None = None
    certified_optimal: bool = True

    def __post_init__(self):
        object.__setattr__(self, "n_points", int(self.n_points))
        object.__setattr__(self, "wall_time", float(self.wall_time))
        object.__setattr__(self, "predicted_time", float(self.predicted_time))

    def __repr__(self):
        return (f"{type(self).__name__}(path={self.path!r}, solver={self.solver!r}, "
                f"n_points={format_count(self.n_points)}, "
                f"points_scored={self.points_scored}, solves={self.solves}, engine={self.engine!r}, "
                f"wall_time={self.wall_time:.2f}, predicted_time={self.predicted_time:.3g})")


@dataclass(frozen=True, eq=False)
class MixturePart(FrozenRecord):
    """One W_r of a :func:`privopt.mixture_selection` run (in :attr:`MixtureReport.parts`;
    also readable as a mapping, ``part["won"]``): ``path`` ("topdown" or "enumerate"),
    ``n_points``, ``predicted_time``, ``wall_time``, ``won`` (whether the release came
    from it), on the top-down path ``regions_expanded``, and where W_r is scored by branch
    and bound (:class:`privopt.search.BoundedArgmax`) ``points_scored``."""

    path: str
    n_points: int
    predicted_time: float
    wall_time: float
    won: bool
    regions_expanded: int | None = None
    points_scored: int | None = None


@dataclass(frozen=True, repr=False)
class MixtureReport(SelectionReport):
    """Diagnostics of one :func:`privopt.mixture_selection` (NOT private: they depend
    on the data).  ``path`` is "mixture"; ``n_points`` is the size of the
    union; ``parts`` holds one :class:`MixturePart` per W_r."""

    parts: tuple = ()

    @classmethod
    def of(cls, parts, wall_time: float, predicted_time: float) -> MixtureReport:
        """The report of a run over ``parts`` (:class:`MixturePart`)."""
        parts = tuple(parts)
        return cls("mixture", "enumerate", sum(p.n_points for p in parts), wall_time, predicted_time,
                   parts=parts)


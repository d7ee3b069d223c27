"""How a model is solved, as ONE typed, validated record: :class:`SolveOptions`.

Every public function that solves (``privopt.solvers.solve``,
``privopt.oracle.certified_solve``, the mechanisms) keeps its keyword arguments
(``solver=``, ``time_limit=``, ``threads=``, ...), and validates them into a
:class:`SolveOptions` with :meth:`SolveOptions.from_keywords` (as Pyomo
validates ``solve(model, **kwds)`` into its ``ConfigDict``); the layers below
receive the record, not the list of keywords again.  A record can also be
built once and reused: ``opts = SolveOptions(solver="highs", time_limit=60)``,
then ``privopt.opdisc(model, epsilon=1, delta=1e-6, options=opts)``; keywords
given beside it override its fields (``options=opts, time_limit=10``).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from .._runtime import check_executor, is_local
from .._validation import check_bool, check_choice, check_int, check_keywords
from ..exceptions import ParameterError, ParameterTypeError, SolverOptionError

__all__ = ["SolveOptions", "DEFAULT_ABS_GAP", "ON_FAILURE", "SOLVE_FIELDS", "check_solve_limits",
           "check_solver_options", "parse_keywords", "keyword_signature"]

_Own = TypeVar("_Own")
_F = TypeVar("_F", bound=Callable[..., Any])

#: Absolute gap (objective units) within which incumbent and bound must agree
#: for a solve to count as certified optimal, unless the caller says otherwise.
DEFAULT_ABS_GAP = 1e-6

#: What to do when a solve is not certified optimal (:mod:`privopt.oracle`).
ON_FAILURE = ("raise", "return")


@dataclass(frozen=True)
class SolveOptions:
    """How a model is solved: the one record every layer passes on.

    Validated when built (each field by the project's checker, the error
    naming the field and the fix); frozen, so a record reused across calls
    cannot change between them (``solver_options`` is a copy of the dict
    given).  A function reads the fields it uses and ignores the others (e.g.
    ``progress`` means nothing to :func:`privopt.solvers.solve`); as a
    keyword, a function accepts only the fields it documents.

    Fields
    ------
    solver : str, optional
        A solver name: ``"highs"``, ``"glpk"``, ``"cbc"``, ``"scip"``,
        ``"gurobi"``, ..., ``"enumerate"`` (privopt's exact search over W for
        the 0/1-loss models) or ``"auto"`` (the mechanisms: chosen from the
        model's public sizes).  None: the function's own default (``"highs"``
        for ``solve``, OPDisc, OPSamp and RSPM; ``"auto"`` for private
        selection).  The name is looked up (unknown or not installed:
        :class:`~privopt.exceptions.UnknownSolverError`,
        :class:`~privopt.exceptions.SolverNotAvailableError`) before any
        work, where the solver is resolved.
    time_limit : float, optional
        Seconds per solve (> 0), translated to the solver's own option.
        None: no limit.
    threads : int, optional
        Threads of the solver (>= 1), where it has such an option;
        ``solver="enumerate"`` runs its branch and bound on that many
        processes.  None: the solver's default.
    abs_gap : float
        Absolute gap (>= 0, objective units) within which incumbent and bound
        must agree for a solve to count as certified optimal
        (:func:`privopt.solvers.is_certified`); default :data:`DEFAULT_ABS_GAP`.
    mip_gap : float
        Relative gap the solver may stop at (>= 0; default 0: prove
        optimality).  The mechanisms always ask for 0.
    seed : int, optional
        The solver's own random seed (>= 0), where it has one.  Not the
        privacy noise's seed (that is the mechanisms' ``random_state``).
    solver_options : dict, optional
        Solver-specific options (name -> number, bool or string), passed
        after, and so over, the translated ones; HiGHS's names are checked
        against HiGHS's option table.  ``solve(options={...})`` is the same.
    on_failure : {"raise", "return"}
        An uncertified solve: ``"raise"`` releases nothing and raises
        :class:`~privopt.exceptions.NotCertifiedError`; ``"return"`` warns and
        returns the answer WITHOUT a privacy guarantee (:mod:`privopt.oracle`).
    executor : None, "local", "ray", Executor, dask Client or pool, optional
        Where parallel work runs (OPSamp's oracle calls, the exact oracle's
        branch and bound, private selection's scoring); see each function
        for the executors it takes.  Checked here for its kind.
    progress : bool, optional
        Show a progress bar.  None: the function's own default.
    public_constraints : str, component or sequence of them, optional
        The model's constraints on the decision alone that are fixed before
        the data is seen (``"all"`` declares nothing), a public declaration
        checked against the model by
        :func:`privopt.models.check_public_constraints` when the mechanism
        runs.  A list is kept as a tuple.
    keep_report : bool
        The mechanisms: return the diagnostics of the solve(s) or the sampler
        as ``result.report``, and leave them on an exception raised after the
        data is read (``error.report``).  Default False: ``report`` is None.
        The report is the data curator's diagnostics: it is computed from the
        data (objective, bound, gap, times, the regions and points a sampler
        reached) and is not covered by the guarantee; never hand it to an
        analyst.  A call charged to a :class:`~privopt.PrivacyLedger` (an
        analyst's budget) refuses True, before it reserves anything.

    Not a field: ``random_state`` (the privacy noise: always its own
    argument), an algorithm's own constants (OPSamp's diameters, OPDisc's
    grid, ...: each mechanism's own keywords), and a privacy ledger
    (``ledger=``: the mechanisms' own keyword, charged per release, not a
    property of how a model is solved).
    """

    solver: str | None = None
    time_limit: float | None = None
    threads: int | None = None
    abs_gap: float = DEFAULT_ABS_GAP
    mip_gap: float = 0.0
    seed: int | None = None
    solver_options: dict[str, Any] | None = None
    on_failure: str = "raise"
    executor: object = None
    progress: bool | None = None
    public_constraints: object = None
    keep_report: bool = False

    def __post_init__(self) -> None:
        if self.solver is not None and not isinstance(self.solver, str):
            raise ParameterTypeError(
                f"solver must be a solver name (str), got {type(self.solver).__name__}; e.g. solver='highs'.",
                "solver")
        check_solve_limits(self.time_limit, self.mip_gap, self.abs_gap, self.threads, self.seed)
        if self.solver_options is not None:
            object.__setattr__(self, "solver_options", check_solver_options(self.solver_options))
        check_choice(self.on_failure, "on_failure", ON_FAILURE)
        if self.progress is not None:
            check_bool(self.progress, "progress")
        if not is_local(self.executor):
            check_executor(self.executor)
        check_bool(self.keep_report, "keep_report")
        if isinstance(self.public_constraints, list):
            object.__setattr__(self, "public_constraints", tuple(self.public_constraints))

    @property
    def options(self) -> dict[str, Any]:
        """``solver_options`` as a new dict (empty when None), for a solver call."""
        return dict(self.solver_options or {})

    def solver_or(self, default: str) -> str:
        """``solver``, or the calling function's ``default`` when it is None."""
        return default if self.solver is None else self.solver

    def replace(self, **changes: Any) -> SolveOptions:
        """A new record with ``changes`` (validated again); an unknown field
        name is a TypeError naming it."""
        check_keywords("SolveOptions.replace", changes, SOLVE_FIELDS)
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_keywords(cls, function: str, keywords: Mapping[str, Any], *, options: SolveOptions | None = None,
                      accepts: Collection[str] | None = None) -> SolveOptions:
        """The record of a call ``function(..., options=options, **keywords)``.

        ``keywords`` must all be fields in ``accepts`` (default: every field);
        any other name is a TypeError naming it and the closest valid name,
        as Python's own for an unexpected keyword.  ``options`` (a record, or
        None for the defaults) gives the fields not in ``keywords``.
        """
        check_keywords(function, keywords, SOLVE_FIELDS if accepts is None else accepts)
        if "solver" in keywords and keywords["solver"] is None:   # None is the record's "not given", not a name
            raise ParameterTypeError(
                "solver must be a solver name (str), got NoneType; e.g. solver='highs' (leave it out for the "
                "default).", "solver")
        record = check_options(options, function)
        return record.replace(**keywords) if keywords else record


#: The field names of :class:`SolveOptions`.
SOLVE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SolveOptions))


def check_options(options: object, function: str = "options") -> SolveOptions:
    """``options`` as a record: a :class:`SolveOptions`, or None for the defaults."""
    if options is None:
        return SolveOptions()
    if not isinstance(options, SolveOptions):
        raise ParameterTypeError(
            f"options: {function}() takes options=privopt.SolveOptions(...) (a record of how the model is "
            f"solved), got {type(options).__name__}; pass solver-specific options as solver_options={{...}}.",
            "options")
    return options


def split_keywords(keywords: Mapping[str, Any], names: Iterable[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(the keywords named in names, the others)``, neither modifying ``keywords``."""
    names = frozenset(names)
    return ({k: v for k, v in keywords.items() if k in names},
            {k: v for k, v in keywords.items() if k not in names})


def parse_keywords(function: str, options: SolveOptions | None, keywords: Mapping[str, Any], own: type[_Own],
                   accepts: Collection[str]) -> tuple[SolveOptions, _Own]:
    """The two records of a call ``function(..., options=options, **keywords)``:
    its :class:`SolveOptions` (the ``accepts`` fields among ``keywords``
    override ``options``) and ``own``, the function's own typed record of its
    other keywords (a dataclass whose fields are those keywords, with their
    defaults).  Any other keyword is a TypeError naming it and the closest
    valid name."""
    own_names = [f.name for f in dataclasses.fields(own)]  # type: ignore[arg-type]
    check_keywords(function, keywords, [*own_names, *accepts])
    solve_keywords, own_keywords = split_keywords(keywords, accepts)
    return (SolveOptions.from_keywords(function, solve_keywords, options=options, accepts=accepts),
            own(**own_keywords))


def keyword_signature(own: type, accepts: Collection[str],
                      defaults: Mapping[str, Any] | None = None) -> Callable[[_F], _F]:
    """Decorate a function ``f(..., options=None, **kwargs)`` whose keywords are
    validated by :func:`parse_keywords`: its signature (``help()``,
    ``inspect.signature``, ``@privopt.private``'s check of names) then lists
    every keyword it takes, ``own``'s fields then the ``accepts`` fields of
    :class:`SolveOptions`, with their defaults (``defaults``: the function's
    own, e.g. ``{"solver": "highs"}``, where a field's default is None)."""
    solve_defaults = {f.name: f.default for f in dataclasses.fields(SolveOptions)}
    solve_defaults.update(defaults or {})

    def decorate(func: _F) -> _F:
        signature = inspect.signature(func)
        kept = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        named = [(f.name, f.default) for f in dataclasses.fields(own)]
        named += [(name, solve_defaults[name]) for name in accepts]
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default) for name, default in named]
        func.__signature__ = signature.replace(parameters=[*kept, *extra])  # type: ignore[attr-defined]
        return func

    return decorate


def check_solver_options(options) -> dict:
    """Solver-specific options: a dict of name -> number, bool or string, copied."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise SolverOptionError(
            f"options must be a dict of solver-specific options, got {type(options).__name__}; "
            "e.g. options={'presolve': 'on'}."
        )
    for key, val in options.items():
        if not isinstance(key, str):
            raise SolverOptionError(f"options keys must be option names (str), got {key!r}.")
        if not isinstance(val, (str, numbers.Real)) or isinstance(val, complex):
            raise SolverOptionError(
                f"option {key!r} must be a number, bool or string, got {type(val).__name__}."
            )
    return dict(options)


def check_solve_limits(time_limit, mip_gap, abs_gap, threads, seed) -> None:
    """The uniform limits of a solve, each named in its error."""
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real):
            raise ParameterTypeError("time_limit must be a number of seconds or None.", "time_limit")
        if not (float(time_limit) > 0 and math.isfinite(time_limit)):
            raise ParameterError(f"time_limit must be > 0 seconds, got {time_limit!r}.", "time_limit")
    for name, val in (("mip_gap", mip_gap), ("abs_gap", abs_gap)):
        if isinstance(val, bool) or not isinstance(val, numbers.Real):
            raise ParameterTypeError(f"{name} must be a number >= 0.", name)
        if not (float(val) >= 0 and math.isfinite(val)):
            raise ParameterError(f"{name} must be a finite number >= 0, got {val!r}.", name)
    check_int(threads, "threads", minimum=1, allow_none=True)
    check_int(seed, "seed", minimum=0, allow_none=True)

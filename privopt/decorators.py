"""``@privopt.private``: make an existing model builder return a private result."""

from __future__ import annotations

import difflib
import functools
import inspect

from ._validation import check_delta, check_epsilon
from .exceptions import ParameterError, ParameterTypeError
from ._random import check_random_state
from .ledger import refuse_kept_report, release
from .mechanisms import MECHANISMS, PURE_MECHANISMS, check_solver_ready

__all__ = ["private"]


def _mechanisms():
    return MECHANISMS


def private(mechanism: str = "opdisc", **kwargs):
    """Decorate a function that builds a Pyomo loss model.

    ``@privopt.private("opdisc", epsilon=1.0, delta=1e-6, norm_bound=2)`` on
    ``def build(X, y) -> ConcreteModel`` gives ``build(X, y) -> PrivateResult``:
    each call builds the model and runs the mechanism on it with ``kwargs``
    (``weights`` may be a component name such as ``"w"``, since the model does
    not exist yet).  The undecorated builder stays available as
    ``decorated.builder``.

    The mechanism name, the argument names, the privacy parameters (delta is
    required except for RSPM) and the solver name are checked when
    decorating, the rest when the mechanism runs (always before any solve).  An int
    ``random_state`` seeds one generator at decoration time: the sequence of
    calls is reproducible and no two calls share noise.

    ``ledger=`` (a :class:`privopt.PrivacyLedger`), or an enclosing ``with
    ledger:`` block, charges each call one release of its (epsilon, delta)
    before the builder runs (so before the builder reads the data); such a
    call refuses ``keep_report=True`` before it reserves anything (the report
    is the data curator's diagnostics, computed from the data).
    """
    mechanisms = _mechanisms()
    if not isinstance(mechanism, str):
        raise ParameterTypeError("mechanism must be a name such as 'opdisc'.", "mechanism")
    if mechanism not in mechanisms:
        raise ParameterError(
            f"mechanism must be one of {sorted(mechanisms)}, got {mechanism!r}.", "mechanism")
    run = mechanisms[mechanism]

    fixed = run.keywords if isinstance(run, functools.partial) else {}  # e.g. method= of "exponential"
    accepted = [name for name in inspect.signature(run).parameters if name != "model" and name not in fixed]
    for key in kwargs:
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ParameterError(f"{key}: privopt.{mechanism} takes no argument {key!r}.{hint}", key)
    if "epsilon" not in kwargs:
        raise ParameterError("epsilon: @private needs epsilon=...", "epsilon")
    check_epsilon(kwargs["epsilon"])
    if mechanism not in PURE_MECHANISMS and kwargs.get("delta") is None:
        raise ParameterError(f"delta: @private('{mechanism}', ...) needs delta=... (e.g. 1/n^2).", "delta")
    if "delta" in kwargs and kwargs["delta"] is not None:
        check_delta(kwargs["delta"], allow_zero=(mechanism == "rspm"))
    solver = kwargs.get("solver")
    if solver is not None and not (isinstance(solver, str) and solver.strip().lower() == "auto"):
        check_solver_ready(solver)
    if "random_state" in kwargs and kwargs["random_state"] is not None:
        # An int seed becomes ONE generator here, so that successive calls of the
        # decorated builder draw fresh (reproducible) noise instead of reusing the
        # same noise on different data.

        kwargs["random_state"] = check_random_state(kwargs["random_state"])
    ledger = kwargs.pop("ledger", None)
    spend = (float(kwargs["epsilon"]), 0.0 if mechanism in PURE_MECHANISMS else float(kwargs["delta"]))

    def decorator(builder):
        if not callable(builder):
            raise ParameterTypeError("@private decorates a function that returns a Pyomo model.", "builder")

        @functools.wraps(builder)
        def wrapper(*args, **kw):
            what = f"@private {getattr(builder, '__name__', 'builder')}"
            with release(what, mechanism, lambda: spend, ledger=ledger,
                         check=lambda: refuse_kept_report(what, kwargs)):
                model = builder(*args, **kw)
                return run(model, **kwargs)

        wrapper.builder = builder
        wrapper.mechanism = mechanism
        return wrapper

    return decorator

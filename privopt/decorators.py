"""``@privopt.private``: make an existing model builder return a private result."""

from __future__ import annotations

import functools

from ._validation import check_delta, check_epsilon
from .exceptions import ParameterError, ParameterTypeError

__all__ = ["private"]


def _mechanisms():
    from .mechanisms import MECHANISMS

    return MECHANISMS


def private(mechanism: str = "opdisc", **kwargs):
    """Decorate a function that builds a Pyomo loss model.

    ``@privopt.private("opdisc", epsilon=1.0, delta=1e-6, norm_bound=2)`` on
    ``def build(X, y) -> ConcreteModel`` gives ``build(X, y) -> PrivateResult``:
    each call builds the model and runs the mechanism on it with ``kwargs``
    (``weights`` may be a component name such as ``"w"``, since the model does
    not exist yet).  The undecorated builder stays available as
    ``decorated.builder``.

    The mechanism name and the privacy parameters are checked when decorating,
    the rest when the mechanism runs (always before any solve).  An int
    ``random_state`` seeds one generator at decoration time: the sequence of
    calls is reproducible and no two calls share noise.
    """
    mechanisms = _mechanisms()
    if not isinstance(mechanism, str):
        raise ParameterTypeError("mechanism must be a name such as 'opdisc'.", "mechanism")
    if mechanism not in mechanisms:
        raise ParameterError(
            f"mechanism must be one of {sorted(mechanisms)}, got {mechanism!r}.", "mechanism")
    if "epsilon" not in kwargs:
        raise ParameterError("epsilon: @private needs epsilon=...", "epsilon")
    check_epsilon(kwargs["epsilon"])
    if "delta" in kwargs and kwargs["delta"] is not None:
        check_delta(kwargs["delta"], allow_zero=(mechanism == "rspm"))
    run = mechanisms[mechanism]
    if "random_state" in kwargs and kwargs["random_state"] is not None:
        # An int seed becomes ONE generator here, so that successive calls of the
        # decorated builder draw fresh (reproducible) noise instead of reusing the
        # same noise on different data.
        from ._random import check_random_state

        kwargs["random_state"] = check_random_state(kwargs["random_state"])

    def decorator(builder):
        if not callable(builder):
            raise ParameterTypeError("@private decorates a function that returns a Pyomo model.", "builder")

        @functools.wraps(builder)
        def wrapper(*args, **kw):
            model = builder(*args, **kw)
            return run(model, **kwargs)

        wrapper.builder = builder
        wrapper.mechanism = mechanism
        return wrapper

    return decorator

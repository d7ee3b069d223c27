"""Running an audit: sample the mechanism on both neighbours, then bound epsilon."""

from __future__ import annotations

import time

import numpy as np

from .._random import check_random_state, spawn
from .._validation import check_choice, check_int
from ..exceptions import ParameterError, ParameterTypeError
from ._stats import estimate_epsilon
from ._targets import AuditTarget

__all__ = ["sample_outputs", "audit"]

ORACLES = ("enumerate", "solver")

#: Runs per vectorized batch of the enumeration oracle (bounds memory).
_CHUNK = 20_000


def _check_target(target):
    if not isinstance(target, AuditTarget):
        raise ParameterTypeError("target must be an audit target (OPDiscTarget, OPSampTarget, RSPMTarget).",
                                 "target")
    return target


def sample_outputs(target, which: int, n_runs: int, *, oracle: str = "enumerate", random_state=None,
                   seeds=None) -> np.ndarray:
    """``n_runs`` independent outputs of ``target``'s mechanism on D
    (``which=0``) or D' (``which=1``), shape (n_runs, d).

    ``oracle="enumerate"`` draws the noise of all runs from ``random_state``
    in batches (the mechanism's own draw function with ``size=``) and takes
    the exact argmin by enumeration.  ``oracle="solver"`` runs the real
    mechanism once per run, each with its own child generator spawned from
    ``random_state``.

    ``seeds``: a sequence of per-run seeds (ints or SeedSequences).  Then run
    i uses ``numpy.random.default_rng(seeds[i])`` on either path -- the noise
    is drawn exactly as the mechanism draws it in one call -- so the two
    oracles can be compared run by run.
    """
    target = _check_target(target)
    oracle = check_choice(oracle, "oracle", ORACLES)
    if which not in (0, 1):
        raise ParameterError("which must be 0 (D) or 1 (D').", "which")
    if seeds is not None:
        gens = [np.random.default_rng(s) for s in seeds]
        if oracle == "solver":
            return np.array([target.run_mechanism(which, g) for g in gens], dtype=float).reshape(len(gens), -1)
        noise = target.stack_noise([target.draw_noise(g) for g in gens])
        return target.outputs_from_noise(which, noise)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    rng = check_random_state(random_state)
    if oracle == "solver":
        return np.array([target.run_mechanism(which, g) for g in spawn(rng, n_runs)],
                        dtype=float).reshape(n_runs, -1)
    parts = []
    done = 0
    while done < n_runs:
        size = min(_CHUNK, n_runs - done)
        parts.append(target.outputs_from_noise(which, target.draw_noise(rng, size=size)))
        done += size
    return np.vstack(parts)


def audit(target, *, n_samples: int = 100_000, oracle: str = "enumerate", confidence: float = 0.95,
          selection: str = "split", bins=None, random_state=None, selection_fraction: float = 0.5):
    """Empirical privacy audit of one mechanism on one pair of neighbours.

    Runs the mechanism ``n_samples`` times on D and ``n_samples`` times on D'
    (independent noise: the two data sets get distinct child generators of
    ``random_state``) and returns :func:`~privopt.audit.estimate_epsilon`'s
    :class:`~privopt.audit.AuditResult`: a lower confidence bound on the
    mechanism's epsilon at its delta.  ``result.violation`` is True when the
    bound exceeds the claimed epsilon.

    ``bins``: for continuous outputs, the target's default (10 quantile
    buckets) unless given.  ``oracle``: see :func:`sample_outputs`.
    ``selection_fraction``: with ``selection="split"``, the share of each data
    set's runs that chooses the event; the rest counts it (a small discrete
    support needs few runs to choose, so more of a fixed number can count).
    """
    target = _check_target(target)
    oracle = check_choice(oracle, "oracle", ORACLES)
    n_samples = check_int(n_samples, "n_samples", minimum=2)
    rng = check_random_state(random_state)
    rng_a, rng_b = spawn(rng, 2)
    start = time.perf_counter()
    out_a = sample_outputs(target, 0, n_samples, oracle=oracle, random_state=rng_a)
    out_b = sample_outputs(target, 1, n_samples, oracle=oracle, random_state=rng_b)
    seconds = time.perf_counter() - start
    meta = {**target.describe(), "oracle": oracle, "seconds": seconds}
    return estimate_epsilon(
        out_a, out_b, delta=target.delta, claimed_epsilon=target.epsilon, confidence=confidence,
        selection=selection, bins=target.bins if bins is None else bins,
        support=target.support, selection_fraction=selection_fraction, metadata=meta)

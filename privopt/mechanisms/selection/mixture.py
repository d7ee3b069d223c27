r"""Private selection over several W's at once, with a public base measure.

A finer W (more weight values, a larger ball, finer feature levels) holds
better points but costs ln |W| in the utility bound of private selection; which
one pays depends on the data and the budget, which are not known when W is
fixed.  :func:`mixture_selection` lets the data decide, privately: it releases
a point of the disjoint union of W_1..W_R (one 0/1-loss halfspace model per
resolution, all on the same records) with probability proportional to

    mu(r, w) exp(-epsilon L_r(D, w) / (2 Delta)),    mu(r, w) = pi_r / |W_r|,

the exponential mechanism with a public base measure [MT07] (``method=
"exponential"``), or permute-and-flip over the union with the public utility
offset (2 Delta / epsilon) ln mu(r, w) (``method="permute_and_flip"``, the
default, as for :func:`privopt.exponential_mechanism`) [MS20, DKSSWXZ21].
Both are pure epsilon-DP; with probability 1 - beta the released point's loss
is within (2 Delta / epsilon)(ln |W_r| + ln(1/pi_r) + ln(1/beta)) of the best
point of every W_r (:mod:`privopt.calibration._selection`, eqs. (5)-(6)).

Sampled exactly: report-noisy-max over the union is the largest of the R
per-resolution maxima of -L_r / s + ln mu(r, .) + Z, each drawn with its own
independent noise by the top-down sampler of :mod:`privopt.search._topdown`
(or, where a W_r cannot be split by support, by scoring each of its points
once).  The best total found so far is passed down as a floor, so regions of
a later W_r that cannot beat it are never scored; the keys drawn do not depend
on the floor, so the released (r, w) has exactly the law above.

[MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
[MS20] McKenna, Sheldon. Permute-and-flip. NeurIPS 2020.
[DKSSWXZ21] Ding et al. The permute-and-flip mechanism is identical to
       report-noisy-max with exponential noise. arXiv:2105.07260.
[MTM14] Maddison, Tarlow, Minka. A* sampling. NeurIPS 2014.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._random import check_random_state
from ..._validation import check_epsilon, check_probability
from ...calibration import (
    base_measure_log_weights,
    check_prior,
    check_selection_method,
    mixture_utility_bound,
    selection_noise_scale,
)
from ...exceptions import ModelError, NotCertifiedError, ParameterError, ParameterTypeError
from ...models import ENUMERATION_ATTR, Asked, ZeroOneLoss, check_model_contract, get_info
from ...perturbation import weights_of
from ...ledger import charges
from ...result import PrivateResult, curator_reports, weight_labels
from ...search import BoundedArgmax  # noqa: F401  (W_r's branch and bound, found here as mixture.BoundedArgmax)
from ...solvers import SolveOptions, check_unchanged, keyword_signature, parse_keywords
from .._checks import decision_bounds
from ._plan import PROGRESS_AFTER, SelectionPlan, check_time_limit, plan_halfspace
from ._release import MixtureParameters, MixturePart, MixtureReport, noise_distribution
from .exponential import topdown_problem

__all__ = ["mixture_selection", "MixtureReport"]

def _halfspace_data(model, index):
    """The halfspace data of ``models[index]``: a :class:`privopt.models.ZeroOneLoss`'s,
    or a zero_one_halfspace model's (refused if changed since it was built)."""
    if isinstance(model, ZeroOneLoss):
        return model.data
    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        raise ModelError(
            f"models[{index}]: mixture_selection takes privopt's 0/1-loss halfspace models "
            "(privopt.models.zero_one_halfspace or zero_one_loss), one per W; for a user's model use "
            "privopt.exponential_mechanism on one W.", "models")
    check_unchanged(model, data, None)
    return data


@dataclass(frozen=True)
class _Models:
    """The R >= 2 models of a call, each with privopt's ModelInfo (``infos``), all on the
    same ``n_samples`` records with the same ``loss_range``."""

    models: list
    infos: list
    n_samples: int
    loss_range: tuple


def _check_models(models) -> _Models:
    """The models of a call, checked (:class:`_Models`)."""
    if isinstance(models, (str, bytes)) or not hasattr(models, "__len__"):
        raise ParameterTypeError("models must be a sequence of 0/1-loss halfspace models, one per W.", "models")
    models = list(models)
    if len(models) < 2:
        raise ParameterError(f"models: give at least two W's to choose among (got {len(models)}); for one W "
                             "use privopt.exponential_mechanism.", "models")
    infos, ns, ranges = [], set(), set()
    for m in models:
        info = m.info if isinstance(m, ZeroOneLoss) else get_info(m)
        if info is None or info.n_samples is None or info.loss_range is None:
            raise ModelError("models: each must carry privopt's ModelInfo with n_samples and loss_range "
                             "(the 0/1-loss halfspace models do).", "models")
        infos.append(info)
        ns.add(int(info.n_samples))
        ranges.add(tuple(float(v) for v in info.loss_range))
    if len(ns) != 1 or len(ranges) != 1:
        raise ModelError(f"models: they must score the same records with the same loss range (n_samples "
                         f"{sorted(ns)}, loss_range {sorted(ranges)}); the sensitivity of the union is "
                         "that of one record's loss in every W.", "models")
    return _Models(models, infos, ns.pop(), ranges.pop())


def _check_public(model, info, index):
    """W of ``models[index]`` shaped by public constraints only.  A
    :class:`privopt.models.ZeroOneLoss` has no constraint but its grid and ball
    (privopt's builder, from its public arguments): nothing to check."""
    if not isinstance(model, ZeroOneLoss):
        check_model_contract(model, weights_of(model, None, default_name=info.weights or "w"), None, info,
                             f"Mixture selection (models[{index}])", n_samples=info.n_samples,
                             asked=Asked(**decision_bounds(None, info)))


@dataclass(frozen=True)
class _Part:
    """One W_r: its model's labels and its plan (how it is sampled, its predicted time and
    W_r itself, ``plan.w``, with the model's halfspace data:
    :func:`privopt.mechanisms.selection._plan.plan_halfspace`)."""

    index: int
    labels: tuple
    plan: SelectionPlan


def _part(model, index, n_public, max_points, executor, method) -> _Part:
    """W_r of ``models[index]``, planned: top down where it splits by support, else every
    point scored (by branch and bound where it applies)."""
    data = _halfspace_data(model, index)
    labels = (model.labels if isinstance(model, ZeroOneLoss)
              else weight_labels(weights_of(model, None, default_name="w")))
    plan = plan_halfspace(data, topdown_problem(data, None), n_public=n_public, executor=executor,
                          max_points=max_points, single=False, desc=f"privopt {method} W_{index + 1}")
    return _Part(index, tuple(labels), plan)


@dataclass(frozen=True)
class _Keywords:
    """mixture_selection's own keywords (each documented there); where and how long it
    runs is the :class:`~privopt.solvers.SolveOptions` beside it."""

    prior: Any = None
    method: str = "permute_and_flip"
    beta: float = 0.05
    max_points: int | None = None


#: The fields of :class:`~privopt.solvers.SolveOptions` mixture_selection takes as keywords.
MIXTURE_OPTIONS = ("time_limit", "progress", "executor", "keep_report")


def _public(models, *, epsilon, random_state=None, options=None, **kwargs) -> None:
    """The mixture's checks of its scalar arguments, reading nothing of the models:
    run before a ledger reserves the call (:func:`privopt.ledger.charges`), and again
    by :func:`mixture_selection` itself."""
    _, own = parse_keywords("mixture_selection", options, kwargs, _Keywords, MIXTURE_OPTIONS)
    check_epsilon(epsilon)
    check_selection_method(own.method)
    check_probability(own.beta, "beta")


@charges("mixture_selection", pure=True, check=_public)
@curator_reports
@keyword_signature(_Keywords, MIXTURE_OPTIONS)
def mixture_selection(models, *, epsilon: float, random_state=None, options: SolveOptions | None = None,
                      **kwargs) -> PrivateResult:
    r"""Release a point of one of several W's, with a public base measure:
    pure epsilon-DP, no delta (module docstring).

    Parameters
    ----------
    models : sequence of pyomo ConcreteModel or ZeroOneLoss
        R >= 2 models of :func:`privopt.models.zero_one_halfspace` on the same
        n records (each may discretize the features and bound the weights its
        own way: W_r is its grid and ball), or the same as
        :class:`privopt.models.ZeroOneLoss` records of
        :func:`privopt.models.zero_one_loss` (no MILP is built: selection
        reads the halfspace data only; the two may be mixed).  They must be
        built before the data is seen in every respect but the records: which
        resolutions to offer is public.  Never modified.
    epsilon : float
        Privacy budget (> 0) of the whole release.
    random_state : None, int or numpy Generator
        ``None``: the operating system's secure source.  A seed is
        reproducible and **not private** when known.
    options : privopt.SolveOptions, optional
        ``time_limit``, ``progress`` and ``executor`` as one record (a keyword
        given beside it overrides its field); any other keyword is a TypeError
        naming it.

    Other Parameters
    ----------------
    prior : sequence of R positive weights, optional
        pi_r, normalized to sum to 1; default uniform.  Public.
    method : {"permute_and_flip", "exponential"}
    beta : float
        Failure probability of the utility bounds in ``parameters["alpha"]``.
    time_limit : float, optional
        Seconds; a sampling predicted (from public quantities) to take
        longer is refused before any work.
    max_points : int, optional
        The largest W_r scored point by point (where the split by support does
        not apply); default as in :func:`privopt.exponential_mechanism`.
    progress : bool, optional
    executor : as in :func:`privopt.exponential_mechanism` (the top-down
        parts only).
    keep_report : bool, default False
        Return the report (below), the data curator's diagnostics, as in
        :func:`privopt.exponential_mechanism` (refused under a ledger).

    Returns
    -------
    PrivateResult
        ``weights`` are those of the released W_r's model;
        ``parameters["resolution"]`` is r (0-based index into ``models``),
        ``prior`` the pi_r, ``log_base_measure`` the ln mu(r, .),
        ``n_points`` the |W_r|, ``alpha`` (and ``alpha_per_record``) the
        bound (6) against the best point of the first W,
        ``alpha_by_resolution`` against each W_r's, ``noise_scale``
        s = 2 Delta / epsilon; ``report`` is a
        :class:`MixtureReport` (not private), only with ``keep_report=True``
        (else None).

    References: [MT07], [MS20], [DKSSWXZ21], [MTM14] (module docstring).
    """
    opts, own = parse_keywords("mixture_selection", options, kwargs, _Keywords, MIXTURE_OPTIONS)
    epsilon = check_epsilon(epsilon)
    method = check_selection_method(own.method)
    beta = check_probability(own.beta, "beta")
    max_points, time_limit, executor = own.max_points, opts.time_limit, opts.executor
    checked = _check_models(models)
    models, infos, n, (lo, hi) = checked.models, checked.infos, checked.n_samples, checked.loss_range
    sensitivity = hi - lo
    pis = check_prior(own.prior, len(models))
    for i, (m, info) in enumerate(zip(models, infos)):
        _check_public(m, info, i)
    parts = [_part(m, i, n, max_points, executor, method) for i, m in enumerate(models)]
    for p in parts:
        if p.plan.w.n_points < 1:
            raise ModelError(f"models[{p.index}]: its W is empty.", "models")
    sizes = [p.plan.w.n_points for p in parts]
    if sum(sizes) < 2:
        raise ModelError("models: the union of the W's has a single point; there is nothing to select.", "models")
    predicted = sum(p.plan.seconds for p in parts)
    check_time_limit(predicted, time_limit,
                     f"sampling the {len(parts)} W's ({', '.join(f'{m:,}' for m in sizes)} points) is predicted to "
                     f"take about {predicted:,.0f} s", "Raise time_limit or offer fewer or smaller W's.")
    scale = selection_noise_scale(epsilon, sensitivity)
    log_mu = base_measure_log_weights(pis, sizes)
    start = time.perf_counter()
    best, draws = _sample_union(parts, log_mu, check_random_state(random_state), method, scale, time_limit=time_limit,
                                progress=predicted > PROGRESS_AFTER if opts.progress is None else opts.progress)
    wall = time.perf_counter() - start
    r, w = best
    chosen = parts[r]
    alpha = [mixture_utility_bound(epsilon, sensitivity, m, float(pi), beta) for m, pi in zip(sizes, pis)]
    parameters = MixtureParameters(
        method=method, resolution=r, prior=tuple(float(x) for x in pis),
        log_base_measure=tuple(float(x) for x in log_mu), sensitivity=sensitivity, loss_range=(lo, hi),
        noise_scale=scale, n_points=tuple(sizes), alpha=alpha[0], alpha_per_record=alpha[0] / n,
        alpha_by_resolution=tuple(alpha), beta=beta, n_samples=n, dim=len(chosen.labels),
        norm_bound=float(chosen.plan.w.halfspace.norm_bound), path="mixture",
        noise_distribution=noise_distribution(method))
    report = MixtureReport.of([MixturePart(p.plan.path, p.plan.w.n_points, p.plan.predicted_time, d.wall_time,
                                           p.index == r, regions_expanded=d.regions_expanded,
                                           points_scored=d.points_scored)
                               for p, d in zip(parts, draws)], wall, predicted)
    return PrivateResult(labels=chosen.labels, weights=np.asarray(w, dtype=float) + 0.0,
                         mechanism=method, epsilon=epsilon, delta=0.0, parameters=parameters, report=report,
                         certified=True)


def _sample_union(parts, log_mu, rng, method, scale, *, time_limit, progress):
    """Report-noisy-max over the union: key(r, w) = -L_r(w)/s + ln mu(r, .) + Z, W_r in turn
    (each with fresh noise from ``rng``), each with the best total so far as its floor
    (translated into its own key units).  Returns ``((r, w), draws)``, one
    :class:`~privopt.mechanisms.selection._samplers.Draw` per W_r."""
    start = time.perf_counter()
    best_total, best = -math.inf, None
    draws = []
    for p in parts:
        floor: float | None = None if best is None else float(best_total - log_mu[p.index])
        draw = p.plan.sampler.sample(rng, method, scale, floor, progress=progress)
        draws.append(draw)
        if draw.key is not None and draw.key + log_mu[p.index] > best_total:
            best_total, best = draw.key + log_mu[p.index], (p.index, draw.point)
        if time_limit is not None and time.perf_counter() - start > time_limit and p is not parts[-1]:
            raise NotCertifiedError(
                f"time_limit: {time_limit:g} s ran out before the {len(parts)} W's were sampled (the "
                "prediction was too optimistic for this machine); nothing is released. Raise time_limit "
                "or offer fewer W's.", None)        # how many were done depends on the data: not said
    assert best is not None      # the first W has no floor, so it always gives a candidate
    return best, draws

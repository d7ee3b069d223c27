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

import numpy as np

from .._random import check_random_state
from .._validation import check_bool, check_epsilon, check_positive, check_probability
from ..calibration import (
    base_measure_log_weights,
    check_prior,
    check_selection_method,
    mixture_utility_bound,
    selection_noise_scale,
)
from ..exceptions import ModelError, NotCertifiedError, ParameterError, ParameterTypeError
from ..models import ENUMERATION_ATTR, ZeroOneLoss, check_public_constraints, get_info
from ..perturbation import weights_of
from ..ledger import charges
from ..result import PrivateResult, weight_labels
from ..search import KeyedStreams, sample_top_down
from ..solvers import BoundedArgmax, check_unchanged
from ._evaluate import HalfspaceEvaluator
from ._noise import draw_selection_noise
from ._release import MixtureParameters, MixturePart, MixtureReport, noise_distribution
from .selection import _workers_for, selection_keys, topdown_problem

__all__ = ["mixture_selection", "MixtureReport"]

#: A floor candidate's tie-break fields: after every real candidate.
_FAR = 2 ** 62


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


def _check_public(model, info, index):
    """W of ``models[index]`` shaped by public constraints only.  A
    :class:`privopt.models.ZeroOneLoss` has no constraint but its grid and ball
    (privopt's builder, from its public arguments): nothing to check."""
    if not isinstance(model, ZeroOneLoss):
        check_public_constraints(model, weights_of(model, None, default_name=info.weights or "w"), None, info,
                                 f"Mixture selection (models[{index}])")


class _Part:
    """One W_r: its model, how it is sampled, its size and predicted time."""

    def __init__(self, model, index, n_public, max_points):
        data = _halfspace_data(model, index)
        self.model, self.data, self.index = model, data, index
        self.labels = (model.labels if isinstance(model, ZeroOneLoss)
                       else weight_labels(weights_of(model, None, default_name="w")))
        self.problem = topdown_problem(data, None)
        if self.problem is not None:
            self.path = "topdown"
            self.n_points = int(self.problem.n_points)
            self.predicted = float(self.problem.predicted_seconds(n_public))
            self.scorer, self.argmax = None, None
        else:
            self.path = "enumerate"
            self.scorer = HalfspaceEvaluator(None, data, max_points=max_points)
            self.n_points = int(self.scorer.n_points)
            self.predicted = float(self.scorer.predicted_seconds(n_public))
            # its noise is held whole (8 bytes a point, within the scorer's max_points)
            self.argmax = BoundedArgmax.of(data, self.scorer.coef, self.scorer.bound)

    def best(self, rng, method, scale, floor, executor, progress):
        """The best key ``(key, w)`` of report-noisy-max over W_r (keys
        -L_r / scale + noise, fresh independent noise), or None when none is
        above ``floor`` (a key in this W_r's units; None: no floor)."""
        if self.problem is not None:
            streams = KeyedStreams(rng)      # a fresh secret: independent of the other W's
            fl = None if floor is None else (float(floor), _FAR, _FAR, _FAR)
            out, expanded, _ = sample_top_down(self.problem, streams, method, scale, executor=executor,
                                               predicted=self.predicted, progress=progress,
                                               desc=f"privopt {method} W_{self.index + 1}", floor=fl)
            self.expanded = expanded
            if out is None:
                return None
            return out[0], self.problem.decode(out[1], out[2]) + 0.0
        if self.argmax is not None:
            return self._best_bounded(rng, method, scale, floor)
        return self._best_by_blocks(rng, method, scale, floor)

    def _best_bounded(self, rng, method, scale, floor):
        """:meth:`best` by branch and bound over W_r's enumeration (:class:`privopt.solvers.BoundedArgmax`):
        all of W_r's noise drawn in one call, the same numbers as block by block (a seeded generator's
        stream does not depend on how it is cut; the secure generator's draws are i.i.d.), so the same
        key and point as :meth:`_best_by_blocks` with fewer points scored."""
        noise = draw_selection_noise(rng, method, self.n_points)
        found = self.argmax.best(noise, scale, floor)
        self.points_scored, self.nodes_bounded = found.points_scored, found.nodes_bounded
        return None if found.point is None else (found.key, found.point + 0.0)

    def _best_by_blocks(self, rng, method, scale, floor):
        """:meth:`best` by scoring every point of W_r, block by block, the noise drawn per block."""
        best_key, best_w = -math.inf, None
        for pts, losses in self.scorer.blocks():
            keys = selection_keys(np.asarray(losses, dtype=float), scale, method, rng)
            k = int(np.argmax(keys))
            if keys[k] > best_key:
                best_key, best_w = float(keys[k]), np.array(pts[k], dtype=float)
        if floor is not None and best_key <= floor:
            return None
        return best_key, best_w + 0.0


@charges("mixture_selection", pure=True)
def mixture_selection(
    models,
    *,
    epsilon: float,
    prior=None,
    method: str = "permute_and_flip",
    beta: float = 0.05,
    time_limit: float | None = None,
    max_points: int | None = None,
    random_state=None,
    progress: bool | None = None,
    executor=None,
) -> PrivateResult:
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
    random_state : None, int or numpy Generator
        ``None``: the operating system's secure source.  A seed is
        reproducible and **not private** when known.
    progress : bool, optional
    executor : as in :func:`privopt.exponential_mechanism` (the top-down
        parts only).

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
        :class:`MixtureReport` (not private).

    References: [MT07], [MS20], [DKSSWXZ21], [MTM14] (module docstring).
    """
    epsilon = check_epsilon(epsilon)
    method = check_selection_method(method)
    beta = check_probability(beta, "beta")
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")
    if progress is not None:
        progress = check_bool(progress, "progress")
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
    n = ns.pop()
    lo, hi = ranges.pop()
    sensitivity = hi - lo
    pis = check_prior(prior, len(models))
    for i, (m, info) in enumerate(zip(models, infos)):
        _check_public(m, info, i)
    parts = [_Part(m, i, n, max_points) for i, m in enumerate(models)]
    for p in parts:
        if p.n_points < 1:
            raise ModelError(f"models[{p.index}]: its W is empty.", "models")
    sizes = [p.n_points for p in parts]
    if sum(sizes) < 2:
        raise ModelError("models: the union of the W's has a single point; there is nothing to select.", "models")
    predicted = sum(p.predicted / (_workers_for(executor, p.predicted) if p.path == "topdown" else 1)
                    for p in parts)
    if time_limit is not None and predicted > time_limit:
        raise ParameterError(
            f"time_limit: sampling the {len(parts)} W's ({', '.join(f'{m:,}' for m in sizes)} points) is "
            f"predicted to take about {predicted:,.0f} s, more than time_limit={time_limit:g} s. Raise "
            "time_limit or offer fewer or smaller W's.", "time_limit")

    scale = selection_noise_scale(epsilon, sensitivity)
    log_mu = base_measure_log_weights(pis, sizes)
    rng = check_random_state(random_state)
    if progress is None:
        progress = predicted > 10.0
    # report-noisy-max over the union: key(r, w) = -L_r(w)/s + ln mu(r, .) + Z; W_r in turn, each with the
    # best total so far as its floor (translated into its own key units)
    start = time.perf_counter()
    best_total, best = -math.inf, None
    walls = []
    for p in parts:
        t0 = time.perf_counter()
        floor: float | None = None if best is None else float(best_total - log_mu[p.index])
        cand = p.best(rng, method, scale, floor, executor, progress)
        walls.append(time.perf_counter() - t0)
        if cand is not None and cand[0] + log_mu[p.index] > best_total:
            best_total, best = cand[0] + log_mu[p.index], (p.index, cand[1])
        if time_limit is not None and time.perf_counter() - start > time_limit and p is not parts[-1]:
            raise NotCertifiedError(
                f"time_limit: {time_limit:g} s ran out after {p.index + 1} of {len(parts)} W's (the "
                "prediction was too optimistic for this machine); nothing is released. Raise time_limit "
                "or offer fewer W's.", None)
    wall = time.perf_counter() - start
    assert best is not None      # the first W has no floor, so it always gives a candidate
    r, w = best
    chosen = parts[r]
    alpha = [mixture_utility_bound(epsilon, sensitivity, m, float(pi), beta) for m, pi in zip(sizes, pis)]
    parameters = MixtureParameters(
        method=method, resolution=r, prior=tuple(float(x) for x in pis),
        log_base_measure=tuple(float(x) for x in log_mu), sensitivity=sensitivity, loss_range=(lo, hi),
        noise_scale=scale, n_points=tuple(sizes), alpha=alpha[0], alpha_per_record=alpha[0] / n,
        alpha_by_resolution=tuple(alpha), beta=beta, n_samples=n, dim=len(chosen.labels),
        norm_bound=float(chosen.data.norm_bound), path="mixture", noise_distribution=noise_distribution(method))
    report = MixtureReport.of([MixturePart(p.path, p.n_points, p.predicted, t, p.index == r,
                                           regions_expanded=getattr(p, "expanded", None),
                                           points_scored=getattr(p, "points_scored", None))
                               for p, t in zip(parts, walls)], wall, predicted)
    return PrivateResult(labels=chosen.labels, weights=np.asarray(w, dtype=float) + 0.0,
                         mechanism=method, epsilon=epsilon, delta=0.0, parameters=parameters, report=report,
                         certified=True)

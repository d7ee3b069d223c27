r"""Exact report-noisy-max over a W too large to score point by point.

Private selection releases ``argmax_w  -L(w)/s + Z_w`` with Z_w i.i.d.
standard Gumbel (the exponential mechanism [MT07], by the Gumbel-max
identity) or Exponential(1) (permute-and-flip [MS20], by [DKSSWXZ21]),
s = 2 Delta / epsilon.  Drawing one Z per point costs |W| draws.  This module
draws the same joint distribution top down, so that whole regions of W whose
best possible key cannot win are never scored.  It is the construction of the
Gumbel process and A* sampling [MTM14, Sections 3-4], which rests only on
elementary facts about i.i.d. continuous variables Z_1..Z_N with CDF F:

(a) the maximum M = max_i Z_i has CDF F^N;
(b) given M, the argmax is uniform on 1..N (exchangeability);
(c) given M and the argmax, the other N - 1 variables are i.i.d. with
    CDF F(x) / F(M) on x < M (F truncated at M).

Partition W into regions (disjoint, public, each of known size N_r).  Draw each
region's maximum M_r independently by (a).  A region whose upper bound
M_r - LB_r / s is below the best key found so far cannot hold the argmax and is
skipped; LB_r is any lower bound on L over the region.  A region that may win is
split into groups G_1..G_m of sizes n_1..n_m: by (b) the group holding the
argmax is G_g with probability n_g / N_r and its maximum is M_r; by (c) every
other group's maximum is the maximum of n_h i.i.d. draws truncated at M_r.
Recursing down to single points yields, for every point that is reached, its
key with exactly the law it has under i.i.d. noise, and every point that is not
reached has a key below the released one.  Hence the released point has the
exact distribution of report-noisy-max, i.e. of the exponential mechanism or
permute-and-flip, and is pure epsilon-DP with the same epsilon.  The bounds
LB_r depend on the data but only decide how much work is done, not which point
is released (the running time is data-dependent, as for every solver-based
mechanism in privopt).

Noise addressed by key.  Every random vector is drawn from a stream addressed
by a key (a tuple of non-negative integers: level and region or group index),
never from a shared sequential generator.  So the released point does not
depend on the order in which regions are visited, nor on how they are split
across workers of a cluster: sharded runs are bit-identical to local ones.
The streams are SHAKE-256 outputs keyed by a 256-bit secret (a cryptographic
extendable-output function, so the streams are computationally
indistinguishable from independent uniform bits): the secret comes from
:func:`os.urandom` with ``random_state=None``, from the seeded generator
otherwise (reproducible, not private).

Tails.  U is taken at the midpoint of its 53-bit word, except in the two end
buckets (U < 2^-53 or U >= 1 - 2^-53), which draw on from further words of
the same stream (:func:`privopt._random.noise_from_words`): -ln U and ln(-ln U)
have no tail cut, so no point of W has probability 0 and no key is infinite.

Inverse CDFs used (U uniform on (0, 1)):

    Gumbel,      max of n:                 ln n - ln(-ln U)
                 max of n truncated at B:  -logaddexp(-B, ln(-ln U) - ln n)
    Exponential, max of n:                 -ln(1 - U^(1/n))
                 max of n truncated at B:  -ln(1 - U^(1/n) (1 - e^-B))

(for n = 1 these are single draws).  They follow from (a) and (c): the max of
n has CDF F^n, and truncated at B, (F(x)/F(B))^n; solve F(x)^n = U F(B)^n.

[MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
[MS20] McKenna, Sheldon. Permute-and-flip. NeurIPS 2020.
[DKSSWXZ21] Ding et al. The permute-and-flip mechanism is identical to
       report-noisy-max with exponential noise. arXiv:2105.07260.
[MTM14] Maddison, Tarlow, Minka. A* sampling. NeurIPS 2014.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct

import numpy as np

from .._limits import LOCAL_SECONDS
from .._random import NoiseDraws, is_secure, noise_from_words
from .._runtime import resolve_executor, run_ordered, share, worker_count   # resolve_executor re-exported
from .._progress import progress_bar

__all__ = ["KeyedStreams", "max_of", "truncated_max_of", "pick_group", "split_region", "RegionProblem",
           "plan_shards", "sample_shard", "shard_bounds", "expand_region", "optimum_shard", "search_optimum",
           "install_problem", "run_shards",
           "resolve_executor", "sample_top_down", "better", "BLOCK", "EXPONENTIAL", "PERMUTE_AND_FLIP"]

EXPONENTIAL = "exponential"
PERMUTE_AND_FLIP = "permute_and_flip"

#: The key component that marks the further words of an end bucket (no level uses it).
_TAIL = 2**63 - 1


class KeyedStreams:
    """Uniform draws on (0, 1) addressed by a key tuple.

    The stream of key K is SHAKE-256(secret || K), a cryptographic
    extendable-output function, read as 53-bit uniforms.  The 256-bit secret is
    drawn once from the caller's generator: from :func:`os.urandom` for
    privopt's secure generator (``random_state=None``), from the seeded numpy
    Generator otherwise (reproducible, not private).  The object is small and
    picklable, so it is sent to every worker of a sharded run; each key is
    used for one draw only.
    """

    def __init__(self, rng):
        self.secure = is_secure(rng)
        if self.secure:
            self._secret = os.urandom(32)
        else:
            self._secret = rng.integers(0, 2**63, size=4, dtype=np.int64).astype("<i8").tobytes()

    def __repr__(self) -> str:
        return f"KeyedStreams(secure={self.secure})"

    def _words(self, key: tuple, n: int) -> np.ndarray:
        material = self._secret + struct.pack(f"<{len(key) + 1}Q", len(key), *key)
        words = np.frombuffer(hashlib.shake_256(material).digest(8 * int(n)), dtype="<u8")
        return words >> np.uint64(11)

    def uniforms(self, key: tuple, n: int) -> np.ndarray:
        """``n`` uniforms on the open interval (0, 1), 53 bits each, from the
        stream of ``key`` (never 0 or 1)."""
        return self.draws(key, n).u

    def draws(self, key: tuple, n: int) -> NoiseDraws:
        """``n`` draws of the stream of ``key``: the uniforms, E = -ln U and
        ln E (:class:`~privopt._random.NoiseDraws`); a word in one of the two
        end buckets draws on from the stream of ``key + (_TAIL, i, j)`` (j-th
        further word of entry i), so that the noise has no tail cut."""
        counter: dict[int, int] = {}

        def next_word(i: int) -> int:
            j = counter[i] = counter.get(i, -1) + 1
            return int(self._words((*key, _TAIL, i, j), 1)[0])

        return noise_from_words(self._words(key, n), next_word)


def max_of(draws: NoiseDraws, n, method: str) -> np.ndarray:
    """The maximum of ``n`` i.i.d. noise draws (standard Gumbel for
    ``"exponential"``, Exponential(1) for ``"permute_and_flip"``), by
    inversion of the uniform U of ``draws`` (given as E = -ln U and ln E, so
    that the upper tail is not cut); vectorized over the draws and ``n``."""
    n = np.asarray(n, dtype=float)
    if method == EXPONENTIAL:
        return np.log(n) - draws.log_e
    if method == PERMUTE_AND_FLIP:
        ratio = draws.e / n
        if np.all(draws.e > 1e-300) and np.all(ratio > 0.0):    # the usual case: no tail to mend, no log of 0
            return -np.log(-np.expm1(-ratio))
        with np.errstate(divide="ignore"):
            out = -np.log(-np.expm1(-ratio))
        # E below the smallest double: -ln(1 - e^{-E/n}) = ln n - ln E to first order
        return np.where(draws.e > 1e-300, out, np.log(n) - draws.log_e)
    raise ValueError(f"unknown selection method {method!r}")


def truncated_max_of(draws: NoiseDraws, n, bound, method: str) -> np.ndarray:
    """The maximum of ``n`` i.i.d. noise draws conditioned to lie below
    ``bound`` (fact (c) of the module docstring), by inversion of the
    uniform of ``draws``."""
    n = np.asarray(n, dtype=float)
    bound = np.asarray(bound, dtype=float)
    if method == EXPONENTIAL:
        return -np.logaddexp(-bound, draws.log_e - np.log(n))
    if method == PERMUTE_AND_FLIP:
        root = np.exp(-draws.e / n)
        return -np.log1p(-root * -np.expm1(-bound))
    raise ValueError(f"unknown selection method {method!r}")


def pick_group(u: float, sizes) -> int:
    """Index g of the group holding the argmax, with probability
    sizes[g] / sum(sizes) (fact (b)), by inversion of ``u``."""
    cum = np.cumsum(np.asarray(sizes, dtype=float))
    g = int(np.searchsorted(cum, u * cum[-1], side="right"))
    return min(g, len(cum) - 1)


def split_region(draws: NoiseDraws, sizes, region_max: float, method: str) -> np.ndarray:
    """The maxima of the groups of a region whose maximum is ``region_max``:
    ``draws`` holds len(sizes) + 1 draws, the uniform of ``draws[0]`` picks
    the group holding the argmax (its maximum is ``region_max``),
    ``draws[1 + h]`` gives group h's maximum truncated at ``region_max``."""
    sizes = np.asarray(sizes)
    out = truncated_max_of(draws[1:], sizes, region_max, method)
    out[pick_group(float(draws.u[0]), sizes)] = region_max
    return out


# ----------------------------------------------------------------------------
# The sampler over a partition of W into supports
# ----------------------------------------------------------------------------
#: Supports per block of top-level noise (the unit of sharding).
BLOCK = 4096


class RegionProblem:
    """What the sampler needs to know about W and the data (an interface).

    W is partitioned into regions, one per support S (a sorted tuple of
    indices; sizes 0..k, numbered by size then lexicographically), and each
    region into groups of points.  Implementations give:

    * ``k``; ``n_supports(size)``; ``offset(size)`` (number of the first
      support of that size); ``supports(size, start, stop)`` (an array);
    * ``region_sizes(supports)``: the number of points of each region (public);
    * ``lower_bounds(supports)``: a lower bound on the loss over each region;
    * ``region_minima(supports, ceiling)`` (optional, for the exact
      optimum): ``(val, exact, arg)``: where ``exact``, the minimum loss of
      the region and the group holding it (each group one point), else a
      lower bound, which may be left as it is where it exceeds ``ceiling``
      (the default: :meth:`lower_bounds`, nothing exact);
    * ``group_errors(support)``: ``(gmin, sizes, row)``: gmin[g] is the
      smallest loss in group g, sizes[g] its number of points, and ``row(g)``
      the losses of its points (an array of length sizes[g]).
    """

    k: int

    def n_supports(self, size: int) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def offset(self, size: int) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def supports(self, size: int, start: int = 0, stop: int | None = None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def region_sizes(self, supports: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def lower_bounds(self, supports: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def group_errors(self, support):  # pragma: no cover - interface
        raise NotImplementedError

    def region_minima(self, supports: np.ndarray, ceiling: float = np.inf):
        lb = np.asarray(self.lower_bounds(supports))
        return lb, np.zeros(len(lb), dtype=bool), np.full(len(lb), -1, dtype=np.int64)


def plan_shards(problem: RegionProblem, block: int = BLOCK) -> list[tuple[int, int, int]]:
    """(size, start, stop) ranges of supports: each size's supports in
    blocks of ``block`` lexicographic ranks (the unit of the top-level noise)."""
    out = []
    for size in range(problem.k + 1):
        n = problem.n_supports(size)
        for start in range(0, n, block):
            out.append((size, start, min(n, start + block)))
    return out


def better(a, b) -> bool:
    """Is candidate ``a`` = (key, region, group, position) preferred to ``b``?
    Larger key first, then the smaller (region, group, position): a
    deterministic rule, so that every split of W gives the same answer."""
    if b is None:
        return True
    if a[0] != b[0]:
        return a[0] > b[0]
    return tuple(a[1:]) < tuple(b[1:])


def _region_draws(problem, streams, size, start, stop):
    """The draws of the region maxima of supports [start, stop) of one
    noise block, keyed (0, size, block)."""
    block0 = start // BLOCK
    if block0 != (stop - 1) // BLOCK:
        raise ValueError("a shard must lie within one noise block")
    n_block = min(problem.n_supports(size), (block0 + 1) * BLOCK) - block0 * BLOCK
    return streams.draws((0, size, block0), n_block)[start - block0 * BLOCK: stop - block0 * BLOCK]


def shard_bounds(problem: RegionProblem, streams: KeyedStreams, method: str, scale: float, shard):
    """The first, data-heavy phase of one shard: for each of its supports the
    region maximum M_r of the noise and the upper bound M_r - LB_r / scale on
    any key in the region.  Returns ``(size, start, M, bound)``."""
    size, start, stop = shard
    return (size, start, *_region_bounds(problem, streams, method, scale, shard, problem.supports(size, start, stop)))


def _region_bounds(problem, streams, method, scale, shard, supports):
    """``(M, bound)``: each support's region maximum and M - LB / scale."""
    M, bound, _ = _region_bounds_exact(problem, streams, method, scale, shard, supports)
    return M, bound


def _region_bounds_exact(problem, streams, method, scale, shard, supports, best_key: float | None = None):
    """``(M, bound, known)``: :func:`_region_bounds` and, where the problem tells which of its
    lower bounds are the regions' exact minima (``lower_bounds_exact(supports)`` -> ``(LB,
    exact)``, optional), ``(LB, exact)``, else None.  With the ``best_key`` so far, the
    problem is told it and the regions' maxima (``lower_bounds_exact(supports, M, best_key,
    scale, slack)``): a region whose bound already fails :func:`_cannot_win`'s test
    against it may be left with that bound, as it is never visited; every other region's
    bound is the same."""
    size, start, stop = shard
    M = max_of(_region_draws(problem, streams, size, start, stop), problem.region_sizes(supports), method)
    ask = getattr(problem, "lower_bounds_exact", None)
    if ask is None:
        return M, M - problem.lower_bounds(supports) / scale, None
    low, exact = ask(supports) if best_key is None else ask(supports, M, best_key, scale, _SLACK)
    return M, M - low / scale, (low, exact)


def expand_region(problem: RegionProblem, streams: KeyedStreams, method: str, scale: float, support, region: int,
                  region_max: float, best, expanded):
    """Score one region top down (its groups, then the points of the groups
    that can still win) and return the best candidate so far."""
    gmin, sizes, row = problem.group_errors(support)
    expanded[0] += 1
    Mg = split_region(streams.draws((1, region), len(sizes) + 1), sizes, float(region_max), method)
    gbound = Mg - gmin / scale
    for gi in np.argsort(-gbound, kind="stable"):
        if best is not None and gbound[gi] < best[0]:
            break
        n = int(sizes[gi])
        expanded[1] += 1
        if n == 1:
            keys = np.array([Mg[gi]]) - gmin[gi:gi + 1] / scale
        else:
            z = split_region(streams.draws((2, region, int(gi)), n + 1), np.ones(n), float(Mg[gi]), method)
            keys = z - row(int(gi)) / scale
        pos = int(np.argmax(keys))
        cand = (float(keys[pos]), region, int(gi), pos)
        if better(cand, best):
            best = cand
    return best


def sample_shard(problem: RegionProblem, streams: KeyedStreams, method: str, scale: float, shard, floor=None):
    """Report-noisy-max over one shard of supports, keys -loss / scale + noise,
    drawn top down (module docstring).  Returns ``(best, expanded)``: the best
    candidate ``(key, region, group, position)`` of the shard (None when no
    region of the shard can beat ``floor``, a candidate found elsewhere) and
    the numbers of regions and groups that were scored."""
    size, start, stop = shard
    supports = problem.supports(size, start, stop)
    M, bound, known = _region_bounds_exact(problem, streams, method, scale, shard, supports,
                                           None if floor is None else floor[0])
    best = floor
    expanded = [0, 0]
    if not len(bound) or (best is not None and bound.max() < best[0]):
        return None, expanded        # no region can win: the loop below would stop at its first
    first = problem.offset(size) + start
    minima = _ExactMinima(problem, supports, M, scale, known)
    order = np.argsort(-bound, kind="stable")
    i = 0
    while i < len(order):
        r = order[i]
        if best is not None and bound[r] < best[0]:
            break
        if best is not None and minima.available:
            # the regions' exact minima (computed for the next regions in this order at once) may show
            # that no key in them reaches the best: they are scored, and no noise of their groups is drawn
            settled = minima.settled(order, i, bound, best[0])
            if settled:
                expanded[0] += settled
                i += settled
                continue
        best = expand_region(problem, streams, method, scale, supports[r], first + int(r), M[r], best, expanded)
        i += 1
    if best is floor:
        best = None
    return best, expanded


#: Regions whose exact minima :class:`_ExactMinima` asks the problem for in one call.
_CHUNK = 64

#: Relative slack of :func:`_cannot_win` (far above the rounding of the noise's inversion, a few ulps).
_SLACK = 1e-9


def _cannot_win(upper, best_key: float):
    """Whether a region whose keys are at most ``upper`` (its noise maximum minus its exact
    smallest loss over the scale) cannot hold a key at or above ``best_key``.  The keys
    :func:`expand_region` draws lie below the region maximum up to rounding, so the test
    leaves a relative slack: a region it skips would have had no group at or above the best
    key, and the released candidate and the counts of groups are those of expanding it.
    Elementwise over an array of ``upper`` (the same float64 operations, so the same answers)."""
    return upper < best_key - _SLACK * (1.0 + np.abs(upper) + abs(best_key))


class _ExactMinima:
    """The smallest loss of the regions of one shard, asked of the problem for several
    regions at once, each once: ``screened_minima(supports, region_max, best_key,
    key_scale, slack)`` where the problem has it (the exact minimum, or a lower bound on
    it that already settles :func:`_cannot_win` against the best key at the time of
    asking; a larger best key later only settles it more surely), else
    ``exact_minima(supports)`` (optional: :class:`RegionProblem` implementations without
    either expand every region as before).  A lower bound in place of the exact minimum
    only skips regions that cannot win, whose expansion would have released nothing and
    drawn noise no other region reads: the released point is the same.  ``known``: ``(LB,
    exact)`` of the shard's lower bounds, those that are exact minima already (the
    bound pass found them: not asked again; an exact minimum settles a region exactly when
    a screened bound does, since a value above one that passes the test passes it too)."""

    def __init__(self, problem, supports, region_max, scale, known=None):
        self._screen = getattr(problem, "screened_minima", None)
        self._ask = getattr(problem, "exact_minima", None)
        self._supports, self._max, self._scale = supports, np.asarray(region_max, dtype=np.float64), float(scale)
        self._low = np.zeros(len(supports), dtype=np.float64)
        self._known = np.zeros(len(supports), dtype=bool)
        if known is not None and self.available:
            exact = np.asarray(known[1], dtype=bool)
            self._low[exact] = np.asarray(known[0], dtype=np.float64)[exact]
            self._known[exact] = True

    @property
    def available(self) -> bool:
        return self._ask is not None or self._screen is not None

    def settled(self, order, i: int, bound, best_key: float) -> int:
        """How many regions from ``order[i]`` on, in that order, cannot win against
        ``best_key`` (:func:`_cannot_win` of each one's noise maximum minus its minimum over
        the scale, one region after another as the sampler visits them: the count stops at
        the first that may win, whose bound is below ``best_key`` or whose minimum is not
        known yet).  Where region ``order[i]``'s minimum is unknown, it is computed with
        those of the next regions in this order whose ``bound`` reaches ``best_key``."""
        seg = order[i:i + _CHUNK]
        if not self._known[seg[0]]:
            ahead = seg[bound[seg] >= best_key]
            todo = ahead[~self._known[ahead]]
            self._compute(todo if len(todo) else seg[:1], best_key)
        upper = self._max[seg] - self._low[seg] / self._scale
        ok = self._known[seg] & ~(bound[seg] < best_key)
        ok &= _cannot_win(upper, best_key)
        return len(seg) if ok.all() else int(np.argmin(ok))

    def _compute(self, batch, best_key: float) -> None:
        """The minima (or settling bounds) of the regions ``batch`` (indices into the shard's supports)."""
        values = None
        if self._screen is not None:
            values = self._screen(self._supports[batch], self._max[batch], float(best_key), self._scale, _SLACK)
        if values is None:
            values = self._ask(self._supports[batch])
        self._low[batch] = np.asarray(values, dtype=np.float64)
        self._known[batch] = True


def _sample_distributed(problem, streams, method, scale, shards, executor, progress, desc, floor=None):
    """Sharded sampling in two phases: the workers bound their supports
    (the pass over the data), then this process scores the regions in
    descending order of their bounds across all shards, with the best key
    found so far (at first ``floor``) pruning the rest, exactly as a local run
    does."""

    shared = [share(executor, a) for a in (problem, streams, method, scale)]
    results, _ = run_ordered(executor, shard_bounds, [(*shared, shard) for shard in shards],
                             progress=progress, desc=desc)
    sizes = np.concatenate([np.full(len(b), size) for size, _, _, b in results])
    ranks = np.concatenate([start + np.arange(len(b)) for _, start, _, b in results])
    M = np.concatenate([m for _, _, m, _ in results])
    bound = np.concatenate([b for _, _, _, b in results])
    best, expanded = floor, [0, 0]
    for i in np.argsort(-bound, kind="stable"):
        if best is not None and bound[i] < best[0]:
            break
        size, rank = int(sizes[i]), int(ranks[i])
        support = problem.supports(size, rank, rank + 1)[0]
        best = expand_region(problem, streams, method, scale, support, problem.offset(size) + rank, M[i], best,
                             expanded)
    return (None if best is floor else best), tuple(expanded)


def _key_lt(a, b) -> bool:
    """Is the optimum candidate ``a`` = (loss, region, group, position)
    preferred to ``b`` (smaller loss, then smaller indices; None loses)?"""
    return b is None or (a[0], tuple(a[1:])) < (b[0], tuple(b[1:]))


def optimum_shard(problem: RegionProblem, shard, ceiling=None):
    """The exact minimum of the loss over one shard by branch and bound:
    ``(loss, region, group, position)`` (smallest loss, then smallest
    indices), or None when no region can go below ``ceiling``, a candidate
    found elsewhere.  Regions whose minimum the problem gives exactly
    (``region_minima``) are not scored again; the others are scored in
    ascending order of their lower bounds while a bound can still reach the
    best value (a tie may still win on its smaller indices)."""
    size, start, stop = shard
    supports = problem.supports(size, start, stop)
    val, exact, arg = problem.region_minima(supports, np.inf if ceiling is None else ceiling[0])
    best = ceiling
    first = problem.offset(size) + start
    done = np.flatnonzero(exact)
    if len(done):
        i = int(done[np.argmin(val[done])])       # the first minimum: the smallest region among ties
        cand = (float(val[i]), first + i, int(arg[i]), 0)
        if _key_lt(cand, best):
            best = cand
    rest = np.flatnonzero(~exact)
    for r in rest[np.argsort(val[rest], kind="stable")]:
        if best is not None and val[r] > best[0]:
            break
        gmin, sizes, row = problem.group_errors(supports[r])
        gi = int(np.argmin(gmin))
        pos = int(np.argmin(row(gi)))
        cand = (gmin[gi].item(), first + int(r), gi, pos)
        if _key_lt(cand, best):
            best = cand
    if best is ceiling:
        best = None
    return best


#: Problems installed in a worker process once (by a pool's initializer,
#: :func:`install_problem`), referred to by key in each task.
_INSTALLED: dict = {}


def install_problem(key: str, problem) -> None:
    """Pool initializer: keep ``problem`` in this worker under ``key``."""
    _INSTALLED[key] = problem


def _optimum_group(problem, shards, ceiling):
    """One task of the distributed optimum: the shards in turn, each pruned
    by the best candidate so far (starting from ``ceiling``).  ``problem``
    may be the key of an installed problem."""
    if isinstance(problem, str):
        problem = _INSTALLED[problem]
    best = ceiling
    for shard in shards:
        out = optimum_shard(problem, shard, best)
        if out is not None:
            best = out
    return None if best is ceiling else best


def search_optimum(problem: RegionProblem, *, executor=None, deadline=None, progress=False,
                   desc="branch and bound", tasks_per_worker: int = 4, installed: str | None = None):
    """The exact minimum over every region of ``problem``: ``(best, done,
    total)`` with ``best`` = (loss, region, group, position) and ``done`` of
    ``total`` blocks of supports searched (``done < total`` only when the
    ``deadline``, a :func:`time.perf_counter` value, passed first).

    ``executor=None`` runs here, each block pruned by the best so far.  On an
    executor the blocks go out in contiguous tasks (about ``tasks_per_worker``
    per worker), at most one per worker at a time, each with the best
    candidate known when it is sent as its ceiling, so the workers prune
    nearly as a single process does.  The optimum (and its tie rule) does not
    depend on the split or on the order tasks finish in.  ``installed``: the
    key under which the executor's workers hold the problem already
    (:func:`install_problem`), so that tasks carry only their blocks."""
    import time
    from concurrent.futures import FIRST_COMPLETED, wait

    shards = plan_shards(problem)
    best = None
    if executor is None:
        with progress_bar(len(shards), desc=desc, unit="block", disable=not progress) as bar:
            for i, shard in enumerate(shards):
                if deadline is not None and time.perf_counter() > deadline:
                    return best, i, len(shards)
                out = optimum_shard(problem, shard, best)
                if out is not None:
                    best = out
                bar.update(1)
        return best, len(shards), len(shards)
    n_workers = max(1, worker_count(executor))
    n_tasks = max(1, min(len(shards), n_workers * tasks_per_worker))
    bounds = np.linspace(0, len(shards), n_tasks + 1).astype(int)
    groups = [shards[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    shared = installed if installed is not None else share(executor, problem)
    pending: dict = {}
    done = 0
    nxt = 0
    with progress_bar(len(shards), desc=desc, unit="block", disable=not progress) as bar:
        try:
            while nxt < len(groups) or pending:
                if deadline is not None and time.perf_counter() > deadline:
                    return best, done, len(shards)      # as the local loop: nothing more once it has passed
                while nxt < len(groups) and len(pending) < n_workers:
                    fut = executor.submit(_optimum_group, shared, groups[nxt], best)
                    pending[fut] = len(groups[nxt])
                    nxt += 1
                timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
                finished, _ = wait(list(pending), timeout=timeout, return_when=FIRST_COMPLETED)
                if not finished:
                    return best, done, len(shards)
                for fut in finished:
                    n = pending.pop(fut)
                    out = fut.result()
                    if out is not None and _key_lt(out, best):
                        best = out
                    done += n
                    bar.update(n)
        finally:
            for fut in pending:
                fut.cancel()
    return best, done, len(shards)


def _fold_sample(best, out, stats):
    cand, expanded = out
    if cand is not None and better(cand, best):
        best = cand
    return best, [stats[0] + expanded[0], stats[1] + expanded[1]]


def run_shards(problem: RegionProblem, shards, *, streams, method, scale, executor=None, progress=False,
               desc="shards", floor=None):
    """Run the sampler over the shards: in this process (the best key so far
    prunes the next shards) or on ``executor`` (the problem is sent once per
    worker on dask; the workers bound their supports and this process scores
    the regions that can win, in one global order).  The answer is the same
    either way.  (The exact optimum is :func:`search_optimum`.)
    ``floor``: a key ``(key, ...)`` found elsewhere (another part of a larger
    W); regions that cannot beat it are not scored, and ``best`` is None when
    nothing here beats it.  The keys that are drawn do not depend on it.
    Returns ``(best, (regions expanded, groups expanded))``."""
    if executor is not None:
        return _sample_distributed(problem, streams, method, scale, shards, executor, progress, desc, floor)
    best = floor
    stats = [0, 0]
    with progress_bar(len(shards), desc=desc, unit="shard", disable=not progress) as bar:
        for shard in shards:
            best, stats = _fold_sample(best, sample_shard(problem, streams, method, scale, shard, best), stats)
            bar.update(1)
    return (None if best is floor else best), tuple(stats)


def lex_combinations(d: int, k: int, start: int, stop: int) -> np.ndarray:
    """The k-subsets of range(d) with lexicographic rank in [start, stop),
    one sorted row each, without walking the ranks before ``start``: listed once per
    (d, k, start, stop) in a process (public sizes; every draw of a W asks for its
    supports again; at most :data:`_KEPT_COMBINATIONS` entries each), each call a fresh copy."""
    d, k, start, stop = int(d), int(k), int(start), int(stop)
    if (stop - start) * k > _KEPT_COMBINATIONS:
        return _lex_combinations.__wrapped__(d, k, start, stop)
    return _lex_combinations(d, k, start, stop).copy()


#: The most entries of one list of :func:`lex_combinations` kept for the next call.
_KEPT_COMBINATIONS = 1 << 14


@functools.lru_cache(maxsize=256)
def _lex_combinations(d: int, k: int, start: int, stop: int) -> np.ndarray:
    import math

    n = stop - start
    out = np.empty((max(0, n), k), dtype=np.int64)
    if n <= 0:
        return out
    if k == 0:
        return out
    # unrank ``start``: choose each element in turn by counting the subsets that begin lower
    comb, r, lo = [], start, 0
    for i in range(k):
        for v in range(lo, d):
            count = math.comb(d - v - 1, k - i - 1)
            if r < count:
                comb.append(v)
                lo = v + 1
                break
            r -= count
    for row in range(n):
        out[row] = comb
        # next combination in lexicographic order
        i = k - 1
        while i >= 0 and comb[i] == d - k + i:
            i -= 1
        if i < 0:
            break
        comb[i] += 1
        for j in range(i + 1, k):
            comb[j] = comb[j - 1] + 1
    return out


def sample_top_down(problem: RegionProblem, streams: KeyedStreams, method: str, scale: float, *, executor=None,
                    predicted: float = 0.0, progress=False, desc: str = "privopt selection",
                    local_seconds: float = LOCAL_SECONDS, floor=None):
    """One private selection over ``problem``: resolve the executor
    (:func:`resolve_executor`), run the sampler on it (:func:`run_shards`,
    with its ``floor``) and shut down a pool made for the run.  Returns
    ``(best, expanded, wall_seconds)``; ``best`` is None when nothing beats
    ``floor``."""
    import time

    shards = plan_shards(problem)
    ex, owned = resolve_executor(executor, predicted, len(shards), local_seconds)
    start = time.perf_counter()
    try:
        best, expanded = run_shards(problem, shards, executor=ex, progress=progress, desc=desc,
                                    streams=streams, method=method, scale=scale, floor=floor)
    finally:
        if owned:
            ex.shutdown()
    return best, expanded, time.perf_counter() - start

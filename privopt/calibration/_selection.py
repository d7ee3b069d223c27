r"""Private selection over a finite set W: the exponential mechanism and
permute-and-flip.  One function per quantity.

Setting.  W is finite and public (fixed before the data is seen).  The loss
L(D, w) = sum_{i=1}^n l_i(w) is a sum of n per-record terms, each with values
in a declared range [a, b].  Under replace-one neighbours (D and D' of the same
size differ in one record) L(D, w) - L(D', w) = l_i(w) - l'_i(w), so

    Delta = sup_{D ~ D', w} |L(D, w) - L(D', w)| <= b - a            (1)

(:func:`selection_sensitivity`).  The utility of w is u(D, w) = -L(D, w).

Exponential mechanism [MT07, Theorem 6; DR14, Theorem 3.10].  Release w with
probability proportional to exp(epsilon u(D, w) / (2 Delta)).  It is pure
epsilon-DP (delta = 0).  It is sampled exactly by the Gumbel-max identity:

    w_hat = argmax_w  u(D, w) + s G_w,   G_w iid standard Gumbel,     (2)

with s = 2 Delta / epsilon (:func:`selection_noise_scale`): the argmax of
log-weights plus standard Gumbel noise has the softmax distribution.

Permute-and-flip [MS20, Algorithm 1 and Theorem 1].  Visit the points of W in
a uniformly random order and release the first w for which a coin with
probability exp(epsilon (u(D, w) - max_v u(D, v)) / (2 Delta)) comes up heads.
It is pure epsilon-DP, and its expected excess loss is never larger than the
exponential mechanism's at the same epsilon [MS20, Theorem 2].  It is
identical in distribution to report-noisy-max with exponential noise
[DKSSWXZ21, Theorem 1]:

    w_hat = argmax_w  u(D, w) + s E_w,   E_w iid Exponential(1),       (3)

with the same s = 2 Delta / epsilon; privopt samples it by (3).

Utility [DR14, Theorem 3.11; the same union bound for (3)].  For both, with
probability at least 1 - beta,

    L(D, w_hat) - min_w L(D, w) <= (2 Delta / epsilon) (ln |W| + ln(1/beta))   (4)

(:func:`selection_utility_bound`).  For (3): a point with excess a wins only if
its noise exceeds a / s, which has probability exp(-a / s); a union bound over
W gives (4).  For (2): the softmax weight of all points with excess >= a is at
most |W| exp(-a / s) times that of the optimum.

A public base measure over nested W's [MT07, Section 3: the mechanism is
defined with a base measure mu].  Let W_1, ..., W_R be finite sets fixed before
the data (e.g. one weight grid and feature discretization per resolution r),
L_r(D, w) the loss of w in W_r, each a sum of n per-record terms in [a, b], and
pi_1..pi_R > 0 public weights summing to 1.  On the disjoint union of the
(r, w), the base measure

    mu(r, w) = pi_r / |W_r|                                            (5)

(:func:`base_measure_log_weights`) is public, so the mechanism releasing (r, w)
with probability proportional to mu(r, w) exp(-epsilon L_r(D, w) / (2 Delta))
is epsilon-DP for the same reason as (2): the ratio of its weights under
neighbours is at most exp(epsilon / 2) at every (r, w), and so is the ratio of
the normalizers.  It is sampled by (2) with ln mu(r, w) added to every key:
argmax_(r, w) -L_r/s + ln mu(r, w) + G_(r, w).  With Exponential(1) noise
instead (3), it is permute-and-flip over the union with the public utility
u(r, w) = -L_r(D, w) + s ln mu(r, w): the offset does not depend on the data,
so u has sensitivity Delta and [MS20, Theorem 1] applies unchanged.

Utility (both).  For every r and every w* in W_r, with probability at least
1 - beta the released (r', w') has

    L_r'(D, w') <= L_r(D, w*) + (2 Delta / epsilon)(ln |W_r| + ln(1/pi_r) + ln(1/beta))  (6)

(:func:`mixture_utility_bound`): the points with loss above the right side
have total weight mu * exp(-L/s) at most exp(-(L* / s) - ln(1/mu*) - ln(1/beta))
(the mu's sum to 1), i.e. at most beta times that of (r, w*); for (3), a
point (r', w') beats (r, w*) with probability at most
mu(r', w') beta / 2 by the same count, and these sum to at most beta.  So the
mechanism pays ln(1/pi_r) for not knowing in advance which resolution the data
will favour, and a fine W_r only where its best point is worth its size.

A W built from a private warm start.  The W_r above are fixed before the
data.  One more may be built from a first private release: a mechanism M_1,
epsilon_1-DP, releases v (privopt: L2-regularised logistic regression by
objective perturbation [CMS11, Algorithm 2], pure epsilon_1-DP under
replace-one); W_v is then a function of v alone (privopt: the halfspaces on the
one feature <v, z(x)>, cut into public steps), and the selection above runs
over W_1, ..., W_R, W_v with epsilon_2.  Releasing v, then (r, w) from W's that
depend on v, is (epsilon_1 + epsilon_2)-DP by sequential composition, which
holds for adaptively chosen pure-DP mechanisms [DR14, Theorem 3.16]; W_v is
public given v (post-processing [DR14, Proposition 2.1]).  The split is

    epsilon_1 = share * epsilon,   epsilon_2 = (1 - share) * epsilon      (7)

(:func:`split_warm_start_epsilon`; the smaller part is computed as epsilon minus the
larger, a difference exact in floating point [Sterbenz], so that the two parts sum to
epsilon exactly).  Utility: (6) with epsilon_2, against the
best point of every W_r and of W_v.

[MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
[CMS11] Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk
       minimization. JMLR 12:1069-1109, 2011.
[DR14] Dwork, Roth. The algorithmic foundations of differential privacy.
       Foundations and Trends in TCS 9(3-4), 2014.
[MS20] McKenna, Sheldon. Permute-and-flip: a new mechanism for differentially
       private selection. NeurIPS 2020.
[DKSSWXZ21] Ding, Kifer, Saghaian, Steinke, Wang, Xiao, Zhang. The
       permute-and-flip mechanism is identical to report-noisy-max with
       exponential noise. arXiv:2105.07260, 2021.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import check_choice, check_epsilon, check_int, check_positive, check_probability
from ..exceptions import ParameterError, ParameterTypeError

__all__ = [
    "SELECTION_METHODS",
    "check_loss_range",
    "selection_sensitivity",
    "selection_noise_scale",
    "selection_utility_bound",
    "exponential_mechanism_probabilities",
    "permute_and_flip_probabilities",
    "check_prior",
    "base_measure_log_weights",
    "mixture_utility_bound",
    "split_warm_start_epsilon",
    "WARM_START_SHARE",
]

#: The share of epsilon the warm start spends in eq. (7) (the selection gets the rest).
WARM_START_SHARE = 0.5

#: The selection mechanisms privopt samples (``method=``).
SELECTION_METHODS = ("exponential", "permute_and_flip")


def check_loss_range(loss_range, name: str = "loss_range") -> tuple[float, float]:
    """``loss_range`` as ``(a, b)`` with a < b finite: a pair, or one positive
    number c meaning (0, c).  Raises naming ``name`` otherwise."""
    if loss_range is None:
        raise ParameterError(
            f"{name}: give the range of each per-record loss term, e.g. {name}=1 for a 0/1 loss "
            f"(or {name}=(a, b)); the objective must be a sum of n such terms.", name)
    if isinstance(loss_range, (bool, np.bool_)) or isinstance(loss_range, str):
        raise ParameterTypeError(f"{name} must be a number or a pair (a, b), got {loss_range!r}.", name)
    if isinstance(loss_range, numbers.Real):
        width = float(loss_range)
        if not math.isfinite(width) or width <= 0:
            raise ParameterError(
                f"{name} must be a positive, finite width (the per-record loss varies over an "
                f"interval of that length), got {loss_range!r}.", name)
        return 0.0, width
    try:
        a, b = (float(v) for v in loss_range)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be a number or a pair (a, b), got {loss_range!r}.",
                                 name) from exc
    if not (math.isfinite(a) and math.isfinite(b)) or b <= a:
        raise ParameterError(f"{name}=({a:g}, {b:g}) must have finite a < b.", name)
    return a, b


def selection_sensitivity(loss_range) -> float:
    """Delta of eq. (1): the replace-one sensitivity of a summed loss whose
    per-record terms lie in ``loss_range`` = (a, b) (or a width): b - a."""
    a, b = check_loss_range(loss_range)
    return b - a


def selection_noise_scale(epsilon: float, sensitivity: float) -> float:
    """s = 2 Delta / epsilon, the scale of the Gumbel noise of eq. (2) (the
    exponential mechanism [MT07]) and of the exponential noise of eq. (3)
    (permute-and-flip [MS20, DKSSWXZ21]) on the loss scale."""
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    return 2.0 * sensitivity / epsilon


def selection_utility_bound(epsilon: float, sensitivity: float, n_points: int, beta: float = 0.05) -> float:
    """alpha of eq. (4): with probability >= 1 - beta the released point's
    summed loss exceeds the minimum over W by at most
    (2 Delta / epsilon)(ln |W| + ln(1/beta)) [DR14, Theorem 3.11]."""
    beta = check_probability(beta, "beta")
    n_points = check_int(n_points, "n_points", minimum=1)
    return selection_noise_scale(epsilon, sensitivity) * (math.log(n_points) + math.log(1.0 / beta))


def exponential_mechanism_probabilities(losses, epsilon: float, sensitivity: float) -> np.ndarray:
    """The exact output distribution of the exponential mechanism on a small W:
    softmax(-epsilon L / (2 Delta)), computed directly (for tests and audits)."""
    losses = np.asarray(losses, dtype=float)
    logits = -losses / selection_noise_scale(epsilon, sensitivity)
    logits -= logits.max()
    p = np.exp(logits)
    return p / p.sum()


def permute_and_flip_probabilities(losses, epsilon: float, sensitivity: float) -> np.ndarray:
    """The exact output distribution of permute-and-flip [MS20, Algorithm 1]
    on a small W (at most 8 points), computed from the algorithm's own
    definition: average over all |W|! visiting orders of the probability that
    the first coin to come up heads is w's.  Independent of eq. (3)."""
    import itertools

    losses = np.asarray(losses, dtype=float)
    m = losses.size
    if m > 8:
        raise ParameterError("permute_and_flip_probabilities enumerates orders: at most 8 points.", "losses")
    q = np.exp(-(losses - losses.min()) / selection_noise_scale(epsilon, sensitivity))
    out = np.zeros(m)
    count = 0
    for order in itertools.permutations(range(m)):
        tails = 1.0
        for r in order:
            out[r] += tails * q[r]
            tails *= 1.0 - q[r]
            if tails == 0.0:
                break
        count += 1
    return out / count


def check_selection_method(method) -> str:
    return check_choice(method, "method", SELECTION_METHODS)


def check_prior(prior, n_resolutions: int, name: str = "prior") -> np.ndarray:
    """The public weights pi_1..pi_R of eq. (5) as an array summing to 1:
    ``None`` means uniform (1/R each); else R positive finite numbers,
    normalized by their sum.  Raises naming ``name`` otherwise."""
    n_resolutions = check_int(n_resolutions, "n_resolutions", minimum=1)
    if prior is None:
        return np.full(n_resolutions, 1.0 / n_resolutions)
    if isinstance(prior, (str, bytes)):
        raise ParameterTypeError(f"{name} must be None or a sequence of {n_resolutions} positive weights.", name)
    try:
        p = np.asarray(prior, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be None or a sequence of {n_resolutions} positive weights, "
                                 f"got {prior!r}.", name) from exc
    if p.shape != (n_resolutions,):
        raise ParameterError(f"{name} must hold one weight per W ({n_resolutions}), got shape {p.shape}.", name)
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ParameterError(f"{name}: every weight must be positive and finite (a W with weight 0 is a W "
                             f"left out), got {p.tolist()}.", name)
    return p / p.sum()


def base_measure_log_weights(prior, sizes) -> np.ndarray:
    """ln mu(r, w) = ln pi_r - ln |W_r| of eq. (5), one value per W_r (every
    point of W_r has the same weight).  ``prior`` as in :func:`check_prior`,
    ``sizes`` the |W_r| (public: fixed before the data)."""
    sizes = [check_int(m, "sizes", minimum=1) for m in sizes]
    p = check_prior(prior, len(sizes))
    return np.log(p) - np.log(np.asarray(sizes, dtype=float))


def mixture_utility_bound(epsilon: float, sensitivity: float, n_points: int, weight: float,
                          beta: float = 0.05) -> float:
    """The excess of eq. (6) against the best point of one W_r:
    (2 Delta / epsilon)(ln |W_r| + ln(1/pi_r) + ln(1/beta)); with pi_r = 1 it
    is :func:`selection_utility_bound`."""
    weight = float(weight)
    if not (0.0 < weight <= 1.0):
        raise ParameterError(f"weight pi_r must lie in (0, 1], got {weight!r}.", "weight")
    return selection_utility_bound(epsilon, sensitivity, n_points, beta) + \
        selection_noise_scale(epsilon, sensitivity) * math.log(1.0 / weight)


def split_warm_start_epsilon(epsilon: float, share: float = WARM_START_SHARE) -> tuple[float, float]:
    """(epsilon_1, epsilon_2) = (share * epsilon, (1 - share) * epsilon) of
    eq. (7): the warm start's budget and the selection's; their sum is
    epsilon by sequential composition [DR14, Theorem 3.16].  The larger part is
    the product, the smaller epsilon minus it: the larger lies in [epsilon / 2,
    epsilon], so the difference is exact (Sterbenz's lemma) and the parts sum to
    epsilon exactly, never one rounding above it (0.9 * 0.7 + 0.9 * (1 - 0.7) rounds
    to 0.9 + 1.1e-16)."""
    epsilon = check_epsilon(epsilon)
    share = float(share)
    if not 0.0 < share < 1.0:
        raise ParameterError(f"share must lie in (0, 1) (the warm start's part of epsilon), got {share!r}.",
                             "share")
    if share >= 0.5:
        epsilon_1 = epsilon * share
        return epsilon_1, epsilon - epsilon_1
    epsilon_2 = epsilon * (1.0 - share)
    return epsilon - epsilon_2, epsilon_2

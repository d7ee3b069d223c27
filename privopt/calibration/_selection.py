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

[MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
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
]

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

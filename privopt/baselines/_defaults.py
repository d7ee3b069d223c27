"""Public default hyperparameters of the convex baselines.

Each rule is a function of public quantities only -- the number of records n
(public under the replace-one relation), the dimension of the feature vector
z the optimiser sees (``d_z``: the features plus the intercept column) and
the privacy budget epsilon -- never of the records' values, so using them
costs no privacy.  Constants were chosen on a few development data sets and
then checked on others that played no part in choosing them (docs/estimators.md,
"Defaults at small n"; ``benchmarks/bench_small_data.py``).

Why these forms
---------------
*Regularization of [CMS11]'s two mechanisms.*  With ``||z|| <= 1`` and a
1-Lipschitz loss, objective perturbation adds ``<b, w>/n`` with
``E||b|| = 2 d_z / eps'`` to a ``Lambda``-strongly convex objective, so the
noise can move the minimiser by ``||b|| / (n Lambda)``; output perturbation
adds noise of expected norm ``2 d_z / (n Lambda eps)`` ([CMS11], Algorithm 1,
Corollary 8).  Both shifts are fixed in size by ``Lambda = c d_z / (n eps)``,
which shrinks as n eps grows (so large data sets are not over-regularized:
on a 35,000-record set with 70% majority, privopt's former fixed
Lambda = 0.01 left both [CMS11] models at the majority class) and grows at
small n, where the noise would otherwise swamp the signal.  It is also the scale of [CMS11]'s own condition
``Lambda >= c_loss / (n (e^{eps/4} - 1))`` under which Algorithm 2 spends no
budget on the extra ``Delta`` term.

*DP-SGD's schedule.*  The accounted noise of Poisson-sampled DP-SGD at a
fixed (epsilon, delta) grows about like sqrt(T) while the signal of T steps
grows like T, so extra steps cost little accuracy to noise but a short run
under-optimizes: 20 epochs of batches of n/10 are only 200 steps, too few on
the badly conditioned problems that norm-1 scaling creates.  The default
takes at least 600 steps (and at least 20 epochs, as before).
"""

from __future__ import annotations

import math

__all__ = [
    "default_batch_size",
    "default_dpsgd_epochs",
    "default_objective_perturbation_alpha",
    "default_output_perturbation_alpha",
    "OBJECTIVE_ALPHA_FACTOR",
    "OUTPUT_ALPHA_FACTOR",
    "DPSGD_MIN_EPOCHS",
    "DPSGD_MIN_STEPS",
]

#: c of Lambda = c d_z / (n eps) for objective perturbation ([CMS11] Alg. 2).
OBJECTIVE_ALPHA_FACTOR = 0.1
#: c of Lambda = c d_z / (n eps) for output perturbation ([CMS11] Alg. 1):
#: the noise then has expected norm 2 / c = 2.
OUTPUT_ALPHA_FACTOR = 1.0
#: DP-SGD: at least this many passes ...
DPSGD_MIN_EPOCHS = 20
#: ... and at least this many steps.
DPSGD_MIN_STEPS = 600


def _check(n: int, d_z: int, epsilon: float) -> None:
    if n < 1 or d_z < 1 or not epsilon > 0:
        raise ValueError(f"need n >= 1, d_z >= 1 and epsilon > 0, got {n}, {d_z}, {epsilon}")


def default_objective_perturbation_alpha(n: int, d_z: int, epsilon: float) -> float:
    """``alpha="auto"`` of objective perturbation: ``Lambda = 0.1 d_z / (n eps)``.

    E.g. n = 398, d_z = 31, eps = 1: 0.1 * 31 / 398 = 0.0077889...
    """
    _check(n, d_z, epsilon)
    return OBJECTIVE_ALPHA_FACTOR * d_z / (n * epsilon)


def default_output_perturbation_alpha(n: int, d_z: int, epsilon: float) -> float:
    """``alpha="auto"`` of output perturbation: ``Lambda = d_z / (n eps)``, so
    that the noise of [CMS11] Algorithm 1 (density ``exp(-n Lambda eps ||b|| / 2)``,
    norm Gamma(d_z, 2 / (n Lambda eps))) has expected norm
    ``2 d_z / (n Lambda eps) = 2``.

    E.g. n = 398, d_z = 31, eps = 1: 31 / 398 = 0.077889...
    """
    _check(n, d_z, epsilon)
    return OUTPUT_ALPHA_FACTOR * d_z / (n * epsilon)


def default_batch_size(n: int) -> int:
    """DP-SGD's ``batch_size="auto"``: ``min(256, max(1, ceil(n / 10)))``.

    256 (tuned on Adult, n = 12546) once n >= 2560; below that a tenth of the
    data, so a small data set still gets about ten steps per epoch.
    """
    if n < 1:
        raise ValueError(f"need n >= 1, got {n}")
    return int(min(256, max(1, math.ceil(n / 10))))


def default_dpsgd_epochs(n: int, batch_size: int) -> int:
    """DP-SGD's ``epochs="auto"``: the fewest passes, at least 20, that give at
    least 600 steps of expected batch ``batch_size``:
    ``max(20, ceil(600 batch_size / n))``.

    E.g. n = 398, batch 40: max(20, ceil(60.30)) = 61 (T = 610 steps);
    n = 12546, batch 256: max(20, ceil(12.24)) = 20 (T = 980).
    """
    if n < 1 or batch_size < 1:
        raise ValueError(f"need n >= 1 and batch_size >= 1, got {n}, {batch_size}")
    return int(max(DPSGD_MIN_EPOCHS, math.ceil(DPSGD_MIN_STEPS * batch_size / n)))

"""Public default hyperparameters of the convex baselines.

Each rule is a function of public quantities only -- the number of records n
(public under the replace-one relation), the dimension of the feature vector
z the optimiser sees (``d_z``: the features plus the intercept column) and
the privacy budget (epsilon, and delta for output perturbation's noise) --
never of the records' values, so using them
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
small n, where the noise would otherwise swamp the signal.  It scales with
n and eps as [CMS11]'s own threshold ``c_loss / (n (e^{eps/4} - 1))`` (about
``1 / (n eps)`` for the logistic loss) below which Algorithm 2 adds the
``Delta`` regularization and halves epsilon'; with d_z < 10 the rule is below
that threshold and Algorithm 2 does so.

*Output perturbation's noise* (``noise="auto"``): with ``delta > 0`` the
discrete Gaussian noise replaces the discrete Laplace noise when its expected
norm is smaller at the same Lambda (both exact integer noise on a grid: see
:class:`~privopt.baselines.OutputPerturbationLogisticRegression`).  The ratio of
their root mean square norms, ``s(eps, delta) eps / sqrt(2 d)`` (``s``: the
Gaussian sigma at sensitivity 1 through zCDP, d the dimension of z), does not
depend on n or Lambda, so the choice is a public function of (d, eps, delta):
Gaussian from d = 9 at eps = 1, delta = 1e-5.  Both are valid at
(eps, delta): pure eps-DP implies it.

*DP-SGD's batch size* is a tenth of the data below n = 2560 (so that a small
set still gets about ten steps per pass) and 256 above.  Its other defaults
(60 passes, step 1/L = 4) are plain constants of the estimator.
"""

from __future__ import annotations

import math

from ..calibration import largest_zcdp_rho

__all__ = [
    "default_batch_size",
    "default_output_perturbation_noise",
    "default_objective_perturbation_alpha",
    "default_output_perturbation_alpha",
    "OBJECTIVE_ALPHA_FACTOR",
    "OUTPUT_ALPHA_FACTOR",
]

#: c of Lambda = c d_z / (n eps) for objective perturbation ([CMS11] Alg. 2).
OBJECTIVE_ALPHA_FACTOR = 0.1
#: c of Lambda = c d_z / (n eps) for output perturbation ([CMS11] Alg. 1):
#: the noise then has expected norm 2 / c = 2.
OUTPUT_ALPHA_FACTOR = 1.0


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


def default_output_perturbation_noise(d_z: int, epsilon: float, delta: float) -> str:
    """``noise="auto"`` of output perturbation: ``"gaussian"`` when ``delta > 0``
    and ``s(eps, delta) eps < sqrt(2 d_z)``, else ``"laplace"``: the root mean
    square norm of the discrete Gaussian noise, ``sqrt(d_z) s Delta`` (s =
    1 / sqrt(2 rho) with rho the largest zCDP parameter allowed at (eps, delta),
    :func:`privopt.calibration.largest_zcdp_rho`), below that of the
    per-coordinate discrete Laplace noise of scale ``sqrt(d_z) Delta / eps``,
    ``sqrt(2 d_z) sqrt(d_z) Delta / eps``, whatever n and Lambda (Delta =
    2 / (n Lambda) cancels; both in the same measure, the root mean square).

    E.g. eps = 1, delta = 1e-5: rho = 0.0305566, s = 4.04513: d_z = 8
    (sqrt(16) = 4 < 4.045), Laplace; d_z = 9 (sqrt(18) = 4.243 > 4.045), Gaussian.
    """
    _check(1, d_z, epsilon)
    if not delta > 0:
        return "laplace"
    s = 1.0 / math.sqrt(2.0 * largest_zcdp_rho(epsilon, delta))
    return "gaussian" if s * epsilon < math.sqrt(2.0 * d_z) else "laplace"

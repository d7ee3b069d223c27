"""Parameters of OPSamp [NRVW20, Algorithm 2].

[NRVW20] Neel, Roth, Vietri, Wu. Oracle Efficient Private Non-Convex
Optimization. ICML 2020 (arXiv:1909.01783, "Differentially Private Objective
Perturbation: Beyond Smoothness and Convexity").  DESIGN.md section 4.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from scipy.special import gammaincinv

from .._validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_real,
)
from ..exceptions import ParameterError, ParameterTypeError

__all__ = ["opsamp_parameters", "OPSampParameters", "MAX_PAPER_ORACLE_CALLS"]

#: With ``n_oracle_calls=None``, the paper's m is used only up to this many
#: solver calls.  Above it privopt refuses and asks for an explicit m: at a
#: tenth of a second per call 10,000 calls is already about 20 minutes of
#: solver time, and the paper's m grows like n d^(5/2) D_2 / epsilon (about
#: 1e8 at the Adult scale).
MAX_PAPER_ORACLE_CALLS = 10_000

#: Values of m shown in the refusal message, with their Laplace scales.
_SUGGESTED_CALLS = (100, 1_000)


@dataclass(frozen=True)
class OPSampParameters:
    """Everything OPSamp's noise and guarantee depend on (see :func:`opsamp_parameters`).

    ``lambda_`` is lambda (a Python keyword); :meth:`as_dict` spells it
    ``"lambda"``.  ``alpha`` is the utility bound; ``oracle_error`` is the
    alpha of the oracle O_alpha (an input).
    """

    n_oracle_calls: int
    gamma: float
    eta: float
    lambda_: float
    laplace_scale: float
    alpha: float
    alpha_oracle: float
    alpha_perturbation: float
    alpha_laplace: float
    paper_n_oracle_calls: float
    gamma_source: str
    epsilon: float
    delta: float
    lipschitz: float
    linf_diameter: float
    l2_diameter: float
    n_samples: int
    dim: int
    beta: float
    oracle_error: float

    def as_dict(self) -> dict:
        """Plain dict; ``lambda_`` is spelled ``"lambda"`` (same order as the fields)."""
        return {("lambda" if k == "lambda_" else k): v for k, v in asdict(self).items()}


def _gamma_from_calls(log_term: float, m: int) -> float:
    return math.sqrt(log_term / (2.0 * m))


def _lambda(linf, gamma, eta, G, d, oracle_error) -> float:
    return 4.0 * linf * gamma + 250.0 * eta * G * d**2 * linf**2 + oracle_error / (10.0 * G)


def opsamp_parameters(
    epsilon: float,
    delta: float,
    lipschitz: float,
    linf_diameter: float,
    l2_diameter: float,
    n_samples: int,
    dim: int,
    n_oracle_calls: int | None = None,
    beta: float = 0.05,
    oracle_error: float = 0.0,
) -> OPSampParameters:
    r"""Noise parameters and utility bound of OPSamp [NRVW20, Algorithm 2].

    Setting: W in R^d with l_inf diameter D_inf and l2 diameter D_2; each
    per-example loss l_i has values in [0, 1] and is G-Lipschitz with respect
    to the l1 norm; L(D, w) = sum_i l_i(w) over n records; the oracle O_alpha
    minimizes (L(D, w) - <sigma, w>) / n up to additive error alpha
    (``oracle_error``).  Privacy needs no convexity.

    Formulas (DESIGN.md section 4, from Algorithm 2 of [NRVW20]):

    .. math::

        \gamma &= \frac{\sqrt{\varepsilon}}{\sqrt{n}\, d^{5/4} \sqrt{D_2}},
        \qquad m = \frac{\ln(2d/\delta)}{2\gamma^2}
        \quad\text{(the paper's m; privopt uses } \lceil m \rceil),\\
        \eta &= \sqrt{\frac{D_2 \sqrt{2d}\, \varepsilon}
                {250\, G^2 d^2 D_\infty^2 (1 + \ln(2/\beta))\, n}},\\
        \lambda &= 4 D_\infty \gamma + 250\, \eta\, G d^2 D_\infty^2 + \frac{\alpha}{10 G},
        \qquad \text{laplace\_scale} = \lambda / \varepsilon.

    Then sigma_k ~ Exp(eta)^d (RATE eta, mean 1/eta, as in Suggala and
    Netrapalli), w_k = O_alpha(D, sigma_k) for k = 1..m, and the output
    (1/m) sum_k w_k + mu with mu ~ Lap(lambda/epsilon)^d is (epsilon, delta)-DP.

    Choosing m.  The paper's m is astronomically large at real n.  The
    privacy proof holds for any m once gamma is defined from it (DESIGN.md
    section 4): with ``n_oracle_calls`` = m given,

    .. math::  \gamma = \sqrt{\ln(2d/\delta) / (2m)},  \qquad 0 < \gamma \le 1,

    and lambda uses that gamma (so fewer calls cost a larger Laplace scale:
    the term 4 D_inf gamma grows like 1/sqrt(m)).  With ``n_oracle_calls=None``
    the paper's gamma and m = ceil(paper m) are used, and privopt refuses when
    that m exceeds :data:`MAX_PAPER_ORACLE_CALLS` (10,000), saying how large it
    is and what a smaller m costs.

    Utility bound ``alpha``.  Theorem 7 of [NRVW20] states OPSamp's accuracy
    for convex losses; its exact statement (constants) could not be obtained
    when this was written, so privopt reports the following bound, derived
    here from the same algorithm and parameters.  Let F(w) = L(D, w)/n,
    F* = min_W F, W convex, and the losses convex.  With probability at least
    1 - beta the output w_hat satisfies F(w_hat) - F* <= alpha with

    .. math::

        \alpha = \alpha_{\text{oracle}}
               + \frac{D_\infty\, Q_{\Gamma}(1-\beta/2;\ m d,\ 1/\eta)}{m\, n}
               + G\, Q_{\Gamma}(1-\beta/2;\ d,\ \lambda/\varepsilon),

    Q_Gamma(p; k, s) being the p-quantile of the Gamma law with shape k and
    scale s.  Proof: (i) the oracle gives F(w_k) - <sigma_k, w_k>/n <=
    F(w*) - <sigma_k, w*>/n + alpha_oracle, so F(w_k) - F* <= alpha_oracle +
    ||sigma_k||_1 D_inf / n (Hoelder); (ii) convexity: F(mean w_k) <=
    mean F(w_k), and sum_k ||sigma_k||_1 is a sum of m d independent Exp(rate
    eta), i.e. Gamma(m d, 1/eta), below its 1 - beta/2 quantile with
    probability 1 - beta/2; (iii) F is G-Lipschitz in l1 (an average of such
    losses), so adding mu costs at most G ||mu||_1, and ||mu||_1 is a sum of
    d independent Exp(scale lambda/epsilon), Gamma(d, lambda/epsilon);
    (iv) union bound.  (iii) needs the Lipschitz bound on a set containing
    w_hat, which may leave W; the hinge and absolute losses of
    :mod:`privopt.models.convex` are Lipschitz on all of R^d.  The bound is
    often above 1 (vacuous for losses in [0, 1]) unless n is large.

    Parameters
    ----------
    epsilon, delta : privacy parameters (epsilon > 0, 0 < delta < 1).
    lipschitz : G, the l1-Lipschitz constant of each per-example loss.
    linf_diameter, l2_diameter : D_inf and D_2 of W (D_2 >= D_inf).
    n_samples : n.
    dim : d.
    n_oracle_calls : m, or None for the paper's m.
    beta : failure probability of the utility bound; enters eta.
    oracle_error : alpha of the oracle O_alpha (per-record objective units).

    Returns
    -------
    OPSampParameters
        ``n_oracle_calls``, ``gamma``, ``eta``, ``lambda_``, ``laplace_scale``,
        ``alpha`` (and its three terms), ``paper_n_oracle_calls`` (the real
        number m of the paper), ``gamma_source`` (``"paper"`` or
        ``"n_oracle_calls"``) and the inputs.

    Raises
    ------
    ParameterError, ParameterTypeError
        Naming the offending parameter; ``n_oracle_calls`` when gamma from m
        exceeds 1 or when the paper's m is impractical.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    G = check_positive(lipschitz, "lipschitz", hint="G is the l1-Lipschitz constant of each per-example loss.")
    D_inf = check_positive(linf_diameter, "linf_diameter")
    D_2 = check_positive(l2_diameter, "l2_diameter")
    n = check_int(n_samples, "n_samples", minimum=1)
    d = check_int(dim, "dim", minimum=1)
    beta = check_probability(beta, "beta")
    oracle_error = check_real(oracle_error, "oracle_error")
    if oracle_error < 0:
        raise ParameterError(f"oracle_error must be >= 0, got {oracle_error!r}.", "oracle_error")
    if D_2 < D_inf * (1 - 1e-12):
        raise ParameterError(
            f"l2_diameter ({D_2:g}) is smaller than linf_diameter ({D_inf:g}); the l2 diameter of a "
            "set is at least its l_inf diameter (were they swapped?).", "l2_diameter")

    log_term = math.log(2.0 * d / delta)
    paper_gamma = math.sqrt(epsilon) / (math.sqrt(n) * d**1.25 * math.sqrt(D_2))
    paper_m = log_term / (2.0 * paper_gamma**2)
    eta = math.sqrt(D_2 * math.sqrt(2.0 * d) * epsilon
                    / (250.0 * G**2 * d**2 * D_inf**2 * (1.0 + math.log(2.0 / beta)) * n))

    if n_oracle_calls is None:
        # guard against float noise: 250.00000000000003 is 250 calls
        m = max(1, math.ceil(paper_m * (1.0 - 1e-12)))
        if m > MAX_PAPER_ORACLE_CALLS:
            raise ParameterError(_impractical_message(m, paper_gamma, log_term, eta, epsilon, n, d, D_inf, D_2,
                                                      G, oracle_error), "n_oracle_calls")
        gamma, source = paper_gamma, "paper"
    else:
        if isinstance(n_oracle_calls, bool):  # check_int would read True as 1
            raise ParameterTypeError("n_oracle_calls must be an integer or None, got bool.", "n_oracle_calls")
        m = check_int(n_oracle_calls, "n_oracle_calls", minimum=1)
        gamma = _gamma_from_calls(log_term, m)
        if not 0 < gamma <= 1:
            need = math.ceil(log_term / 2.0)
            raise ParameterError(
                f"n_oracle_calls = {m} gives gamma = sqrt(ln(2d/delta) / (2m)) = {gamma:.4g} > 1; "
                f"the privacy proof of OPSamp needs gamma <= 1, i.e. n_oracle_calls >= "
                f"ln(2d/delta)/2 = {log_term / 2:.4g} (use at least {need}).", "n_oracle_calls")
        source = "n_oracle_calls"

    lam = _lambda(D_inf, gamma, eta, G, d, oracle_error)
    b = lam / epsilon
    alpha_perturbation = D_inf * float(gammaincinv(m * d, 1.0 - beta / 2.0) / eta) / (m * n)
    alpha_laplace = G * float(gammaincinv(d, 1.0 - beta / 2.0) * b)
    return OPSampParameters(
        n_oracle_calls=m,
        gamma=gamma,
        eta=eta,
        lambda_=lam,
        laplace_scale=b,
        alpha=oracle_error + alpha_perturbation + alpha_laplace,
        alpha_oracle=oracle_error,
        alpha_perturbation=alpha_perturbation,
        alpha_laplace=alpha_laplace,
        paper_n_oracle_calls=paper_m,
        gamma_source=source,
        epsilon=epsilon,
        delta=delta,
        lipschitz=G,
        linf_diameter=D_inf,
        l2_diameter=D_2,
        n_samples=n,
        dim=d,
        beta=beta,
        oracle_error=oracle_error,
    )


def _impractical_message(m, paper_gamma, log_term, eta, epsilon, n, d, D_inf, D_2, G, oracle_error) -> str:
    paper_scale = _lambda(D_inf, paper_gamma, eta, G, d, oracle_error) / epsilon
    options = []
    for k in _SUGGESTED_CALLS:
        g = _gamma_from_calls(log_term, k)
        if g <= 1:
            options.append(f"n_oracle_calls={k:,} gives gamma={g:.3g} and laplace_scale="
                           f"{_lambda(D_inf, g, eta, G, d, oracle_error) / epsilon:.4g}")
    return (
        f"n_oracle_calls: the paper's m = ln(2d/delta) / (2 gamma^2) is {m:,} oracle calls here "
        f"(n={n}, d={d}, D_2={D_2:g}, epsilon={epsilon:g}), more than privopt runs unasked "
        f"({MAX_PAPER_ORACLE_CALLS:,}). Choose m yourself with n_oracle_calls=m: the privacy proof "
        "holds for any m with gamma = sqrt(ln(2d/delta)/(2m)) <= 1, at the price of more Laplace "
        f"noise (the paper's m would give laplace_scale={paper_scale:.4g}; "
        + "; ".join(options) + ")."
    )

"""Parameters of OPSamp [NRVW20, Algorithm 2].

[NRVW20] Neel, Roth, Vietri, Wu. Oracle Efficient Private Non-Convex
Optimization. ICML 2020 (arXiv:1909.01783, "Differentially Private Objective
Perturbation: Beyond Smoothness and Convexity").
[M12] Mironov. On significance of the least significant bits for
differential privacy. CCS 2012.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from .._optional import lazy_module
from .._validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_keywords,
    check_positive,
    check_probability,
    check_real,
)
from ..exceptions import ParameterError, ParameterTypeError
from ._grid import GridNoise, grid_laplace

special = lazy_module("scipy.special")     # slow to import: loaded at first use

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
    ``"lambda"``.  ``lambda_ = min(l1_diameter, stability_bound +
    min(t_hoeffding, t_bernstein))``.  ``alpha`` is privopt's own utility bound
    (``alpha_source`` says so); ``oracle_error`` is the alpha of the oracle
    O_alpha (an input).  ``gamma`` is the paper's gamma for this m
    (sqrt(ln(2d/delta)/(2m))), reported because it defines the paper's m; it
    no longer enters lambda.  ``alpha_theorem7_rate`` is the expression inside
    the O() of [NRVW20, Theorem 7], *not* a bound (the theorem states no
    constant).
    """

    n_oracle_calls: int
    gamma: float
    eta: float
    lambda_: float
    laplace_scale: float
    stability_bound: float
    t_hoeffding: float
    t_bernstein: float
    l1_diameter: float
    alpha: float
    alpha_source: str
    alpha_theorem7_rate: float
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
    output_grid: GridNoise

    def as_dict(self) -> dict:
        """Plain dict; ``lambda_`` is spelled ``"lambda"`` (same order as the fields);
        ``output_grid`` is given by its step (``grid_step``) and its noise in
        words (``output_noise``)."""
        out = {("lambda" if f.name == "lambda_" else f.name): getattr(self, f.name) for f in fields(self)}
        grid = out.pop("output_grid")
        out["grid_step"] = grid.step
        out["output_noise"] = grid.describe()
        return out


@dataclass(frozen=True)
class _Inputs:
    """The checked inputs of :func:`opsamp_parameters` (D_1 resolved)."""

    epsilon: float
    delta: float
    lipschitz: float
    linf: float
    l2: float
    l1: float
    n: int
    d: int
    beta: float
    oracle_error: float

    @classmethod
    def checked(cls, epsilon, delta, lipschitz, linf_diameter, l2_diameter, n_samples, dim, beta, oracle_error,
                l1_diameter) -> _Inputs:
        """Each input checked, naming the parameter (D_2 >= D_inf, D_1 >= D_2)."""
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
        return cls(epsilon, delta, G, D_inf, D_2, _l1_diameter(l1_diameter, d, D_inf, D_2), n, d, beta,
                   oracle_error)


def _l1_diameter(l1_diameter, d: int, D_inf: float, D_2: float) -> float:
    """D_1: the given one (>= D_2), else min(d D_inf, sqrt(d) D_2)."""
    if l1_diameter is None:
        return min(d * D_inf, math.sqrt(d) * D_2)
    D_1 = check_positive(l1_diameter, "l1_diameter")
    if D_1 < D_2 * (1 - 1e-12):
        raise ParameterError(
            f"l1_diameter ({D_1:g}) is smaller than l2_diameter ({D_2:g}); the l1 diameter of a "
            "set is at least its l2 diameter.", "l1_diameter")
    return D_1


def _gamma_from_calls(log_term: float, m: int) -> float:
    return math.sqrt(log_term / (2.0 * m))


def _stability_bound(linf, eta, G, d, oracle_error) -> float:
    """A = 250 eta G d^2 D_inf^2 + alpha / (10 G) [NRVW20, Lemma 8, after SN19]."""
    return 250.0 * eta * G * d**2 * linf**2 + oracle_error / (10.0 * G)


def _deviations(A, l1, delta, m) -> tuple[float, float]:
    """(t_H, t_B): Hoeffding's and Bernstein's deviation of a mean of m
    independent variables in [0, D_1] with mean <= A and variance <= D_1 A,
    each exceeded with probability at most delta."""
    L = math.log(1.0 / delta)
    t_h = l1 * math.sqrt(L / (2.0 * m))
    a = L * l1 / (3.0 * m)
    t_b = a + math.sqrt(a * a + 2.0 * L * l1 * A / m)
    return t_h, t_b


def _lambda(A, l1, delta, m) -> float:
    return min(l1, A + min(_deviations(A, l1, delta, m)))


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
    **kwargs,
) -> OPSampParameters:
    r"""Noise parameters and utility bound of OPSamp [NRVW20, Algorithm 2].

    Setting: W in R^d with l_inf diameter D_inf and l2 diameter D_2; each
    per-example loss l_i has values in [0, 1] and is G-Lipschitz with respect
    to the l1 norm; L(D, w) = sum_i l_i(w) over n records; the oracle O_alpha
    minimizes (L(D, w) - <sigma, w>) / n up to additive error alpha
    (``oracle_error``).  Privacy needs no convexity.

    Algorithm 2 of [NRVW20] draws sigma_k ~ Exp(eta)^d (RATE eta, mean
    1/eta, as in [SN19]), calls w_k = O_alpha(D, sigma_k) for k = 1..m and
    releases (1/m) sum_k w_k + mu with mu ~ Lap(lambda/epsilon)^d, with

    .. math::

        \gamma = \frac{\sqrt{\varepsilon}}{\sqrt{n}\, d^{5/4} \sqrt{D_2}},
        \qquad m = \frac{\ln(2d/\delta)}{2\gamma^2},
        \qquad \eta = \sqrt{\frac{D_2 \sqrt{2d}\, \varepsilon}
                {250\, G^2 d^2 D_\infty^2 (1 + \ln(2/\beta))\, n}}

    (privopt uses ceil(m) and these gamma and eta as printed).

    Lambda: a sensitivity bound that holds.  The paper sets lambda = 4 D_inf
    gamma + A with A = 250 eta G d^2 D_inf^2 + alpha/(10 G), resting on its
    Lemma 9 (the mean of the m answers lies within 2 D_inf gamma of its
    expectation in l1 with probability 1 - delta/2).  Lemma 9 is false as
    printed: per-coordinate Hoeffding bounds give d D_inf gamma, not
    2 D_inf gamma.  (Counterexample: W the probability simplex in R^100,
    constant losses, exact oracle, m = 1000: each call returns the vertex of
    the largest sigma_k coordinate, and the l1 deviation exceeds 2 gamma with
    probability about 0.998; ``tests/mechanisms/test_opsamp.py`` reproduces it.)
    privopt uses the following argument instead.  Couple the two neighbouring
    data sets D, D' through the same noise Sigma = (sigma_1..sigma_m) and let
    Y_k = ||O(D, sigma_k) - O(D', sigma_k)||_1.  The Y_k are independent (each
    call's answer is a function of the data and its own sigma_k alone: the
    exact, certified minimizer, unique with probability one, is the same
    point whether privopt solves the call from scratch or, by default,
    re-solves it warm from the previous call's basis -- see
    :func:`privopt.mechanisms._parallel.oracle_call`), lie in [0, D_1] with D_1 the l1 diameter
    of W, and E[Y_k] <= A by the stability lemma [NRVW20, Lemma 8; SN19].  So
    ||W(D, Sigma) - W(D', Sigma)||_1 <= (1/m) sum_k Y_k <= A + t with
    probability at least 1 - delta, where, with L = ln(1/delta), either

    .. math::

        t_H = D_1 \sqrt{L / (2m)} \quad\text{(Hoeffding)}, \qquad
        t_B = \frac{L D_1}{3m} + \sqrt{\Big(\frac{L D_1}{3m}\Big)^2 + \frac{2 L D_1 A}{m}}
        \quad\text{(Bernstein, Var } Y_k \le E[Y_k^2] \le D_1 A).

    privopt sets lambda = min(D_1, A + min(t_H, t_B)) (the two averages lie
    within D_1 of each other whatever the noise, since every Y_k <= D_1; when
    D_1 is the smaller term the release is even (epsilon, 0)-DP).  The output
    step is not the paper's double-precision Laplace, which a floating-point
    attack defeats [M12], but its exact counterpart on a grid fixed before the
    data is read (``output_grid``, :func:`privopt.calibration.grid_laplace`):
    gamma (round(w_bar / gamma) + Z) with gamma = 2^k <= lambda / (d 2^20) and
    Z_j i.i.d. discrete Laplace of scale t = (lambda/gamma + d)/epsilon grid
    units, so that ``laplace_scale`` = t gamma = (lambda/epsilon)(1 + d
    gamma/lambda).  On the event B that the bound holds this mechanism
    gives Pr[M(D) in S, B] <= e^epsilon Pr[M(D') in S]; hence
    Pr[M(D) in S] <= e^epsilon Pr[M(D') in S] + Pr[not B] with
    Pr[not B] <= delta: (epsilon, delta)-DP under replace-one neighbours, for
    every m >= 1 and without convexity.  Where the paper's value was
    correct, the cost of the repair is the factor D_1 / (2 D_inf) between
    t_H and the paper's 4 D_inf gamma (1 on the simplex, d / 2 on a box).

    Choosing m.  The paper's m is astronomically large at real n.  With
    ``n_oracle_calls=None`` the paper's m = ceil(m) is used, and privopt
    refuses when that m exceeds :data:`MAX_PAPER_ORACLE_CALLS` (10,000),
    saying how large it is and what a smaller m costs.  With
    ``n_oracle_calls`` = m given, the bound above holds as is; ``gamma`` is
    reported as sqrt(ln(2d/delta)/(2m)), the paper's gamma for that m.

    Utility.  [NRVW20, Theorem 7], verbatim: "Assuming the loss functions are
    convex, Algorithm 2 is an (alpha', beta)-minimizer for (1/n) L(w, D)
    with alpha' = O( d^{5/4} G D_inf sqrt(D_2 log(1/beta)) / sqrt(eps n) +
    alpha log(1/beta) / eps )".  The theorem states no constant, so privopt
    does not turn it into a number: ``alpha_theorem7_rate`` is the
    expression inside the O() (not a bound), and ``alpha`` is privopt's own
    bound (``alpha_source = "privopt"``), derived here for the lambda above.
    Let F(w) = L(D, w)/n, F* = min_W F, W convex, and the losses convex.
    With probability at least 1 - beta the output w_hat satisfies
    F(w_hat) - F* <= alpha with

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
    d independent Exp(scale lambda/epsilon), Gamma(d, lambda/epsilon) (the
    factor d that the last lines of Theorem 7's proof drop is kept here);
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
    **kwargs : the two refinements, by keyword only:
        ``oracle_error``, alpha of the oracle O_alpha (per-record objective
        units; default 0), and ``l1_diameter``, D_1, the l1 diameter of W
        (default min(d D_inf, sqrt(d) D_2), an upper bound for any set with
        these diameters; the l1 diameter of a box is the sum of its widths:
        pass it when known).  Any other name is a TypeError naming it.

    Returns
    -------
    OPSampParameters
        ``n_oracle_calls``, ``gamma``, ``eta``, ``lambda_``, ``laplace_scale``,
        ``stability_bound`` (A), ``t_hoeffding``, ``t_bernstein``,
        ``l1_diameter``, ``alpha`` (and its three terms, ``alpha_source``),
        ``alpha_theorem7_rate``, ``paper_n_oracle_calls`` (the real number m of
        the paper), ``gamma_source`` (``"paper"`` or ``"n_oracle_calls"``) and
        the inputs.

    Raises
    ------
    ParameterError, ParameterTypeError
        Naming the offending parameter; ``n_oracle_calls`` when the paper's m
        is impractical; ``l1_diameter`` when it is smaller than D_2.
    """
    check_keywords("opsamp_parameters", kwargs, ("oracle_error", "l1_diameter"))
    x = _Inputs.checked(epsilon, delta, lipschitz, linf_diameter, l2_diameter, n_samples, dim, beta,
                        kwargs.get("oracle_error", 0.0), kwargs.get("l1_diameter"))
    epsilon, delta, G, D_inf, D_2, D_1 = x.epsilon, x.delta, x.lipschitz, x.linf, x.l2, x.l1
    n, d, beta, oracle_error = x.n, x.d, x.beta, x.oracle_error

    log_term = math.log(2.0 * d / delta)
    paper_gamma = math.sqrt(epsilon) / (math.sqrt(n) * d**1.25 * math.sqrt(D_2))
    paper_m = log_term / (2.0 * paper_gamma**2)
    eta = math.sqrt(D_2 * math.sqrt(2.0 * d) * epsilon
                    / (250.0 * G**2 * d**2 * D_inf**2 * (1.0 + math.log(2.0 / beta)) * n))

    if n_oracle_calls is None:
        # guard against float noise: 250.00000000000003 is 250 calls
        m = max(1, math.ceil(paper_m * (1.0 - 1e-12)))
        if m > MAX_PAPER_ORACLE_CALLS:
            raise ParameterError(_impractical_message(x, m, eta), "n_oracle_calls")
        gamma, source = paper_gamma, "paper"
    else:
        if isinstance(n_oracle_calls, bool):  # check_int would read True as 1
            raise ParameterTypeError("n_oracle_calls must be an integer or None, got bool.", "n_oracle_calls")
        m = check_int(n_oracle_calls, "n_oracle_calls", minimum=1)
        gamma = _gamma_from_calls(log_term, m)
        source = "n_oracle_calls"

    A = _stability_bound(D_inf, eta, G, d, oracle_error)
    t_h, t_b = _deviations(A, D_1, delta, m)
    lam = _lambda(A, D_1, delta, m)
    # the output step: discrete Laplace on a grid fixed here, before any data is read
    # (privopt.calibration._grid, eq. (3)); its scale is lambda/epsilon (1 + d gamma/lambda)
    grid = grid_laplace(lam, epsilon, d)
    b = grid.scale
    alpha_perturbation = D_inf * float(special.gammaincinv(m * d, 1.0 - beta / 2.0) / eta) / (m * n)
    alpha_laplace = G * float(special.gammaincinv(d, 1.0 - beta / 2.0) * b)
    return OPSampParameters(
        n_oracle_calls=m,
        gamma=gamma,
        eta=eta,
        lambda_=lam,
        laplace_scale=b,
        stability_bound=A,
        t_hoeffding=t_h,
        t_bernstein=t_b,
        l1_diameter=D_1,
        alpha=oracle_error + alpha_perturbation + alpha_laplace,
        alpha_source="privopt",
        alpha_theorem7_rate=(d**1.25 * G * D_inf * math.sqrt(D_2 * math.log(1.0 / beta)) / math.sqrt(epsilon * n)
                             + oracle_error * math.log(1.0 / beta) / epsilon),
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
        output_grid=grid,
    )


def _impractical_message(x: _Inputs, m: int, eta: float) -> str:
    epsilon, delta, n, d, D_inf, D_1, D_2 = x.epsilon, x.delta, x.n, x.d, x.linf, x.l1, x.l2
    G, oracle_error = x.lipschitz, x.oracle_error
    A = _stability_bound(D_inf, eta, G, d, oracle_error)
    paper_scale = _lambda(A, D_1, delta, m) / epsilon
    options = [f"n_oracle_calls={k:,} gives laplace_scale={_lambda(A, D_1, delta, k) / epsilon:.4g}"
               for k in _SUGGESTED_CALLS]
    return (
        f"n_oracle_calls: the paper's m = ln(2d/delta) / (2 gamma^2) is {m:,} oracle calls here "
        f"(n={n}, d={d}, D_2={D_2:g}, epsilon={epsilon:g}), more than privopt runs unasked "
        f"({MAX_PAPER_ORACLE_CALLS:,}). Choose m yourself with n_oracle_calls=m: the privacy proof "
        "holds for any m >= 1, at the price of more Laplace noise for a smaller m "
        f"(the paper's m would give laplace_scale={paper_scale:.4g}; "
        + "; ".join(options) + ")."
    )

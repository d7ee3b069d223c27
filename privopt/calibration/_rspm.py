r"""Noise scale of RSPM (Report Separator-Perturbed Noisy Max / Min) [NRW18].

[NRW18] Neel, Roth, Wu. How to use heuristics for differential privacy
(arXiv:1811.07765; FOCS 2019).  RSPM is the private competitor of OPDisc in
[NRVW20] Section 5, over halfspaces with weights in {-1, 0, 1}^d.

Provenance of the constant -- read this first
---------------------------------------------
The scale below is **privopt's own derivation**, written out in full in
:func:`rspm_noise_scale` and checked numerically in ``tests/mechanisms/test_rspm.py``.
When this module was written the text of [NRW18]'s RSPM theorem (its noise
scale, the neighbouring relation it is stated for, and whether it is stated
for the error count or the error rate) could not be obtained, so no theorem
number of [NRW18] is cited for the constant.  Only the *mechanism* (one
independent noise draw per element of a separator set, added as a linear
term to the exact oracle's objective) is [NRW18]'s.  The Gaussian variant of
[NRW18] is not offered because its constants could not be established
either; ``noise="gaussian"`` raises.  If the paper's statement becomes
available, compare it with the derivation here, in particular the factor 2
that comes from the replace-one neighbouring relation (see the remark at the
end of the derivation).
"""

from __future__ import annotations

from .._validation import check_choice, check_delta, check_epsilon, check_int, check_positive
from ..exceptions import ParameterError, ParameterTypeError

__all__ = ["rspm_noise_scale", "RSPM_NOISE_KINDS"]

#: Noise distributions :func:`rspm_noise_scale` can size.
RSPM_NOISE_KINDS = ("laplace",)


def check_rspm_noise(noise) -> str:
    """The noise kind: ``"laplace"``; ``"gaussian"`` is refused with the reason."""
    if not isinstance(noise, str):
        raise ParameterTypeError(
            f"noise must be the name of a distribution ('laplace'), got {type(noise).__name__}.", "noise")
    if noise == "gaussian":
        raise ParameterError(
            "noise='gaussian' is not available: the constants of the Gaussian variant of RSPM "
            "[Neel, Roth, Wu, arXiv:1811.07765] could not be established from the paper, and privopt "
            "does not guess them. Use noise='laplace' (pure epsilon-DP).", "noise")
    return check_choice(noise, "noise", RSPM_NOISE_KINDS)


def rspm_noise_scale(epsilon: float, delta: float, n_separators: int, noise: str = "laplace", *,
                     sensitivity: float = 1.0) -> float:
    r"""Scale b of the i.i.d. Laplace noise of RSPM: b = 2 * Delta * m / epsilon.

    With Delta = 1 (the 0/1 loss) and m = 2d separator elements (halfspaces over
    {-1, 0, 1}^d with U = {+e_j, -e_j}) this is **b = 4 d / epsilon**
    (e.g. d = 23, epsilon = 1: b = 92).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.  The guarantee is pure epsilon-DP.
    delta : float
        In [0, 1); not used by the Laplace variant (its delta is 0).  Accepted
        so that callers can pass the delta they use for other mechanisms.
    n_separators : int
        m = |U|, the size of the separator set (one noise draw per element).
    noise : {"laplace"}
        ``"gaussian"`` raises (see the module docstring).
    sensitivity : float
        Delta = max over neighbouring D, D' (one record *replaced*) and over
        candidates w of |L(D, w) - L(D', w)|.  For a loss that is a SUM of
        per-record losses with values in an interval of width 1 -- the 0/1
        error COUNT -- Delta = 1.  If the objective were the error RATE
        L/n, Delta would be 1/n (equivalently: b for the rate is b/n); privopt's
        halfspace models minimize the count, so Delta = 1 there.

    Derivation (privopt's, not quoted from [NRW18])
    -----------------------------------------------
    Setting.  W is a finite candidate set, phi: W -> {0,1}^m the separator
    encoding phi_u(w) = h_w(u) for u in U.  U is a *separator set*: phi is
    injective (any two distinct candidates differ on some u).  For halfspaces
    over {-1,0,1}^d, U = {+e_j, -e_j}, phi(w) = (p, n) with p_j = 1[w_j = 1],
    n_j = 1[w_j = -1], which determines w_j = p_j - n_j.  The oracle returns

        M(D) = argmin_{w in W}  J_D(w; xi),   J_D(w; xi) = L(D, w) + <xi, phi(w)>,

    with xi_u ~ Lap(b) i.i.d., density p(xi) = prod_u exp(-|xi_u| / b) / (2b).

    (1) Ties have probability 0.  For w != w', J_D(w; xi) = J_D(w'; xi) iff
        <xi, phi(w) - phi(w')> = L(D, w') - L(D, w): a hyperplane in R^m,
        because phi(w) != phi(w').  Finitely many hyperplanes have Lebesgue
        measure 0 and xi has a density, so the argmin is a.s. unique.

    (2) Shift.  Fix w* in W and let A_D = {xi : w* is the unique argmin of
        J_D(.; xi)}.  Define c in R^m by c_u = -2 Delta if phi_u(w*) = 1 and
        c_u = +2 Delta if phi_u(w*) = 0.  For xi in A_D and any w != w*:

            J_D'(w; xi + c) - J_D'(w*; xi + c)
              = [L(D', w) - L(D', w*)] + <xi, phi(w) - phi(w*)> + <c, phi(w) - phi(w*)>
             >= [L(D, w) - L(D, w*)] - 2 Delta + <xi, phi(w) - phi(w*)> + 2 Delta * k
             >= J_D(w; xi) - J_D(w*; xi) > 0,

        where k >= 1 is the number of u with phi_u(w) != phi_u(w*) (separator
        property), each contributing c_u (phi_u(w) - phi_u(w*)) = 2 Delta,
        and |L(D', v) - L(D, v)| <= Delta for v = w and v = w* (replacing one
        record changes each candidate's loss by at most Delta, so the
        DIFFERENCE of two candidates' losses moves by up to 2 Delta).
        Hence A_D + c is contained in A_D'.

    (3) Density ratio.  ||c||_1 = 2 Delta m and p(xi + c) >= exp(-||c||_1 / b) p(xi)
        (triangle inequality, coordinatewise), so

            P[M(D') = w*] = P[xi in A_D'] >= P[xi in A_D + c]
                          = integral over A_D of p(xi + c) dxi
                          >= exp(-2 Delta m / b) P[M(D) = w*].

        With b = 2 Delta m / epsilon this is P[M(D) = w*] <= e^epsilon
        P[M(D') = w*] for every w*; D and D' play symmetric roles and W is
        finite (sum over any set of outputs), so M is epsilon-DP (delta = 0),
        provided the oracle returns the exact argmin (:mod:`privopt.oracle`).
        Releasing w = p - n is post-processing.

    Remark (neighbouring relation).  If neighbours were defined by adding or
    removing one record, L(D', v) - L(D, v) = l(v; z) for the same record z,
    so the difference of two candidates' losses moves by at most Delta and
    c_u = +-Delta suffices: b = Delta m / epsilon, half of the value here.
    privopt states every guarantee for data sets differing in one *replaced*
    record (the relation [NRVW20] use), hence the factor 2.  Step (2) is tight
    for this argument: on the 0/1 loss there are neighbours whose loss
    difference between two candidates moves by exactly 2 (tested).

    Returns
    -------
    float
        b, the scale of each Laplace draw (standard deviation sqrt(2) b).
    """
    epsilon = check_epsilon(epsilon)
    check_delta(delta, allow_zero=True)
    m = check_int(n_separators, "n_separators", minimum=1)
    check_rspm_noise(noise)
    sensitivity = check_positive(sensitivity, "sensitivity")
    return 2.0 * sensitivity * m / epsilon

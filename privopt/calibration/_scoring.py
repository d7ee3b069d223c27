r"""The private risk table of a scoring system.

Given the released points vector p (public once released), the risk table lists,
for each total score s in [lo(p), hi(p)], the number of training records with
that score and how many of them are positive.  These 2 (hi - lo + 1) counts form
a histogram in which every record falls in exactly one cell (its score and its
label).  Replacing one record moves one unit from one cell to another, so the
histogram's l1 sensitivity under replace-one is

    Delta_1 = 2.                                                        (1)

The discrete Laplace (two-sided geometric) mechanism [GRS12; CKS20] adds to
every cell an integer Z with P(Z = k) proportional to exp(-|k| / t),
t = Delta_1 / epsilon_table: moving the histogram by a vector v of l1 norm
at most Delta_1 changes the probability of every output by at most
exp(||v||_1 / t) = exp(epsilon_table), so it is epsilon_table-DP
(:func:`risk_table_noise`; the scale is :func:`risk_table_noise_scale`).  The
counts and the noise are integers and the noise is sampled exactly with
integer arithmetic (:mod:`privopt._exact`), so no released count is
impossible under a neighbour: the continuous Laplace mechanism of
[DMNS06] computed in doubles is not safe here [M12].  Rates (noisy positives / noisy total) are
post-processing.  The table is computed after, and from, the released points
vector; by sequential composition, which holds for adaptively chosen pure-DP
mechanisms [DR14, Theorem 3.16], releasing the scoring system (epsilon_select)
and then the table (epsilon_table) is (epsilon_select + epsilon_table)-DP
(:func:`split_risk_epsilon`).

[DMNS06] Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity in
         private data analysis. TCC 2006.
[DR14]   Dwork, Roth. The algorithmic foundations of differential privacy. 2014.
[GRS12]  Ghosh, Roughgarden, Sundararajan. Universally utility-maximizing
         privacy mechanisms. SIAM J. Comput. 41(6), 2012.
[CKS20]  Canonne, Kamath, Steinke. The discrete Gaussian for differential
         privacy. NeurIPS 2020.
[M12]    Mironov. On significance of the least significant bits for
         differential privacy. CCS 2012.
"""

from __future__ import annotations

from .._validation import check_epsilon, check_real
from ..exceptions import ParameterError
from ._grid import GridNoise, count_laplace

__all__ = ["RISK_TABLE_SENSITIVITY", "risk_table_noise", "risk_table_noise_scale", "split_risk_epsilon"]

#: l1 sensitivity of the (score, label) histogram under replace-one, eq. (1).
RISK_TABLE_SENSITIVITY = 2.0


def risk_table_noise_scale(epsilon_table: float) -> float:
    """Discrete Laplace scale t = Delta_1 / epsilon_table = 2 / epsilon_table per cell."""
    return RISK_TABLE_SENSITIVITY / check_epsilon(epsilon_table, "epsilon_table")


def risk_table_noise(epsilon_table: float) -> GridNoise:
    """The law of each cell's noise: discrete Laplace on the integers with
    t = Delta_1 / epsilon_table exactly (eq. (1); delivered epsilon
    ``.epsilon`` = epsilon_table)."""
    return count_laplace(RISK_TABLE_SENSITIVITY, check_epsilon(epsilon_table, "epsilon_table"))


def split_risk_epsilon(epsilon: float, risk_share: float) -> tuple[float, float]:
    """(epsilon_select, epsilon_table) = (epsilon (1 - share), epsilon share);
    their sum is the total epsilon by sequential composition.  share = 0
    releases no table."""
    epsilon = check_epsilon(epsilon)
    share = check_real(risk_share, "risk_share")
    if not 0.0 <= share < 1.0:
        raise ParameterError(f"risk_share must be in [0, 1) (the share of epsilon spent on the risk table; "
                             f"0 = no table), got {risk_share!r}.", "risk_share")
    return epsilon * (1.0 - share), epsilon * share

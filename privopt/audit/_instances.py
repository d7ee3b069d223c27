"""Tiny pairs of neighbouring data sets for the audit.

Neighbouring means: the same number of records, one record replaced (the
relation every privopt guarantee is stated for).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_array_2d, check_binary_labels, check_int
from ..exceptions import ParameterError

__all__ = ["NeighbouringPair", "design_instance", "hinge_instance", "opsamp_instance", "selection_instance",
           "data_constraint_instance"]


@dataclass(frozen=True)
class NeighbouringPair:
    """Two labelled data sets (X, y) and (X', y') that differ in one record.

    ``name`` and ``description`` say what the pair is for.  The arrays are
    copied and made read-only.
    """

    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray
    name: str = "pair"
    description: str = ""

    def __post_init__(self):
        X = check_array_2d(self.X, "X")
        Xp = check_array_2d(self.X_prime, "X_prime")
        y = np.array(self.y, copy=True)
        yp = np.array(self.y_prime, copy=True)
        check_binary_labels(y, X.shape[0], "y")
        check_binary_labels(yp, Xp.shape[0], "y_prime")
        if X.shape != Xp.shape:
            raise ParameterError(f"X_prime has shape {Xp.shape}, X has {X.shape}: neighbours replace one "
                                 "record, so both have the same shape.", "X_prime")
        differ = np.any(X != Xp, axis=1) | (y != yp)
        if int(differ.sum()) != 1:
            raise ParameterError(
                f"the two data sets differ in {int(differ.sum())} records; neighbours differ in exactly one "
                "(replace one record).", "X_prime")
        for arr in (X, Xp, y, yp):
            arr.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "X_prime", Xp)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "y_prime", yp)

    def data(self, which: int):
        """(X, y) for ``which = 0`` (D) or ``1`` (D')."""
        if which not in (0, 1):
            raise ParameterError("which must be 0 (D) or 1 (D').", "which")
        return (self.X, self.y) if which == 0 else (self.X_prime, self.y_prime)


def design_instance() -> NeighbouringPair:
    r"""The smallest instance where normalization matters (d = 1, W = {-1, 0, 1}).

    One feature, halfspace w in W = {-1, 0, 1} (``zero_one_halfspace`` with
    d = 1: grid {-1, 0, 1}, D = 1, tau = 1, G = 1), prediction +1 iff w x >= 0.

    D  = {(x=1, +1), (x=-1, +1), (x=0, -1)}:  L(-1), L(0), L(1) = 2, 1, 2
    D' = {(x=1, +1), (x=1, -1),  (x=0, -1)}:  L'(-1), L'(0), L'(1) = 2, 2, 2

    (the second record is replaced).  So L(-1) = L(1) = L(0) + 1 on D and the
    neighbour raises L(0) by 1.  Without pi (objective L(w) - eta w), w = 0 is
    the argmin on D iff |eta| <= 1 (positive probability) and on D' iff
    eta = 0 (probability zero): no finite epsilon.  The third record (a
    constant loss of 1) only gives both sets two classes.
    """
    X = np.array([[1.0], [-1.0], [0.0]])
    y = np.array([1, 1, -1])
    Xp = np.array([[1.0], [1.0], [0.0]])
    yp = np.array([1, -1, -1])
    return NeighbouringPair(X, y, Xp, yp, name="normalization_d1",
                            description="d=1, W={-1,0,1}: L=(2,1,2) on D, L'=(2,2,2) on D'")


def selection_instance(k: int = 4) -> NeighbouringPair:
    r"""A pair on which private selection is close to its worst case (d = 1).

    W = {-1, 0, 1}, prediction +1 iff w x >= 0 (as in :func:`design_instance`).

    D  = k x (x=1, +1), (x=1, -1), (x=0, -1):  L(-1), L(0), L(1) = k+1, 2, 2
    D' = k x (x=1, +1), (x=1, +1), (x=0, -1):  L'(-1), L'(0), L'(1) = k+2, 1, 1

    Replacing one record raises the loss of w = -1 by 1 and lowers every other
    loss by 1, the largest change replace-one neighbours allow.  With w = -1
    rare (k large), P[M(D) = -1] / P[M(D') = -1] approaches e^epsilon for the
    exponential mechanism, so a calibration with half the sensitivity
    (ratio up to e^{2 epsilon}) is caught.
    """
    X = np.array([[1.0]] * k + [[1.0], [0.0]])
    y = np.array([1] * k + [-1, -1])
    yp = np.array([1] * k + [1, -1])
    return NeighbouringPair(X, y, X.copy(), yp, name=f"selection_d1_k{k}",
                            description=f"d=1, W={{-1,0,1}}: L=({k + 1},2,2) on D, L'=({k + 2},1,1) on D'")


def hinge_instance(n_copies: int = 1000) -> NeighbouringPair:
    r"""A one-feature pair for OPSamp with the hinge loss (use ``x_bound=2``).

    D  = ``n_copies`` x (x=2, y=-1), ``n_copies`` x (x=2, y=+1), and (x=0, y=+1);
    D' = the same with the last record replaced by (x=2, y=-1).

    On the box [-1, 1] the normalized hinge loss
    L(w) = sum_i max(0, 1 - y_i x_i w) / C (C = 3 for ``x_bound=2``, b = 1)
    is piecewise linear with kinks at w = -1/2 and w = 1/2, so each oracle
    answer of OPSamp is one of -1, -1/2, 1/2, 1.  With ``n_copies`` = 1000
    (n = 2001) the exponential noise of OPSamp (epsilon = 1, delta = 0.01,
    m = 8) makes the answer 1/2 or 1 with probabilities near 0.4 and 0.6, so
    the oracle's answer really depends on the noise.
    """
    k = check_int(n_copies, "n_copies", minimum=1)
    X = np.array([[2.0]] * (2 * k) + [[0.0]])
    y = np.array([-1] * k + [1] * k + [1])
    Xp = X.copy()
    yp = y.copy()
    Xp[-1, 0] = 2.0
    yp[-1] = -1
    return NeighbouringPair(X, y, Xp, yp, name=f"hinge_n{X.shape[0]}",
                            description=f"d=1 hinge loss with kinks at +-1/2, n={X.shape[0]}; the last record "
                                        "(0, +1) is replaced by (2, -1)")


def opsamp_instance() -> NeighbouringPair:
    r"""A three-record pair where OPSamp's oracle answers alone are not private
    (use with ``x_bound=2`` and the box [-1, 1]).

    D  = {(x=1, +1), (x=-1, +1), (x=0, -1)}: the hinge terms are linear on the
    box and cancel, L(w) = 3 / C is constant, so every oracle answer of
    argmin L(w) - sigma_k w with sigma_k >= 0 is w = 1;
    D' = {(x=1, +1), (x=2, -1), (x=0, -1)} (the second record replaced): on
    [-1/2, 1] L'(w) has slope 1/C > 0, so an answer is w = -1/2 whenever
    sigma_k < 1/C, which has positive probability.  Without the Laplace step
    the output (1/m) sum_k w_k is exactly 1 on D and sometimes below 1 on D'
    (no finite epsilon); OPSamp's Laplace step must hide that.
    """
    X = np.array([[1.0], [-1.0], [0.0]])
    y = np.array([1, 1, -1])
    Xp = np.array([[1.0], [2.0], [0.0]])
    yp = np.array([1, -1, -1])
    return NeighbouringPair(X, y, Xp, yp, name="opsamp_kink",
                            description="d=1 hinge: L constant on D, slope 1/C near w=1 on D' (one record replaced)")


def data_constraint_instance(n: int = 4) -> NeighbouringPair:
    r"""A pair for private selection on a user's Pyomo model whose decision
    carries a constraint built from the records
    (:class:`~privopt.audit.ConstrainedSelectionTarget`).

    One feature x_t in [0, 4] per record (the labels, +1 and -1 in turn, are
    not used by the loss).
    D = (4, ..., 4, 0), D' = (4, ..., 4, 4): the mean is 4 (n - 1) / n on D
    and 4 on D', so the constraint w <= mean(x) admits w = 4 on D' only.
    """
    n = check_int(n, "n", minimum=2)
    X = np.array([[4.0]] * (n - 1) + [[0.0]])
    Xp = np.array([[4.0]] * n)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    return NeighbouringPair(X, y, Xp, y.copy(), name=f"data_constraint_n{n}",
                            description="w in {0..4}, loss sum_t |w - x_t|, constraint w <= mean(x)")


def resolution_instance(k: int = 4) -> NeighbouringPair:
    r"""A pair for private selection among resolutions
    (:class:`~privopt.audit.MixtureSelectionTarget`) on which the better
    resolution flips between neighbours.

    One raw feature x in {0, 1, 2}; resolution r = 0 sees f = [x >= 1],
    r = 1 sees f = [x >= 2] (public per-record maps); each W_r = {-1, 0, 1}
    (+1 iff w f >= 0).

    D  = k x (x=2, -1), k x (x=0, +1), (x=1, -1):  L_0 = (0, k+1, k+1), L_1 = (1, k+1, k+1)
    D' = the same with the last record (x=1, +1):  L_0 = (1, k, k),     L_1 = (0, k, k)

    (losses of w = -1, 0, 1).  A base measure that follows the data (the
    resolution with the lower best loss) puts r = 0 on D and r = 1 on D'.
    """
    k = check_int(k, "k", minimum=1)
    X = np.array([[2.0]] * k + [[0.0]] * k + [[1.0]])
    y = np.array([-1] * k + [1] * k + [-1])
    yp = np.array([-1] * k + [1] * k + [1])
    return NeighbouringPair(X, y, X.copy(), yp, name=f"resolution_flip_k{k}",
                            description="x in {0,1,2}; r=0 sees [x>=1], r=1 sees [x>=2]; the better r flips")

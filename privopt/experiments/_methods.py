"""The experiment's methods: their names and families, the label a run is grouped and
drawn under, one line per method on what it is, and the revision of the code that
computes each.  Shared by the runner, the results store, the summary and the figures
(none of which imports another to get these)."""

from __future__ import annotations

from .. import _revisions
from ..mechanisms import MECHANISMS

__all__ = [
    "DEFAULT_METHOD",
    "MIP_METHODS",
    "SELECTION_METHODS",
    "TUNED_METHODS",
    "ZERO_ONE_REFERENCE",
    "ZERO_ONE_DEFAULT_REFERENCE",
    "ZERO_ONE_REFERENCES",
    "DETERMINISTIC_METHODS",
    "REFERENCE_TIME_LIMIT",
    "METHOD_DESCRIPTIONS",
    "method_label",
    "available_methods",
    "row_calibration",
    "method_revision",
]

#: :class:`~privopt.PrivateHalfspaceClassifier` as a user gets it: ``epsilon`` and public
#: ``bounds`` only, every other parameter its default (``mechanism="auto"``: private selection
#: among resolutions, with the warm start where the budget allows it).
DEFAULT_METHOD = "default"
#: Methods of the MIP family (privopt's mechanisms through the estimator).
MIP_METHODS = ("opdisc", "rspm")
#: Private selection over the estimator's default W (exponential mechanism,
#: permute-and-flip): :class:`~privopt.PrivateHalfspaceClassifier` with that
#: ``mechanism`` and its default W (intercept, grid -2..2, ||w|| <= min(sqrt(d), 2));
#: pure epsilon-DP, rows record delta = 0.
SELECTION_METHODS = ("permute_and_flip", "exponential")
#: DP-SGD with the paper's grid search over clip norm, batch size and learning
#: rate, the best combination chosen on a validation split of the TRAINING
#: (private) data, as in [NRVW20] Section 5: every run is (epsilon, delta)-DP,
#: the selection is not.
TUNED_METHODS = ("dpsgd_tuned",)
#: The non-private 0/1-loss optimum on OPDisc's grid and ball.
ZERO_ONE_REFERENCE = "nonprivate_01"
#: The non-private 0/1-loss optimum on the estimator's default W (the W of
#: :data:`SELECTION_METHODS`).
ZERO_ONE_DEFAULT_REFERENCE = "nonprivate_01_default"
#: The non-private 0/1-loss references (:class:`~privopt.ZeroOneHalfspaceClassifier`).
ZERO_ONE_REFERENCES = (ZERO_ONE_REFERENCE, ZERO_ONE_DEFAULT_REFERENCE)
#: Methods without randomness: run once per sweep (epsilon recorded as inf).
DETERMINISTIC_METHODS = ("nonprivate_lr", "majority", *ZERO_ONE_REFERENCES)
#: Seconds for the non-private 0/1 reference when the sweep sets no time limit.
REFERENCE_TIME_LIMIT = 600.0

#: One line per method: what it is (for tables, figure legends and the demo).
METHOD_DESCRIPTIONS = {
    DEFAULT_METHOD: ("PrivateHalfspaceClassifier's defaults (mechanism='auto'): one private selection among "
                     "resolutions of W (feature levels, weight grid, ball) and, where epsilon * n allows, a "
                     "private warm start's W; 0/1 loss, epsilon-DP in total (delta = 0 when it selects)"),
    "opdisc": "OPDisc [NRVW20, Alg. 1]: 0/1 loss, objective perturbation, privopt's proven sigma",
    "opdisc[paper]": "OPDisc with Algorithm 1's sigma (as published; its proof has a gap)",
    "rspm": "RSPM [NRW18]: 0/1 loss over {-1,0,1}^d, Laplace objective perturbation",
    "dpsgd": "DP-SGD logistic regression [ACG+16], privopt's public default hyperparameters",
    "dpsgd_tuned": ("DP-SGD logistic regression, hyperparameters chosen on the private data as in "
                    "the paper (the choice is not itself private)"),
    "dpagd": "DP-AGD logistic regression [LK18]",
    "noisy_sgd": ("noisy SGD on the hinge loss, one pass in expectation of Poisson batches, gradients on a "
                  "grid with exact discrete Gaussian noise [ZDW22, CKS20]"),
    "objective_perturbation": "objective-perturbed logistic regression [CMS11, Alg. 2]",
    "output_perturbation": "output-perturbed logistic regression [CMS11, Alg. 1]",
    "nonprivate_lr": "logistic regression, not private (reference)",
    "majority": "majority class, not private (reference)",
    ZERO_ONE_REFERENCE: "0/1-loss optimum on OPDisc's grid and ball, not private (reference)",
    "permute_and_flip": ("permute-and-flip [MS20] over the single W the default starts from "
                         "(resolutions=None: intercept, grid -2..2, ||w|| <= 2): 0/1 loss, pure "
                         "epsilon-DP (delta = 0)"),
    "exponential": ("exponential mechanism [MT07] over the single W the default starts from "
                    "(resolutions=None: intercept, grid -2..2, ||w|| <= 2): 0/1 loss, pure "
                    "epsilon-DP (delta = 0)"),
    ZERO_ONE_DEFAULT_REFERENCE: ("0/1-loss optimum on the single default W (the W of permute_and_flip "
                                 "and exponential), not private (reference)"),
}


def method_label(method: str, calibration: str = "") -> str:
    """The name a run is grouped and drawn under: the method, with OPDisc's
    calibration when it is not privopt's proven one (``"opdisc[paper]"``)."""
    return f"{method}[{calibration}]" if method == "opdisc" and calibration not in ("", "proven") else method


def _baselines():
    from ..baselines import PRIVATE_BASELINES, REFERENCE_BASELINES   # lazy: scikit-learn (privopt[learn])

    return {**PRIVATE_BASELINES, **REFERENCE_BASELINES}


def available_methods() -> list[str]:
    names = [m for m in MIP_METHODS + SELECTION_METHODS if m in MECHANISMS]
    if "permute_and_flip" in names:
        names.insert(0, DEFAULT_METHOD)
    try:
        names += list(_baselines()) + list(TUNED_METHODS)
    except ImportError:  # baselines need the [learn] extra
        pass
    if "opdisc" in names:
        names.append(ZERO_ONE_REFERENCE)
    if any(m in names for m in SELECTION_METHODS):
        names.append(ZERO_ONE_DEFAULT_REFERENCE)
    return names



def row_calibration(method: str, calibration: str) -> str:
    """The calibration recorded for a run: OPDisc's, or "" for methods that have one."""
    return calibration if method == "opdisc" else ""


def method_revision(method: str) -> str:
    """Revision of the code that computes a row of ``method``
    (:data:`privopt._revisions.REVISIONS`)."""
    return _revisions.REVISIONS[method]

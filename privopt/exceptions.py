"""Exceptions and warnings raised by privopt.

Every error privopt raises is a :class:`PrivoptError`.  Errors about the
caller's input also subclass :class:`ValueError` or :class:`TypeError`, so code
written against the standard library's conventions keeps working; errors about
solvers and solves subclass :class:`RuntimeError`.

Errors that come from a solve carry the :class:`~privopt.solvers.SolveReport`
of that solve as ``error.report`` (``None`` when no solver ran).  A report is a
diagnostic for whoever holds the data: its objective values depend on the
data and the noise and are **not** part of any private release.  So an error
raised by a mechanism (or an estimator's ``fit``) after the data is read
carries ``report=None`` unless the call asked for it with ``keep_report=True``.
"""

from __future__ import annotations

from concurrent.futures import BrokenExecutor

__all__ = [
    "PrivoptError",
    "ParameterError",
    "ParameterTypeError",
    "ModelError",
    "NotTransformedError",
    "AccountingError",
    "SolverError",
    "UnknownSolverError",
    "SolverNotAvailableError",
    "SolverOptionError",
    "InfeasibleModelError",
    "UnboundedModelError",
    "NoSolutionError",
    "SolverCrashedError",
    "SolverLicenseError",
    "NotCertifiedError",
    "WorkerLostError",
    "NoiseDominatesWarning",
    "WeakGuaranteeWarning",
    "UncheckedOptionsWarning",
    "PrivacyLeakWarning",
    "UncertifiedReleaseWarning",
    "NoiseDisclosureWarning",
    "UnprovenGuaranteeWarning",
    "LossContractWarning",
    "CacheRejectedWarning",
]


class PrivoptError(Exception):
    """Base class of every exception raised by privopt."""


class ParameterError(PrivoptError, ValueError):
    """A parameter has a value privopt cannot accept.

    ``parameter`` names the offending argument, so that callers (and tests)
    can see which one to fix without parsing the message.
    """

    def __init__(self, message: str, parameter: str | None = None):
        super().__init__(message)
        self.parameter = parameter


class ParameterTypeError(PrivoptError, TypeError):
    """A parameter has a type privopt cannot accept."""

    def __init__(self, message: str, parameter: str | None = None):
        super().__init__(message)
        self.parameter = parameter


class ModelError(ParameterError):
    """The Pyomo model does not have the structure a mechanism needs."""


class NotTransformedError(ModelError):
    """A getter of the objective-perturbation transformation was called on a
    model that has not been transformed."""


class AccountingError(PrivoptError, RuntimeError):
    """A fit's own accounting does not cover its release: the epsilon (or
    delta) it spent is above the one requested, or not a finite number.
    Nothing is released: the estimator is left as it was before the call.
    This is a fault of privopt's accounting (or of a tampered cache that
    slipped past its checks), never of the caller's input."""


class SolverError(PrivoptError, RuntimeError):
    """Base class of errors that come from choosing or running a solver."""

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report


class UnknownSolverError(SolverError, ValueError):
    """The solver name is known neither to privopt nor to Pyomo."""

    def __init__(self, message: str, report=None):
        super().__init__(message, report)
        self.parameter = "solver"


class SolverNotAvailableError(SolverError, ValueError):
    """The solver is known but not installed on this machine.  Also a
    ValueError: the ``solver`` argument names something this machine cannot
    run (install it, or choose another)."""

    def __init__(self, message: str, report=None):
        super().__init__(message, report)
        self.parameter = "solver"


class SolverOptionError(SolverError, TypeError):
    """Solver options of the wrong type or with values the solver rejects."""

    def __init__(self, message: str, report=None):
        super().__init__(message, report)
        self.parameter = "options"


class InfeasibleModelError(SolverError):
    """The solver proved the model infeasible."""


class UnboundedModelError(SolverError):
    """The solver proved the model unbounded (or infeasible-or-unbounded)."""


class NoSolutionError(SolverError):
    """The solver stopped (time or iteration limit, interrupt) without any
    feasible solution."""


class SolverCrashedError(SolverError):
    """The solver process died or returned an error instead of a status."""


class SolverLicenseError(SolverError):
    """The solver's licence does not allow this solve: e.g. the size-limited
    Gurobi licence that ``pip install gurobipy`` includes refuses models with
    more than 2000 variables or 2000 constraints."""


class NotCertifiedError(SolverError):
    """The solver returned a solution but did not prove it optimal within the
    requested gap.

    The privacy guarantees of objective perturbation hold only for the exact
    minimizer, so privopt releases nothing in this case (unless the caller
    chose the documented ``on_failure="return"`` policy).
    """


class WorkerLostError(PrivoptError, BrokenExecutor):
    """A worker process of the executor died (a signal, the out-of-memory
    killer, ``os._exit``) while privopt waited for its tasks: a
    ``multiprocessing.Pool`` never answers for the task it held, so privopt
    stops instead of waiting for ever, and releases nothing.  Like
    :class:`concurrent.futures.process.BrokenProcessPool`, a
    :class:`concurrent.futures.BrokenExecutor`."""


class PrivacyLeakWarning(RuntimeWarning):
    """A quantity that should be public (a bound, a scale) was taken from the
    private data; the release then leaks more than its stated epsilon."""


class UncertifiedReleaseWarning(RuntimeWarning):
    """An answer that the solver did not certify optimal was returned under
    ``on_failure="return"``.  It is not covered by the privacy guarantee."""


class NoiseDisclosureWarning(RuntimeWarning):
    """The noise vector was returned to the caller.  Publishing it together
    with the output voids the privacy guarantee."""


class UnprovenGuaranteeWarning(RuntimeWarning):
    """A noise scale was taken from a paper's formula (``calibration="paper"``)
    at parameters where the paper's own argument does not cover it.  The
    release is still made; ``parameters["provable_delta"]`` states the delta
    that privopt can prove for it."""


class NoiseDominatesWarning(UserWarning):
    """The output noise of a release is larger than the parameter set itself
    (e.g. OPSamp's Laplace scale exceeds the width of W): the answer says
    little beyond the noise.  More data, a larger epsilon or (for OPSamp) more
    oracle calls help."""


class WeakGuaranteeWarning(UserWarning):
    """The requested guarantee is formally met but weak, e.g. delta > 1/n: a
    mechanism may then publish a whole record with probability delta and
    still be (epsilon, delta)-DP.  The common rule is delta well below 1/n
    (privopt's estimators use 1/n^2)."""


class LossContractWarning(UserWarning):
    """The objective cannot be a SUM of n per-record terms, each in the
    declared range (``loss_range``, or G for OPDisc), which every mechanism
    assumes: e.g. it is written as a mean, ``sum(...) / n``.  The release is
    still private, but its noise is calibrated to terms n times wider than the
    loss's, so it says little.  privopt checks the objective's structure only
    (its outermost constant factor against 1/n and 1/(2n)), before any data-dependent
    work; see docs/own_model.md."""


class UncheckedOptionsWarning(UserWarning):
    """Solver options went to a solver privopt does not know (a pass-through
    name Pyomo knows): privopt can neither translate nor check them, so a
    misspelt option may be ignored silently.  Check the solver's documentation."""


class ClippedFeaturesWarning(UserWarning):
    """Values of X lie outside the declared public ``bounds`` and were clipped
    to them.  Clipping is what the privacy proof needs (every record inside the
    public bounds), so it stays; the warning says how many values of which
    features were clipped, because bounds far from the data (wrong units, a
    wrong per-feature order) silently erase the features' information.  Its
    message describes the data: it is for the data curator only, never part of
    a private release."""


__all__.append("ClippedFeaturesWarning")


class IdentifierColumnWarning(UserWarning):
    """A column of X is named like a record identifier or a saved row index
    (``id``, ``person_id``, ``rownames``, ``Unnamed: 0``, ``index``): privopt takes
    every column as a feature, so the model would weigh a number that names the
    record rather than describes it.  Drop the column before the fit.  Decided from
    the column names alone (the schema), before any value is read."""


__all__.append("IdentifierColumnWarning")


class NonBinaryItemWarning(UserWarning):
    """A column given no cut points (missing from ``ThresholdBinarizer``'s
    thresholds) is taken, by a public rule, as the 0/1 item ``column >= 1``,
    whatever it holds; it held values other than 0 and 1, so that item may not
    be what was meant (give the column its public cut points).  Whether it
    fires depends on the data: it is for the data curator only, never part of a
    private release (the fit's outcome does not depend on it)."""


__all__.append("NonBinaryItemWarning")


class CacheRejectedWarning(RuntimeWarning):
    """A value read from privopt's on-disk cache failed the forward check of
    the privacy claim it stands for (e.g. a planted noise multiplier too small
    to meet epsilon).  It was discarded, recomputed and overwritten, and never
    used; the message names the cache file.  Someone or something wrote that
    file: a shared ``PRIVOPT_CACHE_DIR``, a copied cache, a damaged disk."""


class BudgetExceededError(PrivoptError, RuntimeError):
    """A release would take a :class:`~privopt.PrivacyLedger` over its budget.

    Raised before any data is read, any noise drawn or any solver run; the
    ledger is left unchanged.  ``spent``, ``remaining`` and ``requested`` are
    the ledger's account (each with ``.epsilon`` and ``.delta``)."""

    def __init__(self, message: str, spent=None, remaining=None, requested=None):
        super().__init__(message)
        self.spent = spent
        self.remaining = remaining
        self.requested = requested


class LedgerFileError(PrivoptError, RuntimeError):
    """A saved privacy ledger cannot be used: its hash chain does not verify
    (the file was edited, truncated in the middle or reordered), it is not a
    ledger file, or its budget differs from the one given."""


class LedgerProcessError(PrivoptError, RuntimeError):
    """An in-memory :class:`~privopt.PrivacyLedger` was charged in a process other
    than the one that made it (a fork copies its memory, so each copy would spend the
    whole budget).  Keep the ledger in a file (``PrivacyLedger.open``), which every
    process charges under one lock."""


class LedgerRepairWarning(UserWarning):
    """A saved ledger ended in a line cut short by a crash (never acknowledged by its
    head); privopt dropped it and repaired the file."""


class RepeatedReleaseWarning(UserWarning):
    """A release was charged to a ledger on data that an earlier release under
    the same ledger already used (a refit, a clone fitted again, a grid
    search's refit).  Each fit spends its epsilon again: the ledger holds the
    sum.  The data's fingerprint lives in memory only, never in a file."""


__all__ += ["BudgetExceededError", "LedgerFileError", "LedgerProcessError", "LedgerRepairWarning",
            "RepeatedReleaseWarning"]

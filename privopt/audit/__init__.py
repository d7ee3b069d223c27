r"""Empirical privacy audit: a statistical LOWER bound on a mechanism's epsilon.

A differential-privacy proof can be wrong, and so can the code that
implements it.  An audit runs the mechanism many times on two neighbouring
data sets D, D' (one record replaced) and looks for an output event S whose
probabilities violate P[M(D) in S] <= e^epsilon P[M(D') in S] + delta.
With Clopper-Pearson bounds p1_lower <= P[M(D) in S] and
p2_upper >= P[M(D') in S] (each at level alpha/2),

    epsilon >= ln((p1_lower - delta) / p2_upper)

with probability >= 1 - alpha, for the event chosen on a separate half of
the runs (or with a Bonferroni correction over a fixed family of events);
both directions (D, D') and (D', D) are tried.  See :mod:`privopt.audit._stats`.

An audit can show that a mechanism is NOT private (a lower bound above the
claimed epsilon), never that it is.  privopt's tests audit OPDisc, OPSamp,
RSPM and private selection (exponential mechanism, permute-and-flip) at
their stated epsilon (no violation expected) and deliberately broken variants
(violations expected): OPDisc without the normalization pi on the instance of
:func:`design_instance`, noise scales divided by 10, and private selection
calibrated with half the sensitivity, and private selection on a user's model
whose data-built constraint on the decision is declared public anyway
(:class:`ConstrainedSelectionTarget`), and private selection among
resolutions with a base measure taken from the data
(:class:`MixtureSelectionTarget`), and bounded private selection with bounds that are
not valid (:class:`BoundedSelectionTarget` with ``inflate`` > 1), and the estimator's
warm start with its noise left out (:class:`WarmStartTarget`), and the ladder's rung on
geometric feature steps with its steps placed at the data's quantiles instead of by the public
bounds (:class:`GeometricStepsTarget` with ``data_steps=True``), and a number
released with double-precision Laplace noise instead of privopt's exact noise on
a grid (:class:`NoisyValueTarget` with ``release="double"``: Mironov's
floating-point attack, replayed exactly), and DP-SGD's last iterate after one step
with continuous Gaussian noise in doubles instead of its gradients on a grid with
exact discrete Gaussian noise (:class:`DPSGDStepTarget` with ``release="double"``),
and the same for noisy SGD's step (:class:`NoisySGDStepTarget` with ``release="double"``),
and private selection on a user's model
with a record's term outside ``loss_range`` left unclipped (:class:`RecordClipTarget`
with ``clip=False``), and the same model built with :func:`privopt.RecordModel` without
``clip=True`` and scored where privopt does not read the terms
(:class:`RecordModelClipTarget` with ``clip=False``), and private selection on a model built by hand with a
leak the model's contract refuses, released as before the check: bounds from the data, a data-built
row naming a record's variable with coefficient 0, a data-built cost through an auxiliary
variable (:class:`HandModelTarget` with ``broken=True``), and the same model with day 0's demand
reaching every other day's term through a shared variable or a row joining their targets, released
with the records' blocks not counted (:class:`BlockCountTarget` with ``broken=True``), and RSPM on a
model whose record's term leaves ``loss_range``, released with the check of each record's term
disabled (:class:`RecordTermTarget` with ``broken=True``).

Usage::

    from privopt import audit
    target = audit.OPDiscTarget(audit.design_instance(), epsilon=5.0, delta=0.1)
    result = audit.audit(target, n_samples=100_000, random_state=0)
    print(result.epsilon_lower_bound, result.violation, result.worst_event)

Runs use the mechanism's own noise draw (:mod:`privopt.mechanisms._noise`)
and calibration (:mod:`privopt.calibration`) with an exact argmin by
enumeration over the tiny instance (``oracle="enumerate"``, fast), or the
real mechanism with a solver (``oracle="solver"``); the two agree run by run
on the same seeds.
"""

from ._instances import (
    NeighbouringPair,
    data_constraint_instance,
    design_instance,
    hinge_instance,
    opsamp_instance,
    resolution_instance,
    selection_instance,
)
from ._mixture import MixtureSelectionTarget
from ._warm import WARM_BUCKET, WarmStartTarget, warm_start_instance
from ._geometric import GEOMETRIC_AUDIT_BOUNDS, GeometricStepsTarget, geometric_instance
from ._bounded import BoundedSelectionTarget, bounded_instance, bounded_model
from ._records import (
    RecordClipTarget,
    RecordModelClipTarget,
    RecordTermTarget,
    far_record_instance,
    heavy_record_instance,
    record_sites_model,
    signs_model,
    signs_record_model,
    sites_model,
)
from ._contract import (
    BLOCK_LEAKS,
    CONTRACT_LEAKS,
    BlockCountTarget,
    HandModelTarget,
    newsvendor_instance,
    newsvendor_model,
)
from ._run import ORACLES, audit, sample_outputs
from ._stats import AuditResult, clopper_pearson, estimate_epsilon
from ._float import NoisyValueTarget, reachable_by_double_laplace, reachable_on_grid
from ._dpsgd import DPSGDStepTarget, NoisySGDStepTarget, dpsgd_step_instance
from ._targets import (
    AuditTarget,
    ConstrainedSelectionTarget,
    OPDiscTarget,
    OPSampTarget,
    RSPMTarget,
    ScoringTarget,
    SelectionTarget,
)

__all__ = [
    "audit",
    "sample_outputs",
    "estimate_epsilon",
    "clopper_pearson",
    "AuditResult",
    "AuditTarget",
    "NoisyValueTarget",
    "DPSGDStepTarget",
    "NoisySGDStepTarget",
    "dpsgd_step_instance",
    "reachable_by_double_laplace",
    "reachable_on_grid",
    "OPDiscTarget",
    "OPSampTarget",
    "RSPMTarget",
    "SelectionTarget",
    "ScoringTarget",
    "ConstrainedSelectionTarget",
    "MixtureSelectionTarget",
    "WarmStartTarget",
    "warm_start_instance",
    "WARM_BUCKET",
    "GeometricStepsTarget",
    "geometric_instance",
    "GEOMETRIC_AUDIT_BOUNDS",
    "BoundedSelectionTarget",
    "bounded_instance",
    "bounded_model",
    "RecordClipTarget",
    "RecordModelClipTarget",
    "record_sites_model",
    "HandModelTarget",
    "CONTRACT_LEAKS",
    "BlockCountTarget",
    "BLOCK_LEAKS",
    "RecordTermTarget",
    "heavy_record_instance",
    "signs_model",
    "signs_record_model",
    "newsvendor_instance",
    "newsvendor_model",
    "far_record_instance",
    "sites_model",
    "NeighbouringPair",
    "resolution_instance",
    "data_constraint_instance",
    "design_instance",
    "hinge_instance",
    "opsamp_instance",
    "selection_instance",
    "ORACLES",
]

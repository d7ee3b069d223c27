"""Memory refused before the work: an allocation whose size follows from a
user's parameter (a table of candidates, the noise of m oracle calls) is
predicted from public quantities and refused with a :class:`ParameterError`
naming that parameter, instead of ending in a bare ``MemoryError`` (or the
kernel's out-of-memory killer) after minutes of work."""

from __future__ import annotations

import math
import numbers
import os

from .exceptions import ParameterError

__all__ = ["memory_budget", "check_memory", "format_bytes", "MAX_REGION_PATTERNS", "KEPT_WORKSPACE_PATTERNS",
           "MAX_REGION_POINTS",
           "SPARSE_MAX_PATTERNS", "ENUMERATE_MAX_POINTS", "SCORING_MAX_POINTS", "LOCAL_SECONDS", "AUTO_MAX_WORK",
           "AUTO_MAX_BOUND_WORK", "MILP_BYTES_PER_GRID_VALUE", "MODEL_BYTES_PER_GRID_VALUE", "FIT_BYTES_PER_VALUE",
           "halfspace_fit_bytes", "PLD_MAX_POINTS", "MODEL_MAX_TERMS", "ZERO_ONE_MAX_FEATURES",
           "SCORING_MAX_FEATURES", "OUTPUT_PERTURBATION_MAX_FEATURES",
           "DPAGD_MAX_FEATURES", "public_shape", "check_width", "format_count"]

# Work routed or refused before it starts: each limit of the exact search engine and of
# the enumeration, defined once here (the modules that apply them import them).

#: Parallel work predicted to take less than this many seconds runs in this
#: process instead of on a process pool (a pool's start-up costs about a second):
#: the default of :func:`privopt._runtime.resolve_executor`, the branch and bound
#: of ``solver="enumerate"``, the top-down samplers of private selection and of
#: the scoring systems, and selection's prediction of its worker count.
LOCAL_SECONDS = 5.0

#: ``solver="enumerate"`` (OPDisc's exact oracle, one argmin streamed over W in
#: blocks) refuses more grid points than this (``options={"max_points": ...}``),
#: and ``solver="auto"`` does not pick it above it: a limit on the time of one
#: oracle call (points x distinct rows), not on memory.
ENUMERATE_MAX_POINTS = 20_000_000

#: Private selection's halfspace scorer (every point of W scored, and every
#: score kept for the sampler) refuses a W with more points than this
#: (``max_points=``): a limit on the scores it holds (8 bytes each, 400 MB).
SCORING_MAX_POINTS = 50_000_000

#: ``solver="auto"`` enumerates when grid points x distinct rows is at most
#: this (about 10-20 s on one core at the 1-2e8 score entries per second
#: measured in benchmarks/bench_oracle_suite.py), else it uses the MILP.
AUTO_MAX_WORK = 2_000_000_000

#: ``solver="auto"`` on a perturbed model takes the branch and bound by support when its
#: bound pass, supports x distinct rows, is at most this (measured at 4e8 to 5e8 rows per
#: second on one core, so up to about 250 s; the prediction constant
#: ``privopt.search.BOUND_ROWS_PER_SECOND`` is a conservative 2e8).  Chosen on the
#: extended oracle suite (benchmarks/results/oracle_suite_wide.md): at 2e9 the three widest
#: one-hot sets (d = 73, 87, 122; 3.6e9 to 6.3e10) went to HiGHS, which was slower on all
#: three (149 s, 61 s, 259 s against 8.6 s, 21 s, 116 s) and once not certified in 300 s.
AUTO_MAX_BOUND_WORK = 100_000_000_000

#: Largest number of row patterns per support (base^k) the sparse scoring
#: engine of the enumeration tabulates (one table entry per pattern and value
#: vector, so smaller than the split by support's :data:`MAX_REGION_PATTERNS`,
#: which tabulates one histogram per support).
SPARSE_MAX_PATTERNS = 1 << 20

#: Largest number of row patterns per support (base^k) the exact search
#: engine's split by support tabulates (:func:`privopt.space.split_support_count`).
MAX_REGION_PATTERNS = 1 << 22

#: Largest histogram (patterns of one support size, 24 bytes each) whose scratch
#: arrays the pattern kernels keep from call to call (privopt.search._patterns);
#: a larger one is made for each call and freed after it.
KEPT_WORKSPACE_PATTERNS = 1 << 20

#: Largest number of points of the regions of one support of each size, summed
#: over the sizes, for the split by support (they are listed once, and every
#: support's points are evaluated): 33 at D = 2 on the grid -2..2; a ball as
#: large as the paper's (D^2 = d) on 20 features has millions, and is left to the MILP.
MAX_REGION_POINTS = 10_000

#: A fit of :class:`privopt.PrivateHalfspaceClassifier` that solves its 0/1-loss MILP (OPDisc,
#: RSPM, and ``mechanism="auto"``, which picks OPDisc wherever W is too wide to sample) holds,
#: per weight coordinate and value of its grid, the Pyomo model's binary and constraint terms,
#: the model's noisy clone and the solver's copy: measured 8.1 KiB (peak RSS less the imports'
#: 170 MiB: 790 MiB at d = 20,000, n = 5, the default grid -2..2); the issue's d = 10^6 reached
#: 8.6 GB in 10 minutes before it died.  Rounded down, so that only a fit that cannot fit is refused.
MILP_BYTES_PER_GRID_VALUE = 8 * 1024
#: ... and one that samples W privately (``permute_and_flip``, ``exponential``) the model alone
#: (and a walk of its expressions): measured 1.4 KiB (136 MiB at d = 20,000, n = 5, grid -2..2).
MODEL_BYTES_PER_GRID_VALUE = 1024
#: Bytes a fit holds per feature value of each record (n x d): the checked float copy of X,
#: the clipped or discretized features and the features the model or optimiser reads
#: (three float64 arrays; the baselines' feature map holds the same three).
FIT_BYTES_PER_VALUE = 3 * 8


def halfspace_fit_bytes(n: int, n_features: int, d_model: int, grid_values: int, milp: bool) -> int:
    """A lower bound on the bytes a fit of the halfspace classifier builds from
    public sizes: ``d_model`` weights with ``grid_values`` values each (the
    model, :data:`MILP_BYTES_PER_GRID_VALUE` or :data:`MODEL_BYTES_PER_GRID_VALUE`)
    and the n x ``n_features`` feature arrays (:data:`FIT_BYTES_PER_VALUE`)."""
    per_value = MILP_BYTES_PER_GRID_VALUE if milp else MODEL_BYTES_PER_GRID_VALUE
    return int(d_model) * int(grid_values) * per_value + int(n) * int(n_features) * FIT_BYTES_PER_VALUE


# Width: the number of features (columns of X) is public, and read from X's shape before
# any of its values.  Every entry point whose cost grows faster than the data (a Pyomo
# model's terms, W over the features) refuses a width beyond its limit here, with
# :func:`check_width`, before the ledger's reservation is settled by any read of X.

#: The most feature terms (records x features, an intercept counted as a feature) a Pyomo
#: model builder of :mod:`privopt.models` writes: Pyomo builds about 1e5 terms a second
#: (hinge_halfspace on 5 records x 20,000 features: 0.9 s), and every oracle call writes
#: the model again for its solver, so a model of more terms would run for minutes before
#: its first answer (a million features on 5 records: more than 60 s for the model alone).
MODEL_MAX_TERMS = 2_000_000

#: The most features the 0/1-loss halfspace models (zero_one_halfspace, zero_one_loss,
#: rspm_halfspace) and the estimators built on them take.  Building them grows faster than d
#: (the default W has 2 floor(sqrt(d)) + 1 values per weight; RSPM's cuts grow like d^2):
#: measured on 5 records, zero_one_halfspace 2.0 / 4.6 / 14.7 s at 500 / 1,000 / 2,000
#: features, rspm_halfspace 0.4 / 1.5 / 6.0 s, ZeroOneHalfspaceClassifier 46 s at 2,000;
#: a million features ran past 60 s in every one of them.
ZERO_ONE_MAX_FEATURES = 2_000

#: The most binary features (items) :class:`privopt.scoring.PrivateScoringSystem` (and
#: ``select_scoring_system``) takes: its W has C(d, max_items) supports, and at the default
#: max_items = 4 the sampler's bound pass on 5 records is predicted at 65 s for 500 items and
#: 16,650 s for 2,000, where it passed 6 GB of memory within 45 s.
SCORING_MAX_FEATURES = 1_000

#: The most features :class:`privopt.baselines.OutputPerturbationLogisticRegression` takes:
#: its fit is linear in d, but its exact noise on the grid (one integer per weight) is drawn
#: by a scalar sampler in integer arithmetic when its variance is large, as the default
#: alpha makes it for many features.  Measured on 5 records (bounds (0, 1), epsilon 1):
#: Laplace noise 0.4 / 3.4 / 40 s at 10^4 / 10^5 / 10^6 features, Gaussian noise
#: (delta = 1e-5) 0.9 / 8.6 / 81 s.
OUTPUT_PERTURBATION_MAX_FEATURES = 100_000

#: The most features :class:`privopt.baselines.DPAGDLogisticRegression` takes: its budget
#: splits into about a thousand noisy gradients and noisy-max steps, each drawing exact noise
#: for every weight.  Measured on 5 records (bounds (0, 1), the defaults): 1.2 / 8.0 / 21 / 50 s
#: at 100 / 1,000 / 2,000 / 5,000 features, past 70 s at 10^4 (about 10 ms per feature).
DPAGD_MAX_FEATURES = 1_000


def public_shape(X) -> tuple[int, int] | None:
    """(rows, columns) of ``X`` from its ``shape`` attribute (numpy arrays, pandas
    frames, scipy.sparse matrices), read without touching a value; None for an input
    without one (a list is converted, and its width checked, by the entry point's own
    checks)."""
    shape = getattr(X, "shape", None)
    if (isinstance(shape, tuple) and len(shape) == 2
            and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in shape)):
        return int(shape[0]), int(shape[1])
    return None


def check_width(X, *, what: str, fix: str, max_features: int | None = None, max_terms: int | None = None,
                extra_columns: int = 0, parameter: str = "X",
                why: str = "its cost grows faster than the number of features") -> None:
    """Refuse, from ``X``'s public shape alone (:func:`public_shape`), an input wider
    than ``max_features`` columns, or with more than ``max_terms`` records x columns
    (``extra_columns``: an intercept the entry point appends), with a
    :class:`ParameterError` naming ``parameter``, ``what`` takes, the limit and the
    ``fix`` (and ``why`` the limit is there).  An input without a shape passes (its entry
    point checks it once converted)."""
    shape = public_shape(X)
    if shape is None:
        return
    n, d = shape[0], shape[1] + int(extra_columns)
    if max_features is not None and d > max_features:
        raise ParameterError(
            f"{parameter} has {shape[1]:,} features; {what} takes at most {max_features:,} ({why}). "
            f"Nothing was computed. {fix}", parameter)
    if max_terms is not None and n * d > max_terms:
        raise ParameterError(
            f"{parameter}: {n:,} records x {d:,} features is {n * d:,} terms, more than {what} writes "
            f"({max_terms:,}: about 1e5 terms a second in Pyomo, again at every oracle call). Nothing was "
            f"computed. {fix}", parameter)


#: The share of the machine's physical memory one allocation privopt predicts may take.
MEMORY_SHARE = 0.5
#: The budget where the physical memory cannot be read (8 GiB).
_FALLBACK_BYTES = 8 * 2**30


def memory_budget() -> int:
    """Bytes one predicted allocation may take: :data:`MEMORY_SHARE` of the
    physical memory (``os.sysconf``), else 8 GiB."""
    try:
        total = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        total = 0
    return int(MEMORY_SHARE * total) if total > 0 else _FALLBACK_BYTES


def format_bytes(n: float) -> str:
    """``n`` bytes in the largest binary unit below it (e.g. ``"32 TiB"``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover - unreachable


def format_count(n: int) -> str:
    """``n`` with thousands separators, or as ``"about 1.2e+477,121"`` past 15 digits
    (a W of 3^(10^6) points has 477,122 digits: more than Python converts to text)."""
    n = int(n)
    if abs(n) < 10**15:
        return f"{n:,}"
    digits = math.log10(abs(n))             # exact enough for any int (math.log10 takes big ints)
    exponent = int(digits)
    return f"about {'-' if n < 0 else ''}{10 ** (digits - exponent):.2g}e+{exponent:,}"


def check_memory(nbytes: float, parameter: str, what: str, fix: str, *, quote: bool = True) -> None:
    """Raise :class:`ParameterError` (naming ``parameter``) when ``nbytes``,
    the predicted size of ``what``, exceeds :func:`memory_budget`.  ``quote=False``: the
    message does not quote ``nbytes`` (when it is computed from a private size)."""
    budget = memory_budget()
    if nbytes > budget:
        size = f"about {format_bytes(nbytes)} of memory, more" if quote else "more memory"
        raise ParameterError(
            f"{parameter}: {what} would take {size} than privopt lets one "
            f"allocation take here ({format_bytes(budget)}, half of this machine's memory). Nothing was "
            f"computed. {fix}", parameter)


#: The privacy ledger's optimal composition keeps its composed privacy loss distribution
#: within this many points: past it, the grid of the privacy loss doubles (a looser
#: upper bound), so that a charge costs at most one composition of this size
#: (:class:`privopt.ledger.PrivacyLedger`, ``composition="optimal"``).
PLD_MAX_POINTS = 2**16

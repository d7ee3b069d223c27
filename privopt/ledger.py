"""A privacy ledger: one budget for one data set, charged by every release.

:class:`PrivacyLedger` holds the budget ``(epsilon, delta)`` of one data set and the
releases made on it.  Every mechanism, estimator, baseline, the scoring system and
``@privopt.private`` charge it, through :func:`release`:

1. The release's ``(epsilon, delta)`` is computed from the call's public arguments.
2. The call's public checks (its scalar arguments: epsilon, delta, the solver's name,
   a time limit, the shape and type of its data...) run, then the release is
   *reserved*, both before any data is read, any noise drawn or any solver run; a
   refusal there (a bad argument, or a release that would exceed the budget:
   :class:`~privopt.BudgetExceededError`) leaves the ledger unchanged.
3. From the reservation on, the release stays charged whatever happens: a result, or
   any exception (a refusal decided after reading the model or the data, a solver
   that does not certify, a time limit, a memory error).  An outcome that depends on
   the data is an output: refunding it would let a caller observe it for free.

A release is charged once, by its outermost call: an estimator whose fit calls
``mixture_selection`` (or the warm start's objective perturbation, then selection) is
one release of its total (epsilon, delta); the mechanism calls inside it see that they
are inside a charged release (a context variable) and charge nothing.

Composition (docs/budgets.md): pure releases add exactly (each epsilon read as the
decimal it prints as, summed as fractions); approximate ones by basic composition (the
epsilons add and the deltas add).  ``composition="optimal"`` also computes the optimal
composition of the releases' (epsilon_i, delta_i) guarantees [KOV15] numerically with
dp-accounting's privacy loss distributions (pessimistic discretization: an upper bound),
at the same total delta, and reports the smaller epsilon of the two; it is never looser
than basic composition.

An in-memory ledger is charged only in the process that made it (a fork would copy
its budget: :class:`~privopt.exceptions.LedgerProcessError`).  A saved ledger
(:meth:`PrivacyLedger.open`) is a JSON-lines file, one entry per line, each chained to
the previous one by SHA-256, with its head (the number of entries and the last hash) in
``PATH.head``, rewritten after each append; a file whose chain does not verify, or that
is shorter than its head or not the file its head acknowledges (an older copy), is
refused (:class:`~privopt.exceptions.LedgerFileError`), and a last line cut by a crash
is dropped.  Writers are serialized by an exclusive ``fcntl.flock`` on the file and
re-read it before each charge, so two processes charging one file never exceed its
budget.  Nothing derived from the data is
ever written: the file holds the budget and, per release, its name, mechanism,
(epsilon, delta) and time.

References: [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential
privacy", 2014 (Theorem 3.16: basic composition).  [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for
differential privacy", ICML 2015 (Theorem 3.3: the optimal composition of
(epsilon_i, delta_i)-DP mechanisms is that of their dominating pairs).
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import datetime as _dt
import functools
import hashlib
import inspect
import json
import math
import os
import secrets
import sys
import threading
import types
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from ._limits import PLD_MAX_POINTS
from ._validation import CHARGED, check_choice, check_delta, check_epsilon
from .exceptions import (
    AccountingError,
    BudgetExceededError,
    LedgerFileError,
    LedgerProcessError,
    LedgerRepairWarning,
    ParameterError,
    ParameterTypeError,
    RepeatedReleaseWarning,
)
from .result import report_wanted

try:  # POSIX only: a saved ledger needs it, the in-memory one does not.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["PrivacyLedger", "Spend", "Release", "Head", "Charge", "release", "charges", "current_ledger",
           "estimator_key", "COMPOSITIONS", "basic_composition", "optimal_epsilon"]

COMPOSITIONS = ("basic", "optimal")
"""The values of ``PrivacyLedger(composition=...)``."""

_CURRENT: contextvars.ContextVar[PrivacyLedger | None] = contextvars.ContextVar("privopt_ledger", default=None)
_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("privopt_inside_release", default=False)
# the tokens of the open ``with ledger:`` blocks of this context (thread, task), innermost last
_BLOCKS: contextvars.ContextVar[tuple] = contextvars.ContextVar("privopt_ledger_blocks", default=())

_GENESIS = "0" * 64
_FORMAT = "privopt-ledger/2"              # a file with its head beside it (PATH.head)
_FORMAT_UNHEADED = "privopt-ledger/1"     # a file written before heads: it gets one when next opened to write
_HEAD_FORMAT = "privopt-ledger-head/1"


def _exact(x: float) -> Fraction:
    """``x`` as the decimal number it prints as (0.1 is 1/10), so that ten releases of
    0.1 fill a budget of 1 exactly; ``inf`` is refused by the caller."""
    return Fraction(repr(float(x)))


@dataclass(frozen=True)
class Spend:
    """An (epsilon, delta) pair: what a ledger spent, has left, or a release asks for."""

    epsilon: float
    delta: float

    def __str__(self) -> str:
        return f"epsilon={self.epsilon:g}, delta={self.delta:g}"


@dataclass(frozen=True)
class Release:
    """One charged release.

    ``what`` names the call (``"PrivateHalfspaceClassifier.fit"``, ``"opdisc"``),
    ``mechanism`` the mechanism, ``epsilon`` and ``delta`` its guarantee, ``when``
    the time of the charge (UTC), ``entry`` its hash in a saved ledger (its number in
    an in-memory one)."""

    what: str
    mechanism: str
    epsilon: float
    delta: float
    when: _dt.datetime
    entry: str = ""


def current_ledger() -> PrivacyLedger | None:
    """The ledger of the innermost ``with ledger:`` block in this context, or None."""
    return _CURRENT.get()


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------
def basic_composition(pairs: list[tuple[Fraction, Fraction]]) -> tuple[Fraction, Fraction]:
    """Basic composition: (sum of epsilons, sum of deltas), exactly ([DR14], Theorem 3.16)."""
    return sum((e for e, _ in pairs), Fraction(0)), sum((d for _, d in pairs), Fraction(0))


def optimal_epsilon(pairs: list[tuple[float, float]], delta: float) -> float:
    """An upper bound on the optimal composition's epsilon at ``delta`` of releases
    that are (epsilon_i, delta_i)-DP [KOV15]: the composition of their dominating pairs'
    privacy loss distributions (dp-accounting, pessimistic; equal pairs composed at once),
    never above the basic composition's sum at a ``delta`` that covers the deltas' sum,
    ``inf`` when ``delta`` is below what the composition needs."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib   # slow import, on use only
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    total = None
    counts = collections.Counter((float(eps), float(dlt)) for eps, dlt in pairs)   # k equal ones: one self_compose
    for (eps, dlt), count in sorted(counts.items()):
        one = pld_lib.from_privacy_parameters(DifferentialPrivacyParameters(eps, dlt))
        part = one if count == 1 else one.self_compose(count)
        total = part if total is None else total.compose(part)
    if total is None:
        return 0.0
    tight = float(total.get_epsilon_for_delta(float(delta)))
    eps_sum, delta_sum = basic_composition([(_exact(e), _exact(d)) for e, d in pairs])
    # never above basic composition, which holds at every delta >= the deltas' sum (the PLDs' truncated
    # tails put a little mass at infinity, so at delta = 0 they alone would say inf)
    return min(tight, float(eps_sum)) if delta >= delta_sum else tight


#: The finest discretization of the privacy loss in optimal composition (dp-accounting's default).
PLD_INTERVAL = 1e-4


@functools.lru_cache(maxsize=1024)
def _dominating_pld(epsilon: float, delta: float, interval: float):
    """The privacy loss distribution of the dominating pair of an (epsilon, delta)-DP
    guarantee [KOV15] (dp-accounting, pessimistic discretization on a grid of ``interval``)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib   # slow import, on use only
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    return pld_lib.from_privacy_parameters(DifferentialPrivacyParameters(epsilon, delta),
                                           value_discretization_interval=interval)


def _pld_points(pld) -> int:
    """The number of points of a composed PLD (0 when dp-accounting does not say)."""
    return int(getattr(getattr(pld, "_pmf_remove", None), "size", 0) or 0)


@dataclass
class _Composed:
    """The composition of a sequence of (epsilon, delta) releases: the exact sums and,
    for optimal composition, their privacy loss distribution composed in order on a grid
    of ``interval``."""

    pairs: tuple
    epsilon: Fraction
    delta: Fraction
    interval: float = PLD_INTERVAL
    pld: Any = None
    _tight: float | None = None

    def tight_epsilon(self) -> float:
        """The optimal composition's epsilon at the total delta (computed once)."""
        if self._tight is None:
            self._tight = float(self.pld.get_epsilon_for_delta(float(self.delta)))
        return self._tight


class _Composer:
    """A ledger's composition, cached so that a charge costs one composition onto the
    releases before it rather than all of them again: the last two sequences composed
    are kept (the releases so far, and the releases plus the one being checked), and a
    sequence one longer than a kept one extends it (one exact addition; one PLD
    composition).  Composition is commutative, and composing pessimistic PLDs in any
    order gives an upper bound [KOV15], so composing in release order is valid.

    A PLD composition costs in proportion to the composed PLD's points, which grow with
    the releases' epsilons; a composition that would pass :data:`PLD_MAX_POINTS` points
    is made on a grid twice (or 2^j times) coarser, from scratch, which happens a
    logarithmic number of times.  A coarser pessimistic grid is still an upper bound, a
    little looser (each release's privacy loss is rounded up by less than the interval).
    The grid belongs to each composed sequence, so a refused release with a large
    epsilon leaves the releases before it on their grid."""

    def __init__(self, optimal: bool):
        self.optimal = optimal
        self._kept: list[_Composed] = []

    def compose(self, pairs: tuple) -> _Composed:
        for state in self._kept:
            if state.pairs == pairs:
                return state
        base = next((s for s in self._kept if len(s.pairs) == len(pairs) - 1 and s.pairs == pairs[:-1]), None)
        if base is None:
            state = self._from_scratch(pairs, PLD_INTERVAL)
        else:
            interval = self._interval_for(base, pairs[-1][0])
            state = self._extend(base, pairs[-1]) if interval == base.interval else self._from_scratch(pairs, interval)
        while self.optimal and _pld_points(state.pld) > PLD_MAX_POINTS:
            state = self._from_scratch(pairs, state.interval * 2.0)
        self._kept = [state, *self._kept[:1]] if base is not None else [state]
        return state

    def _interval_for(self, state: _Composed, epsilon: float) -> float:
        """The grid on which ``state`` composed with a release of ``epsilon`` stays within
        :data:`PLD_MAX_POINTS` points (its span grows by 2 epsilon)."""
        interval = state.interval
        if self.optimal:
            span = _pld_points(state.pld) * state.interval + 2.0 * float(epsilon)
            while span / interval > PLD_MAX_POINTS:
                interval *= 2.0
        return interval

    def _from_scratch(self, pairs: tuple, interval: float) -> _Composed:
        state = _Composed((), Fraction(0), Fraction(0), interval)
        for pair in pairs:
            state = self._extend(state, pair)
        return state

    def _extend(self, state: _Composed, pair: tuple[float, float]) -> _Composed:
        eps, dlt = pair
        pld = None
        if self.optimal:
            one = _dominating_pld(float(eps), float(dlt), state.interval)
            pld = one if state.pld is None else state.pld.compose(one)
        return _Composed(state.pairs + (pair,), state.epsilon + _exact(eps), state.delta + _exact(dlt),
                         state.interval, pld)


# ---------------------------------------------------------------------------
# The ledger
# ---------------------------------------------------------------------------
class PrivacyLedger:
    """The privacy budget of one data set, charged by every release made on it.

    Use ``with ledger:`` to charge every release inside the block, or pass
    ``ledger=`` to a mechanism, an estimator, a baseline, the scoring system or
    ``@privopt.private``.  ``ledger.spent``, ``ledger.remaining`` (each with
    ``.epsilon`` and ``.delta``) and ``ledger.releases`` give the account.  A ledger
    is safe to share between threads; :meth:`open` keeps it in a file that several
    processes may charge at once.

    Parameters
    ----------
    epsilon : float
        The total epsilon the data set may spend (> 0).
    delta : float, default 0.0
        The total delta (0 <= delta < 1); 0 admits pure releases only.
    composition : {"basic", "optimal"}, default "basic"
        How approximate releases compose (module docstring): ``"basic"`` adds
        epsilons and deltas; ``"optimal"`` takes the smaller epsilon of that and of
        the optimal composition [KOV15] at the same total delta.  Pure releases add
        exactly either way.

    Examples
    --------
    >>> ledger = PrivacyLedger(epsilon=3.0, delta=1e-5)
    >>> with ledger:                                   # doctest: +SKIP
    ...     clf.fit(X, y); scores.fit(X, y)
    >>> ledger.spent                                   # doctest: +SKIP
    Spend(epsilon=2.0, delta=0.0)
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, composition: str = "basic"):
        self._epsilon = _exact(check_epsilon(epsilon))
        self._delta = _exact(check_delta(delta, allow_zero=True))
        self.composition = check_choice(composition, "composition", COMPOSITIONS)
        self._composer = _Composer(optimal=self.composition == "optimal")
        self._trade: _Composer | None = None   # epsilon_at's optimal composition, made on first use
        self._releases: list[Release] = []
        self._lock = threading.RLock()
        self._file: _LedgerFile | None = None
        self._seen: set[bytes] = set()
        self._serial = 0                       # the entry of the next in-memory release
        self._open: set[str] = set()           # the releases reserved here whose body has not ended
        self._pid = os.getpid()                # an in-memory ledger is this process's (a fork must not charge it)
        self._salt = secrets.token_bytes(16)   # fingerprints are of this process and this ledger only

    # -- a saved ledger ----------------------------------------------------------------
    @classmethod
    def open(cls, path, epsilon: float | None = None, delta: float | None = None, *,
             composition: str = "basic") -> PrivacyLedger:
        """The ledger saved in ``path``, created with budget (``epsilon``, ``delta``)
        when the file does not exist (without ``epsilon``, a missing file is an error
        and nothing is created).  An existing file's budget is kept; an ``epsilon`` or
        ``delta`` that differs from it is refused, and so is a file whose hash chain
        does not verify, that does not match its head ``path.head`` (cut short, or an
        older copy), or that is not a ledger, a folder, or in a missing folder
        (:class:`~privopt.exceptions.LedgerFileError`)."""
        try:
            file = _LedgerFile(Path(path))
        except TypeError:
            raise ParameterTypeError(f"path: PrivacyLedger.open takes the path of a file (str or Path), got "
                                     f"{type(path).__name__}.", "path") from None
        budget = file.budget_or_create(epsilon, delta)
        ledger = cls(budget[0], budget[1], composition=composition)
        ledger._file = file
        ledger._releases = file.read()
        return ledger

    @property
    def path(self) -> Path | None:
        """The file of a saved ledger, or None."""
        return None if self._file is None else self._file.path

    @property
    def head(self) -> Head | None:
        """A saved ledger's head (its number of entries and last hash, as its file is
        now), or None in memory.  Write it down elsewhere (another machine, a signed
        note): :meth:`check_anchor` then tells whether a later file extends it."""
        if self._file is None:
            return None
        with self._lock:
            entries = self._file.entries()
            return Head(len(entries), entries[-1]["hash"]) if entries else None

    def check_anchor(self, anchor: str | Head) -> None:
        """Refuse (:class:`~privopt.exceptions.LedgerFileError`) a saved ledger whose file
        does not extend ``anchor``, a head written down earlier (``"entries:hash"``, or a
        hash alone): its entry number ``entries`` must have that hash.  A file replaced
        together with its head by an older pair passes every other check; not this one."""
        if self._file is None:
            raise ParameterError("anchor: an in-memory ledger has no head to anchor; PrivacyLedger.open(path) "
                                 "keeps one.", "anchor")
        count, digest = _parse_anchor(anchor)
        with self._lock:
            entries = self._file.entries()
        found = [i + 1 for i, e in enumerate(entries) if e["hash"] == digest]
        if not found or (count is not None and count not in found):
            raise LedgerFileError(
                f"The saved ledger {self._file.path} does not extend the anchor {anchor}: "
                + ("no entry has its hash" if not found else f"its entry {count} is another one")
                + " (the file and its head were replaced by an older pair, or rewritten). Restore the latest copy, "
                "or ask whoever keeps the data set's budget.")

    # -- the account -------------------------------------------------------------------
    @property
    def budget(self) -> Spend:
        """The total (epsilon, delta) of the data set."""
        return Spend(float(self._epsilon), float(self._delta))

    @property
    def releases(self) -> tuple[Release, ...]:
        """The charged releases, oldest first (a saved ledger re-reads its file)."""
        with self._lock:
            self._refresh()
            return tuple(self._releases)

    @property
    def spent(self) -> Spend:
        """The (epsilon, delta) spent by the releases so far."""
        with self._lock:
            self._refresh()
            eps, dlt = self._compose(self._releases)
            return Spend(float(eps), float(dlt))

    @property
    def remaining(self) -> Spend:
        """The budget minus what was spent (never below 0)."""
        with self._lock:
            self._refresh()
            eps, dlt = self._compose(self._releases)
            return Spend(float(max(self._epsilon - eps, Fraction(0))), float(max(self._delta - dlt, Fraction(0))))

    def epsilon_at(self, delta: float) -> float:
        """The epsilon of the releases so far at total ``delta``, by the optimal
        composition [KOV15] (an upper bound; ``inf`` when ``delta`` is too small),
        whatever this ledger's ``composition``: the trade of delta for epsilon."""
        delta = check_delta(delta, allow_zero=True)
        with self._lock:
            self._refresh()
            pairs = tuple((r.epsilon, r.delta) for r in self._releases)
            if not pairs:
                return 0.0
            if self._trade is None:
                self._trade = self._composer if self.composition == "optimal" else _Composer(optimal=True)
            state = self._trade.compose(pairs)
        tight = float(state.pld.get_epsilon_for_delta(delta))
        # never above basic composition, which holds at every delta >= the deltas' sum (as optimal_epsilon)
        return min(tight, float(state.epsilon)) if delta >= state.delta else tight

    def _compose(self, releases) -> tuple[Fraction, Fraction]:
        """(epsilon, delta) of ``releases``: the exact basic sums, with epsilon lowered to
        the optimal composition's at that delta under ``composition="optimal"``.  Kept
        by :class:`_Composer`, so that a charge composes one release onto the last."""
        state = self._composer.compose(tuple((r.epsilon, r.delta) for r in releases))
        eps, dlt = state.epsilon, state.delta
        if self.composition == "optimal" and dlt > 0 and len(state.pairs) > 1:
            tight = state.tight_epsilon()
            if math.isfinite(tight) and tight < eps:
                eps = _exact(tight)
        return eps, dlt

    # -- charging ----------------------------------------------------------------------
    def charge(self, what: str, epsilon: float, delta: float = 0.0, *, mechanism: str = "outside privopt") -> Release:
        """Charge a release made outside privopt on the same data (``what`` names it),
        of (``epsilon``, ``delta``), now; or raise :class:`~privopt.BudgetExceededError`
        and change nothing.  A charge only adds: nothing takes it back."""
        record = self._reserve(what, mechanism, epsilon, delta)
        self._complete(record)
        return record

    def _reserve(self, what: str, mechanism: str, epsilon: float, delta: float) -> Release:
        """Charge a release of (``epsilon``, ``delta``) before it runs, or raise
        :class:`~privopt.BudgetExceededError` and change nothing (:func:`release`).
        The release stays *open* (it may be settled down) until :meth:`_complete`."""
        epsilon, delta = _check_spend(epsilon, delta)
        self._check_process(what)
        when = _dt.datetime.now(_dt.timezone.utc)
        with self._lock, self._locked_file():
            self._refresh()
            record = Release(what, mechanism, epsilon, delta, when)
            self._check_fits(record)
            if self._file is not None:
                record = self._file.append_charge(record)
            else:
                record = Release(what, mechanism, epsilon, delta, when, entry=str(self._serial))
                self._serial += 1
            self._releases.append(record)
            self._open.add(record.entry)
            return record

    def _complete(self, record: Release) -> None:
        """Close a release whose body ended (a result or an exception): from now on
        nothing can refund or settle it."""
        with self._lock:
            self._open.discard(record.entry)

    def _check_open(self, record: Release, action: str) -> None:
        if record.entry not in self._open:
            raise AccountingError(
                f"{record.what}: cannot {action} a release that is not open in this ledger object: once its "
                "work ended (a result or an error), a release stays charged as it is.")

    def _refund(self, record: Release) -> None:
        """Give back an open reservation (one whose body has not run).  A completed
        release cannot be refunded (:class:`~privopt.exceptions.AccountingError`)."""
        with self._lock, self._locked_file():
            self._check_open(record, "refund")
            self._check_process(record.what)
            self._refresh()
            if self._file is not None:
                self._file.append_refund(record)
            self._releases = [r for r in self._releases if r.entry != record.entry]
            self._open.discard(record.entry)

    def _settle(self, record: Release, epsilon: float, delta: float) -> Release:
        """Lower an open release to what it turned out to spend, once its public
        choices are made (an estimator's ``mechanism="auto"`` that chose a pure
        mechanism after reserving OPDisc's delta).  Never raises a charge: a value
        above the reservation, or a completed release, is refused with
        :class:`~privopt.exceptions.AccountingError`."""
        epsilon, delta = float(epsilon), float(delta)
        self._check_open(record, "settle")
        if not (epsilon <= record.epsilon and delta <= record.delta):
            raise AccountingError(
                f"{record.what}: its release spent epsilon={epsilon:g}, delta={delta:g}, above the "
                f"epsilon={record.epsilon:g}, delta={record.delta:g} reserved before it ran. This is a fault of "
                "privopt's accounting; please report it.")
        if (epsilon, delta) == (record.epsilon, record.delta):
            return record
        with self._lock, self._locked_file():
            self._refresh()
            if self._file is not None:
                settled = self._file.append_settle(record, epsilon, delta)
            else:
                settled = dataclasses.replace(record, epsilon=epsilon, delta=delta)
            self._releases = [settled if r.entry == record.entry else r for r in self._releases]
            return settled

    def _check_process(self, what: str) -> None:
        """An in-memory ledger is charged only in the process that made it: a fork
        copies its memory, and the two copies would each spend the whole budget."""
        if self._file is None and os.getpid() != self._pid:
            raise LedgerProcessError(
                f"{what}: this in-memory PrivacyLedger was made in process {self._pid}, and this is process "
                f"{os.getpid()} (a fork, e.g. a multiprocessing pool): its budget here is a copy, and charging it "
                "would spend the budget twice. Keep the ledger in a file, which every process charges under one "
                "lock: PrivacyLedger.open(path, epsilon=..., delta=...).")

    def _check_fits(self, record: Release) -> None:
        if not (math.isfinite(record.epsilon) and math.isfinite(record.delta)):
            raise BudgetExceededError(
                f"{record.what}: this release is not differentially private (epsilon={record.epsilon:g}, "
                f"delta={record.delta:g}; e.g. feature bounds read from the data), so no budget covers it: "
                "give the public parameters it needs (bounds=...), or run it outside the ledger.",
                self.spent, self.remaining, Spend(record.epsilon, record.delta))
        if record.delta > 0 and self._delta == 0:
            raise BudgetExceededError(
                f"{record.what}: an approximate release (delta={record.delta:g}) under a ledger with delta=0, "
                "which admits pure releases only. Open the ledger with a delta budget, or use a pure mechanism "
                "(private selection, e.g. mechanism='permute_and_flip', or RSPM).",
                self.spent, self.remaining, Spend(record.epsilon, record.delta))
        eps, dlt = self._compose(self._releases + [record])
        if eps > self._epsilon or dlt > self._delta:
            spent, remaining = self.spent, self.remaining
            raise BudgetExceededError(
                f"{record.what}: refused before any work: it asks for epsilon={record.epsilon:g}, "
                f"delta={record.delta:g}, but the ledger has spent {spent} of its budget {self.budget} "
                f"({len(self._releases)} releases) and has {remaining} left. Ask for less (a smaller "
                "epsilon or delta), or start a new data set's ledger; nothing was charged.",
                spent, remaining, Spend(record.epsilon, record.delta))

    def _refresh(self) -> None:
        if self._file is not None:
            self._releases = self._file.read()

    def _locked_file(self):
        return self._file.locked() if self._file is not None else contextlib.nullcontext()

    def seen_before(self, fingerprint: bytes) -> bool:
        """Whether a release under this ledger (in this process) already used data
        with this fingerprint; records it.  In memory only."""
        with self._lock:
            seen = fingerprint in self._seen
            self._seen.add(fingerprint)
            return seen

    def fingerprint(self, key: str, *arrays) -> bytes | None:
        """A keyed hash of ``key`` and the arrays (keyed by a secret of this ledger
        object, so it identifies nothing outside this process), or None when they are
        not arrays of numbers."""
        digest = hashlib.blake2b(key=self._salt, digest_size=16)
        digest.update(key.encode())
        try:
            for a in arrays:
                arr = np.ascontiguousarray(np.asarray(a))
                if arr.dtype == object:
                    return None
                digest.update(repr((arr.shape, arr.dtype.str)).encode())
                digest.update(arr.tobytes())
        except (TypeError, ValueError):
            return None
        return digest.digest()

    # -- with ledger: ------------------------------------------------------------------
    def __enter__(self) -> PrivacyLedger:
        _BLOCKS.set(_BLOCKS.get() + (_CURRENT.set(self),))
        return self

    def __exit__(self, *exc) -> None:
        blocks = _BLOCKS.get()
        _BLOCKS.set(blocks[:-1])
        _CURRENT.reset(blocks[-1])

    # A ledger is an account, not a value: scikit-learn's clone and copy.deepcopy of an
    # estimator keep the same ledger instead of forking its budget.
    def __copy__(self) -> PrivacyLedger:
        return self

    def __deepcopy__(self, memo) -> PrivacyLedger:
        return self

    def __reduce__(self):
        if self._file is None:
            raise TypeError(
                "An in-memory PrivacyLedger cannot be pickled: a copy would fork its budget. Use "
                "PrivacyLedger.open(path, ...) to share a ledger between processes, or set ledger=None "
                "on an estimator before pickling it.")
        return (_reopen, (str(self._file.path), self.composition))

    def __repr__(self) -> str:
        where = f", path={str(self._file.path)!r}" if self._file is not None else ""
        return (f"PrivacyLedger(budget: {self.budget}; spent: {self.spent}; "
                f"releases: {len(self.releases)}{where})")


def _check_spend(epsilon, delta) -> tuple[float, float]:
    """A release's (epsilon, delta) as numbers: epsilon >= 0 (``inf``: not private, which
    the ledger refuses), 0 <= delta <= 1; a negative or NaN value would lower the spend."""
    try:
        epsilon, delta = float(epsilon), float(delta)
    except (TypeError, ValueError):
        raise ParameterTypeError(f"a release's epsilon and delta must be numbers, got {epsilon!r}, {delta!r}.",
                                 "epsilon") from None
    if not epsilon >= 0:
        raise ParameterError(f"epsilon: a release spends epsilon >= 0, got {epsilon!r}.", "epsilon")
    if not 0 <= delta <= 1:
        raise ParameterError(f"delta: a release spends 0 <= delta <= 1, got {delta!r}.", "delta")
    return epsilon, delta


def _parse_anchor(anchor) -> tuple[int | None, str]:
    """``(entries or None, hash)`` of an anchor ``"entries:hash"``, a hash, or a :class:`Head`."""
    if isinstance(anchor, Head):
        return anchor.entries, anchor.last
    text = str(anchor).strip().lower()
    count, _, digest = text.rpartition(":")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or (count and not count.isdigit()):
        raise ParameterError(f"anchor: expected a ledger head as printed by `privopt ledger PATH`, entries:hash "
                             f"(a number, a colon, 64 hex digits), got {anchor!r}.", "anchor")
    return (int(count) if count else None), digest


def _reopen(path: str, composition: str) -> PrivacyLedger:
    return PrivacyLedger.open(path, composition=composition)


# ---------------------------------------------------------------------------
# The file
# ---------------------------------------------------------------------------
def _entry_hash(entry: dict) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class Head:
    """The head of a saved ledger: how many entries its file holds and the hash of the
    last one, kept apart from the file (in ``PATH.head``) and printed by ``privopt
    ledger PATH``.  Written down elsewhere, it is an *anchor*: a later file must extend
    it (:meth:`PrivacyLedger.check_anchor`).  ``str(head)`` is ``"entries:hash"``."""

    entries: int
    last: str

    def __str__(self) -> str:
        return f"{self.entries}:{self.last}"


class _LedgerFile:
    """The JSON-lines file of a saved ledger: a header with the budget, then one
    ``charge``, ``settle`` or ``refund`` entry per line, each holding the previous
    entry's hash; and its head, ``PATH.head`` (the number of entries and the last hash),
    rewritten after each append under the same lock.  A file that is shorter than its
    head, or whose entry at the head's count is not the head's, is an older copy or a
    truncation: refused.  A last line cut by a crash (no newline) was never acknowledged
    by the head: it is dropped with a warning (and cut from the file under the lock)."""

    def __init__(self, path: Path):
        if fcntl is None:  # pragma: no cover - Windows
            raise LedgerFileError("A saved PrivacyLedger needs fcntl.flock (POSIX); keep an in-memory ledger.")
        self.path = path
        self.head_path = path.with_name(path.name + ".head")
        self._head: tuple[int, str] | None = None    # the last entry this process saw: (index, hash)
        self._held = False       # whether this object holds the exclusive lock (always under the ledger's lock)
        self._warned = False     # a cut last line is reported once per object
        self._verified: tuple[int, bytes, tuple] | None = None   # (bytes, their SHA-256, entries) verified

    @contextlib.contextmanager
    def locked(self, mode: int | None = None) -> Iterator[None]:
        """Hold an ``fcntl.flock`` on the file: exclusive (a writer: re-read, check,
        append), or ``fcntl.LOCK_SH`` (a reader, so that it never sees half a line)."""
        try:
            handle = open(self.path, "a+" if mode is None else "r")
        except OSError as exc:
            raise self._unusable(exc) from None
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if mode is None else mode)
            self._held = mode is None
            try:
                yield
            finally:
                self._held = False
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _unusable(self, exc: OSError) -> LedgerFileError:
        if self.path.is_dir():
            why = "it is a folder; give the path of a ledger file inside it, e.g. " + str(self.path / "data.ledger")
        elif not self.path.parent.is_dir():
            why = f"its folder {self.path.parent} does not exist; create the folder first, or give another path"
        else:
            why = f"{exc.strerror or exc}; give a file this process can read and write"
        return LedgerFileError(f"The ledger file {self.path} cannot be used: {why}.")

    def budget_or_create(self, epsilon, delta) -> tuple[float, float]:
        if epsilon is None and not self.path.exists():      # a read never creates a file
            if self.path.is_dir() or not self.path.parent.is_dir():
                raise self._unusable(FileNotFoundError())
            raise LedgerFileError(
                f"There is no ledger at {self.path}: give its budget to create one, "
                "PrivacyLedger.open(path, epsilon=..., delta=...), or check the path.")
        if epsilon is None:         # a read: under a shared lock, and nothing is written (no repair)
            entries = self.entries()
            if not entries:
                raise ParameterError(
                    f"epsilon: {self.path} holds no ledger yet; give its budget: "
                    "PrivacyLedger.open(path, epsilon=..., delta=...).", "epsilon")
            return self._budget(entries[0], epsilon, delta)
        with self.locked():
            entries = self._entries()
            if not entries:
                eps = check_epsilon(epsilon)
                dlt = check_delta(0.0 if delta is None else delta, allow_zero=True)
                self._append({"kind": "budget", "format": _FORMAT, "epsilon": repr(eps), "delta": repr(dlt),
                              "when": _now()}, entries)
                entries = self._entries()
            return self._budget(entries[0], epsilon, delta)

    def _budget(self, first: dict, epsilon, delta) -> tuple[float, float]:
        """The budget of the file's first entry; a given ``epsilon`` or ``delta`` must match it."""
        eps, dlt = float(first["epsilon"]), float(first["delta"])
        for name, given, saved in (("epsilon", epsilon, eps), ("delta", delta, dlt)):
            if given is not None and float(given) != saved:
                raise LedgerFileError(
                    f"{self.path} is the ledger of a budget with {name}={saved!r}, not {given!r}: a saved "
                    f"budget cannot be changed. Open it without {name}=, or start a new file.")
        return eps, dlt

    def read(self) -> list[Release]:
        """The releases in the file (charges not refunded), after verifying its chain."""
        entries = self.entries()
        if not entries:
            raise LedgerFileError(f"{self.path} is empty: the ledger it held is gone.")
        refunded = {e["refunds"] for e in entries if e["kind"] == "refund"}
        settled = {e["settles"]: e for e in entries if e["kind"] == "settle"}   # the last settle of a charge wins
        out = []
        for e in entries:
            if e["kind"] != "charge" or e["hash"] in refunded:
                continue
            spend = settled.get(e["hash"], e)
            out.append(Release(e["what"], e["mechanism"], float(spend["epsilon"]), float(spend["delta"]),
                               _dt.datetime.fromisoformat(e["when"]), entry=e["hash"]))
        return out

    def entries(self) -> list[dict]:
        """The verified entries, under the lock this object holds, else a shared one."""
        if self._held:
            return self._entries()
        with self.locked(fcntl.LOCK_SH):
            return self._entries()

    def append_charge(self, record: Release) -> Release:
        entries = self._entries()
        entry = self._append({"kind": "charge", "what": record.what, "mechanism": record.mechanism,
                              "epsilon": repr(record.epsilon), "delta": repr(record.delta),
                              "when": record.when.isoformat()}, entries)
        return Release(record.what, record.mechanism, record.epsilon, record.delta, record.when, entry=entry["hash"])

    def append_settle(self, record: Release, epsilon: float, delta: float) -> Release:
        self._append({"kind": "settle", "settles": record.entry, "epsilon": repr(epsilon), "delta": repr(delta),
                      "when": _now()}, self._entries())
        return dataclasses.replace(record, epsilon=epsilon, delta=delta)

    def append_refund(self, record: Release) -> None:
        self._append({"kind": "refund", "refunds": record.entry, "when": _now()}, self._entries())

    def _append(self, entry: dict, entries: list[dict]) -> dict:
        entry["prev"] = entries[-1]["hash"] if entries else _GENESIS
        entry["hash"] = _entry_hash(entry)
        with open(self.path, "a") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self._write_head(Head(len(entries) + 1, entry["hash"]))     # after the entry is on disk
        self._head = (len(entries), entry["hash"])
        return entry

    # -- the head ------------------------------------------------------------------
    def _write_head(self, head: Head) -> None:
        """``PATH.head``, replaced atomically (a temporary file renamed over it)."""
        temporary = self.head_path.with_name(self.head_path.name + ".tmp")
        with open(temporary, "w") as handle:
            json.dump({"format": _HEAD_FORMAT, "entries": head.entries, "last": head.last}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.head_path)

    def read_head(self) -> Head | None:
        """The head kept beside the file, or None when there is none."""
        try:
            saved = json.loads(self.head_path.read_text())
            if saved.get("format") != _HEAD_FORMAT:
                raise ValueError
            return Head(int(saved["entries"]), str(saved["last"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise LedgerFileError(
                f"The head {self.head_path} of the saved ledger {self.path} is not a privopt ledger head. Restore "
                "it from a copy (privopt ledger prints it as entries:hash), or ask whoever keeps the data set's "
                "budget.") from None

    def _check_head(self, entries: list[dict]) -> None:
        """The file against its head: at least as long, and holding the head's last entry
        at the head's count.  Complete entries beyond the head (a crash after the append,
        before the head was written) are kept, and the head moved to them under the lock."""
        head = self.read_head()
        if head is None:
            if entries and entries[0].get("format") != _FORMAT_UNHEADED:
                raise self._rolled_back(f"its head {self.head_path} is missing")
            if entries and self._held:      # a file of privopt-ledger/1: it gets its head now
                self._write_head(Head(len(entries), entries[-1]["hash"]))
            return
        if head.entries < 1 or len(entries) < head.entries or entries[head.entries - 1]["hash"] != head.last:
            raise self._rolled_back(
                f"its head {self.head_path} records {head.entries} entries ending in {head.last[:16]}..., and the "
                f"file holds {len(entries)} that do not end there (the file was truncated, or replaced by an older "
                "copy)")
        if len(entries) > head.entries and self._held:
            self._write_head(Head(len(entries), entries[-1]["hash"]))

    def _rolled_back(self, why: str) -> LedgerFileError:
        return LedgerFileError(
            f"The saved ledger {self.path} is not the one its head acknowledges: {why}. privopt refuses it: a "
            "ledger with fewer releases would give back budget already spent. Restore the file (and its head) "
            "from the latest copy, or ask whoever keeps the data set's budget.")

    # -- the entries ---------------------------------------------------------------
    def _bytes(self) -> tuple[bytes, int | None]:
        """The file's complete lines, and where a last line without its newline starts
        (None when there is none): a write cut by a crash, never acknowledged by the head."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return b"", None
        except OSError as exc:
            raise self._unusable(exc) from None
        cut = None
        if raw and not raw.endswith(b"\n"):
            cut = raw.rfind(b"\n") + 1
            raw = raw[:cut]
        return raw, cut

    def _verified_prefix(self, raw: bytes) -> tuple[list[dict], bytes]:
        """(the entries of the part of ``raw`` this object verified before, the rest):
        that part is reused when its bytes are unchanged (their SHA-256), so a charge
        parses and verifies only the lines appended since."""
        if self._verified is not None:
            length, digest, entries = self._verified
            if len(raw) >= length and hashlib.sha256(raw[:length]).digest() == digest:
                return list(entries), raw[length:]
        return [], raw

    def _entries(self) -> list[dict]:
        """Every entry of the file, its chain verified, checked against its head (and,
        when this process saw the file before, still extending the entry it saw last)."""
        raw, cut = self._bytes()
        entries, rest = self._verified_prefix(raw)
        try:
            text = rest.decode("utf-8")
        except UnicodeDecodeError:
            raise self._tampered("it is not text (a binary file?), so not a privopt ledger") from None
        prev = entries[-1]["hash"] if entries else _GENESIS
        for number, line in enumerate(text.splitlines(), len(entries) + 1):
            entry = self._parse(line, number)
            if entry.get("prev") != prev or entry.get("hash") != _entry_hash(entry):
                raise self._tampered(f"line {number} does not follow from the line before it (its hash chain "
                                     "breaks there)")
            entries.append(entry)
            prev = entry["hash"]
        if (entries or cut is not None) and (not entries or entries[0].get("kind") != "budget"
                                             or entries[0].get("format") not in (_FORMAT, _FORMAT_UNHEADED)):
            raise self._tampered("its first line is not a privopt ledger's budget")
        self._check_head(entries)
        if cut is not None:
            self._drop_cut_line(cut)
        if self._head is not None:
            index, digest = self._head
            if len(entries) <= index or entries[index]["hash"] != digest:
                raise self._tampered(f"its entry {index + 1}, which this process wrote or read, is gone or changed "
                                     "(the file was truncated or rewritten)")
        if entries:
            self._head = (len(entries) - 1, entries[-1]["hash"])
        self._verified = (len(raw), hashlib.sha256(raw).digest(), tuple(entries))
        return entries

    def _drop_cut_line(self, cut: int) -> None:
        """Warn (once) of a last line cut short in a verified ledger, and cut it from the
        file when this object holds the exclusive lock."""
        if not self._warned:
            warnings.warn(
                f"The saved ledger {self.path} ends in a line cut short (a write interrupted by a crash): it was "
                "never acknowledged by the ledger's head, and it is dropped" + (" from the file." if self._held
                                                                               else "."),
                LedgerRepairWarning, stacklevel=_caller_level())
            self._warned = True
        if self._held:
            os.truncate(self.path, cut)

    def _parse(self, line: str, number: int) -> dict:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            raise self._tampered(f"line {number} is not a JSON entry") from None
        if not isinstance(entry, dict):
            raise self._tampered(f"line {number} is not a JSON entry")
        return entry

    def _tampered(self, why: str) -> LedgerFileError:
        return LedgerFileError(
            f"The saved ledger {self.path} was edited, so it no longer accounts for its releases: {why}. privopt "
            "refuses it (a ledger is append-only). Restore the file from a copy, or ask whoever keeps the data "
            "set's budget.")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat()


# ---------------------------------------------------------------------------
# Charging a release
# ---------------------------------------------------------------------------
@dataclass
class Charge:
    """A release charged to a ledger, while it runs."""

    ledger: PrivacyLedger
    record: Release

    def settle(self, epsilon: float, delta: float) -> None:
        """Lower the charge to what the release spent, while the release is open
        (:meth:`PrivacyLedger._settle`)."""
        self.record = self.ledger._settle(self.record, epsilon, delta)


@contextlib.contextmanager
def release(what: str, mechanism: str, spend: Callable[[], tuple[float, float]], *,
            ledger: PrivacyLedger | None = None, data: tuple | None = None,
            check: Callable[[], object] | None = None) -> Iterator[Charge | None]:
    """Charge one release around its work: ``with release(...):`` runs ``check()``
    (the call's public validation: it reads no private value), then reserves
    ``spend()`` (the (epsilon, delta) computed from public arguments only) on
    ``ledger`` (else the ledger of the current ``with ledger:`` block) before the body
    runs.  A refusal by ``check`` or ``spend``, or by the budget, charges nothing; from
    the reservation on the release stays charged, whatever the body raises (its
    outcome may depend on the data).  Inside a charged release nothing charges again
    (and ``check`` is not run: the body validates as it always does).
    ``data``, when given (a tuple of a public key, e.g. :func:`estimator_key`, and
    the arrays), is fingerprinted in memory after the reservation, to warn when the
    same estimator is fitted twice on the same data
    (:class:`~privopt.exceptions.RepeatedReleaseWarning`).
    Yields a :class:`Charge` (the release and its ledger, to :meth:`Charge.settle`),
    or None when nothing is charged."""
    if ledger is not None and not isinstance(ledger, PrivacyLedger):
        raise ParameterTypeError(f"ledger must be a privopt.PrivacyLedger or None, got {type(ledger).__name__}.",
                                 "ledger")
    target = ledger if ledger is not None else _CURRENT.get()
    if _INSIDE.get() or target is None:
        yield None
        return
    if check is not None:
        check()
    epsilon, delta = spend()
    record = target._reserve(what, mechanism, epsilon, delta)
    token, charged = _INSIDE.set(True), CHARGED.set(True)
    charge = Charge(target, record)
    try:
        if data is not None:
            _warn_if_seen(target, what, data)
        yield charge
    finally:
        CHARGED.reset(charged)
        _INSIDE.reset(token)
        target._complete(charge.record)


def _warn_if_seen(ledger: PrivacyLedger, what: str, data: tuple) -> None:
    fingerprint = ledger.fingerprint(*data)
    if fingerprint is not None and ledger.seen_before(fingerprint):
        warnings.warn(
            f"{what}: this data was already released on under this ledger (a refit, or a clone fitted again, "
            "as in cross-validation or a grid search's refit). Each fit is charged again: the ledger holds "
            "their sum.", RepeatedReleaseWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside privopt and contextlib (the
    user's ``fit`` call) for a warning issued by this function's caller."""
    privopt_root = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame: types.FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and (frame.f_code.co_filename.startswith(privopt_root)
                                 or frame.f_code.co_filename == contextlib.__file__):
        frame, level = frame.f_back, level + 1
    return level


def estimator_key(estimator) -> str:
    """The public identity of an estimator for :class:`~privopt.exceptions.RepeatedReleaseWarning`:
    its class and parameters (without ``ledger`` and ``random_state``), equal for an
    estimator and its scikit-learn clones."""
    params = dict(estimator.get_params(deep=False))
    params.pop("ledger", None)
    params.pop("random_state", None)
    return type(estimator).__qualname__ + repr(sorted(params.items(), key=lambda kv: kv[0]))


def _mechanism_spend(arguments: dict[str, Any]) -> tuple[float, float]:
    """A mechanism's (epsilon, delta), from its ``epsilon`` and ``delta`` arguments."""
    epsilon = check_epsilon(arguments.get("epsilon"))
    delta = arguments.get("delta")
    return epsilon, check_delta(0.0 if delta is None else delta, allow_zero=True)


def _pure_spend(arguments: dict[str, Any]) -> tuple[float, float]:
    """A pure mechanism's (epsilon, 0)."""
    return check_epsilon(arguments.get("epsilon")), 0.0


def refuse_kept_report(what: str, keywords: dict[str, Any]) -> None:
    """A charged release refuses ``keep_report=True`` (given as a keyword or in
    ``options=``): a ledger holds an analyst's budget, and the report is the data
    curator's diagnostics, computed from the data and not covered by the guarantee.
    Run before the reservation, so the refusal costs nothing."""
    if report_wanted(keywords):
        raise ParameterError(
            f"keep_report: {what} is charged to a privacy ledger (an analyst's budget), and keep_report=True "
            "would return the solve's report, computed from the data and not covered by the guarantee. Leave "
            "keep_report out (the default, False) under a ledger; a curator who needs the diagnostics runs "
            "the call without a ledger.", "keep_report")


def charges(mechanism: str, *, pure: bool = False, check: Callable[..., object] | None = None):
    """Decorate a mechanism so that it takes ``ledger=`` and charges one release of
    its ``epsilon`` (and ``delta``; 0 when ``pure``) before it runs (:func:`release`).
    ``check``, called with the mechanism's arguments, is its public validation (the
    scalar arguments, never the model or the data), run before the reservation so that
    a bad argument costs nothing; before it, a charged call refuses ``keep_report=True``
    (:func:`refuse_kept_report`)."""
    spend_of = _pure_spend if pure else _mechanism_spend

    def decorate(func):
        signature = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args, ledger=None, **kwargs):
            if ledger is None and _CURRENT.get() is None:
                return func(*args, **kwargs)

            def spend():
                try:
                    arguments = signature.bind(*args, **kwargs).arguments
                except TypeError:
                    arguments = kwargs
                return spend_of(arguments)

            def public():
                refuse_kept_report(func.__name__, kwargs)
                if check is not None:
                    check(*args, **kwargs)

            with release(func.__name__, mechanism, spend, ledger=ledger, check=public):
                return func(*args, **kwargs)

        extra = inspect.Parameter("ledger", inspect.Parameter.KEYWORD_ONLY, default=None)
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*signature.parameters.values(), extra])
        return wrapper

    return decorate

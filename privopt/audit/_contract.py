"""Audit target of the contract of a model built by hand (private selection on a user's
newsvendor model): each leak the contract refuses, released as privopt did before it.

The model's contract (:func:`privopt.models.check_model_contract`) refuses, before any
work, a model in which the records reach the release other than through their own
terms.  Three of its checks are audited here, each by the leak it closes:

* ``leak="bounds"``: the order's bounds computed from the data, ``Q in [0, max(D)]``,
  read as W (OPSamp read its box from them, and W's listing the integers in them);
* ``leak="zero_row"``: a row built from the data that names a record's variable with
  coefficient 0, ``Q + 0 h_0 <= 1.2 mean(D)``, read as a record's row, so that it cut W
  unseen;
* ``leak="cost_aux"``: a cost of the order built from one record, written through an
  auxiliary variable tied to the decision alone, ``f >= 5 D_0 Q / 4`` with ``+ f`` in the
  objective, scored as part of L(w) (the model then falls into n + 1 blocks: the count of
  the records' blocks refuses it).

:class:`BlockCountTarget` audits the same count where the model falls into fewer blocks
than n: day 0's demand reaching every other day's term through a variable they share
(``leak="shared"``) or one row joining their targets (``leak="coupled"``).

As shipped the release is the one after the fix each refusal advises (the bounds the
user declares fixed in advance, [0, 4]; the data-built row deactivated; the data-built
cost dropped): W = {0, ..., 4} and L the records' terms alone, each in [0, 1].  The
broken variant (``broken=True``) releases with the leak, as before the check: the
replaced record then changes W or moves L(w) by more than the declared width, and the
audit flags it.  Candidates and losses come from the mechanism's own evaluator
(:class:`privopt.mechanisms.FixAndSolveEvaluator`, HiGHS); each run's noise is
:func:`privopt.mechanisms.draw_selection_noise` over the five orders, of which the
mechanism reads the first |W| in W's order, as it does in one call.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from .._validation import check_bool, check_choice
from ..calibration import selection_noise_scale
from ..mechanisms import FixAndSolveEvaluator, draw_selection_noise, exponential_mechanism
from ..perturbation import resolve_grids
from ._instances import NeighbouringPair
from ._targets import AuditTarget

__all__ = ["HandModelTarget", "BlockCountTarget", "CONTRACT_LEAKS", "BLOCK_LEAKS", "newsvendor_instance",
           "newsvendor_model"]

#: The leaks :class:`HandModelTarget` audits (its ``leak=``).
CONTRACT_LEAKS = ("bounds", "zero_row", "cost_aux")

#: The leaks :class:`BlockCountTarget` audits: the records' side falls into fewer blocks than n.
BLOCK_LEAKS = ("coupled", "shared")

#: W as shipped: the orders 0..4 (public bounds).
_ORDERS = np.arange(5.0)[:, None]


def newsvendor_instance() -> NeighbouringPair:
    """A pair for :class:`HandModelTarget`: each record is one day's demand in [0, 4] (the one
    feature; the labels, +1 and -1 in turn, are not used).  Day 0 has demand 4 on D and 0 on
    D': max(D) is 4 and 3.5, 1.2 mean(D) is 3.05 and 2.25, and 5 D_0 / 4 is 5 and 0."""
    X = np.array([[4.0], [1.25], [2.0], [2.75], [3.5], [1.75]])
    Xp = X.copy()
    Xp[0] = 0.0
    y = np.where(np.arange(len(X)) % 2 == 0, 1, -1)
    return NeighbouringPair(X, y, Xp, y.copy(), name="newsvendor_n6",
                            description="order Q in 0..4, each day's term |Q - D_t| / 4; day 0's demand 4 or 0")


def newsvendor_model(demand, leak: str | None = None) -> pyo.ConcreteModel:
    """The user's model on one data set: order Q (integer), day t's term |Q - D_t| / 4 through
    its own h_t; ``leak`` adds one of :data:`CONTRACT_LEAKS` or :data:`BLOCK_LEAKS` as a user
    would write it (without a leak, Q's bounds are [0, 4], fixed in advance).  The block leaks
    put day 0's demand into every other day's term: ``"shared"`` through one target variable
    t == D_0 in every other day's rows; ``"coupled"`` through each other day's own target g_t,
    the targets joined by one row sum_t g_t == (n - 1) D_0.  Either way L(Q) = n |Q - D_0| / 4
    and the model falls into 2 blocks for n records with Q fixed."""
    demand = np.asarray(demand, dtype=float).ravel()
    m = pyo.ConcreteModel()
    m.T = pyo.RangeSet(0, len(demand) - 1)
    m.Q = pyo.Var(domain=pyo.Integers, bounds=(0, float(demand.max()) if leak == "bounds" else 4.0))
    m.h = pyo.Var(m.T, domain=pyo.NonNegativeReals)
    target = _targets(m, demand, leak)
    m.over = pyo.Constraint(m.T, rule=lambda m, t: m.h[t] >= m.Q - target[t])
    m.under = pyo.Constraint(m.T, rule=lambda m, t: m.h[t] >= target[t] - m.Q)
    cost = sum(0.25 * m.h[t] for t in m.T)
    if leak == "zero_row":
        m.cut = pyo.Constraint(expr=m.Q + 0 * m.h[0] <= 1.2 * float(demand.mean()))
    elif leak == "cost_aux":
        m.f = pyo.Var(domain=pyo.NonNegativeReals)
        m.f_row = pyo.Constraint(expr=m.f >= 5.0 * float(demand[0]) * m.Q / 4)
        cost = cost + m.f
    m.loss = pyo.Objective(expr=cost)
    return m


def _targets(m, demand, leak) -> list:
    """Each day's target in its rows: its own demand, or (a block leak) day 0's demand reaching
    every other day through a shared variable or a row that joins the days' targets."""
    target: list = [float(x) for x in demand]
    if leak == "shared":
        m.t = pyo.Var()
        m.t_row = pyo.Constraint(expr=m.t == target[0])
        target[1:] = [m.t] * (len(target) - 1)
    elif leak == "coupled":
        m.g = pyo.Var(range(1, len(target)))
        m.joined = pyo.Constraint(expr=sum(m.g.values()) == (len(target) - 1) * target[0])
        target[1:] = list(m.g.values())
    return target


class HandModelTarget(AuditTarget):
    """Private selection on :func:`newsvendor_model` with one leak of :data:`CONTRACT_LEAKS`
    (the module doc): as shipped, the release after the fix the contract's refusal advises;
    ``broken=True``, the release with the leak, as privopt made it before the check."""

    #: the leaks this target audits (its ``leak=``)
    LEAKS: tuple[str, ...] = CONTRACT_LEAKS

    def __init__(self, pair=None, *, epsilon, leak="bounds", method="exponential", broken=False):
        pair = newsvendor_instance() if pair is None else pair
        self._set_pure_selection(pair, epsilon, method)
        self.leak = check_choice(leak, "leak", self.LEAKS)
        self.broken = check_bool(broken, "broken")
        self.n_records = int(pair.X.shape[0])
        self.models = tuple(self._model(pair.data(k)[0]) for k in (0, 1))
        self.sensitivity = 1.0
        self.scale = selection_noise_scale(self.epsilon, self.sensitivity)
        self.candidates, self.losses = [], []
        for k, m in enumerate(self.models):
            scorer = FixAndSolveEvaluator(m, [m.Q], self._grids(m, pair.data(k)[0][:, 0]), solver="highs")
            blocks = list(scorer.blocks())
            self.candidates.append(np.vstack([p for p, _ in blocks]))
            self.losses.append(np.concatenate([lo for _, lo in blocks]))
        self.support = _ORDERS
        self.variant = f"{self.leak} read as before the contract" if self.broken else "as shipped"
        self.parameters = {"noise_scale": self.scale, "sensitivity": self.sensitivity, "dim": 1, "leak": self.leak,
                           "n_candidates": [len(c) for c in self.candidates], "n_records": self.n_records}

    def _grids(self, m, demand):
        """W's grid: the orders 0..4 (shipped); broken, the integers of the data's bounds, or
        the orders the data-built row lets through (the row cut the argmin's W unseen, as in
        OPDisc's and OPSamp's models, which kept it)."""
        if self.broken and self.leak == "bounds":
            return resolve_grids([m.Q])
        if self.broken and self.leak == "zero_row":
            return [tuple(q for q in _ORDERS[:, 0] if q <= 1.2 * float(np.mean(demand)))]
        return [tuple(_ORDERS[:, 0])]

    def _model(self, X):
        """The model the release runs on: with the leak (broken), or after its fix (shipped)."""
        m = newsvendor_model(X[:, 0], self.leak)
        if self.broken:
            if self.leak == "zero_row":
                m.cut.deactivate()           # its effect is W's (:meth:`_grids`)
            return m
        if self.leak == "bounds":
            m.Q.setub(4.0)                   # the user's declared bounds, fixed in advance
        elif self.leak == "zero_row":
            m.cut.deactivate()
        else:
            m.f_row.deactivate()
            m.loss.set_value(sum(0.25 * m.h[t] for t in m.T))   # the data-built cost dropped
        return m

    def draw_noise(self, rng, size=None):
        return draw_selection_noise(rng, self.method, len(_ORDERS), size=size)

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise, dtype=float).reshape(-1, len(_ORDERS))
        cands, losses = self.candidates[which], self.losses[which]
        keys = noise[:, :len(cands)] - losses[None, :] / self.scale
        return cands[np.argmax(keys, axis=1)]

    def run_mechanism(self, which, rng):
        if self.broken:
            raise ValueError("the broken variant is privopt before the contract's check (it refuses the model "
                             "now); audit it with oracle='enumerate'.")
        res = exponential_mechanism(self.models[which], weights="Q", epsilon=self.epsilon, loss_range=(0.0, 1.0),
                                    n_samples=self.n_records, method=self.method, random_state=rng, progress=False,
                                    public_constraints="Q")
        return np.asarray(res.weights, dtype=float)


class BlockCountTarget(HandModelTarget):
    """Private selection on :func:`newsvendor_model` with one leak of :data:`BLOCK_LEAKS`: day 0's
    demand reaches every other day's term through a variable they share (``"shared"``) or a row
    that joins their targets (``"coupled"``), so that with Q fixed the model falls into 2 blocks
    for n records.  The contract's count of the records' blocks (:func:`privopt.models.check_model_contract`)
    refuses it before any solve.  As shipped, the release after the fix the refusal advises
    (each day's term on its own variables and rows: the model without the leak); ``broken=True``,
    the release with the leak, as privopt would make it with the count disabled: every total
    stays in [n a, n b] = [0, n], so nothing else refuses it, and L(Q) = n |Q - D_0| / 4 moves
    by n b - n a between the neighbours, not by b - a."""

    LEAKS = BLOCK_LEAKS

    def __init__(self, pair=None, *, epsilon, leak="coupled", method="exponential", broken=False):
        super().__init__(pair, epsilon=epsilon, leak=leak, method=method, broken=broken)
        if self.broken:
            self.variant = f"{self.leak}: the records' blocks not counted"

    def _model(self, X):
        """The model the release runs on: with the leak (broken), or each day on its own (shipped)."""
        return newsvendor_model(X[:, 0], self.leak if self.broken else None)

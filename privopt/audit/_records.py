"""Audit target of each record's term clipped into ``loss_range`` (private selection on a
user's model whose records privopt can see: the closed form of its blocks).

The guarantee of private selection rests on every record's term lying in the declared
range [a, b].  Where the model falls apart into one block per record once the decision is
fixed, privopt reads each record's term and clips it into [a, b], so that the release uses
the clipped loss; a term far outside the range then cannot move the law by more than
e^eps.  The broken variant scores without the clip (what privopt did before): one
record's term of 10 at a declared width of 1 moves the law by far more.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from .._validation import check_bool, check_int, check_positive
from ..calibration import selection_noise_scale
from ..exceptions import ParameterError
from ..mechanisms import FixAndSolveEvaluator, draw_selection_noise, exponential_mechanism
from ..models import RecordModel, quiet_clone
from ..solvers import solve
from ._instances import NeighbouringPair
from ._targets import AuditTarget

__all__ = ["RecordClipTarget", "far_record_instance", "sites_model", "RecordModelClipTarget", "record_sites_model"]

#: W: open site A or site B (one of the two), in W's order.
_W = np.array([[1.0, 0.0], [0.0, 1.0]])


def far_record_instance(n: int = 6, far: float = 10.0) -> NeighbouringPair:
    """A pair for :class:`RecordClipTarget`: each record is one customer's distances to
    sites A and B (the two features; the labels, +1 and -1 in turn, are not used).  Every
    customer is 0.1 from both, except customer 0: (0, ``far``) on D, (0, 0) on D', so its
    term at B is ``far`` (outside the declared [0, 1]) on D only."""
    n = check_int(n, "n", minimum=2)
    far = check_positive(far, "far")
    X = np.full((n, 2), 0.1)
    X[0] = (0.0, far)
    Xp = X.copy()
    Xp[0] = (0.0, 0.0)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    return NeighbouringPair(X, y, Xp, y.copy(), name=f"far_record_n{n}",
                            description=f"open A or B; customer 0 is {far:g} from B on D, 0 on D'")


def sites_model(X) -> pyo.ConcreteModel:
    """The user's model of :class:`RecordClipTarget` on one data set: open one of two
    sites (``one``, public), each customer served by the open site at its distance (rows
    of ``X``), a sum over customers; with ``open`` fixed, one choose-one block per customer."""
    dist = np.asarray(X, dtype=float)
    m = pyo.ConcreteModel()
    m.I, m.J = pyo.RangeSet(0, len(dist) - 1), pyo.RangeSet(0, 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.one = pyo.Constraint(expr=m.open[0] + m.open[1] == 1)
    m.served = pyo.Constraint(m.I, rule=lambda m, i: m.x[i, 0] + m.x[i, 1] == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.x[i, j] <= m.open[j])
    m.cost = pyo.Objective(expr=sum(float(dist[i, j]) * m.x[i, j] for i in m.I for j in m.J))
    return m


class _TwoPointSelection(AuditTarget):
    """Private selection over the two points ``_W`` of the far-record models, replayed
    exactly: the same noise as the mechanism, keys ``noise - L(w) / scale`` from each data
    set's losses at the two points (``self.losses``), the first largest released."""

    method: str
    scale: float
    losses: list

    def draw_noise(self, rng, size=None):
        return draw_selection_noise(rng, self.method, len(_W), size=size)

    def outputs_from_noise(self, which, noise):
        noise = np.asarray(noise, dtype=float).reshape(-1, len(_W))
        keys = noise - self.losses[which][None, :] / self.scale
        return _W[np.argmax(keys, axis=1)]


class RecordClipTarget(_TwoPointSelection):
    """Private selection (:func:`privopt.exponential_mechanism`, fix-and-solve by the closed
    form of the blocks) on :func:`sites_model`, ``loss_range = (0, 1)``, on the pair
    :func:`far_record_instance`.  As shipped, the losses are the mechanism's own evaluator's
    (:class:`privopt.mechanisms.FixAndSolveEvaluator` with each record's term clipped into the
    range); ``clip=False`` is the deliberately broken variant "record terms not clipped",
    privopt before the clip: the far record moves L(B) by ``far``.  Each run's noise is
    :func:`privopt.mechanisms.draw_selection_noise` over the two points of W.  Needs HiGHS.
    """

    def __init__(self, pair=None, *, epsilon, method="exponential", clip=True):
        pair = far_record_instance() if pair is None else pair
        self._set_pure_selection(pair, epsilon, method)
        self.clip = check_bool(clip, "clip")
        self.models = tuple(sites_model(pair.data(k)[0]) for k in (0, 1))
        self.n_records = int(pair.X.shape[0])
        self.sensitivity = 1.0
        self.scale = selection_noise_scale(self.epsilon, self.sensitivity)
        self.losses = []
        for m in self.models:
            scorer = FixAndSolveEvaluator(m, list(m.open.values()), [(0.0, 1.0)] * 2, solver="highs",
                                          public_constraints=[m.one], n_records=self.n_records,
                                          record_range=(0.0, 1.0) if self.clip else None)
            blocks = list(scorer.blocks())
            points = np.vstack([p for p, _ in blocks])
            if not np.array_equal(points, _W):
                raise ParameterError("pair: the model's W is not {A, B}; use far_record_instance().", "pair")
            self.losses.append(np.concatenate([lo for _, lo in blocks]))
        self.support = _W
        self.variant = "as shipped" if self.clip else "record terms not clipped"
        self.parameters = {"noise_scale": self.scale, "sensitivity": self.sensitivity, "dim": 2,
                           "n_records": self.n_records}

    def run_mechanism(self, which, rng):
        if not self.clip:
            raise ParameterError("the variant without the clip is a replay of privopt before it; "
                                 "audit it with oracle='enumerate'.", "oracle")
        res = exponential_mechanism(self.models[which], weights="open", epsilon=self.epsilon, loss_range=(0.0, 1.0),
                                    n_samples=self.n_records, method=self.method, random_state=rng, progress=False,
                                    public_constraints="one")
        return np.asarray(res.weights, dtype=float)


def record_sites_model(X, *, clip: bool = True) -> pyo.ConcreteModel:
    """The model of :func:`sites_model` built record by record with
    :func:`privopt.RecordModel`: open one of two sites (public), each customer (a row of
    ``X``, its distances to A and B) on its own block, ``loss_range = (0, 1)``; with ``clip``
    each customer's term enters as min(max(t, 0), 1) by the construction's encoding."""
    dist = np.asarray(X, dtype=float)

    def customer(b, y, d):
        b.x = pyo.Var(y.index_set(), bounds=(0, 1))
        b.served = pyo.Constraint(expr=b.x[0] + b.x[1] == 1)
        b.only_open = pyo.Constraint(y.index_set(), rule=lambda b, j: b.x[j] <= y[j])
        return float(d[0]) * b.x[0] + float(d[1]) * b.x[1]

    return RecordModel(decision=pyo.Var(range(2), domain=pyo.Binary), record=customer, records=list(dist),
                       public=lambda m, y: m.add_component("one", pyo.Constraint(expr=y[0] + y[1] == 1)),
                       loss_range=(0.0, 1.0), clip=clip)


class RecordModelClipTarget(_TwoPointSelection):
    """Private selection on :func:`record_sites_model` (a model built record by record with
    ``clip=True``), on the pair :func:`far_record_instance`, scored where privopt does not
    see the records' terms: by ``solver`` through Pyomo (``record_terms == "assumed"``), so
    the range of each term rests on the construction's clip alone.  The losses are the
    model's certified optima with the decision fixed at each point of W; ``clip=False`` is
    the deliberately broken variant "built without clip=True": the far record moves L(B) by
    ``far``.  Each run's noise is :func:`privopt.mechanisms.draw_selection_noise` over the
    two points of W.  Needs ``solver`` (GLPK by default) and HiGHS."""

    def __init__(self, pair=None, *, epsilon, method="exponential", clip=True, solver="glpk"):
        pair = far_record_instance() if pair is None else pair
        self._set_pure_selection(pair, epsilon, method)
        self.clip = check_bool(clip, "clip")
        self.solver = solver
        self.models = tuple(record_sites_model(pair.data(k)[0], clip=self.clip) for k in (0, 1))
        self.n_records = int(pair.X.shape[0])
        self.sensitivity = 1.0
        self.scale = selection_noise_scale(self.epsilon, self.sensitivity)
        self.losses = [np.array([_fixed_optimum(m, point) for point in _W]) for m in self.models]
        self.support = _W
        self.variant = "as shipped" if self.clip else "built without clip=True"
        self.parameters = {"noise_scale": self.scale, "sensitivity": self.sensitivity, "dim": 2,
                           "n_records": self.n_records, "solver": solver}

    def run_mechanism(self, which, rng):
        if not self.clip:
            raise ParameterError("the variant without the clip is refused by the mechanism (its total leaves "
                                 "[n a, n b]); audit it with oracle='enumerate'.", "oracle")
        res = exponential_mechanism(self.models[which], epsilon=self.epsilon, method=self.method, random_state=rng,
                                    solver=self.solver, progress=False)
        return np.asarray(res.weights, dtype=float)


def _fixed_optimum(model, point) -> float:
    """The certified optimum of ``model`` (a clone) with its decision fixed at ``point``."""
    m = quiet_clone(model)
    for v, value in zip(m.w.values(), point):
        v.fix(float(value))
    report = solve(m, "highs")
    if not report.certified_optimal or report.objective is None:
        raise ParameterError("pair: a point of W could not be solved to a certified optimum.", "pair")
    return float(report.objective)

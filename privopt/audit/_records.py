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

from .._validation import check_bool, check_epsilon, check_int, check_positive, check_real
from ..calibration import rspm_noise_scale, selection_noise_scale
from ..exceptions import ParameterError
from ..mechanisms import FixAndSolveEvaluator, draw_rspm_noise, draw_selection_noise, exponential_mechanism, rspm
from ..models import RecordModel, quiet_clone
from ..solvers import solve
from ._instances import NeighbouringPair
from ._targets import AuditTarget

__all__ = ["RecordClipTarget", "far_record_instance", "sites_model", "RecordModelClipTarget", "record_sites_model",
           "RecordTermTarget", "heavy_record_instance", "signs_model", "signs_record_model"]

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


#: RSPM's W: w in {-1, 0, 1} (one coordinate), in the order of the replay.
_SIGNS = np.array([[-1.0], [0.0], [1.0]])


def heavy_record_instance(n: int = 6, heavy: float = 20.0, offset: float = 1.0) -> NeighbouringPair:
    """A pair for :class:`RecordTermTarget`: each record is (target y_i, weight a_i, offset o_i)
    (the three features; the labels, +1 and -1 in turn, are not used), its term
    a_i (|w - y_i| + o_i) / 2.  Every record is (-1, 1, 0), a term in [0, 1], except record 0:
    (1, ``heavy``, ``offset``) on D, its term between ``heavy * offset / 2`` and
    ``heavy * (2 + offset) / 2`` (outside the declared [0, 1] at every w when
    ``heavy * offset > 2``), and (1, 1, 0) on D'."""
    n = check_int(n, "n", minimum=2)
    heavy = check_positive(heavy, "heavy")
    offset = check_real(offset, "offset")
    if offset < 0:
        raise ParameterError("offset must be >= 0.", "offset")
    X = np.tile([-1.0, 1.0, 0.0], (n, 1))
    X[0] = (1.0, heavy, offset)
    Xp = X.copy()
    Xp[0] = (1.0, 1.0, 0.0)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    return NeighbouringPair(X, y, Xp, y.copy(), name=f"heavy_record_n{n}",
                            description=f"w in {{-1, 0, 1}}; record 0's term {heavy:g} (|w - 1| + {offset:g}) / 2 "
                                        "on D, |w - 1| / 2 on D'")


def signs_model(X) -> pyo.ConcreteModel:
    """The user's RSPM model of :class:`RecordTermTarget` on one data set: w in {-1, 0, 1}
    written w = pp - nn with the separator binaries pp, nn (rows ``link``, ``excl``, public),
    record i's term a_i h_i / 2 with its own h_i >= |w - y_i| + o_i (rows of ``X``:
    (y_i, a_i, o_i))."""
    data = np.asarray(X, dtype=float)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, len(data) - 1)
    m.w = pyo.Var(domain=pyo.Integers, bounds=(-1, 1))
    m.pp = pyo.Var(domain=pyo.Binary)
    m.nn = pyo.Var(domain=pyo.Binary)
    m.link = pyo.Constraint(expr=m.w == m.pp - m.nn)
    m.excl = pyo.Constraint(expr=m.pp + m.nn <= 1)
    m.h = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.up = pyo.Constraint(m.I, rule=lambda m, i: m.h[i] >= m.w - float(data[i, 0]) + float(data[i, 2]))
    m.down = pyo.Constraint(m.I, rule=lambda m, i: m.h[i] >= float(data[i, 0]) - m.w + float(data[i, 2]))
    m.loss = pyo.Objective(expr=sum(0.5 * float(data[i, 1]) * m.h[i] for i in m.I))
    return m


def signs_record_model(X) -> pyo.ConcreteModel:
    """:func:`signs_model` built record by record with :func:`privopt.RecordModel`: the
    separator binaries and their rows in the public part, record i on its own block (its h_i
    bounded by 2 + o_i, fixed by the bounds of w), ``loss_range = (0, 1)`` with ``clip=True``:
    each record's term enters as min(max(t, 0), 1) at every w, by construction."""
    def public(m, w):
        m.pp = pyo.Var(domain=pyo.Binary)
        m.nn = pyo.Var(domain=pyo.Binary)
        m.link = pyo.Constraint(expr=w == m.pp - m.nn)
        m.excl = pyo.Constraint(expr=m.pp + m.nn <= 1)

    def record(b, w, r):
        y, a, o = (float(x) for x in r)
        b.h = pyo.Var(bounds=(0, 2 + o))
        b.up = pyo.Constraint(expr=b.h >= w - y + o)
        b.down = pyo.Constraint(expr=b.h >= y - w + o)
        return 0.5 * a * b.h

    return RecordModel(decision=pyo.Var(domain=pyo.Integers, bounds=(-1, 1)), public=public, record=record,
                       records=list(np.asarray(X, dtype=float)), loss_range=(0.0, 1.0), clip=True)


class RecordTermTarget(AuditTarget):
    """RSPM ([NRW18]; :func:`privopt.rspm`) on :func:`signs_model`, on the pair
    :func:`heavy_record_instance`, audited for its check of each record's term against
    ``loss_range`` (:func:`privopt.mechanisms._terms.check_record_terms`): RSPM releases an
    argmin over all of W at once and cannot clip a term, so at its answer it reads each
    record's term and refuses (charged) when one lies outside the range.  On D record 0's term
    lies between 10 and 30 at a declared range (0, 1): every call is refused.  As shipped, the
    release after the fix the refusal advises: a range that holds for every record, (0, 30),
    so Delta = 30.  ``broken=True`` is RSPM with the check disabled: released with the
    declared (0, 1), Delta = 1, as before the check; the heavy record moves L(w) by far more
    than Delta.  The replay: b = :func:`privopt.calibration.rspm_noise_scale` (2 separators),
    xi by :func:`privopt.mechanisms.draw_rspm_noise`, and the argmin of
    L(w) + xi_1 [w = 1] + xi_2 [w = -1] over W with L(w) each data set's certified optimum
    with w fixed.  Needs HiGHS.

    ``clip=True``: the other fix, the model built with :func:`privopt.RecordModel`
    (:func:`signs_record_model`, ``clip=True``, the declared (0, 1), Delta = 1): each record's
    term is in the range at every w by construction, so nothing rests on the points the check
    reads; it passes as shipped."""

    mechanism = "rspm"

    def __init__(self, pair=None, *, epsilon, broken=False, clip=False):
        pair = heavy_record_instance() if pair is None else pair
        self.pair = pair
        self.epsilon = check_epsilon(epsilon)
        self.delta = 0.0
        self.broken = check_bool(broken, "broken")
        self.clip = check_bool(clip, "clip")
        if self.broken and self.clip:
            raise ParameterError("broken=True and clip=True: the clipped construction has no check to disable; "
                                 "pass one of them.", "clip")
        build = signs_record_model if self.clip else signs_model
        self.models = tuple(build(pair.data(k)[0]) for k in (0, 1))
        self.n_records = int(pair.X.shape[0])
        # a range that holds for every record of both data sets: the largest a_i (2 + o_i) / 2
        top = max(float(np.max(X[:, 1] * (2.0 + X[:, 2]) / 2.0)) for X in (pair.X, pair.X_prime))
        self.loss_range = (0.0, 1.0) if self.broken or self.clip else (0.0, top)
        self.sensitivity = self.loss_range[1] - self.loss_range[0]
        self.scale = rspm_noise_scale(self.epsilon, 0.0, 2, "laplace", sensitivity=self.sensitivity)
        self.losses = [np.array([_fixed_optimum(m, point) for point in _SIGNS]) for m in self.models]
        self.features = np.hstack([_SIGNS == 1.0, _SIGNS == -1.0]).astype(float)
        self.support = _SIGNS
        self.variant = "record terms not checked" if self.broken else "as shipped"
        self.parameters = {"noise_scale": self.scale, "sensitivity": self.sensitivity, "dim": 1,
                           "loss_range": self.loss_range, "n_records": self.n_records,
                           "built": "RecordModel(clip=True)" if self.clip else "by hand"}

    def draw_noise(self, rng, size=None):
        return draw_rspm_noise(rng, self.scale, 2, size=size)

    def outputs_from_noise(self, which, noise):
        xi = np.asarray(noise, dtype=float).reshape(-1, 2)
        values = self.losses[which][None, :] + xi @ self.features.T
        return _SIGNS[np.argmin(values, axis=1)]

    def run_mechanism(self, which, rng):
        if self.broken:
            raise ParameterError("the variant without the check is refused by the mechanism (a record's term "
                                 "leaves loss_range); audit it with oracle='enumerate'.", "oracle")
        if self.clip:      # everything from the model's ModelInfo: its range, n and public part
            res = rspm(self.models[which], separator_vars=("pp", "nn"), epsilon=self.epsilon, random_state=rng)
            return np.asarray(res.weights, dtype=float)
        res = rspm(self.models[which], separator_vars=("pp", "nn"), epsilon=self.epsilon,
                   loss_range=self.loss_range, n_samples=self.n_records, public_constraints=["link", "excl", "w"],
                   random_state=rng)
        return np.asarray(res.weights, dtype=float)

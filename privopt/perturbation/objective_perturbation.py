"""The ``privopt.objective_perturbation`` Pyomo transformation.

Objective perturbation replaces the objective L(D, w) of a loss model by

    L(D, w) - scale * <eta, phi(w)>

where eta is a noise vector drawn by a mechanism and phi is either

* ``normalize=True`` (OPDisc, [NRVW20] Algorithm 1): the normalization
  pi(w) = (w_1, ..., w_d, sqrt(D^2 - ||w||_2^2)) / D, which puts every point of
  the ball on the unit sphere in R^(d+1); or
* ``normalize=False`` (OPSamp [NRVW20] Algorithm 2, RSPM [NRW18]): phi(w) = w.

pi(w) is not linear; on a finite grid it is linearized *exactly*
([NRVW20] Section 3 and its appendix):

* each coordinate w_j = sum_k g_jk r_jk with binaries r_jk, sum_k r_jk = 1
  (reused from the model when it already has such an encoding);
* ||w||^2 = sum_jk g_jk^2 r_jk is then linear; the norm constraint
  ||w||^2 <= D^2 is added, with D^2 computed in integers on integer grids;
* the auxiliary variable s = sqrt(D^2 - ||w||^2) is encoded by

  - ``"piecewise"``: s <= f(v_m) + (f(v_m+1) - f(v_m)) (sq - v_m) / (v_m+1 - v_m)
    for consecutive levels v_m of ||w||^2, f(v) = sqrt(D^2 - v).  f is concave,
    so these cuts say s <= PL(sq), the piecewise-linear interpolation of f, which
    equals f at every level sq can take.  Exact when the objective pushes s up
    (scale * eta_(d+1) > 0); an LP-only encoding, so HiGHS and GLPK take it.
  - ``"binary"``: one binary q_m per level, sum_m q_m = 1, sum_m v_m q_m = sq,
    s = sum_m f(v_m) q_m.  Exact for either sign.
  - ``"auto"`` (default): piecewise when scale * eta_(d+1) >= 0, else binary.

The convex quadratic form s >= 0, s^2 + ||w||^2 <= D^2 of [NRVW20]'s appendix
is not offered.  Where it is exact (the objective pushes s up) the piecewise
cuts are exact too, and they are linear, so every MILP solver takes them.  The
quadratic form is exact only in exact arithmetic: a solver's feasibility
tolerance t on the quadratic row lets s exceed sqrt(D^2 - ||w||^2) by up to
about sqrt(t) where ||w|| = D (1e-3 at SCIP's t = 1e-6), which moves the
perturbed objective by |eta_(d+1)| sqrt(t) / D and can change the argmin the
privacy proof needs.

All new components live on one uniquely named block; the original objective
is deactivated, and :func:`revert` undoes the transformation.
"""

from __future__ import annotations

from dataclasses import dataclass

import math
import re

import numpy as np
import pyomo.environ as pyo
from pyomo.common.config import ConfigDict, ConfigValue, In
from pyomo.common.modeling import unique_component_name
from pyomo.core import Transformation, TransformationFactory

from .._validation import check_bool, check_model_objective
from ..exceptions import ModelError, NotTransformedError, ParameterError, ParameterTypeError
from ..models import get_info, quiet_cloning
from ._grid import norm_levels, resolve_grids, weights_of

__all__ = [
    "ObjectivePerturbation",
    "get_perturbation_block",
    "get_noise",
    "set_noise",
    "get_original_objective",
    "get_perturbed_objective",
    "get_weights",
    "get_normalization",
    "pi_value",
    "is_transformed",
    "revert",
]

_MARKER = "_privopt_objective_perturbation"


def _noise_domain(value):
    if value is None:
        return None
    try:
        arr = np.array(value, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"noise must be a vector of numbers: {exc}", "noise") from exc
    if not np.all(np.isfinite(arr)):
        raise ParameterError("noise contains NaN or infinite values.", "noise")
    return arr


def _positive_or_none(value):
    if value is None:
        return None
    if isinstance(value, bool):
        raise ParameterTypeError("norm_bound must be a number.", "norm_bound")
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"norm_bound must be a number, got {value!r}.", "norm_bound") from exc
    if not (value > 0 and math.isfinite(value)):
        raise ParameterError(f"norm_bound must be a finite number > 0, got {value!r}.", "norm_bound")
    return value


def _finite_float(value):
    if isinstance(value, bool):
        raise ParameterTypeError("scale must be a number.", "scale")
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError("scale must be finite.", "scale")
    return value


def _passthrough(value):
    return value


def _strict_bool(name):
    """A ConfigValue domain for the flag ``name`` (Pyomo's domain=bool would
    read normalize="False" as True)."""
    def domain(value):
        return check_bool(value, name)
    return domain


@TransformationFactory.register(
    "privopt.objective_perturbation",
    doc="Objective perturbation L(w) - scale*<eta, phi(w)> with phi = pi (normalized, "
    "exact MILP encoding) or the identity [Neel, Roth, Vietri, Wu, ICML 2020].",
)
class ObjectivePerturbation(Transformation):
    """Inject a random linear term into a model's objective.

    Options (``apply_to(model, **options)`` or ``create_using``):

    weights
        The decision vector: an IndexedVar, a list of scalar Vars or a
        component name; default: the ModelInfo's ``weights`` or ``model.w``.
    noise
        The vector eta: length d+1 when ``normalize`` (the last coordinate
        multiplies the auxiliary variable s), else d.
    normalize
        True: phi = pi(w) with the exact encoding and the norm constraint;
        False: phi(w) = w.
    norm_bound
        D (required when ``normalize``; default: the ModelInfo's).
    scale
        Multiplier of the noise term (default 1: L(w) - <eta, phi(w)>).
    grid
        Values the weights take (one sequence, or one per coordinate);
        default: the ModelInfo's grid, else the variables' integer ranges.
    grid_encoding
        Name of an existing binary component ``r[j, k]`` with
        ``w_j = sum_k grid[j][k] r[j, k]``, ``sum_k r[j, k] = 1`` to reuse.
    pi_encoding
        ``"auto"``, ``"piecewise"`` or ``"binary"`` (see the module docstring).
    """

    CONFIG = ConfigDict("privopt.objective_perturbation")
    CONFIG.declare("weights", ConfigValue(default=None, domain=_passthrough,
                                          description="decision vector (IndexedVar, list of Vars or name)"))
    CONFIG.declare("noise", ConfigValue(default=None, domain=_noise_domain, description="noise vector eta"))
    CONFIG.declare("normalize", ConfigValue(default=True, domain=_strict_bool("normalize"),
                                            description="inject pi(w) (True) or w (False)"))
    CONFIG.declare("norm_bound", ConfigValue(default=None, domain=_positive_or_none,
                                             description="D, the l2 bound on w"))
    CONFIG.declare("scale", ConfigValue(default=1.0, domain=_finite_float,
                                        description="multiplier of the noise term"))
    CONFIG.declare("grid", ConfigValue(default=None, domain=_passthrough, description="grid values"))
    CONFIG.declare("grid_encoding", ConfigValue(default=None, domain=_passthrough,
                                                description="existing binary grid encoding r[j,k]"))
    CONFIG.declare("mutable_noise", ConfigValue(default=False, domain=_strict_bool("mutable_noise"),
                                                description="noise as mutable Params (normalize=False only)"))
    CONFIG.declare("pi_encoding", ConfigValue(default="auto", domain=In(["auto", "piecewise", "binary"]),
                                              description="encoding of s = sqrt(D^2 - ||w||^2)"))

    def create_using(self, model, **kwds):
        """Pyomo's ``create_using`` (apply the transformation to a clone and
        return the clone), with Pyomo's "Unable to clone" ERROR line about a
        user's Set initialized from ``dict.keys()`` dropped during the clone
        (:func:`privopt.models.quiet_cloning`)."""
        with quiet_cloning():
            return super().create_using(model, **kwds)

    def _apply_to(self, model, **kwds):
        try:
            config = self.CONFIG(kwds.pop("options", {}))
            config.set_value(kwds)
        except ValueError as exc:
            # Pyomo wraps a domain's error in a plain ValueError: surface ours,
            # which names the parameter.
            inner = exc.__cause__ or exc.__context__
            if isinstance(inner, (ParameterError, ParameterTypeError)):
                raise inner from None
            key = re.search(r"configuration '([^']+)'", str(exc))
            raise ParameterError(str(exc), key.group(1) if key else None) from exc
        if is_transformed(model):
            raise ModelError(
                "model: it is already objective-perturbed; revert it first "
                "(privopt.perturbation.revert(model)).", "model")
        info = get_info(model)
        weights = weights_of(model, config.weights, default_name=info.weights if info else "w")
        d = len(weights)
        original = check_model_objective(model)
        noise = config.noise
        if noise is None:
            raise ParameterError("noise: give the noise vector eta.", "noise")
        expected = d + 1 if config.normalize else d
        if noise.size != expected:
            raise ParameterError(
                f"noise has {noise.size} entries; {'normalize=True needs d+1' if config.normalize else 'needs d'}"
                f" = {expected} for d = {d} weights.", "noise")

        name = unique_component_name(model, _MARKER)
        block = pyo.Block(concrete=True)
        model.add_component(name, block)
        try:
            self._build(model, block, original, weights, noise, config, info)
        except BaseException:
            # a failed transformation leaves the model as it was
            model.del_component(block)
            original.activate()
            raise
        # Pyomo's convention: apply_to returns None (in place), create_using
        # returns the new model.
        return None

    def _build(self, model, block, original, weights, noise, config, info):
        block._privopt_marker = True
        block._original_objective_name = original.name
        block._weight_names = [v.name for v in weights]
        block._normalize = bool(config.normalize)
        block._scale = float(config.scale)
        block.J = pyo.RangeSet(0, len(noise) - 1)
        mutable = bool(config.mutable_noise)
        if mutable and config.normalize:
            raise ParameterError(
                "mutable_noise: only with normalize=False (the encoding of pi(w) depends on the sign "
                "of the last noise coordinate, so it cannot be changed in place).", "mutable_noise")
        block._mutable_noise = mutable
        block.noise = pyo.Param(block.J, initialize={i: float(x) for i, x in enumerate(noise)}, mutable=mutable)

        if config.normalize:
            norm_bound = config.norm_bound if config.norm_bound is not None else (info.norm_bound if info else None)
            if norm_bound is None:
                raise ParameterError(
                    "norm_bound: normalize=True needs D, the bound ||w||_2 <= D; pass norm_bound=.",
                    "norm_bound")
            self._add_normalization(block, model, weights, config, info, norm_bound, noise)
            D = block._norm_bound
            phi = [w / D for w in weights] + [block.s / D]
        else:
            phi = list(weights)
        scale = config.scale
        coef = [block.noise[i] if mutable else float(noise[i]) for i in range(len(phi))]
        block.perturbation = pyo.Expression(expr=sum(coef[i] * phi[i] for i in range(len(phi))))
        original.deactivate()
        block.objective = pyo.Objective(expr=original.expr - scale * block.perturbation, sense=pyo.minimize)

    # -- the exact encoding of pi(w) -----------------------------------------
    def _add_normalization(self, block, model, weights, config, info, norm_bound, noise):
        d = len(weights)
        reuse_name = config.grid_encoding
        if reuse_name is None and info is not None and config.grid is None:
            reuse_name = info.grid_encoding
        grids = resolve_grids(weights, config.grid, info.grid if info else None)
        lv = norm_levels(grids, norm_bound)
        block._grids = [tuple(g) for g in grids]
        block._norm_bound = lv.norm_bound
        block.K = pyo.Set(initialize=[(j, k) for j in range(d) for k in range(len(grids[j]))], dimen=2)

        r = None
        if reuse_name is not None:
            r = model.find_component(reuse_name)
            if r is None or not isinstance(r, pyo.Var) or not all((j, k) in r for (j, k) in block.K):
                raise ModelError(
                    f"grid_encoding: the model has no binary variable {reuse_name!r} indexed "
                    "[j, k] over the grid.", "grid_encoding")
        if r is None:
            block.r = pyo.Var(block.K, domain=pyo.Binary)
            r = block.r
            block.one_value = pyo.Constraint(
                range(d), rule=lambda b, j: sum(b.r[j, k] for k in range(len(grids[j]))) == 1)
            block.link = pyo.Constraint(
                range(d), rule=lambda b, j: weights[j] == sum(grids[j][k] * b.r[j, k] for k in range(len(grids[j]))))
        block._r_name = r.name

        # ||w||^2 in units of lv.unit, with integer coefficients when exact
        sq_units = sum(lv.coef[j][k] * r[j, k] for (j, k) in block.K)
        block.squared_norm = pyo.Expression(expr=lv.unit * sq_units)
        block.norm_constraint = pyo.Constraint(expr=sq_units <= lv.bound)

        D2 = lv.norm_bound ** 2
        levels = lv.levels

        def f(level):
            return math.sqrt(max(0.0, D2 - level * lv.unit))

        block.s = pyo.Var(bounds=(0.0, lv.norm_bound))
        coefficient = config.scale * float(noise[-1])
        encoding = config.pi_encoding
        if encoding == "auto":
            encoding = "piecewise" if coefficient >= 0 else "binary"
        block._pi_encoding = encoding
        if encoding == "piecewise":
            if coefficient < 0:
                raise ParameterError(
                    "pi_encoding: 'piecewise' is exact only when scale * noise[-1] >= 0 (the "
                    "objective pushes s up); use 'binary' or 'auto'.", "pi_encoding")
            if len(levels) == 1:
                block.s_cuts = pyo.Constraint([0], rule=lambda b, i: b.s <= f(levels[0]))
            else:
                pairs = list(zip(levels[:-1], levels[1:]))

                def cut(b, i):
                    a, c = pairs[i]
                    slope = (f(c) - f(a)) / (c - a)
                    return b.s <= f(a) + slope * (sq_units - a)

                block.s_cuts = pyo.Constraint(range(len(pairs)), rule=cut)
        else:
            block.M = pyo.RangeSet(0, len(levels) - 1)
            block.q = pyo.Var(block.M, domain=pyo.Binary)
            block.q_one = pyo.Constraint(expr=sum(block.q[m] for m in block.M) == 1)
            block.q_level = pyo.Constraint(expr=sum(levels[m] * block.q[m] for m in block.M) == sq_units)
            block.s_value = pyo.Constraint(expr=block.s == sum(f(levels[m]) * block.q[m] for m in block.M))


# ---------------------------------------------------------------------------
# Getters and undo
# ---------------------------------------------------------------------------

def find_perturbation_block(model):
    """The block the transformation added to ``model``, or None."""
    for blk in model.component_objects(pyo.Block, descend_into=False):
        if getattr(blk, "_privopt_marker", False):
            return blk
    return None


def is_transformed(model) -> bool:
    """Whether ``model`` carries an objective-perturbation block."""
    return find_perturbation_block(model) is not None


@dataclass(frozen=True)
class PerturbationInfo:
    """What the transformation recorded on its block, as one declared record
    (the exact oracle of :mod:`privopt.solvers` reads it): the names of the
    weights the noise multiplies, whether pi(w) normalizes it, the scale of
    the noise term and the norm bound D of the normalization (None without)."""

    weight_names: tuple[str, ...]
    normalize: bool
    scale: float
    norm_bound: float | None


def perturbation_info(model) -> PerturbationInfo | None:
    """The :class:`PerturbationInfo` of a transformed ``model``, or None."""
    blk = find_perturbation_block(model)
    if blk is None:
        return None
    normalize = bool(blk._normalize)
    return PerturbationInfo(weight_names=tuple(blk._weight_names), normalize=normalize, scale=float(blk._scale),
                            norm_bound=blk._norm_bound if normalize else None)


def get_perturbation_block(model):
    """The block holding everything the transformation added."""
    blk = find_perturbation_block(model)
    if blk is None:
        raise NotTransformedError(
            "model: it has not been objective-perturbed; apply "
            "TransformationFactory('privopt.objective_perturbation') first.", "model")
    return blk


def get_noise(model) -> np.ndarray:
    """The noise vector eta injected into ``model``."""
    blk = get_perturbation_block(model)
    return np.array([pyo.value(blk.noise[i]) for i in blk.J])


def set_noise(model, noise) -> None:
    """Replace the noise of a model transformed with ``mutable_noise=True``
    (and ``normalize=False``) in place, e.g. between the solves of a
    persistent solver (:func:`privopt.solvers.persistent_solver`)."""
    blk = get_perturbation_block(model)
    if not getattr(blk, "_mutable_noise", False):
        raise ModelError("model: its noise is fixed; transform it with mutable_noise=True to change it.",
                         "model")
    arr = np.asarray(noise, dtype=float).ravel()
    if arr.size != len(blk.J) or not np.all(np.isfinite(arr)):
        raise ParameterError(f"noise must be {len(blk.J)} finite numbers.", "noise")
    for i, x in enumerate(arr):
        blk.noise[i] = float(x)


def get_original_objective(model):
    """The (deactivated) original objective: the true loss L(D, w)."""
    blk = get_perturbation_block(model)
    return model.find_component(blk._original_objective_name)


def get_perturbed_objective(model):
    return get_perturbation_block(model).objective


def get_weights(model) -> list:
    """The decision-vector VarData the noise multiplies, in order."""
    blk = get_perturbation_block(model)
    return [model.find_component(n) for n in blk._weight_names]


def get_normalization(model) -> dict:
    """For ``normalize=True``: the auxiliary variable ``s``, the expression
    ``squared_norm``, the norm bound ``D``, the ``grids``, the ``pi_encoding``
    used and the binary grid encoding ``r``."""
    blk = get_perturbation_block(model)
    if not blk._normalize:
        raise NotTransformedError("model: it was transformed with normalize=False; there is no pi(w).", "model")
    return {
        "s": blk.s,
        "squared_norm": blk.squared_norm,
        "norm_bound": blk._norm_bound,
        "grids": blk._grids,
        "pi_encoding": blk._pi_encoding,
        "r": model.find_component(blk._r_name),
    }


def pi_value(w, norm_bound: float) -> np.ndarray:
    """pi(w) = (w, sqrt(D^2 - ||w||^2)) / D  [NRVW20, Algorithm 1], for a numpy vector."""
    w = np.asarray(w, dtype=float)
    last = math.sqrt(max(0.0, norm_bound**2 - float(w @ w)))
    return np.append(w, last) / norm_bound


def revert(model) -> None:
    """Undo the transformation: delete its block and reactivate the original
    objective, so the true loss can be evaluated at the solution."""
    blk = get_perturbation_block(model)
    original = model.find_component(blk._original_objective_name)
    model.del_component(blk)
    if original is not None:
        original.activate()


ObjectivePerturbation.revert = staticmethod(revert)
ObjectivePerturbation.revert.__doc__ = revert.__doc__

"""privopt.audit: the statistics (Clopper-Pearson, event selection, soundness),
the audit of OPDisc, OPSamp and RSPM at their stated epsilon (no violation)
and of deliberately broken variants (violations found), and the check that
the fast enumeration oracle IS the shipped mechanism (same outputs as the
solver path on the same seeds)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from privopt import audit, calibration
from privopt.audit import (
    NeighbouringPair,
    OPDiscTarget,
    OPSampTarget,
    RSPMTarget,
    clopper_pearson,
    design_instance,
    estimate_epsilon,
    hinge_instance,
    opsamp_instance,
    sample_outputs,
)
from privopt.exceptions import NoiseDisclosureWarning, ParameterError

from tests.conftest import require_solver

N = 200_000          # runs per data set for the mechanism audits (enumeration: well under a second)
OPDISC = dict(epsilon=5.0, delta=0.1)   # see _opdisc_exact: sigma/10 violates only at a large epsilon
RSPM = dict(epsilon=1.0)
OPSAMP = dict(epsilon=1.0, delta=0.01)


# --- exact output distributions on design_instance() ----------------

def _best_event_epsilon(p, q, delta):
    """max over events S and both directions of ln((P(S) - delta) / Q(S))."""
    best = -math.inf
    idx = range(len(p))
    for r in range(1, len(p)):
        for S in itertools.combinations(idx, r):
            a, b = float(np.sum(p[list(S)])), float(np.sum(q[list(S)]))
            for x, z in ((a, b), (b, a)):
                if x > delta:
                    best = max(best, math.inf if z == 0 else math.log((x - delta) / z))
    return best


def _opdisc_exact(sigma, normalize=True):
    """P[w = -1, 0, 1] on D (L = 2, 1, 2) and D' (L' = 2, 2, 2) for D = 1.

    With pi: J(-1) = L(-1) + eta1, J(0) = L(0) - eta2, J(1) = L(1) - eta1, so on
    D the answer is 0 iff eta2 > |eta1| - 1 and on D' iff eta2 > |eta1| (a
    quarter of the plane).  Without pi: 0 iff |eta1| <= 1 on D, never on D'."""
    if normalize:
        p0, _ = integrate.quad(lambda e: stats.norm.pdf(e, scale=sigma) * stats.norm.sf(abs(e) - 1, scale=sigma),
                               -np.inf, np.inf)
        q0 = 0.25
    else:
        p0, q0 = float(stats.norm.cdf(1, scale=sigma) - stats.norm.cdf(-1, scale=sigma)), 0.0
    p = np.array([(1 - p0) / 2, p0, (1 - p0) / 2])
    q = np.array([(1 - q0) / 2, q0, (1 - q0) / 2])
    return p, q


def _rspm_exact(b):
    """RSPM on the same instance: J(1) = L(1) + xi1, J(0) = L(0), J(-1) = L(-1) + xi2;
    the answer is 0 iff xi1, xi2 > L(0) - L(+-1): P = (1 - e^{-1/b}/2)^2 on D, 1/4 on D'."""
    p0 = (1 - 0.5 * math.exp(-1 / b)) ** 2
    return np.array([(1 - p0) / 2, p0, (1 - p0) / 2]), np.array([0.375, 0.25, 0.375])


# --- 1. statistics --------------------------------------------------------------------

def test_clopper_pearson_known_values():
    # k = 0: the one-sided upper bound solves (1 - p)^n = alpha
    assert clopper_pearson(0, 10, 0.95, side="upper") == pytest.approx(1 - 0.05 ** (1 / 10), rel=1e-10)
    assert clopper_pearson(10, 10, 0.95, side="lower") == pytest.approx(0.05 ** (1 / 10), rel=1e-10)
    lo, hi = clopper_pearson(5, 10, 0.95)
    assert (lo, hi) == pytest.approx((0.18708602, 0.81291398), abs=1e-7)  # textbook values
    assert clopper_pearson(0, 10, 0.95, side="lower") == 0.0
    assert clopper_pearson(10, 10, 0.95, side="upper") == 1.0
    with pytest.raises(ParameterError):
        clopper_pearson(11, 10)


def test_clopper_pearson_coverage_by_simulation():
    rng = np.random.default_rng(0)
    for p, n in ((0.02, 200), (0.3, 50), (0.9, 30)):
        k = rng.binomial(n, p, size=4000)
        lo = clopper_pearson(k, np.full_like(k, n), 0.95, side="lower")
        hi = clopper_pearson(k, np.full_like(k, n), 0.95, side="upper")
        assert np.mean(lo <= p) >= 0.95 - 0.01 and np.mean(hi >= p) >= 0.95 - 0.01


def _randomized_response(eps0, n, bit, rng):
    keep = rng.random(n) < math.exp(eps0) / (1 + math.exp(eps0))
    return np.where(keep, bit, 1 - bit).astype(float)


@pytest.mark.parametrize("selection", ["split", "bonferroni"])
def test_randomized_response_bound_is_sound_and_tight(selection):
    """Randomized response is exactly eps0-DP (delta = 0): the bound sits just below eps0."""
    eps0 = math.log(3)
    rng = np.random.default_rng(1)
    a, b = _randomized_response(eps0, N, 0, rng), _randomized_response(eps0, N, 1, rng)
    res = estimate_epsilon(a, b, delta=0.0, claimed_epsilon=eps0, selection=selection, support=[[0.0], [1.0]])
    assert 0.9 * eps0 < res.epsilon_lower_bound <= eps0 and not res.violation
    # a mechanism claiming half of its true epsilon is caught
    res = estimate_epsilon(a, b, delta=0.0, claimed_epsilon=eps0 / 2, selection=selection, support=[[0.0], [1.0]])
    assert res.violation
    assert sum(res.histogram.values()) == N and sum(res.histogram_prime.values()) == N


@pytest.mark.parametrize("selection", ["split", "bonferroni"])
def test_false_violations_are_rarer_than_alpha(selection):
    """Over many small audits of an exactly eps0-DP mechanism, the bound exceeds
    eps0 in at most about alpha of them (here: 0.1)."""
    eps0 = 1.0
    rng = np.random.default_rng(2)
    reps, n = 300, 300
    over = 0
    for _ in range(reps):
        a, b = _randomized_response(eps0, n, 0, rng), _randomized_response(eps0, n, 1, rng)
        res = estimate_epsilon(a, b, delta=0.0, confidence=0.9, selection=selection, support=[[0.0], [1.0]])
        over += res.epsilon_lower_bound > eps0
    # Binomial(300, 0.1) exceeds 45 with probability < 0.002
    assert over <= 45


def test_naive_maximum_over_events_would_be_biased():
    """Why the event is chosen on a separate half: with 20 equally likely outputs
    (epsilon = 0) the max over events of the per-event bound, on the same runs,
    exceeds 0 far more often than alpha; the split and Bonferroni bounds do not."""
    from privopt.audit._stats import _eps_bound, _selected_candidates

    rng = np.random.default_rng(3)
    naive = split = bonf = 0
    reps, n, k = 100, 400, 20
    for _ in range(reps):
        a, b = rng.integers(0, k, n).astype(float), rng.integers(0, k, n).astype(float)
        ca, cb = np.bincount(a.astype(int), minlength=k), np.bincount(b.astype(int), minlength=k)
        M = _selected_candidates(ca, cb, n, n, False)     # the split's candidates, on ALL runs
        s_ab, _, _ = _eps_bound(M @ ca, n, M @ cb, n, 0.0, 0.025)
        s_ba, _, _ = _eps_bound(M @ cb, n, M @ ca, n, 0.0, 0.025)
        naive += max(s_ab.max(), s_ba.max()) > 0
        support = np.arange(k, dtype=float)[:, None]
        split += estimate_epsilon(a, b, delta=0.0, support=support).epsilon_lower_bound > 0
        bonf += estimate_epsilon(a, b, delta=0.0, support=support, selection="bonferroni").epsilon_lower_bound > 0
    assert naive > 0.5 * reps
    assert split <= 0.12 * reps and bonf <= 0.12 * reps


def test_continuous_outputs_are_bucketed():
    """The Laplace mechanism on a count (sensitivity 1, scale 1/eps0) is eps0-DP."""
    eps0 = 1.0
    rng = np.random.default_rng(4)
    a, b = rng.laplace(0.0, 1 / eps0, N), rng.laplace(1.0, 1 / eps0, N)
    res = estimate_epsilon(a, b, delta=0.0, claimed_epsilon=eps0, bins=20)
    assert 0.6 < res.epsilon_lower_bound <= eps0 and not res.violation
    assert len(res.labels) == 20 and res.labels[0].startswith("w0 <")
    edges = np.linspace(-3, 4, 15)   # fixed in advance: Bonferroni over all half-lines and buckets
    res_b = estimate_epsilon(a, b, delta=0.0, claimed_epsilon=eps0, bins=edges, selection="bonferroni")
    assert 0.6 < res_b.epsilon_lower_bound <= eps0
    # the scale divided by 10 is caught
    a, b = rng.laplace(0.0, 0.1 / eps0, N), rng.laplace(1.0, 0.1 / eps0, N)
    assert estimate_epsilon(a, b, delta=0.0, claimed_epsilon=eps0, bins=20).violation


def test_bonferroni_needs_events_fixed_in_advance():
    a = np.zeros(10)
    with pytest.raises(ParameterError) as err:
        estimate_epsilon(a, a, delta=0.0, selection="bonferroni")
    assert err.value.parameter == "support"
    with pytest.raises(ParameterError) as err:
        estimate_epsilon(a, a, delta=0.0, selection="bonferroni", bins=5)
    assert err.value.parameter == "bins"
    with pytest.raises(ParameterError) as err:
        estimate_epsilon(a, a, delta=1.5)
    assert err.value.parameter == "delta"


# --- 2. the mechanisms: no violation as shipped, violations when broken ---------------

def _design_target(kind, **kw):
    pair = design_instance()
    if kind == "opdisc":
        return OPDiscTarget(pair, **{**OPDISC, **kw})
    return RSPMTarget(pair, **{**RSPM, **kw})


CASES = [
    # (mechanism, variant kwargs, violation expected)
    ("opdisc", {}, False),
    ("opdisc", {"normalize": False}, True),
    ("opdisc", {"noise_factor": 0.1}, True),
    ("rspm", {}, False),
    ("rspm", {"noise_factor": 0.1}, True),
]


@pytest.mark.parametrize("kind, variant, broken", CASES,
                         ids=["opdisc", "opdisc-no-pi", "opdisc-sigma/10", "rspm", "rspm-b/10"])
@pytest.mark.parametrize("selection", ["split", "bonferroni"])
def test_audit_on_design_instance(kind, variant, broken, selection):
    """Every case runs the same audit (instance, runs, seed); only the mechanism
    differs.  The bound is compared with the exact epsilon of the output
    distribution (computed by integration): never above it (soundness), and
    close to it (power) -- so the shipped cases would fail if they were broken."""
    target = _design_target(kind, **variant)
    res = audit.audit(target, n_samples=N, random_state=11, selection=selection)
    assert res.violation is broken, str(res)
    if kind == "opdisc":
        p, q = _opdisc_exact(target.sigma, normalize=target.normalize)
    else:
        p, q = _rspm_exact(target.scale)
    exact = _best_event_epsilon(p, q, target.delta)
    assert res.epsilon_lower_bound <= exact
    if math.isfinite(exact):
        assert res.epsilon_lower_bound >= exact - 0.35, (res.epsilon_lower_bound, exact)
    else:
        # no finite epsilon: the bound is limited only by the number of runs (no w = 0 on D')
        assert res.counts[2] == 0 and res.epsilon_lower_bound > target.epsilon + 2
    # the empirical histograms follow the exact distribution
    for hist, probs in ((res.histogram, p), (res.histogram_prime, q)):
        counts = np.array([hist["(-1)"], hist["(0)"], hist["(1)"]])
        assert hist["other"] == 0
        assert np.allclose(counts / N, probs, atol=5 * math.sqrt(0.25 / N))


def test_design_instance_needs_normalization():
    """design_instance(): without pi, w = 0 is impossible on D' and the audit says
    so in its worst event."""
    res = audit.audit(_design_target("opdisc", normalize=False), n_samples=N, random_state=0)
    assert res.worst_event_labels == ("(0)",) and res.direction == "D,D'"
    assert res.histogram_prime["(0)"] == 0 and res.histogram["(0)"] > 0.3 * N


def test_sigma_over_ten_is_private_at_small_epsilon():
    """The calibration's constant 7 leaves a wide margin: at epsilon = 1, delta = 0.01
    the noise divided by 10 is still (1, 0.01)-DP on this instance (exact 0.6),
    and the audit rightly finds no violation.  That is why the broken variant is
    audited at epsilon = 5, delta = 0.1 (exact epsilon 6.6 > 5)."""
    target = OPDiscTarget(design_instance(), epsilon=1.0, delta=0.01, noise_factor=0.1)
    exact = _best_event_epsilon(*_opdisc_exact(target.sigma), 0.01)
    assert exact < 1.0
    assert not audit.audit(target, n_samples=N, random_state=0).violation
    broken5 = OPDiscTarget(design_instance(), noise_factor=0.1, **OPDISC)
    assert _best_event_epsilon(*_opdisc_exact(broken5.sigma), 0.1) > OPDISC["epsilon"] + 1


@pytest.mark.parametrize("factor, broken", [(1.0, False), (0.0, True)], ids=["opsamp", "opsamp-no-laplace"])
@pytest.mark.slow
def test_opsamp_audit(factor, broken):
    """OPSamp's continuous output is bucketed.  As shipped: no violation; without
    its Laplace step the output is exactly 1 on D and sometimes below 1 on D'."""
    target = OPSampTarget(opsamp_instance(), noise_factor=factor, **OPSAMP)
    res = audit.audit(target, n_samples=N, random_state=5)
    assert res.violation is broken, str(res)
    if broken:
        assert res.counts[2] == 0 and res.epsilon_lower_bound > 5
    else:
        assert res.epsilon_lower_bound < 0.2


def test_opsamp_without_the_laplace_step_draws_the_shipped_sigmas_and_no_mu():
    """The broken variant's oracle noise is the shipped draw's, number for number, and its
    output noise is 0 without being drawn (the exact discrete Laplace sampler is the slow part
    of the audit)."""
    from privopt.mechanisms import draw_opsamp_noise

    shipped = OPSampTarget(opsamp_instance(), **OPSAMP)
    broken = OPSampTarget(opsamp_instance(), noise_factor=0.0, **OPSAMP)
    sigmas, mu = broken.draw_noise(np.random.default_rng(3), size=40)
    ref_sigmas, ref_mu = draw_opsamp_noise(np.random.default_rng(3), shipped.params.eta, shipped.grid,
                                           shipped.n_calls, shipped.dim, size=40)
    np.testing.assert_array_equal(sigmas, ref_sigmas)
    assert mu.shape == ref_mu.shape == (40, 1) and mu.dtype == object and not np.any(mu != 0)
    assert np.any(ref_mu != 0)
    one_sigmas, one_mu = broken.draw_noise(np.random.default_rng(3))
    assert one_sigmas.shape == (shipped.n_calls, 1) and list(one_mu) == [0]


@pytest.mark.slow
def test_opsamp_audit_with_varying_oracle_answers():
    target = OPSampTarget(hinge_instance(), n_oracle_calls=8, **OPSAMP)
    res = audit.audit(target, n_samples=N // 2, random_state=6)
    assert not res.violation and res.epsilon_lower_bound < 0.2


def test_audit_result_and_reproducibility():
    target = _design_target("rspm")
    a = audit.audit(target, n_samples=20_000, random_state=3)
    b = audit.audit(target, n_samples=20_000, random_state=3)
    c = audit.audit(target, n_samples=20_000, random_state=4)
    assert a.histogram == b.histogram and a.epsilon_lower_bound == b.epsilon_lower_bound
    assert a.histogram != c.histogram
    # D and D' runs use distinct streams: the same noise on both would tie them together
    assert a.histogram != a.histogram_prime
    assert a.n_samples == (20_000, 20_000) and a.n_selection == (10_000, 10_000)
    assert a.metadata["mechanism"] == "rspm" and a.metadata["oracle"] == "enumerate"
    assert a.confidence == 0.95 and a.counts[1] == 10_000 and set(a.labels) >= {"(-1)", "(0)", "(1)"}
    lo, hi = a.event_epsilon_interval
    assert lo <= a.event_epsilon_estimate <= hi
    row = a.as_row()
    assert row["claimed_epsilon"] == 1.0 and row["violation"] is False


def test_audit_chooses_the_event_on_the_share_of_runs_it_is_given():
    target = _design_target("rspm")
    a = audit.audit(target, n_samples=1_000, random_state=3, selection_fraction=0.2)
    assert a.n_selection == (200, 200) and a.n_samples == (1_000, 1_000)
    b = audit.audit(target, n_samples=1_000, random_state=3)
    assert b.n_selection == (500, 500) and a.histogram == b.histogram   # the same runs, split elsewhere


# --- 3. the enumeration oracle is the shipped mechanism ------------------------------

def _small_pair(d=2, n=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(n, d)).astype(float)
    y = np.array([1, -1] * (n // 2))
    Xp, yp = X.copy(), y.copy()
    Xp[0] = -X[0] if np.any(X[0]) else np.ones(d)
    yp[0] = -y[0]
    return NeighbouringPair(X, y, Xp, yp, name=f"random_d{d}")


SEEDS = np.random.SeedSequence(2024).spawn(15)


@pytest.mark.parametrize("target_fn", [
    lambda: OPDiscTarget(design_instance(), **OPDISC),
    lambda: OPDiscTarget(_small_pair(), epsilon=20.0, delta=0.1),
    lambda: OPDiscTarget(_small_pair(seed=3), epsilon=5.0, delta=0.1, norm_bound=1.2),  # corners excluded
    lambda: OPDiscTarget(design_instance(), calibration="paper", **OPDISC),
    lambda: OPDiscTarget(design_instance(), noise_factor=0.5, **OPDISC),  # the solver path with own noise
    lambda: RSPMTarget(design_instance(), **RSPM),
    lambda: RSPMTarget(_small_pair(seed=2), epsilon=4.0),
], ids=["opdisc-design", "opdisc-d2", "opdisc-d2-ball", "opdisc-paper", "opdisc-half-noise",
        "rspm-design", "rspm-d2"])
def test_enumeration_equals_solver_run_by_run(target_fn):
    require_solver("highs")
    target = target_fn()
    varied = set()
    for which in (0, 1):
        fast = sample_outputs(target, which, None, oracle="enumerate", seeds=SEEDS)
        real = sample_outputs(target, which, None, oracle="solver", seeds=SEEDS)
        np.testing.assert_array_equal(fast, real)
        varied |= {tuple(r) for r in fast}
    assert len(varied) >= 3   # the answers really depend on the noise


def test_opdisc_target_audits_both_calibrations():
    proven = OPDiscTarget(design_instance(), **OPDISC)
    paper = OPDiscTarget(design_instance(), calibration="paper", **OPDISC)
    assert proven.is_shipped and not paper.is_shipped
    assert paper.variant == "paper calibration"
    d = proven.dim
    assert proven.sigma == calibration.opdisc_sigma_proven(5.0, 0.1, 1.0, proven.norm_bound, 1.0, d)
    assert paper.sigma == calibration.opdisc_sigma_paper(5.0, 0.1, 1.0, paper.norm_bound, 1.0)
    assert proven.parameters["provable_delta"] <= 0.1
    assert paper.describe()["calibration"] == "paper"
    with pytest.raises(ParameterError, match="calibration"):
        OPDiscTarget(design_instance(), calibration="tight", **OPDISC)


def test_enumeration_equals_solver_opsamp():
    require_solver("highs")
    for target in (OPSampTarget(hinge_instance(), n_oracle_calls=8, **OPSAMP),
                   OPSampTarget(opsamp_instance(), n_oracle_calls=8, **OPSAMP)):
        for which in (0, 1):
            fast = sample_outputs(target, which, None, oracle="enumerate", seeds=SEEDS[:5])
            real = sample_outputs(target, which, None, oracle="solver", seeds=SEEDS[:5])
            np.testing.assert_allclose(fast, real, rtol=0, atol=1e-7)


def test_same_noise_and_scales_as_the_mechanism():
    """Noise vectors and noise scales of the audit are those of the mechanism."""
    require_solver("highs")
    from privopt import opdisc
    from privopt.mechanisms import opsamp, rspm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDisclosureWarning)
        t = OPDiscTarget(design_instance(), **OPDISC)
        res = opdisc(t.models[0], random_state=np.random.default_rng(SEEDS[0]), return_noise=True, **OPDISC)
        np.testing.assert_array_equal(res.noise, t.draw_noise(np.random.default_rng(SEEDS[0])))
        assert res.parameters["sigma"] == t.sigma == calibration.opdisc_sigma(5.0, 0.1, 1.0, 1.0, 1.0, 1)

        t = RSPMTarget(design_instance(), **RSPM)
        res = rspm(t.models[1], random_state=np.random.default_rng(SEEDS[1]), return_noise=True, **RSPM)
        np.testing.assert_array_equal(res.noise, t.draw_noise(np.random.default_rng(SEEDS[1])))
        assert res.parameters["noise_scale"] == t.scale == calibration.rspm_noise_scale(1.0, 0.0, 2)

        t = OPSampTarget(hinge_instance(), n_oracle_calls=8, **OPSAMP)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            res = opsamp(t.models[0], n_oracle_calls=8, random_state=np.random.default_rng(SEEDS[2]),
                         return_noise=True, executor=pool, progress=False, **OPSAMP)
        sigmas, mu = t.draw_noise(np.random.default_rng(SEEDS[2]))     # mu: the grid's integer noise
        np.testing.assert_array_equal(res.noise, np.vstack([sigmas, mu.astype(float)[None, :] * t.grid.step]))
        assert res.parameters["laplace_scale"] == t.laplace_scale
        assert res.parameters["grid_step"] == t.grid.step


def test_small_audit_through_the_solver():
    """oracle='solver' runs the real mechanism end to end (a small cross-check)."""
    require_solver("highs")
    target = OPDiscTarget(design_instance(), normalize=False, **OPDISC)
    res = audit.audit(target, n_samples=60, oracle="solver", random_state=1, selection="bonferroni")
    assert res.metadata["oracle"] == "solver" and sum(res.histogram.values()) == 60
    assert res.histogram_prime["(0)"] == 0 and res.histogram["(0)"] > 0
    fast = audit.audit(target, n_samples=60, oracle="enumerate", random_state=1, selection="bonferroni")
    assert fast.histogram.keys() == res.histogram.keys()


def test_public_parameters_must_not_depend_on_the_data():
    # zero_one_halfspace's info holds n; a pair of different sizes is no neighbour pair
    with pytest.raises(ParameterError):
        NeighbouringPair(np.ones((3, 1)), [1, -1, 1], np.ones((4, 1)), [1, -1, 1, 1])
    with pytest.raises(ParameterError):   # two records replaced
        NeighbouringPair(np.ones((3, 1)), [1, -1, 1], np.ones((3, 1)), [-1, 1, 1])

"""Revisions of the code that computes a result, for results files that resume.

A sweep (:func:`privopt.experiments.run_experiment`) records with every row the
revision of the code that computed it, and on resume refuses rows of another
revision for the methods it runs: a sweep must never silently mix numbers of
two versions of an algorithm (e.g. rows computed before and after a change of
a baseline's default hyperparameters).

Maintainers: in the same commit as any change that alters what a method returns
for the same inputs and seed -- defaults, feature map, accounting, noise,
solver formulation -- set that method's entry to a new value (today's date, with
a suffix if it already is today's); not for changes that cannot (docstrings,
speed, error messages).  A change shared by several methods (the baselines'
feature map) bumps each of them.
"""

#: method name of the experiment runner -> revision of the code behind its rows.
REVISIONS = {
    # OPDisc, RSPM and the non-private 0/1 optimum on OPDisc's grid (calibration,
    # formulation, certification, output step)
    "opdisc": "2026-11-24",
    "rspm": "2026-11-24",
    "nonprivate_01": "2026-11-24",
    # private selection over the estimator's default W (issue 28) and the
    # non-private 0/1 optimum on that W (scoring, sampling, default W).
    # .2: the sparse scoring engine's time prediction (8b23b20) releases where
    # the dense prediction refused (e.g. adult-onehot-28 at a 60 s limit)
    # .3: sampled top down by support with keyed noise streams (issue 29): the
    # same distribution, another draw for the same seed
    "permute_and_flip": "2026-11-25.3",
    "exponential": "2026-11-25.3",
    "nonprivate_01_default": "2026-11-25",
    # PrivateHalfspaceClassifier with its defaults (mechanism "auto", the ladder of
    # resolutions, the warm start): any change of the estimator's defaults bumps it
    # .2: the warm start's score cut into 33 steps, not 32 (v's own boundary a cut of its W)
    # 2026-11-28: the prior over the ladder tempered by the budget (ladder_prior "tempered":
    # Occam's while epsilon n <= 500, its weights frozen beyond); "occam" was the law before
    # 2026-11-29: the ladder offers the levels-8 rung (ball sqrt(5)) on geometric feature steps too
    # (LADDER_GEOMETRIC "plain"; discretize_features spacing="geometric"); "none" was the law before
    # 2026-11-29.2: the warm start's rule at 0.025 (WARM_START_FRACTION; 0.05 before) and its share of epsilon
    # max(1/2, 1 - 2000 / (epsilon n)) (warm_start_share; 1/2 before); the split's parts sum to epsilon exactly
    "default": "2026-11-29.2",
    # privopt.baselines (feature map, defaults, accounting)
    # 2026-11-28: gradients rounded to a grid fixed in advance, exact discrete Gaussian
    # noise; DP-SGD's replace-one Poisson accounting by group privacy over add/remove
    "dpsgd": "2026-11-28.2",  # .2: fewer than 4096 draws of noise from buffered words
    "dpsgd_tuned": "2026-11-28.2",
    "dpagd": "2026-11-28.2",  # .2: the noise of fewer than 64 draws from buffered words
    # 2026-11-28: default accounting "poisson_grid" (Poisson batches at q = 1/t, gradients
    # on a grid, exact discrete Gaussian noise); random allocation kept as "allocation"
    "noisy_sgd": "2026-11-28",
    "objective_perturbation": "2026-11-24",
    # Gaussian noise when delta > 0 and it is the smaller (noise="auto")
    # 2026-11-27: exact integer noise on a grid fixed in advance (discrete Laplace
    # per coordinate, discrete Gaussian through zCDP) instead of doubles (issue 47)
    "output_perturbation": "2026-11-27",
    "nonprivate_lr": "2026-11-24",
    "majority": "2026-11-24",
}

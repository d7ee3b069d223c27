"""Revisions of the code that computes a result, for results files that resume.

A sweep (:func:`privopt.experiments.run_experiment`) records with every row the
revision of the code that computed it, and on resume refuses rows of another
revision for the methods it runs: a sweep must never silently mix numbers of
two versions of an algorithm (e.g. rows computed before and after a change of
a baseline's default hyperparameters).

Maintainers: set the date of a family to today's in the same commit as any
change that alters what one of its methods returns for the same inputs and
seed -- defaults, feature map, accounting, noise, solver formulation -- and
not for changes that cannot (docstrings, speed, error messages).
"""

#: DP-SGD (default and tuned), DP-AGD, noisy SGD, the two [CMS11] mechanisms and
#: the non-private references of ``privopt.baselines`` (feature map, defaults).
BASELINES = "2026-11-24"
#: OPDisc, RSPM and the non-private 0/1 optimum on OPDisc's grid (calibration,
#: formulation, certification, output step).
MECHANISMS = "2026-11-24"

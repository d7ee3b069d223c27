"""privopt's exact search engine over a finite W, below the solver layer and without
Pyomo: the top-down samplers of private selection (exact report-noisy-max drawn top down)
and the optimum search by regions (:mod:`privopt.search._topdown`).  Internal: the
mechanisms (:func:`privopt.exponential_mechanism`, :func:`privopt.opdisc` with
``solver="enumerate"``) and the scoring systems use it; it has no public names yet."""

__all__: list[str] = []

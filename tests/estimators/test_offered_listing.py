"""The W's the default fit offers (mechanism, ladder and offered sizes, before any selection) on a
few benchmark tables are the committed listing's (benchmarks/results/offered_ws.json, written by
tests/_offered.py): the predicted times take part in choosing them, so a refit of their constants
that changes them is a change of the default's law, which must be made on purpose (and the listing
rewritten with it)."""

from __future__ import annotations

import json

import pytest

from tests import _offered

#: Tables whose ladder the predictions decide at time_limit=1 (the 10,000 x 14 ones stop there).
TABLES = ("uniform 2000x6", "uniform 10000x14")


@pytest.mark.parametrize("name", TABLES)
def test_the_offered_ws_are_the_committed_listings(name):
    with open(_offered.LISTING) as fh:
        listing = {(r["table"], float(r["time_limit"])): r for r in json.load(fh)}
    shape, size = name.split()
    n, d = (int(v) for v in size.split("x"))
    X, y, _, _, lo, hi = _offered._common.shape_table(shape, n, d, 0)
    for limit in _offered.TIME_LIMITS:
        want = listing[(name, limit)]
        got = _offered.offered(X, y, (lo, hi), limit)
        assert {k: got[k] for k in ("mechanism", "ladder", "offered")} == \
            {k: want[k] for k in ("mechanism", "ladder", "offered")}, (name, limit)

"""privopt.datasets: finding, verifying, downloading and preprocessing Adult;
the synthetic planted halfspace.

Tests that need the real UCI files take the ``data_home`` fixture (conftest):
they use $PRIVOPT_DATA_HOME or ../shared/data and skip, with the reason, when
neither holds adult/.  Nothing here touches the network: downloads go through
a fake opener or a file:// URL.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
import shutil
import urllib.error
from pathlib import Path

import numpy as np
import pytest

from privopt.datasets import (
    ADULT_SHA256,
    ADULT_URL,
    PUBLIC_BOUNDS,
    Bunch,
    DatasetChecksumError,
    DatasetNotFoundError,
    get_cache_home,
    load_adult,
    make_planted_halfspace,
)
from privopt.datasets import _base
from privopt.exceptions import ParameterError, ParameterTypeError, PrivoptError

FILES = ("adult.data", "adult.test", "adult.names")
PAPER_CATEGORICAL = ("marital-status", "relationship", "race", "sex")
PAPER_NUMERIC = ("capital-gain", "capital-loss", "hours-per-week")
COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
           "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
           "hours-per-week", "native-country")


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No PRIVOPT_DATA_HOME, an empty user cache, and a network that fails the test."""
    monkeypatch.delenv("PRIVOPT_DATA_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def no_network(url, timeout=None):
        pytest.fail(f"unexpected download of {url}")

    monkeypatch.setattr(_base, "_urlopen", no_network)
    return tmp_path


def copy_adult(src_home, dst_home) -> Path:
    dst = Path(dst_home) / "adult"
    dst.mkdir(parents=True)
    for f in FILES:
        shutil.copyfile(Path(src_home) / "adult" / f, dst / f)
    return dst


def raw_records(path):
    """Independent parse: list of (14 fields, label string without period)."""
    out = []
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("|"):
            continue
        parts = line.split(", ")
        assert len(parts) == 15
        out.append((parts[:14], parts[14].rstrip(".")))
    return out


def fake_opener(src_folder, log, *, corrupt=False):
    def opener(url, timeout=None):
        log.append(url)
        assert url.startswith(ADULT_URL)
        data = (Path(src_folder) / url[len(ADULT_URL):]).read_bytes()
        if corrupt:
            data = data[:-10] + b"xxxxxxxxxx"
        return io.BytesIO(data)

    return opener


# ----------------------------------------------------------------------------
# files: checksums, search order, download, offline
# ----------------------------------------------------------------------------
def test_checksums_agree_with_source_md(data_home):
    source = Path(data_home) / "adult" / "SOURCE.md"
    if not source.is_file():
        pytest.skip(f"{source} not present")
    table = dict(re.findall(r"\|\s*(adult\.\w+)\s*\|\s*([0-9a-f]{64})\s*\|", source.read_text()))
    assert table == ADULT_SHA256


def test_local_files_hash_to_published_values(data_home):
    for f in FILES:
        assert _base.sha256_file(Path(data_home) / "adult" / f) == ADULT_SHA256[f]


def test_corrupted_copy_is_rejected(data_home, isolated):
    folder = copy_adult(data_home, isolated / "home")
    target = folder / "adult.data"
    raw = bytearray(target.read_bytes())
    raw[1000] ^= 0x01  # one bit
    target.write_bytes(bytes(raw))
    actual = hashlib.sha256(bytes(raw)).hexdigest()
    for download in (False, True):  # a bad file is never replaced silently
        with pytest.raises(DatasetChecksumError) as info:
            load_adult(isolated / "home", download=download)
        err = info.value
        assert isinstance(err, PrivoptError)
        msg = str(err)
        assert "adult.data" in msg and ADULT_SHA256["adult.data"] in msg and actual in msg
        assert err.expected == ADULT_SHA256["adult.data"] and err.actual == actual
        assert err.path == target


def test_corrupted_names_file_is_rejected(data_home, isolated):
    folder = copy_adult(data_home, isolated / "home")
    with open(folder / "adult.names", "a") as fh:
        fh.write("\n")
    with pytest.raises(DatasetChecksumError, match="adult.names"):
        load_adult(isolated / "home", download=False)


def test_offline_failure_says_how_to_provide_files(isolated, monkeypatch):
    monkeypatch.setenv("PRIVOPT_DATA_HOME", str(isolated / "empty"))
    calls = []

    def offline(url, timeout=None):
        calls.append(url)
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(_base, "_urlopen", offline)
    with pytest.raises(DatasetNotFoundError) as info:
        load_adult()
    msg = str(info.value)
    assert calls and calls[0].startswith(ADULT_URL)
    for needle in ("PRIVOPT_DATA_HOME", "adult/adult.data", "adult/adult.test",
                   "adult/adult.names", ADULT_URL, "URLError", "name resolution"):
        assert needle in msg, needle
    assert isinstance(info.value, RuntimeError)
    assert info.value.searched == [isolated / "empty" / "adult", isolated / "cache" / "privopt" / "adult"]
    # nothing half-written is left behind
    cache = isolated / "cache" / "privopt" / "adult"
    assert not cache.exists() or list(cache.iterdir()) == []


def test_no_download_when_disabled(isolated):
    with pytest.raises(DatasetNotFoundError, match="download=False") as info:
        load_adult(download=False)  # the isolated opener fails the test if called
    assert "PRIVOPT_DATA_HOME" in str(info.value)
    assert sorted(info.value.missing) == sorted(FILES)


def test_download_into_cache_with_fake_opener(data_home, isolated, monkeypatch):
    log = []
    monkeypatch.setattr(_base, "_urlopen", fake_opener(Path(data_home) / "adult", log))
    got = load_adult()
    assert sorted(log) == sorted(ADULT_URL + f for f in FILES)
    cache = isolated / "cache" / "privopt" / "adult"
    assert get_cache_home() == isolated / "cache" / "privopt"
    assert sorted(p.name for p in cache.iterdir()) == sorted(FILES)  # no .part left
    for f in FILES:
        assert _base.sha256_file(cache / f) == ADULT_SHA256[f]
    assert Path(got.files["adult.data"]).parent == cache
    # the second call reads the cache and downloads nothing
    log.clear()
    again = load_adult()
    assert log == []
    np.testing.assert_array_equal(again.X_train, got.X_train)
    ref = load_adult(data_home)
    np.testing.assert_array_equal(ref.X_train, got.X_train)


def test_download_only_missing_files(data_home, isolated, monkeypatch):
    folder = copy_adult(data_home, isolated / "home")
    (folder / "adult.test").unlink()
    log = []
    monkeypatch.setattr(_base, "_urlopen", fake_opener(Path(data_home) / "adult", log))
    load_adult(isolated / "home")
    assert log == [ADULT_URL + "adult.test"]
    assert _base.sha256_file(folder / "adult.test") == ADULT_SHA256["adult.test"]


def test_corrupt_download_is_not_kept(data_home, isolated, monkeypatch):
    log = []
    monkeypatch.setattr(_base, "_urlopen", fake_opener(Path(data_home) / "adult", log, corrupt=True))
    with pytest.raises(DatasetChecksumError, match="not kept") as info:
        load_adult(isolated / "home")
    assert info.value.expected in ADULT_SHA256.values()
    folder = isolated / "home" / "adult"
    assert list(folder.iterdir()) == []


def test_download_from_file_url(data_home, isolated, monkeypatch):
    # the real urllib opener, on a file:// URL: no network involved
    import urllib.request

    monkeypatch.setattr(_base, "_urlopen", urllib.request.urlopen)
    url = (Path(data_home) / "adult").resolve().as_uri() + "/"
    got = load_adult(isolated / "home", base_url=url, holdout=None)
    for f in FILES:
        assert _base.sha256_file(isolated / "home" / "adult" / f) == ADULT_SHA256[f]
    assert got.X_train.shape == (15682, 23)


def test_env_var_is_searched_before_cache(data_home, isolated, monkeypatch):
    monkeypatch.setenv("PRIVOPT_DATA_HOME", str(data_home))
    got = load_adult(holdout=None)
    assert Path(got.files["adult.data"]).parent == Path(data_home) / "adult"
    assert not (isolated / "cache").exists()  # nothing written


def test_cache_home_honours_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert get_cache_home() == tmp_path / "privopt"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as the XDG spec says
    assert get_cache_home() != Path("relative/path") / "privopt"


# ----------------------------------------------------------------------------
# the paper's preprocessing
# ----------------------------------------------------------------------------
def expected_features(records, idx, bounds):
    """Recompute the paper features of the given records from the raw text."""
    cats = {
        "marital-status": sorted(["Married-civ-spouse", "Divorced", "Never-married", "Separated",
                                  "Widowed", "Married-spouse-absent", "Married-AF-spouse"]),
        "relationship": sorted(["Wife", "Own-child", "Husband", "Not-in-family",
                                "Other-relative", "Unmarried"]),
        "race": sorted(["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]),
        "sex": ["Female", "Male"],
    }
    rows = []
    for i in idx:
        fields = records[i][0]
        row = []
        for a in PAPER_CATEGORICAL:
            row += [1.0 if fields[COLUMNS.index(a)] == c else 0.0 for c in cats[a]]
        row += [int(fields[COLUMNS.index(a)]) / bounds[a] for a in PAPER_NUMERIC]
        rows.append(row)
    return np.array(rows)


def test_paper_set_matches_design(data_home):
    got = load_adult(data_home, holdout=None)
    X, y = got.X_train, got.y_train
    assert X.shape == (15682, 23) and y.shape == (15682,)
    assert got.X_test.shape == (0, 23) and got.y_test.shape == (0,)
    assert set(np.unique(y)) == {-1, 1} and int(np.sum(y == 1)) == 7841 == int(np.sum(y == -1))
    assert len(got.feature_names) == 23 and got.feature_names[-3:] == list(PAPER_NUMERIC)
    assert list(got.feature_blocks) == list(PAPER_CATEGORICAL + PAPER_NUMERIC)
    assert [len(got.feature_blocks[a]) for a in PAPER_CATEGORICAL] == [7, 6, 5, 2]

    records = raw_records(Path(data_home) / "adult" / "adult.data")
    labels = np.array([1 if lab == ">50K" else -1 for _, lab in records])
    # every positive of adult.data is in, and only records of adult.data
    assert set(got.index_train[y == 1].tolist()) == set(np.flatnonzero(labels == 1).tolist())
    assert np.all(labels[got.index_train] == y)
    assert np.unique(got.index_train).size == 15682
    # features recomputed from the raw text, with maxima over adult.data
    bounds = {a: max(int(r[0][COLUMNS.index(a)]) for r in records) for a in PAPER_NUMERIC}
    assert got.scale_bounds == pytest.approx(bounds)
    np.testing.assert_array_equal(X, expected_features(records, got.index_train, bounds))


def test_one_hot_blocks_and_scaled_columns(data_home):
    got = load_adult(data_home)
    for X in (got.X_train, got.X_test):
        for a in PAPER_CATEGORICAL:
            block = X[:, got.feature_blocks[a]]
            assert set(np.unique(block)) <= {0.0, 1.0}
            np.testing.assert_array_equal(block.sum(axis=1), 1.0)
        for a in PAPER_NUMERIC:
            col = X[:, got.feature_blocks[a]]
            assert col.min() >= 0.0 and col.max() <= 1.0
    assert got.description and "DATA-DERIVED" in got.description


def test_public_scale_equals_data_scale_on_uci_files(data_home):
    data = load_adult(data_home, scale="data")
    public = load_adult(data_home, scale="public")
    assert public.scale_bounds == {a: PUBLIC_BOUNDS[a] for a in PAPER_NUMERIC}
    np.testing.assert_array_equal(data.X_train, public.X_train)


def test_given_bounds_clip_to_one(data_home):
    bounds = {"capital-gain": 5000, "capital-loss": 1000, "hours-per-week": 40}
    got = load_adult(data_home, scale=bounds, holdout=None)
    records = raw_records(Path(data_home) / "adult" / "adult.data")
    for a in PAPER_NUMERIC:
        col = got.X_train[:, got.feature_blocks[a][0]]
        raw = np.array([int(records[i][0][COLUMNS.index(a)]) for i in got.index_train])
        np.testing.assert_allclose(col, np.minimum(raw / bounds[a], 1.0))
    assert "clipped" in got.description


def test_reproducible_under_random_state(data_home):
    a = load_adult(data_home, random_state=7)
    b = load_adult(data_home, random_state=np.random.default_rng(7))
    c = load_adult(data_home, random_state=8)
    for key in ("X_train", "y_train", "X_test", "y_test", "index_train", "index_test"):
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(np.sort(a.index_train), np.sort(c.index_train))
    # the positives are the same for every seed; only the drawn negatives differ
    pos = lambda r: set(np.concatenate([r.index_train[r.y_train == 1], r.index_test[r.y_test == 1]]).tolist())
    assert pos(a) == pos(c)


def test_secure_random_state_still_gives_the_paper_shape(data_home):
    got = load_adult(data_home, random_state=None, holdout=None)
    assert got.X_train.shape == (15682, 23) and int(got.y_train.sum()) == 0


def test_split_is_disjoint_stratified_and_covers_the_balanced_set(data_home):
    full = load_adult(data_home, holdout=None, random_state=3)
    got = load_adult(data_home, test_size=0.25, random_state=3)
    tr, te = set(got.index_train.tolist()), set(got.index_test.tolist())
    assert tr.isdisjoint(te)
    # records come in random order, so the held-out part is not a block of the file
    assert not np.all(np.diff(full.index_train) > 0)
    for label in (-1, 1):
        test_idx = np.sort(got.index_test[got.y_test == label])
        train_idx = got.index_train[got.y_train == label]
        assert test_idx.max() > train_idx.min() and test_idx.min() < train_idx.max()
    assert tr | te == set(full.index_train.tolist())  # the balanced set ignores test_size
    assert got.X_test.shape == (2 * round(0.25 * 7841), 23)
    assert int(got.y_test.sum()) == 0 and int(got.y_train.sum()) == 0
    # rows of the split are the rows of the same records in the full set
    where = {r: k for k, r in enumerate(full.index_train.tolist())}
    np.testing.assert_array_equal(got.X_test, full.X_train[[where[r] for r in got.index_test.tolist()]])


def test_adult_test_as_holdout(data_home):
    got = load_adult(data_home, holdout="adult.test", random_state=1)
    assert got.X_train.shape == (15682, 23) and got.test_source == "adult.test"
    records = raw_records(Path(data_home) / "adult" / "adult.test")
    labels = np.array([1 if lab == ">50K" else -1 for _, lab in records])
    assert len(records) == 16281 and int(np.sum(labels == 1)) == 3846
    assert got.X_test.shape == (2 * 3846, 23) and int(got.y_test.sum()) == 0
    assert np.all(labels[got.index_test] == got.y_test)
    assert got.X_test.min() >= 0 and got.X_test.max() <= 1
    unbalanced = load_adult(data_home, holdout="adult.test", balance=False)
    assert unbalanced.X_test.shape == (16281, 23) and unbalanced.X_train.shape == (32561, 23)


def test_distinct_feature_rows(data_home):
    """Distinct rows of the paper set (they size the merged 0/1-loss MILP).

    The 7841 positives, in every draw, have 1295 distinct rows: a property of
    adult.data.  The whole balanced set depends on which negatives are drawn:
    2611 for random_state=0 (between 2567 and 2674 over random_state 0..29;
    an earlier note's 2638 was another draw).
    """
    got = load_adult(data_home, holdout=None, random_state=0)
    X, y = got.X_train, got.y_train
    assert np.unique(X[y == 1], axis=0).shape[0] == 1295
    assert np.unique(X, axis=0).shape[0] == 2611
    other = load_adult(data_home, holdout=None, random_state=1)
    assert np.unique(other.X_train[other.y_train == 1], axis=0).shape[0] == 1295


def test_all_feature_set_drops_missing_rows(data_home):
    records = raw_records(Path(data_home) / "adult" / "adult.data")
    complete = [r for r in records if "?" not in r[0]]
    n_pos = sum(lab == ">50K" for _, lab in complete)
    got = load_adult(data_home, feature_set="all", holdout=None)
    assert got.X_train.shape == (2 * n_pos, 105)
    assert all("?" not in records[i][0] for i in got.index_train)
    assert got.numeric == ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                           "hours-per-week"]
    for a in got.categorical:
        np.testing.assert_array_equal(got.X_train[:, got.feature_blocks[a]].sum(axis=1), 1.0)
    assert got.X_train.min() >= 0 and got.X_train.max() <= 1


def test_all_feature_set_needs_a_bound_for_fnlwgt(data_home):
    with pytest.raises(ParameterError, match="fnlwgt") as info:
        load_adult(data_home, feature_set="all", scale="public")
    assert info.value.parameter == "scale"
    got = load_adult(data_home, feature_set="all", holdout=None,
                     scale={**PUBLIC_BOUNDS, "fnlwgt": 1_500_000})
    assert got.scale_bounds["fnlwgt"] == 1_500_000


def test_custom_feature_set(data_home):
    got = load_adult(data_home, feature_set=["hours-per-week", "sex"], holdout=None)
    assert got.feature_names == ["sex=Female", "sex=Male", "hours-per-week"]
    assert got.feature_set == "custom"


@pytest.mark.parametrize(
    "kwargs, error, parameter",
    [
        (dict(feature_set="nope"), ParameterError, "feature_set"),
        (dict(feature_set=["age", "salary"]), ParameterError, "feature_set"),
        (dict(feature_set=3), ParameterTypeError, "feature_set"),
        (dict(scale="minmax"), ParameterError, "scale"),
        (dict(scale={"capital-gain": 1}), ParameterError, "scale"),
        (dict(holdout="train"), ParameterError, "holdout"),
        (dict(holdout=None, test_size=0.3), ParameterError, "test_size"),
        (dict(test_size=1.0), ParameterError, "test_size"),
        (dict(test_size="0.2"), ParameterTypeError, "test_size"),
        (dict(download="yes"), ParameterTypeError, "download"),
        (dict(random_state="seed"), ParameterTypeError, "random_state"),
    ],
)
def test_bad_arguments_are_rejected_before_any_file_access(isolated, kwargs, error, parameter):
    with pytest.raises(error) as info:
        load_adult(isolated / "nowhere", download=kwargs.pop("download", False), **kwargs)
    assert info.value.parameter == parameter


# ----------------------------------------------------------------------------
# synthetic planted halfspace
# ----------------------------------------------------------------------------
def test_planted_halfspace_labels_follow_the_rule():
    data = make_planted_halfspace(5000, 8, n_test=1000, noise=0.1, random_state=4)
    assert data.X_train.shape == (5000, 8) and data.X_test.shape == (1000, 8)
    assert set(np.unique(data.X_train)) <= {0.0, 1.0}
    assert set(data.w_star.tolist()) <= {-1, 0, 1} and np.any(data.w_star)
    for X, y, flipped in ((data.X_train, data.y_train, data.flipped_train),
                          (data.X_test, data.y_test, data.flipped_test)):
        clean = np.where(X @ data.w_star >= data.threshold, 1, -1)
        np.testing.assert_array_equal(np.where(flipped, -clean, clean), y)
    rate = data.flipped_train.mean()
    assert abs(rate - 0.1) < 4 * np.sqrt(0.1 * 0.9 / 5000)


def test_planted_halfspace_tie_rule_and_threshold():
    data = make_planted_halfspace(2000, 3, feature_values=(-1, 0, 1), threshold=1, noise=0.0,
                                  random_state=2)
    score = data.X_train @ data.w_star
    assert np.any(score == 1)  # ties occur and go to +1
    assert np.all(data.y_train[score == 1] == 1)
    assert np.all(data.y_train[score < 1] == -1)
    assert not data.flipped_train.any()


def test_planted_halfspace_is_reproducible():
    a = make_planted_halfspace(100, 5, n_test=10, random_state=11)
    b = make_planted_halfspace(100, 5, n_test=10, random_state=11)
    c = make_planted_halfspace(100, 5, n_test=10, random_state=12)
    for key in ("X_train", "y_train", "X_test", "y_test", "w_star"):
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a.X_train, c.X_train)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(noise=0.5), ParameterError),
        (dict(noise=-0.1), ParameterError),
        (dict(weight_values=(0,)), ParameterError),
        (dict(feature_values=(0.5, 1)), ParameterTypeError),
        (dict(n=0), ParameterError),
        (dict(d=2.5), ParameterTypeError),
    ],
)
def test_planted_halfspace_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        make_planted_halfspace(**{"n": 10, "d": 3, **kwargs})


def test_bunch_attributes_and_pickle():
    b = Bunch(a=1)
    b.c = 2
    assert b["c"] == 2 and b.a == 1
    with pytest.raises(AttributeError):
        b.missing
    assert pickle.loads(pickle.dumps(b)) == b

"""As-of joins: gsearch.merge_asof against pandas.merge_asof itself and gsearch.join_asof
against polars' join_asof itself (hypothesis: every direction, tolerance on and off, exact
matches allowed or not, 0-3 `by` columns of several dtypes, duplicate keys in long runs, empty
sides, groups on one side only, int / float / datetime64 / timedelta64 keys), asof_indices
against the same frames and against an exact plain-Python reference (the integer limits, where
pandas' subtraction wraps), and the errors, message for message. The GPU forms are in
test_gpu.py."""

import datetime
import warnings

import numpy as np
import pytest

import gsearch

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

try:
    import pandas as pd
except ImportError:  # not installed, or (the oldest-numpy CI step) built for a newer numpy
    pd = None
needs_pandas = pytest.mark.skipif(pd is None, reason="pandas does not import")

DIRECTIONS = ["backward", "forward", "nearest"]


def examples(n):
    """n examples in CI's profile (its 45-minute budget); the profile's own count in a longer
    one (GSEARCH_HYPOTHESIS_PROFILE=thorough)."""
    return n if settings.default.max_examples <= 150 else settings.default.max_examples


KEY_DTYPES = ["int64", "int32", "uint64", "float64", "float32", "datetime64[ns]", "datetime64[s]", "timedelta64[ms]"]
BY_KINDS = ["int", "str", "float", "bool", "datetime"]


# --- a plain-Python reference ------------------------------------------------------------------


def ref_asof(left, right, lcodes=None, rcodes=None, direction="backward", tolerance=None, exact=True):
    """pandas.merge_asof's matches in Python integers / floats, exactly: for each left key the
    last right row <= it (backward), the first >= it (forward), the closer of those (nearest,
    backward on a tie), within the tolerance (inclusive) and the left row's group."""
    out = []
    for i, x in enumerate(left):
        rows = [j for j in range(len(right)) if lcodes is None or rcodes[j] == lcodes[i]]
        back = [j for j in rows if (right[j] <= x if exact else right[j] < x)]
        fore = [j for j in rows if (right[j] >= x if exact else right[j] > x)]
        b = back[-1] if back else -1
        f = fore[0] if fore else -1
        if b >= 0 and tolerance is not None and x - right[b] > tolerance:
            b = -1
        if f >= 0 and tolerance is not None and right[f] - x > tolerance:
            f = -1
        if direction == "backward":
            out.append(b)
        elif direction == "forward":
            out.append(f)
        elif b >= 0 and f >= 0:
            out.append(b if x - right[b] <= right[f] - x else f)
        else:
            out.append(max(b, f))
    return np.array(out, dtype=np.int64)


# --- frames ------------------------------------------------------------------------------------


def key_values(dtype, draw_ints):
    d = np.dtype(dtype)
    ints = np.sort(np.array(draw_ints, dtype=np.int64))
    if d.kind in "mM":
        unit = np.datetime_data(d)[0]
        base = np.datetime64("2021-03-04", unit) if d.kind == "M" else np.timedelta64(0, unit)
        return base + ints.astype(f"m8[{unit}]")
    if d.kind == "f":
        return (ints * 0.5).astype(d)  # halves: exact in float32, ties at equal distances
    if d.kind == "u":
        return ints.astype(d) + d.type(2 ** (d.itemsize * 8 - 1))  # the upper half of the range
    return ints.astype(d)


def by_column(kind, codes):
    codes = np.asarray(codes, dtype=np.int64)
    if kind == "int":
        return codes * 7 - 3
    if kind == "str":
        return pd.array([f"g{c}" for c in codes], dtype="str")
    if kind == "float":
        return np.where(codes == 0, np.nan, np.where(codes == 1, -0.0, (codes - 2) * 0.5))  # NaN, -0.0, 0.0, ...
    if kind == "bool":
        return codes % 2 == 0
    return np.datetime64("2020-01-01", "s") + codes.astype("m8[D]")


@st.composite
def frames(draw, max_rows=24, max_by=3):
    dtype = draw(st.sampled_from(KEY_DTYPES))
    n = draw(st.integers(0, max_rows))
    m = draw(st.integers(0, max_rows))
    span = draw(st.sampled_from([3, 8, 40]))  # few distinct keys: long runs of duplicates
    lk = key_values(dtype, draw(st.lists(st.integers(0, span), min_size=n, max_size=n)))
    rk = key_values(dtype, draw(st.lists(st.integers(0, span), min_size=m, max_size=m)))
    nby = draw(st.integers(0, max_by))
    kinds = [draw(st.sampled_from(BY_KINDS)) for _ in range(nby)]
    ngroups = draw(st.sampled_from([1, 2, 4]))
    left = {"t": lk, "lv": np.arange(n, dtype=np.int64) * 10}
    right = {
        "t": rk,
        "lv": np.arange(m, dtype=np.int64) * 3,  # overlaps the left's name: suffixes
        "rint": np.arange(m, dtype=np.int64),
        "rbool": np.arange(m) % 3 == 0,
        "rfloat": np.arange(m) / 4.0,
        "rtime": np.datetime64("2000-01-01", "ns") + np.arange(m).astype("m8[h]"),
        "rstr": np.array([f"r{j}" for j in range(m)], dtype=object),
    }
    by = []
    for k, kind in enumerate(kinds):
        name = f"by{k}"
        left[name] = by_column(kind, draw(st.lists(st.integers(0, ngroups), min_size=n, max_size=n)))
        # one more code on the right: groups of one side only
        right[name] = by_column(kind, draw(st.lists(st.integers(0, ngroups + 1), min_size=m, max_size=m)))
        by.append(name)
    return pd.DataFrame(left), pd.DataFrame(right), by, dtype


def tolerance_for(dtype, draw_int):
    d = np.dtype(dtype)
    if d.kind in "mM":
        unit = np.datetime_data(d)[0]
        return pd.Timedelta(int(draw_int), unit=unit)
    if d.kind == "f":
        return draw_int * 0.5
    return int(draw_int)


def same_frame(got, want):
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.columns) == list(want.columns)
    assert type(got.index) is type(want.index)


# --- merge_asof against pandas ------------------------------------------------------------------


@needs_pandas
@settings(max_examples=examples(120), deadline=None)
@given(
    frames(),
    st.sampled_from(DIRECTIONS),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 6)),
    st.integers(0, 2),
)
def test_merge_asof_equals_pandas(data, direction, exact, tol, how_by):
    left, right, by, dtype = data
    tolerance = None if tol is None else tolerance_for(dtype, tol)
    kw = dict(on="t", direction=direction, allow_exact_matches=exact, tolerance=tolerance)
    if by:
        if how_by == 0:
            kw["by"] = by if len(by) > 1 else by[0]
        else:
            kw["left_by"], kw["right_by"] = by, by
    want = pd.merge_asof(left, right, **kw)
    got = gsearch.merge_asof(left, right, **kw)
    same_frame(got, want)
    # the gather map of the same arrays, and the plain-Python reference
    lcols = [left[b].to_numpy() for b in by] if by else None
    rcols = [right[b].to_numpy() for b in by] if by else None
    idx = gsearch.asof_indices(
        left["t"].to_numpy(),
        right["t"].to_numpy(),
        left_by=lcols,
        right_by=rcols,
        direction=direction,
        tolerance=tolerance,
        allow_exact_matches=exact,
    )
    rows = pd.merge_asof(left, right.assign(_row=np.arange(len(right))), **kw)["_row"]
    np.testing.assert_array_equal(idx, rows.fillna(-1).to_numpy().astype(np.int64))


@needs_pandas
@settings(max_examples=examples(60), deadline=None)
@given(frames(max_by=0), st.sampled_from(DIRECTIONS), st.booleans())
def test_merge_asof_other_names_suffixes_and_indexes(data, direction, exact):
    left, right, _, _ = data
    r2 = right.rename(columns={"t": "u"})
    for kw in (
        dict(left_on="t", right_on="u"),
        dict(left_on="t", right_on="u", suffixes=("_l", None)),
        dict(left_on="t", right_on="rint") if right["rint"].is_monotonic_increasing and left["t"].dtype == np.int64 else None,
    ):
        if kw is None:
            continue
        rr = r2 if kw["right_on"] == "u" else right
        want = pd.merge_asof(left, rr, direction=direction, allow_exact_matches=exact, **kw)
        got = gsearch.merge_asof(left, rr, direction=direction, allow_exact_matches=exact, **kw)
        same_frame(got, want)
    li, ri = left.set_index("t"), right.set_index("t")  # (pandas makes an empty int32 index int64)
    for l, r, kw in (
        (li, ri, dict(left_index=True, right_index=True)),
        (left, ri, dict(left_on="t", right_index=True)),
        (left.set_index(pd.Index(np.arange(len(left)) * 3 + 5)), ri, dict(left_on="t", right_index=True)),
    ):
        same_or_same_error(
            lambda: gsearch.merge_asof(l, r, direction=direction, allow_exact_matches=exact, **kw),
            lambda: pd.merge_asof(l, r, direction=direction, allow_exact_matches=exact, **kw),
        )


def same_or_same_error(got, want):
    error = raised(want)
    if error is None:
        same_frame(got(), want())
    else:
        assert raised(got) == error


@needs_pandas
def test_merge_asof_series_tz_nullable_and_float16():
    t = pd.to_datetime(["2020-01-01 00:00", "2020-01-01 00:05", "2020-01-01 01:00"]).tz_localize("UTC")
    left = pd.DataFrame({"t": t, "x": [1, 2, 3]})
    right = pd.DataFrame({"t": t - pd.Timedelta("1min"), "y": pd.array([1, None, 3], dtype="Int64")})
    for tol in (None, pd.Timedelta("30s"), datetime.timedelta(minutes=2)):
        same_frame(gsearch.merge_asof(left, right, on="t", tolerance=tol), pd.merge_asof(left, right, on="t", tolerance=tol))
    # pandas' nullable integer keys, and a named Series
    li = pd.DataFrame({"t": pd.array([1, 4, 9], dtype="Int64")})
    ri = pd.DataFrame({"t": pd.array([0, 4, 5], dtype="Int64"), "v": [1.0, 2.0, 3.0]})
    same_frame(gsearch.merge_asof(li, ri, on="t", direction="nearest"), pd.merge_asof(li, ri, on="t", direction="nearest"))
    s = pd.Series([1, 4, 9], name="t")
    same_frame(gsearch.merge_asof(s, ri.astype({"t": "int64"}), on="t"), pd.merge_asof(s, ri.astype({"t": "int64"}), on="t"))
    # float16 keys: pandas refuses them; gsearch joins them widened (float32 holds each exactly)
    l16 = pd.DataFrame({"t": np.array([0.5, 1.5, 3.0], np.float16)})
    r16 = pd.DataFrame({"t": np.array([0.0, 1.5, 2.0], np.float16), "v": [1, 2, 3]})
    got = gsearch.merge_asof(l16, r16, on="t", direction="nearest")
    want = pd.merge_asof(l16.astype("float32"), r16.astype({"t": "float32"}), on="t", direction="nearest")
    np.testing.assert_array_equal(got["v"].to_numpy(), want["v"].to_numpy())
    assert got["t"].dtype == np.float16


@needs_pandas
def test_merge_asof_common_column_and_attrs():
    left = pd.DataFrame({"t": [1, 5, 10], "a": [1.0, 2.0, 3.0]})
    right = pd.DataFrame({"t": [1, 2, 3, 6, 7], "b": [1, 2, 3, 6, 7]})
    same_frame(gsearch.merge_asof(left, right), pd.merge_asof(left, right))
    left.attrs["source"] = "x"
    right.attrs["source"] = "x"
    assert gsearch.merge_asof(left, right, on="t").attrs == {"source": "x"}


# --- errors, as pandas raises them -------------------------------------------------------------


def raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type and message are the point
        return type(e), str(e)
    return None


def error_cases():
    return [
        ("unsorted left", dict(left=pd.DataFrame({"t": [3, 1]}), right=pd.DataFrame({"t": [1, 2]}), on="t")),
        ("unsorted right", dict(left=pd.DataFrame({"t": [1, 3]}), right=pd.DataFrame({"t": [2, 1]}), on="t")),
        ("NaN left", dict(left=pd.DataFrame({"t": [1.0, np.nan]}), right=pd.DataFrame({"t": [1.0]}), on="t")),
        ("NaN right", dict(left=pd.DataFrame({"t": [1.0]}), right=pd.DataFrame({"t": [np.nan, 1.0]}), on="t")),
        ("NaN right, unsorted left", dict(left=pd.DataFrame({"t": [2.0, 1.0]}), right=pd.DataFrame({"t": [np.nan]}), on="t")),
        ("NaT left", dict(left=pd.DataFrame({"t": pd.to_datetime(["2020", None])}), right=pd.DataFrame({"t": pd.to_datetime(["2020"])}), on="t")),
        ("NaT right", dict(left=pd.DataFrame({"t": pd.to_datetime(["2020"])}), right=pd.DataFrame({"t": pd.to_datetime([None, "2020"])}), on="t")),
        ("NA left", dict(left=pd.DataFrame({"t": pd.array([1, None], dtype="Int64")}), right=pd.DataFrame({"t": pd.array([1], dtype="Int64")}), on="t")),
        ("int with float", dict(left=pd.DataFrame({"t": [1, 2]}), right=pd.DataFrame({"t": [1.0, 2.0]}), on="t")),
        ("int32 with int64", dict(left=pd.DataFrame({"t": np.array([1, 2], np.int32)}), right=pd.DataFrame({"t": [1, 2]}), on="t")),
        ("datetime units", dict(left=pd.DataFrame({"t": pd.to_datetime(["2020"]).astype("M8[s]")}), right=pd.DataFrame({"t": pd.to_datetime(["2020"]).astype("M8[ns]")}), on="t")),
        ("by dtypes", dict(left=pd.DataFrame({"t": [1], "g": [1]}), right=pd.DataFrame({"t": [1], "g": ["1"]}), on="t", by="g")),
        ("by and key dtypes", dict(left=pd.DataFrame({"t": [1], "g": [1]}), right=pd.DataFrame({"t": [1.0], "g": [1]}), on="t", by="g")),
        ("negative tolerance", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"t": [1]}), on="t", tolerance=-1)),
        ("negative float tolerance", dict(left=pd.DataFrame({"t": [1.0]}), right=pd.DataFrame({"t": [1.0]}), on="t", tolerance=-0.5)),
        ("negative timedelta", dict(left=pd.DataFrame({"t": pd.to_datetime(["2020"])}), right=pd.DataFrame({"t": pd.to_datetime(["2020"])}), on="t", tolerance=pd.Timedelta("-1ns"))),
        ("float tolerance, int keys", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"t": [1]}), on="t", tolerance=1.5)),
        ("int tolerance, datetime keys", dict(left=pd.DataFrame({"t": pd.to_datetime(["2020"])}), right=pd.DataFrame({"t": pd.to_datetime(["2020"])}), on="t", tolerance=5)),
        ("numpy timedelta tolerance", dict(left=pd.DataFrame({"t": pd.to_datetime(["2020"])}), right=pd.DataFrame({"t": pd.to_datetime(["2020"])}), on="t", tolerance=np.timedelta64(1, "s"))),
        ("direction", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"t": [1]}), on="t", direction="sideways")),
        ("allow_exact_matches", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"t": [1]}), on="t", allow_exact_matches=1)),
        ("on and left_on", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"t": [1]}), on="t", left_on="t")),
        ("two keys", dict(left=pd.DataFrame({"t": [1], "u": [1]}), right=pd.DataFrame({"t": [1], "u": [1]}), on=["t", "u"])),
        ("no common column", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"u": [1]}))),
        ("missing column", dict(left=pd.DataFrame({"t": [1]}), right=pd.DataFrame({"t": [1]}), on="x")),
        ("object key", dict(left=pd.DataFrame({"t": ["a"]}), right=pd.DataFrame({"t": ["a"]}), on="t")),
        ("by and left_by", dict(left=pd.DataFrame({"t": [1], "g": [1]}), right=pd.DataFrame({"t": [1], "g": [1]}), on="t", by="g", left_by="g")),
        ("left_by only", dict(left=pd.DataFrame({"t": [1], "g": [1]}), right=pd.DataFrame({"t": [1], "g": [1]}), on="t", left_by="g")),
        ("by lengths", dict(left=pd.DataFrame({"t": [1], "g": [1]}), right=pd.DataFrame({"t": [1], "g": [1]}), on="t", left_by=["g"], right_by=["g", "t"])),
        ("no suffixes", dict(left=pd.DataFrame({"t": [1], "v": [1]}), right=pd.DataFrame({"t": [1], "v": [1]}), on="t", suffixes=(None, None))),
        ("duplicate suffixes", dict(left=pd.DataFrame({"t": [1], "v": [1], "v_x": [1]}), right=pd.DataFrame({"t": [1], "v": [1]}), on="t")),
        ("not a frame", dict(left=[1, 2], right=pd.DataFrame({"t": [1]}), on="t")),
        ("unnamed series", dict(left=pd.Series([1, 2]), right=pd.DataFrame({"t": [1]}), on="t")),
    ]


ERROR_CASES = error_cases() if pd is not None else []  # pandas' own errors are the reference


@needs_pandas
@pytest.mark.parametrize("name,kw", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_merge_asof_errors_equal_pandas(name, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = raised(lambda: pd.merge_asof(**kw))
        got = raised(lambda: gsearch.merge_asof(**kw))
    assert want is not None, name
    assert got == want


@needs_pandas
def test_merge_asof_column_labels_of_every_kind():
    """Labels that are all str and unique are suffixed and dropped with sets, others by pandas'
    Index operations: the frame or the error is pandas' either way (int, mixed and repeated
    labels, a suffix that makes a label of the other side, one side's suffix None)."""
    cases = [
        (pd.DataFrame({0: [1, 5], 1: [1.0, 2.0]}), pd.DataFrame({0: [2, 4], 1: [3.0, 4.0]}), dict(on=0)),
        (pd.DataFrame([[1, 2, 3]], columns=["t", 1, "a"]), pd.DataFrame([[1, 5, 6]], columns=["t", 1, "a"]), dict(on="t")),
        (pd.DataFrame([[1, 2, 3]], columns=["t", "a", "a"]), pd.DataFrame([[1, 5]], columns=["t", "b"]), dict(on="t")),
        (pd.DataFrame([[1, 2, 3]], columns=["t", "a", "a"]), pd.DataFrame([[1, 5]], columns=["t", "a"]), dict(on="t")),
        (pd.DataFrame({"t": [1, 3], "a": [1, 2], "b_y": [0, 0]}), pd.DataFrame({"t": [1, 2], "b": [7, 8], "a": [5, 6]}),
         dict(on="t", suffixes=("", "_y"))),
        (pd.DataFrame({"t": [1, 3], "a": [1, 2]}), pd.DataFrame({"t": [1, 2], "a": [5, 6], "a_y": [0, 1]}), dict(on="t")),
        (pd.DataFrame({"t": [1, 3], "a": [1, 2]}), pd.DataFrame({"t": [1, 2], "a": [5, 6]}), dict(on="t", suffixes=(None, "_r"))),
        (pd.DataFrame({"t": [1, 3], "g": [1, 2]}), pd.DataFrame({"u": [1, 2], "g": [5, 6], "t": [0, 0]}),
         dict(left_on="t", right_on="u", by="g")),
    ]
    for left, right, kw in cases:
        want = raised(lambda: pd.merge_asof(left, right, **kw))
        if want is not None:
            assert raised(lambda: gsearch.merge_asof(left, right, **kw)) == want, (list(left), list(right), kw)
        else:
            same_frame(gsearch.merge_asof(left, right, **kw), pd.merge_asof(left, right, **kw))


@needs_pandas
def test_merge_asof_not_supported():
    left = pd.DataFrame({"t": [1, 2]}).set_index("t")
    right = pd.DataFrame({"t": [1, 2], "v": [3, 4]})
    with pytest.raises(NotImplementedError, match="reset_index"):
        gsearch.merge_asof(left, right, left_index=True, right_on="t")
    with pytest.raises(NotImplementedError, match="index level"):
        gsearch.merge_asof(left, right.set_index("t"), on="t")
    with pytest.raises(ValueError, match="device"):
        gsearch.merge_asof(right, right, on="t", device="tpu")


# --- asof_indices ------------------------------------------------------------------------------


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12),
    st.sampled_from(DIRECTIONS),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 2**64)),
)
def test_asof_indices_exact_at_the_int64_limits(left, right, direction, exact, tolerance):
    """Keys anywhere in int64's range, tolerances up to 2**64 (beyond int64: joined as unsigned
    keys): the exact reference. pandas subtracts in int64 (and wraps), so it is not the
    reference here."""
    lk, rk = sorted(left), sorted(right)
    got = gsearch.asof_indices(
        np.array(lk, dtype=np.int64), np.array(rk, dtype=np.int64), direction=direction, tolerance=tolerance, allow_exact_matches=exact
    )
    np.testing.assert_array_equal(got, ref_asof(lk, rk, direction=direction, tolerance=tolerance, exact=exact))


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=10),
    st.lists(st.integers(0, 2**64 - 1), max_size=10),
    st.sampled_from(DIRECTIONS),
    st.one_of(st.none(), st.integers(0, 2**65)),
    st.sampled_from(["uint64", "uint32", "int32", "int8", "uint16"]),
)
def test_asof_indices_exact_other_integers(left, right, direction, tolerance, dtype):
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    lk = sorted(int(info.min) + v % span for v in left)
    rk = sorted(int(info.min) + v % span for v in right)
    got = gsearch.asof_indices(np.array(lk, dtype=dtype), np.array(rk, dtype=dtype), direction=direction, tolerance=tolerance)
    np.testing.assert_array_equal(got, ref_asof(lk, rk, direction=direction, tolerance=tolerance))


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(0, 30), max_size=30),
    st.lists(st.integers(0, 30), max_size=30),
    st.lists(st.integers(0, 3), max_size=30),
    st.lists(st.integers(0, 4), max_size=30),
    st.sampled_from(DIRECTIONS),
    st.booleans(),
)
def test_asof_indices_sort_takes_any_order(lk, rk, lg, rg, direction, grouped):
    """sort=True: keys in any order; the map of the stably sorted inputs, in the left's order,
    naming the right's original rows."""
    n, m = min(len(lk), len(lg)), min(len(rk), len(rg))
    lk, lg, rk, rg = (np.array(x, dtype=np.int64) for x in (lk[:n], lg[:n], rk[:m], rg[:m]))
    kw = dict(left_by=lg, right_by=rg) if grouped else {}
    got = gsearch.asof_indices(lk, rk, direction=direction, sort=True, **kw)
    lo, ro = np.argsort(lk, kind="stable"), np.argsort(rk, kind="stable")
    want_sorted = ref_asof(
        list(lk[lo]), list(rk[ro]), list(lg[lo]) if grouped else None, list(rg[ro]) if grouped else None, direction
    )
    want = np.empty(n, dtype=np.int64)
    want[lo] = np.where(want_sorted >= 0, ro[np.maximum(want_sorted, 0)] if m else -1, -1)
    np.testing.assert_array_equal(got, want)


@needs_pandas
def test_asof_indices_inputs():
    lk, rk = np.array([1, 5, 10]), np.array([1, 2, 3, 6, 7])
    np.testing.assert_array_equal(gsearch.asof_indices(lk, rk), [0, 2, 4])
    np.testing.assert_array_equal(gsearch.asof_indices(lk, rk, direction="forward", allow_exact_matches=False), [1, 3, -1])
    # float16 widened; bool, int8 widened; lists
    np.testing.assert_array_equal(gsearch.asof_indices(lk.astype(np.float16), rk.astype(np.float16)), [0, 2, 4])
    np.testing.assert_array_equal(gsearch.asof_indices([1, 5, 10], [1, 2, 3, 6, 7]), [0, 2, 4])
    np.testing.assert_array_equal(gsearch.asof_indices(lk.astype(np.int8), rk.astype(np.int8), direction="nearest"), [0, 3, 4])
    # datetimes, with timedelta tolerances of any kind, floored to the keys' unit
    t = np.array(["2020-01-01T00:00:00", "2020-01-01T00:00:10"], dtype="M8[s]")
    r = t - np.timedelta64(2, "s")
    for tol, want in (
        (np.timedelta64(2, "s"), [0, 1]),
        (np.timedelta64(1999, "ms"), [-1, -1]),
        (datetime.timedelta(seconds=2), [0, 1]),
        (pd.Timedelta("2s"), [0, 1]),
        (pd.Timedelta("2999ms"), [0, 1]),
    ):
        np.testing.assert_array_equal(gsearch.asof_indices(t, r, tolerance=tol), want)
    td = t - t[0]
    np.testing.assert_array_equal(gsearch.asof_indices(td, td - np.timedelta64(1, "s"), direction="forward"), [1, -1])
    # several by columns of mixed dtypes; a group on one side only; empty sides
    g1, g2 = np.array(["a", "a", "b"]), np.array([1.0, np.nan, 1.0])
    np.testing.assert_array_equal(
        gsearch.asof_indices(lk, rk[:3], left_by=[g1, g2], right_by=[np.array(["a", "b", "a"]), np.array([np.nan, 1.0, 1.0])]),
        [-1, 0, 1],
    )
    np.testing.assert_array_equal(gsearch.asof_indices(lk, rk[:0]), [-1, -1, -1])
    assert gsearch.asof_indices(lk[:0], rk).shape == (0,)
    np.testing.assert_array_equal(gsearch.asof_indices(lk, rk[:0], left_by=lk, right_by=rk[:0]), [-1, -1, -1])


@needs_pandas
def test_asof_indices_errors():
    lk, rk = np.array([1, 5, 10]), np.array([1, 2, 3])
    MergeError = pd.errors.MergeError
    with pytest.raises(ValueError, match="^left keys must be sorted$"):
        gsearch.asof_indices(lk[::-1], rk)
    with pytest.raises(ValueError, match="^right keys must be sorted$"):
        gsearch.asof_indices(lk, rk[::-1])
    with pytest.raises(ValueError, match="^Merge keys contain null values on left side$"):
        gsearch.asof_indices(np.array([1.0, np.nan]), rk.astype(float))
    t = np.array(["2020-01-01", "NaT"], dtype="M8[s]")
    with pytest.raises(ValueError, match="^Merge keys contain null values on left side$"):
        gsearch.asof_indices(t, t[:1])
    with pytest.raises(ValueError, match="^Merge keys contain null values on right side$"):
        gsearch.asof_indices(t[:1], t)
    with pytest.raises(ValueError, match="^left keys must be sorted$"):
        gsearch.asof_indices(t[:1].repeat(2) - np.array([0, 1], "m8[s]"), t)  # pandas' order: left first
    with pytest.raises(MergeError, match=r"incompatible merge keys \[0\] dtype\('int64'\) and dtype\('float64'\), must be the same type"):
        gsearch.asof_indices(lk, rk.astype(float))
    with pytest.raises(MergeError, match=r"incompatible merge keys \[1\]"):
        gsearch.asof_indices(lk, rk.astype(float), left_by=lk, right_by=rk)
    with pytest.raises(MergeError, match=r"incompatible merge keys \[0\]"):
        gsearch.asof_indices(lk, rk, left_by=lk, right_by=rk.astype(float))
    with pytest.raises(MergeError, match="^tolerance must be"):
        gsearch.asof_indices(lk, rk, tolerance=-1)
    with pytest.raises(MergeError, match="^tolerance must be"):
        gsearch.asof_indices(t[:1], t[:1], tolerance=np.timedelta64(-1, "s"))
    with pytest.raises(MergeError, match="incompatible tolerance 1.5"):
        gsearch.asof_indices(lk, rk, tolerance=1.5)
    with pytest.raises(MergeError, match="incompatible tolerance 3"):
        gsearch.asof_indices(t[:1], t[:1], tolerance=3)
    with pytest.raises(MergeError, match="direction invalid: up"):
        gsearch.asof_indices(lk, rk, direction="up")
    with pytest.raises(MergeError, match="left_by and right_by must be the same length"):
        gsearch.asof_indices(lk, rk, left_by=[lk, lk], right_by=[rk])
    with pytest.raises(MergeError, match="missing right_by"):
        gsearch.asof_indices(lk, rk, left_by=lk)
    with pytest.raises(ValueError, match="left_by has 2 elements but left_on has 3"):
        gsearch.asof_indices(lk, rk, left_by=lk[:2], right_by=rk)
    with pytest.raises(ValueError, match="1-D"):
        gsearch.asof_indices(lk.reshape(3, 1), rk)
    with pytest.raises(TypeError, match="as-of keys"):
        gsearch.asof_indices(np.array(["a"]), np.array(["a"]))
    # the tolerance message is the installed pandas' own
    assert raised(lambda: gsearch.asof_indices(lk, rk, tolerance=-1)) == raised(
        lambda: pd.merge_asof(pd.DataFrame({"t": lk}), pd.DataFrame({"t": rk}), on="t", tolerance=-1)
    )


# --- join_asof against polars ------------------------------------------------------------------

POLARS_KEYS = ["Int64", "Int32", "Float64", "Datetime", "Date", "Duration"]


@st.composite
def polars_frames(draw, max_rows=20):
    pl = pytest.importorskip("polars", exc_type=ImportError)
    kind = draw(st.sampled_from(POLARS_KEYS))
    n, m = draw(st.integers(0, max_rows)), draw(st.integers(0, max_rows))
    span = draw(st.sampled_from([3, 10, 40]))
    lnull, rnull = draw(st.integers(0, 2)) if n else 0, draw(st.integers(0, 2)) if m else 0
    lk = sorted(draw(st.lists(st.integers(0, span), min_size=n, max_size=n)))
    rk = sorted(draw(st.lists(st.integers(0, span), min_size=m, max_size=m)))
    lk = [None] * min(lnull, n) + lk[min(lnull, n):]  # polars' sorted order: nulls first
    rk = [None] * min(rnull, m) + rk[min(rnull, m):]

    def keys(values):
        s = pl.Series("t", values, dtype=pl.Int64)
        if kind == "Int32":
            return s.cast(pl.Int32)
        if kind == "Float64":
            return (s.cast(pl.Float64) * 0.5)
        if kind == "Datetime":
            return (s * 1_000_000).cast(pl.Datetime("us"))
        if kind == "Date":
            return s.cast(pl.Int32).cast(pl.Date)
        if kind == "Duration":
            return (s * 1000).cast(pl.Duration("ms"))
        return s

    nby = draw(st.integers(0, 2))
    left = pl.DataFrame({"t": keys(lk), "v": pl.Series(range(n), dtype=pl.Int64)})
    right = pl.DataFrame(
        {
            "t": keys(rk),
            "v": pl.Series(range(m), dtype=pl.Int64),
            "w": pl.Series([float(j) for j in range(m)], dtype=pl.Float64),
            "s": pl.Series([f"r{j}" for j in range(m)], dtype=pl.String),
        }
    )
    by = []
    for k in range(nby):
        strings = draw(st.booleans())
        lg = draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=n, max_size=n))
        rg = draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=m, max_size=m))
        if strings:
            lg = [None if g is None else f"g{g}" for g in lg]
            rg = [None if g is None else f"g{g}" for g in rg]
        left = left.with_columns(pl.Series(f"g{k}", lg, dtype=pl.String if strings else pl.Int64))
        right = right.with_columns(pl.Series(f"g{k}", rg, dtype=pl.String if strings else pl.Int64))
        by.append(f"g{k}")
    return left, right, by, kind


def polars_tolerance(kind, t):
    if kind == "Float64":
        return t * 0.5
    if kind == "Datetime":
        return datetime.timedelta(seconds=t)
    if kind == "Date":
        return f"{t}d"
    if kind == "Duration":
        return datetime.timedelta(seconds=t)
    return t


@settings(max_examples=examples(120), deadline=None)
@given(polars_frames(), st.sampled_from(DIRECTIONS), st.booleans(), st.one_of(st.none(), st.integers(0, 5)), st.booleans())
def test_join_asof_equals_polars(data, strategy, exact, tol, coalesce):
    left, right, by, kind = data
    if by:  # polars: sorted within each group; the rows with a null key only lead without `by`
        left = left.filter(left["t"].is_not_null()).sort(by + ["t"], nulls_last=False)
        right = right.filter(right["t"].is_not_null()).sort(by + ["t"], nulls_last=False)
    kw = dict(on="t", strategy=strategy, allow_exact_matches=exact, coalesce=coalesce)
    if tol is not None:
        kw["tolerance"] = polars_tolerance(kind, tol)
    if by:
        kw["by"] = by
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # polars: sortedness not checked with `by`
        want = left.join_asof(right, **kw)
    got = gsearch.join_asof(left, right, **kw)
    assert got.schema == want.schema
    assert got.equals(want), (got, want)


def test_join_asof_names_lazy_and_errors():
    pl = pytest.importorskip("polars", exc_type=ImportError)
    left = pl.DataFrame({"t": [1, 5, 10], "a": [1, 2, 3], "g": [1, 1, 2]})
    right = pl.DataFrame({"u": [1, 2, 3, 6, 7], "a": [10, 20, 30, 60, 70], "g": [1, 2, 1, 1, 2], "h": [1, 1, 1, 1, 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in (
            dict(left_on="t", right_on="u"),
            dict(left_on="t", right_on="u", by="g"),
            dict(left_on="t", right_on="u", by_left="g", by_right="h"),
            dict(left_on="t", right_on="u", suffix="_r", strategy="nearest", tolerance=1),
        ):
            want = left.join_asof(right, **kw)
            got = gsearch.join_asof(left, right, **kw)
            assert got.equals(want) and got.schema == want.schema, kw
    lazy = gsearch.join_asof(left.lazy(), right.lazy(), left_on="t", right_on="u")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(left.join_asof(right, left_on="t", right_on="u"))
    # int32 keys with int64 ones: compared exactly, the left's dtype kept
    l32 = left.with_columns(pl.col("t").cast(pl.Int32))
    assert gsearch.join_asof(l32, right, left_on="t", right_on="u").equals(l32.join_asof(right, left_on="t", right_on="u"))
    for kw, exc in (
        (dict(left=left.reverse(), right=right, left_on="t", right_on="u"), pl.exceptions.InvalidOperationError),
        (dict(left=left, right=right.with_columns(pl.col("u").cast(pl.Float64)), left_on="t", right_on="u"), pl.exceptions.SchemaError),
        (dict(left=left, right=right.with_columns(pl.col("g").cast(pl.String)), left_on="t", right_on="u", by="g"), pl.exceptions.ComputeError),
        (dict(left=left, right=right, left_on="t", right_on="u", by_left="g"), pl.exceptions.InvalidOperationError),
        (dict(left=left, right=right.with_columns(a_right=1), left_on="t", right_on="u"), pl.exceptions.DuplicateError),
        (dict(left=left, right=right, left_on="t"), TypeError),
    ):
        want = raised(lambda: kw["left"].join_asof(kw["right"], **{k: v for k, v in kw.items() if k not in ("left", "right")}))
        got = raised(lambda: gsearch.join_asof(**kw))
        assert want is not None and got is not None
        assert issubclass(got[0], exc) and issubclass(want[0], exc), (got, want)
        assert got[1].split("\n")[0] == want[1].split("\n")[0], (got, want)
    with pytest.raises(ValueError, match="strategy"):
        gsearch.join_asof(left, right, left_on="t", right_on="u", strategy="near")
    with pytest.raises(ValueError, match="NaN"):
        f = pl.DataFrame({"t": [1.0, float("nan")]})
        gsearch.join_asof(f, f, on="t")
    with pytest.raises(NotImplementedError, match="calendar"):
        d = pl.DataFrame({"t": [datetime.date(2020, 1, 1)]})
        gsearch.join_asof(d, d, on="t", tolerance="1mo")


# --- gsearch.dask.merge_asof against pandas --------------------------------------------------------


@needs_pandas
@settings(max_examples=examples(40), deadline=None)
@given(frames(max_rows=30, max_by=2), st.sampled_from(DIRECTIONS), st.booleans(), st.one_of(st.none(), st.integers(0, 4)), st.integers(1, 4), st.integers(1, 4))
def test_dask_merge_asof_equals_pandas(data, direction, exact, tol, lparts, rparts):
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    import gsearch.dask as gdask

    left, right, by, dtype = data
    kw = dict(on="t", direction=direction, allow_exact_matches=exact)
    if tol is not None:
        kw["tolerance"] = tolerance_for(dtype, tol)
    if by:
        kw["by"] = by
    ldd, rdd = dd.from_pandas(left, npartitions=lparts, sort=False), dd.from_pandas(right, npartitions=rparts, sort=False)
    # pandas on the computed frames (Dask makes object strings pyarrow strings)
    want = pd.merge_asof(ldd.compute(scheduler="sync"), rdd.compute(scheduler="sync"), **kw)
    got = gdask.merge_asof(ldd, rdd, **kw).compute(scheduler="sync")
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@needs_pandas
def test_dask_merge_asof_halo_and_errors():
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    import gsearch.dask as gdask

    # a group whose last right row lies partitions before the left partition that needs it
    right = pd.DataFrame({"t": np.arange(40), "g": [0] + [1] * 38 + [2], "v": np.arange(40) * 10})
    left = pd.DataFrame({"t": [35, 36, 39, 39], "g": [0, 1, 2, 3]})
    for direction in DIRECTIONS:
        want = pd.merge_asof(left, right, on="t", by="g", direction=direction)
        got = gdask.merge_asof(dd.from_pandas(left, npartitions=2), dd.from_pandas(right, npartitions=5), on="t", by="g", direction=direction)
        pd.testing.assert_frame_equal(got.compute(scheduler="sync"), want)
    lf = dd.from_pandas(pd.DataFrame({"t": [1, 2, 3, 0]}), npartitions=2, sort=False)
    rf = dd.from_pandas(pd.DataFrame({"t": [1.0, np.nan]}), npartitions=1)
    with pytest.raises(ValueError, match="^left keys must be sorted$"):
        gdask.merge_asof(lf, dd.from_pandas(pd.DataFrame({"t": [1, 2]}), npartitions=1), on="t")
    with pytest.raises(ValueError, match="^Merge keys contain null values on right side$"):
        gdask.merge_asof(dd.from_pandas(pd.DataFrame({"t": [1.0]}), npartitions=1), rf, on="t")
    with pytest.raises(pd.errors.MergeError, match="incompatible merge keys"):
        gdask.merge_asof(lf, rf, on="t")
    with pytest.raises(NotImplementedError, match="reset_index"):
        gdask.merge_asof(lf, rf, left_index=True, right_index=True)

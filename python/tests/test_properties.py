"""Property-based tests (hypothesis) of searchsorted, predecessor and bucketize against numpy
and an exact reference. Skipped where hypothesis is not installed."""

import numpy as np
import pytest

pytest.importorskip("hypothesis")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import gsearch  # noqa: E402
from conftest import ALL_DTYPES, random_values, sorted_keys  # noqa: E402
from references import ref_sort  # noqa: E402
from test_predecessor_bucketize import bucketize_formula  # noqa: E402
from test_searchsorted import EXACT_PAIRS, check, exact_reference  # noqa: E402


_dtypes = st.sampled_from(ALL_DTYPES)


@st.composite
def keys_and_queries(draw):
    dtype = np.dtype(draw(_dtypes))
    if dtype.kind == "f":
        elements = st.floats(width=dtype.itemsize * 8, allow_nan=True, allow_infinity=True)
    else:
        elements = None
    small = draw(st.booleans())
    if small and dtype.kind in "iuf":  # few distinct values: duplicates and exact hits
        elements = st.sampled_from(np.array([0, 1, 2, 3, 100], dtype=dtype).tolist())
    a = draw(hnp.arrays(dtype, st.integers(0, 300), elements=elements))
    v = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, max_side=7), elements=elements))
    return ref_sort(a), v


@given(keys_and_queries(), st.sampled_from(["left", "right"]))
def test_property_same_dtype(kv, side):
    a, v = kv
    check(a, v, side)
    np.testing.assert_array_equal(gsearch.predecessor(a, v), np.searchsorted(a, v, side="right") - 1)


@given(
    st.sampled_from(EXACT_PAIRS),
    st.integers(0, 200),
    st.integers(0, 50),
    st.sampled_from(["left", "right"]),
    st.integers(0, 2**32 - 1),
)
def test_property_mixed_exact(pair, k, n, side, seed):
    rng = np.random.default_rng(seed)
    a = sorted_keys(rng, pair[0], k)
    v = random_values(rng, pair[1], n)
    check(a, v, side)


@given(
    hnp.arrays(np.int64, st.integers(0, 100), elements=st.integers(-(2**63), 2**63 - 1)),
    st.one_of(st.integers(-(2**70), 2**70), st.booleans()),
    st.sampled_from(["left", "right"]),
)
def test_property_python_int_exact(a, q, side):
    a = np.sort(a)
    assert gsearch.searchsorted(a, q, side) == exact_reference(a.tolist(), q, side)


@given(
    hnp.arrays(np.float32, st.integers(0, 100), elements=st.floats(width=32)),
    st.one_of(st.floats(), st.integers(-(2**130), 2**130)),
    st.sampled_from(["left", "right"]),
)
def test_property_python_number_float32_keys_exact(a, q, side):
    a = np.sort(a)
    assert gsearch.searchsorted(a, q, side) == exact_reference(a.tolist(), q, side)
    if not (isinstance(q, int) and abs(q) > 2**53):
        assert gsearch.searchsorted(a, q, side) == np.searchsorted(a, q, side)


@given(
    hnp.arrays(np.int32, st.integers(0, 100)),
    st.floats(),
    st.sampled_from(["left", "right"]),
)
def test_property_python_float_int32_keys(a, q, side):
    a = np.sort(a)
    assert gsearch.searchsorted(a, q, side) == np.searchsorted(a, q, side)


@given(
    hnp.arrays(np.float64, st.integers(0, 50), elements=st.floats(allow_nan=True)),
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=6), elements=st.floats(allow_nan=True)),
    st.booleans(),
)
def test_property_bucketize_and_predecessor(b, x, right):
    b = np.sort(b)
    np.testing.assert_array_equal(gsearch.bucketize(x, b, right=right), bucketize_formula(x, b, right))
    np.testing.assert_array_equal(gsearch.predecessor(b, x), np.searchsorted(b, x, side="right") - 1)



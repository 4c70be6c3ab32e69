"""The merge family over sorted 1-D arrays (Merge Path): the stable merge, merge sort and argsort,
with a value carried per key, and the sort-merge join. The inputs' checks (_pair, _one), which the
set operations (_sets.py) and gsearch.distributed use too, are in _arrays.py."""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as _np

from . import _arrays, _core
from ._arrays import (
    _INT64,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _adopt,
    _cast,
    _choice,
    _classify,
    _convert,
    _cupy,
    _is_bfloat16,
    _new_empty,
    _one,
    _pair,
    _shape,
    _size,
    _torch,
    _torch_dtype,
    _where,
)
from ._common import _JOIN_KINDS, _LEFT_ONLY_JOINS
from ._docs import public as _public

JoinHow = Literal["inner", "left", "right", "full", "semi", "anti"]


def _arange(fw: str, dev: Optional[int], n: int) -> Any:
    if fw == "numpy":
        return _np.arange(n, dtype=_np.int64)
    if fw == "torch":
        torch = _torch()
        device = torch.device("cuda", dev) if dev is not None else torch.device("cpu")
        return torch.arange(n, dtype=torch.int64, device=device)
    return _cupy().arange(n, dtype=_np.int64)



def _values_in(fn: str, v: Any, what: str, keys: _Arr, n: int) -> tuple:
    """Values that go with n keys, as the int64 array the library carries: 8-byte dtypes bit
    for bit (a view), other integer and bool dtypes converted exactly. Returns (it, the values'
    dtype). v may be classified already."""
    V = v if isinstance(v, (_Arr, _Scalar)) else _classify(v, what)
    if isinstance(V, _Scalar):
        raise ValueError(f"gsearch.{fn}: {what} must be a 1-D array, not a scalar")
    if _shape(V) != (n,):
        raise ValueError(f"gsearch.{fn}: {what} has shape {_shape(V)}, but there are {n} keys (one value each)")
    if V.dev != keys.dev:
        raise ValueError(f"gsearch.{fn}: {what} on {_where(V.dev)} but the keys on {_where(keys.dev)}")
    d = V.dtype
    if _is_bfloat16(V) or d.kind not in "biuf" or (d.kind == "f" and d.itemsize != 8):
        raise TypeError(
            f"gsearch.{fn}: {what} of dtype {'bfloat16' if _is_bfloat16(V) else d}: values are integers "
            "(int8-64, uint8-32, bool: converted exactly) or of an 8-byte dtype (int64, uint64, "
            "float64: carried bit for bit)"
        )
    if d.itemsize == 8:
        x = _convert(V, d)  # contiguous
        if d == _INT64:
            return x, d
        return (x.view(_arrays._INT64_T) if V.fw == "torch" else x.view(_np.int64)), d
    return _convert(V, _INT64), d


def _values_out(x: Any, fw: str, d: _np.dtype) -> Any:
    """The carried int64 values back in their own dtype d."""
    if d == _INT64:
        return x
    if d.itemsize == 8:
        return x.view(_torch_dtype(d)) if fw == "torch" else x.view(d)
    return _cast(x, fw, d)


def _sorted_copy(x: Any, fw: str, dev: Optional[int], d: _np.dtype, handle: int) -> Any:
    """The contiguous 1-D array x of dtype d sorted by the library's stable sort (gsearch::sort): x itself when it
    is sorted already (one O(n) read, which costs a few percent of a sort; the stable sort would
    return it unchanged), else a sorted copy. Callers only read the result."""
    if _core.is_sorted(x, handle):
        return x
    out = _new_empty(fw, dev, (_size(x),), d)
    _core.sort(x, out, None, None, handle)
    return out



@_public
def merge(
    a: ArrayLike,
    b: ArrayLike,
    a_values: Optional[ArrayLike] = None,
    b_values: Optional[ArrayLike] = None,
    *,
    check: bool = True,
    stream: Any = None,
) -> Any:
    """The stable merge of two sorted 1-D arrays, optionally carrying a value per key.

    ``merge(a, b)`` equals ``np.sort(np.concatenate([a, b]), kind='stable')`` for sorted `a` and
    `b` (in O(len(a) + len(b)), by Merge Path): equal keys keep `a`'s before `b`'s.

    Parameters
    ----------
    a, b : array_like, shape (N,) and (M,)
        Sorted (ascending; NaN last, -0.0 equal to 0.0). numpy arrays are merged on the CPU,
        torch tensors / cupy arrays on a CUDA device on the GPU, in place (no copy).
    a_values, b_values : array_like, optional
        One value per key of `a` and of `b` (both or neither; one dtype): integers and bool
        (converted exactly to int64 and back) or any 8-byte dtype (int64, uint64, float64:
        carried bit for bit). On the keys' device.
    check : bool, optional
        Check that `a` and `b` are sorted first (the default; ValueError naming the unsorted
        one, and nothing computed). O(N + M); on a GPU it waits for the check. False skips it:
        unsorted inputs then give an unspecified (but in-bounds) result.
    {stream}, as in :func:`searchsorted`.

    Returns
    -------
    merged : array, shape (N + M,)
        In numpy's promotion of the two dtypes, of `a`'s framework on its device.
    merged_values : array, shape (N + M,)
        With values only: ``merged_values[k]`` is the value of the key ``merged[k]`` came from,
        in the values' dtype. Returned as ``(merged, merged_values)``.

    Raises
    ------
    ValueError
        Inputs not 1-D, on different devices, unsorted (with `check`), values of the wrong
        length or only one of them.
    TypeError
        Key dtypes whose promotion would round (int64 with a float, ...), unsupported dtypes,
        values of two dtypes or of a dtype that is not carried.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.merge(np.array([1, 3, 5]), np.array([2, 3, 4]))
    array([1, 2, 3, 3, 4, 5])
    >>> gsearch.merge(np.array([1, 3]), np.array([3]), np.array([10, 11]), np.array([20]))
    (array([1, 3, 3]), array([10, 11, 20]))
    """
    A, B, p, kd = _pair("merge", a, b, ("a", "b"))
    if (a_values is None) != (b_values is None):
        raise ValueError("gsearch.merge: pass both a_values and b_values, or neither")
    na, nb = _shape(A)[0], _shape(B)[0]
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        ka, kb = _convert(A, kd), _convert(B, kd)
        out = _new_empty(fw, dev, (na + nb,), kd)
        if a_values is None:
            _core.merge(ka, kb, out, None, None, None, bool(check), scope.handle)
            return _cast(out, fw, p)
        AV, BV = _classify(a_values, "a_values"), _classify(b_values, "b_values")
        AV = _adopt(AV, BV)
        BV = _adopt(BV, AV)
        av, vd = _values_in("merge", AV, "a_values", A, na)
        bv, vd2 = _values_in("merge", BV, "b_values", B, nb)
        if vd != vd2:
            raise TypeError(f"gsearch.merge: a_values are {vd} but b_values are {vd2}: one dtype")
        ov = _new_empty(fw, dev, (na + nb,), _INT64)
        _core.merge(ka, kb, out, av, bv, ov, bool(check), scope.handle)
        return _cast(out, fw, p), _values_out(ov, fw, vd)


@_public
def sort(a: ArrayLike, values: Optional[ArrayLike] = None, *, stream: Any = None) -> Any:
    """A stable sort of a 1-D array, optionally carrying a value per key: the radix sort of
    integer keys (on a GPU CUB's onesweep, on the CPU an LSD radix sort from 4,096 keys) and the
    merge sort of floating-point keys.

    ``sort(a) == np.sort(a, kind='stable')``: ascending, NaN last, equal keys (and -0.0 and
    0.0, which are equal) in their input order.

    Parameters
    ----------
    a : array_like, shape (N,)
        The keys, any order. numpy arrays are sorted on the CPU, torch / cupy CUDA arrays on the
        GPU (read in place; the result is a new array).
    values : array_like, shape (N,), optional
        One value per key (integers and bool, or any 8-byte dtype, as in :func:`merge`): the
        result's values are ``values[np.argsort(a, kind='stable')]``.
    {stream} (the call returns once the work is enqueued).

    Returns
    -------
    sorted : array, shape (N,)
        `a`'s dtype, framework and device; ``(sorted, sorted_values)`` with `values`.

    Raises
    ------
    ValueError
        `a` not 1-D, `values` of another length or device.
    TypeError
        Unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.sort(np.array([3.0, np.nan, -1.0, 2.0]))
    array([-1.,  2.,  3., nan])
    >>> gsearch.sort(np.array([2, 1, 2, 1]), np.array([0, 1, 2, 3]))
    (array([1, 1, 2, 2]), array([1, 3, 0, 2]))
    """
    A, p, kd = _one("sort", a)
    n = _shape(A)[0]
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        keys = _convert(A, kd)
        out = _new_empty(fw, dev, (n,), kd)
        if values is None:
            _core.sort(keys, out, None, None, scope.handle)
            return _cast(out, fw, p)
        v, vd = _values_in("sort", values, "values", A, n)
        ov = _new_empty(fw, dev, (n,), _INT64)
        _core.sort(keys, out, v, ov, scope.handle)
        return _cast(out, fw, p), _values_out(ov, fw, vd)


@_public
def argsort(a: ArrayLike, *, stream: Any = None) -> Any:
    """The stable sorting permutation of a 1-D array: ``np.argsort(a, kind='stable')``.

    ``a[argsort(a)]`` is sorted (NaN last); equal keys (-0.0 and 0.0 among them) keep their
    input order. The stable sort of :func:`sort` of `a` with the values 0, 1, ..., N - 1.

    Parameters
    ----------
    a : array_like, shape (N,)
        The keys (numpy on the CPU, torch / cupy CUDA arrays on the GPU).
    {stream}.

    Returns
    -------
    indices : array of int64, shape (N,)
        Of `a`'s framework, on its device.

    Raises
    ------
    ValueError
        `a` not 1-D.
    TypeError
        An unsupported dtype.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.argsort(np.array([3, 1, 2, 1]))
    array([1, 3, 2, 0])
    """
    A, p, kd = _one("argsort", a)
    n = _shape(A)[0]
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        keys = _convert(A, kd)
        scratch = _new_empty(fw, dev, (n,), kd)
        perm = _new_empty(fw, dev, (n,), _INT64)
        _core.sort(keys, scratch, _arange(fw, dev, n), perm, scope.handle)
    return perm



@_public
def join(
    left: ArrayLike,
    right: ArrayLike,
    how: JoinHow = "inner",
    *,
    check: bool = True,
    stream: Any = None,
) -> tuple:
    """A sort-merge join of two sorted key arrays, as int64 gather maps.

    Each output row pairs a left index i and a right index j with ``left[i] == right[j]``
    (NaN equals NaN, -0.0 equals 0.0); duplicate keys give every pair (their cross product).

    ==========  ===========================================================================
    `how`       rows
    ==========  ===========================================================================
    'inner'     the matching pairs (i, j)
    'left'      those, and (i, -1) for each left row without a match
    'right'     those, and (-1, j) for each right row without a match
    'full'      both
    'semi'      the left rows with a match (left indices only)
    'anti'      the left rows without a match (left indices only)
    ==========  ===========================================================================

    Rows are ordered by key, then left index, then right index (the same on CPU and GPU).

    Parameters
    ----------
    left, right : array_like, 1-D
        Sorted keys (NaN last), numpy on the CPU or torch / cupy CUDA arrays on the GPU (read in
        place), of dtypes numpy promotes exactly.
    how : {'inner', 'left', 'right', 'full', 'semi', 'anti'}, optional
        The kind of join (default 'inner').
    check : bool, optional
        Check that both are sorted first (default; ValueError naming the unsorted one).
    {stream}. The call waits for the row count, then the
        maps are filled in order on the stream.

    Returns
    -------
    (left_index, right_index) : tuple of int64 arrays
        Of `left`'s framework and device, of the row count (which may exceed 2**31);
        `right_index` is None for 'semi' and 'anti'. -1 marks a missing side: gather with
        ``left_table[left_index]`` where ``left_index >= 0``.

    Raises
    ------
    ValueError
        A bad `how`, inputs not 1-D, on two devices, or unsorted (with `check`).
    TypeError
        Dtypes whose promotion would round, unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.join(np.array([1, 2, 2, 5]), np.array([2, 2, 3, 5]))
    (array([1, 1, 2, 2, 3]), array([0, 1, 0, 1, 3]))
    >>> gsearch.join(np.array([1, 2, 5]), np.array([2, 3]), how='full')
    (array([ 0,  1, -1,  2]), array([-1,  0,  1, -1]))
    >>> gsearch.join(np.array([1, 2, 5]), np.array([2, 3]), how='anti')
    (array([0, 2]), None)
    """
    kind = _choice("join", "how", how, _JOIN_KINDS)
    left_only = how in _LEFT_ONLY_JOINS
    A, B, p, kd = _pair("join", left, right, ("left", "right"))
    fw, dev = A.fw, A.dev

    def allocate(rows: int) -> tuple:
        li = _new_empty(fw, dev, (rows,), _INT64)
        return li, (None if left_only else _new_empty(fw, dev, (rows,), _INT64))

    with _StreamScope(fw, dev, stream) as scope:
        li, ri = _core.join(_convert(A, kd), _convert(B, kd), kind, allocate, bool(check), scope.handle)
    return li, ri

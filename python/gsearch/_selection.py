"""Selection: order statistics of unsorted data without sorting it. numpy's partition and
argpartition, torch's topk and kthvalue, and select (the values of given ranks); the quantiles
and medians are in _quantiles.py. The order is np.sort's: NaN after +inf, -0.0 equal to 0.0."""

from __future__ import annotations

import operator as _operator
from typing import Any, NamedTuple, Optional

import numpy as _np

from . import _arrays, _core
from ._arrays import (
    _INT64,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _cast,
    _check_supported,
    _classify,
    _contiguous,
    _convert,
    _is_bfloat16,
    _new_empty,
    _shape,
    _size,
    _widened,
    _xp,
)
from ._docs import public as _public



class TopK(NamedTuple):
    """What :func:`gsearch.topk` returns (as torch.return_types.topk)."""

    values: Any
    indices: Any


class KthValue(NamedTuple):
    """What :func:`gsearch.kthvalue` returns (as torch.return_types.kthvalue)."""

    values: Any
    indices: Any


# The prose the functions share (filled in by _public).
_DOCS = {
    "data": (
        "a : array_like\n"
        "    The data, in any order: a numpy array (on the CPU, all cores for large arrays), a\n"
        "    torch tensor or cupy array on a CUDA device (on the GPU, in place), or anything\n"
        "    ``np.asarray`` takes. Dtypes: int8-64, uint8-64, float16-64, bool (and torch's\n"
        "    bfloat16)."
    ),
    "order": (
        "The order is np.sort's: -inf < finite < +inf < NaN, and -0.0 equals 0.0 (either may\n"
        "come first)."
    ),
    "returned_kind": (
        "numpy input gives numpy results; torch / cupy input results of its framework on its\n"
        "device."
    ),
}


# --- inputs -------------------------------------------------------------------------------------


def _data(fn: str, a: Any) -> _Arr:
    """a as an array (a scalar as a 0-d numpy array), of a dtype gsearch selects in."""
    A = _classify(a, "a")
    if isinstance(A, _Scalar):
        x = _np.asarray(A.value)
        A = _Arr(x, "numpy", None, x.dtype)
    if A.dtype.kind not in "biuf" or A.dtype.itemsize > 8:
        raise TypeError(f"gsearch.{fn}: a must be an array of real numbers, not of dtype {A.dtype}")
    _check_supported(A.dtype, "array")
    return A


# The key dtypes the library takes as they are, in this machine's byte order.
_NATIVE_KEY_DTYPES = frozenset(_np.dtype(t) for t in (_np.int32, _np.uint32, _np.int64, _np.uint64, _np.float32, _np.float64))


def _plain(a: Any) -> Optional[_np.ndarray]:
    """a itself when it is a 1-D C-contiguous numpy array of a native key dtype, else None: the
    small calls' fast path. The general path's classification, conversions and framework checks
    cost about 15 us a call (partition of 10^3 int32: 18 us in all, the library's call 2 us,
    numpy's 1.8); these arrays need none of them."""
    if type(a) is _np.ndarray and a.ndim == 1 and a.dtype in _NATIVE_KEY_DTYPES and a.flags.c_contiguous:
        return a
    return None


def _tensor(a: Any) -> Optional[tuple]:
    """(key type, device) when a is a C-contiguous torch tensor of a key dtype on a CUDA device (its
    ordinal) or the CPU (-1), else None: the torch fast paths, which pass the extension data
    pointers (_core.*_pointers) where the general path classifies the array, checks and converts
    it in Python and lets the extension import it through torch's __dlpack__ (on a CUDA tensor,
    Python code that makes and compares two stream objects). No tensor seen yet: None (the
    general path registers torch)."""
    if type(a) is not _arrays._TT:
        return None
    key_type = _arrays._TORCH_KEY_TYPE.get(a.dtype)
    if key_type is None or not a.is_contiguous():
        return None
    dev = a.get_device()  # a CUDA ordinal, -1 on the CPU: one call where .device makes an object
    if dev < 0 and not a.is_cpu:  # (other devices number themselves too)
        return None
    return key_type, dev


def _stream_of(dev: int) -> int:
    """The fast paths' stream: torch's current stream on CUDA device dev (0 on the CPU)."""
    return _arrays._raw_stream(dev) if dev >= 0 else 0


def _flat(A: _Arr) -> Any:
    """A's elements, flat, C-contiguous, in the dtype the library selects in."""
    return _convert(A, _widened(A.dtype)).reshape(-1)


def _own_dtype(x: Any, A: _Arr) -> Any:
    """Values selected from A (in its widened dtype) back in A's own dtype (exact)."""
    if _is_bfloat16(A):
        return x.to(A.x.dtype)
    return _cast(x, A.fw, A.dtype.newbyteorder("="))


def _host_ints(fn: str, what: str, x: Any) -> _np.ndarray:
    """x (an int, a sequence, an array of any framework) as a host int64 array of its shape,
    numpy's rules for partition indices: TypeError for non-integers, ValueError for bools."""
    if hasattr(x, "__dlpack__") and not isinstance(x, _np.ndarray) and hasattr(x, "tolist"):
        x = x.tolist()  # a torch / cupy array (on any device): a few numbers
    k = _np.asarray(x)
    if k.size == 0 and not isinstance(x, _np.ndarray):  # [] indexes nothing (numpy: np.sort(a)[[]])
        return _np.zeros(k.shape, dtype=_INT64)
    if k.dtype == object or (k.dtype.kind == "f" and not isinstance(x, _np.ndarray)):
        big = _big_ints(_np.asarray(x, dtype=object))  # Python ints beyond int64: numpy's IndexError
        if big is not None:
            raise IndexError(f"gsearch.{fn}: {what.rstrip('s')} {big} is out of bounds")
    if k.dtype.kind == "b":
        raise ValueError(f"gsearch.{fn}: booleans unacceptable as {what}")
    if k.dtype.kind not in "iu":
        raise TypeError(f"gsearch.{fn}: {what} must be integers, not {k.dtype}")
    if k.dtype.kind == "u" and k.size and int(k.max()) > 2**63 - 1:
        raise IndexError(f"gsearch.{fn}: {what.rstrip('s')} {int(k.max())} is out of bounds")
    return _np.array(k, dtype=_INT64, order="C")  # 0-d stays 0-d


def _big_ints(k: _np.ndarray) -> Optional[int]:
    """The first element beyond int64 of an array of Python ints (np.asarray makes them objects
    past uint64, float64 beside negative ints), or None (none, or not all ints)."""
    items = k.reshape(-1).tolist()
    if not items or not all(type(v) is int for v in items):
        return None
    return next((v for v in items if not -(2**63) <= v < 2**63), None)


def _int(fn: str, what: str, k: Any) -> int:
    if isinstance(k, (bool, _np.bool_)):
        raise TypeError(f"gsearch.{fn}: {what} must be an int, not bool")
    try:
        return _operator.index(k)
    except TypeError:
        raise TypeError(f"gsearch.{fn}: {what} must be an int, not {type(k).__name__}") from None


# numpy's AxisError (numpy.exceptions, numpy >= 1.25; gsearch needs numpy 2: pyproject.toml).
_AxisError = _np.exceptions.AxisError


def _axes(fn: str, axis: Any, ndim: int) -> Optional[tuple]:
    """numpy's normalize_axis_tuple: None, or the axes (an int or a sequence of ints, negative
    from the end) as sorted non-negative ints; AxisError out of range, ValueError repeated."""
    if axis is None:
        return None
    if isinstance(axis, str):
        raise TypeError(
            f"gsearch.{fn}: axis must be None, an int or a tuple of ints, not {axis!r} (the method "
            "is numpy's sixth argument: pass method=...)"
        )
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in items:
        ax = _int(fn, "axis", a)
        if not -ndim <= ax < ndim:
            raise _AxisError(ax, ndim)
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return tuple(sorted(out))


def _result(x: Any, A: _Arr, shape: tuple) -> Any:
    """x reshaped to `shape`; a 0-d numpy result as a numpy scalar (as numpy returns it)."""
    x = x.reshape(shape)
    if A.fw == "numpy" and shape == ():
        return x[()]
    return x


def _last_axis(fn: str, A: _Arr, axis: Any, name: str = "axis") -> tuple:
    """(A with `axis` moved last, the axis as a non-negative int); numpy's AxisError for an
    axis out of range."""
    ndim = len(_shape(A))
    ax = _int(fn, name, axis)
    if not -ndim <= ax < ndim:
        raise _AxisError(ax, ndim)
    ax %= ndim
    if ax != ndim - 1:
        A = A._replace(x=_xp(A.fw).moveaxis(A.x, ax, -1))
    return A, ax


def _axis_back(x: Any, fw: str, ax: int, ndim: int) -> Any:
    """x (the result with the selected axis last) with that axis moved back to `ax`."""
    if ax == ndim - 1:
        return x
    return _contiguous(fw, _xp(fw).moveaxis(x, -1, ax))


# --- select -------------------------------------------------------------------------------------


@_public(**_DOCS)
def select(a: ArrayLike, ranks: Any, *, stream: Any = None) -> Any:
    """The elements of given ranks of unsorted data: ``np.sort(a, axis=None)[ranks]``, without
    sorting.

    Parameters
    ----------
    {data}
        All of its elements are taken (any shape, as ``a.ravel()``).
    ranks : int or array_like of ints
        The ranks, from 0 (the smallest); negative ranks count from the end (-1: the largest).
        Any shape (an empty list: an empty result). Ranks share the passes over the data; on a
        GPU one or two ranks take the radix select (about two reads of the data), three or four
        the sampled levels, up to 2,048 the many-rank radix passes (two or three reads), more
        the sampled levels again (a sort where they are dense).
    {stream}, as in :func:`searchsorted`. On a CUDA array the
        select of one rank may return before the GPU has finished (its result is ordered on the
        stream, as torch's own results are); several ranks wait for their result.

    Returns
    -------
    values : scalar or array
        The shape of `ranks` (a scalar for an int), `a`'s dtype. {returned_kind}

    Raises
    ------
    IndexError
        A rank out of [-N, N) (as numpy's indexing), also any rank of empty data and a
        Python int beyond int64 (``2**70``).
    TypeError
        Ranks that are not integers; a dtype gsearch cannot select in.
    ValueError
        Boolean ranks.
    {gpu_errors}

    Notes
    -----
    {order}

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> a = np.array([7, 1, 9, 4, 4, 0])
    >>> gsearch.select(a, 2)
    np.int64(4)
    >>> gsearch.select(a, [0, -1, 3])
    array([0, 9, 4])
    >>> gsearch.select(np.array([np.nan, 2.0, -0.0, np.inf]), [0, 3])
    array([-0.,  nan])
    """
    x = _plain(a)
    if x is not None and type(ranks) is int and stream is None and -x.size <= ranks < x.size:
        value = _np.empty(1, x.dtype)
        _core.select(x, _np.array((ranks,), _INT64), value, 0)
        return value[0]
    t = _tensor(a)
    if t is not None and type(ranks) is int and stream is None and -a.numel() <= ranks < a.numel():
        value = _arrays._torch_empty((), dtype=a.dtype, device=a.device)
        _core.select_pointers(a.data_ptr(), a.numel(), ranks, value.data_ptr(), t[0], t[1], _stream_of(t[1]))
        return value
    A = _data("select", a)
    r = _host_ints("select", "ranks", ranks)
    n = _size(A.x)
    bad = r[(r < -n) | (r >= n)]
    if bad.size:
        raise IndexError(f"gsearch.select: rank {int(bad[0])} is out of bounds for {n} elements")
    kd = _widened(A.dtype)
    with _StreamScope(A.fw, A.dev, stream) as scope:
        values = _new_empty(A.fw, A.dev, (r.size,), kd)
        if r.size:
            _core.select(_flat(A), r.reshape(-1), values, scope.handle)
        return _result(_own_dtype(values, A), A, r.shape)


# --- partition ----------------------------------------------------------------------------------


def _kth(kth: Any, n: int) -> _np.ndarray:
    """numpy's kth: integers (TypeError otherwise, ValueError for bools), a scalar or 1-D, each
    in [-n, n) (ValueError "kth(=k) out of bounds (n)", k counted from the start)."""
    if isinstance(kth, (bool, _np.bool_)):
        raise ValueError("Booleans unacceptable as partition index")
    k = _np.asarray(kth.tolist() if hasattr(kth, "__dlpack__") and not isinstance(kth, _np.ndarray) else kth)
    if k.dtype.kind == "b":
        raise ValueError("Booleans unacceptable as partition index")
    if (k.dtype == object or k.dtype.kind == "f" and not isinstance(kth, _np.ndarray)) and k.ndim <= 1:
        big = _big_ints(_np.asarray(kth, dtype=object))  # Python ints beyond int64 ([1, 2**63] is float64)
        if big is not None:
            raise ValueError(f"kth(={big}) out of bounds ({n})")
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if k.ndim > 1:
        raise ValueError("object too deep for desired array")
    if k.dtype.kind == "u" and k.size and int(k.max()) >= n:  # the value given, not a wrapped one
        raise ValueError(f"kth(={int(k.max())}) out of bounds ({n})")
    k = k.reshape(-1).astype(_INT64)
    for v in k.tolist():
        if not -n <= v < n:
            raise ValueError(f"kth(={v + n if v < 0 else v}) out of bounds ({n})")
    return k


def _kind_order(kind: Any, order: Any) -> None:
    """numpy's kind and order of partition / argpartition: 'introselect' (numpy's only
    selection), and no order (gsearch's dtypes have no fields), with numpy's errors."""
    if not isinstance(kind, str):
        raise TypeError(f"select kind must be str, not {type(kind).__name__}")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")


def _partition(fn: str, a: Any, kth: Any, axis: Any, kind: Any, order: Any, indices: bool, stream: Any) -> Any:
    if kind != "introselect" or order is not None:
        _kind_order(kind, order)
    x = _plain(a)
    if (x is not None and type(kth) is int and (axis is None or type(axis) is int and -1 <= axis <= 0)
            and stream is None and -x.size <= kth < x.size):
        out = _np.empty(x.size, _INT64 if indices else x.dtype)
        _core.partition_one(x, kth, out, indices)  # (kth as an int: no array to make)
        return out
    t = _tensor(a)
    if (t is not None and type(kth) is int and a.dim() == 1 and (axis is None or type(axis) is int and -1 <= axis <= 0)
            and stream is None and -a.numel() <= kth < a.numel()):
        out = _arrays._empty_like(a, dtype=_arrays._INT64_T) if indices else _arrays._empty_like(a)
        _core.partition_pointers(a.data_ptr(), a.numel(), kth, out.data_ptr(), indices, t[0], t[1], _stream_of(t[1]))
        return out
    A = _data(fn, a)
    if axis is None:
        A = A._replace(x=A.x.reshape(-1))
        axis = -1
    shape = _shape(A)
    if not shape:
        raise _AxisError(_int(fn, "axis", axis), 0)
    A, ax = _last_axis(fn, A, axis)
    moved = _shape(A)
    n = moved[-1]
    out_dtype = _INT64 if indices else _widened(A.dtype)
    if n == 0:  # numpy checks no kth here
        out = _new_empty(A.fw, A.dev, moved, out_dtype)
        return _axis_back(out if indices else _own_dtype(out, A), A.fw, ax, len(shape))
    k = _kth(kth, n)
    call = _core.argpartition if indices else _core.partition
    with _StreamScope(A.fw, A.dev, stream) as scope:
        data = _convert(A, _widened(A.dtype)).reshape(-1)
        rows = data.shape[0] // n
        out = _new_empty(A.fw, A.dev, (data.shape[0],), out_dtype)
        if rows:
            call(data, k, out, scope.handle, rows=rows)  # every row (1-D slice along axis) in one call
        out = out.reshape(moved)
        if not indices:
            out = _own_dtype(out, A)
        return _axis_back(out, A.fw, ax, len(shape))


_PARTITION_PARAMS = (  # partition's and argpartition's parameters after the data
    "kth : int or sequence of ints\n"
    "    The positions (from 0; negative from the end), in any order, repeats allowed.\n"
    "axis : int or None, optional\n"
    "    The axis to partition along (default the last); None flattens first.\n"
    "kind : str, optional\n"
    "    numpy's: 'introselect' (the only one numpy has; gsearch's own selection runs\n"
    "    whatever its name). Another string: ValueError, not a string: TypeError, as numpy.\n"
    "order : None, optional\n"
    "    numpy's field order of structured arrays; gsearch's dtypes have no fields: anything\n"
    "    but None raises numpy's ValueError (\"Cannot specify order when the array has no\n"
    "    fields.\")."
)
_PARTITION_NOTES = (
    "Rows: a 2-D (or N-D) array is partitioned along `axis` in one call: short rows shared out\n"
    "among the CPU's threads or sorted a block each on a GPU, long rows one after another."
)


@_public(**_DOCS, rows=_PARTITION_NOTES, partition_params=_PARTITION_PARAMS)
def partition(
    a: ArrayLike, kth: Any, axis: Optional[int] = -1, kind: str = "introselect", order: Any = None, *, stream: Any = None
) -> Any:
    """A partitioned copy of an array: numpy.partition.

    The element at each position k of `kth` is the one that would be there in the sorted array;
    every element before it is less than or equal to it and every element after it greater than
    or equal to it (in between, in no defined order).

    Parameters
    ----------
    {data}
    {partition_params}
    {stream}, as in :func:`searchsorted`. On a CUDA array a
        partition of one row at one or two kth (of 2^16 elements or more) may return before the
        GPU has finished (its result is ordered on the stream, as torch's own results are); the
        other calls wait for the result.

    Returns
    -------
    partitioned : array
        `a`'s shape and dtype. {returned_kind}

    Raises
    ------
    ValueError
        A kth out of bounds ("kth(=10) out of bounds (5)", as numpy; the value given, also
        beyond int64, where numpy reports it wrapped around or raises TypeError), boolean
        kth, kth of more than one dimension; a `kind` other than 'introselect', an `order`.
    TypeError
        kth that are not integers; a dtype gsearch cannot select in; a `kind` that is not a
        string.
    numpy.exceptions.AxisError
        An axis out of range (also any axis of 0-d data).
    {gpu_errors}

    Notes
    -----
    {order} The elements of a partition between the kth positions may be in another order
    than numpy's: compare sorted slices, or the kth positions.

    {rows}

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> a = np.array([7, 1, 7, 7, 1, 5, 7, 2, 3, 2, 6, 2, 3, 0])
    >>> p = gsearch.partition(a, 4)
    >>> p[4]
    np.int64(2)
    >>> bool((p[:4] <= 2).all() and (p[5:] >= 2).all())
    True
    >>> gsearch.partition(np.array([3, 1, 2]), [0, 1, 2])
    array([1, 2, 3])
    """
    return _partition("partition", a, kth, axis, kind, order, False, stream)


@_public(**_DOCS, rows=_PARTITION_NOTES, partition_params=_PARTITION_PARAMS)
def argpartition(
    a: ArrayLike, kth: Any, axis: Optional[int] = -1, kind: str = "introselect", order: Any = None, *, stream: Any = None
) -> Any:
    """The indices that partition an array: numpy.argpartition.

    ``np.take_along_axis(a, argpartition(a, kth), axis)`` is partitioned as :func:`partition`
    describes.

    Parameters
    ----------
    {data}
    {partition_params}
    {stream}, as in :func:`searchsorted`. On a CUDA array an
        argpartition of one row at one or two kth (of 2^16 elements or more) may return before the
        GPU has finished (its result is ordered on the stream, as torch's own results are); the
        other calls wait for the result.

    Returns
    -------
    indices : array of int64
        `a`'s shape: indices along `axis`. {returned_kind}

    Raises
    ------
    ValueError, TypeError, numpy.exceptions.AxisError
        As in :func:`partition`.
    {gpu_errors}

    Notes
    -----
    {order}

    {rows}

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> x = np.array([3, 4, 2, 1])
    >>> i = gsearch.argpartition(x, 3)
    >>> int(i[3])
    1
    >>> x[gsearch.argpartition(x, [1, 2])][1:3]
    array([2, 3])
    """
    return _partition("argpartition", a, kth, axis, kind, order, True, stream)


# --- topk and kthvalue --------------------------------------------------------------------------


def _rows(fn: str, a: Any, dim: Any) -> tuple:
    """(A with `dim` last, rows, cols, dim as a non-negative int, the original ndim)."""
    A = _data(fn, a)
    ndim = len(_shape(A))
    if ndim == 0:
        raise ValueError(f"gsearch.{fn}: a must have at least one dimension (got a scalar)")
    A, d = _last_axis(fn, A, dim, "dim")
    cols = _shape(A)[-1]
    rows = _size(A.x) // cols if cols else 0
    return A, rows, cols, d, ndim


@_public(**_DOCS)
def topk(
    a: ArrayLike, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *, stream: Any = None
) -> TopK:
    """The `k` largest (or smallest) elements along a dimension, and their indices: torch.topk.

    Parameters
    ----------
    {data}
        Each 1-D slice along `dim` (a row of a 2-D array) is taken on its own.
    k : int
        How many, 0 <= k <= the length of `dim`.
    dim : int, optional
        The dimension (default the last).
    largest : bool, optional
        The k largest (default), else the k smallest.
    sorted : bool, optional
        Sorted by value (default: largest first, or smallest first with largest=False; ties in
        any order), else in any order.
    {stream}, as in :func:`searchsorted`. On a CUDA array the
        call may return before the GPU has finished (its result is ordered on the stream, as
        torch's own results are).

    Returns
    -------
    (values, indices) : TopK
        A named tuple of two arrays of `a`'s shape with `dim` of length k: the values (`a`'s
        dtype) and their int64 indices along `dim`. {returned_kind}

    Raises
    ------
    ValueError
        k out of [0, the length of `dim`] (torch raises RuntimeError), 0-d data.
    TypeError
        A k that is not an int; a dtype gsearch cannot select in.
    numpy.exceptions.AxisError
        A dim out of range.
    {gpu_errors}

    Notes
    -----
    {order} NaN is larger than every number, as in torch. With ties, the values equal
    torch's and the indices point at elements of those values (maybe others than torch's).

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> x = np.array([1.0, 5.0, 3.0, np.nan, 4.0])
    >>> gsearch.topk(x, 2)
    TopK(values=array([nan,  5.]), indices=array([3, 1]))
    >>> gsearch.topk(np.array([[3, 1, 2], [0, 9, 8]]), 2, largest=False).values
    array([[1, 2],
           [0, 8]])
    """
    t = _tensor(a)
    if t is not None and type(k) is int and type(dim) is int and stream is None and dim in (-1, a.dim() - 1) and a.dim():
        cols = a.shape[-1]
        if 0 <= k <= cols:
            shape = a.shape[:-1] + (k,)
            values = _arrays._torch_empty(shape, dtype=a.dtype, device=a.device)
            indices = _arrays._torch_empty(shape, dtype=_arrays._INT64_T, device=a.device)
            rows = a.numel() // cols if cols else 0
            if rows and k:
                _core.topk_pointers(a.data_ptr(), rows, cols, k, bool(largest), bool(sorted), values.data_ptr(),
                                    indices.data_ptr(), t[0], t[1], _stream_of(t[1]))
            return TopK(values, indices)
    A, rows, cols, d, ndim = _rows("topk", a, dim)
    k = _int("topk", "k", k)
    if not 0 <= k <= cols:
        raise ValueError(f"gsearch.topk: k={k} is out of range for a dimension of {cols} elements (0 <= k <= {cols})")
    shape = _shape(A)[:-1] + (k,)
    kd = _widened(A.dtype)
    with _StreamScope(A.fw, A.dev, stream) as scope:
        values = _new_empty(A.fw, A.dev, shape, kd)
        indices = _new_empty(A.fw, A.dev, shape, _INT64)
        if rows and k:
            _core.topk(_flat(A), rows, k, bool(largest), bool(sorted), values, indices, scope.handle)
        values = _axis_back(_own_dtype(values, A), A.fw, d, ndim)
        return TopK(values, _axis_back(indices, A.fw, d, ndim))


@_public(**_DOCS)
def kthvalue(a: ArrayLike, k: int, dim: int = -1, *, stream: Any = None) -> KthValue:
    """The k-th smallest element along a dimension, and its index: torch.kthvalue.

    Parameters
    ----------
    {data}
        Each 1-D slice along `dim` (a row of a 2-D array) is taken on its own.
    k : int
        Counted from 1 (the smallest), as in torch: 1 <= k <= the length of `dim`.
    dim : int, optional
        The dimension (default the last).
    {stream}, as in :func:`searchsorted`. The call waits for
        the result.

    Returns
    -------
    (values, indices) : KthValue
        A named tuple: the k-th smallest values (`a`'s dtype) and the int64 index along `dim`
        of an element equal to each, of `a`'s shape without `dim` (scalars for 1-D numpy
        input). {returned_kind}

    Raises
    ------
    ValueError
        k out of [1, the length of `dim`] (torch raises RuntimeError), 0-d data.
    TypeError
        A k that is not an int; a dtype gsearch cannot select in.
    numpy.exceptions.AxisError
        A dim out of range.
    {gpu_errors}

    Notes
    -----
    {order} NaN is larger than every number, as in torch.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.kthvalue(np.array([5, 1, 4, 2]), 2)
    KthValue(values=np.int64(2), indices=np.int64(3))
    >>> gsearch.kthvalue(np.array([[3.0, 1.0, 2.0], [0.0, 9.0, 8.0]]), 3).values
    array([3., 9.])
    """
    A, rows, cols, d, ndim = _rows("kthvalue", a, dim)
    k = _int("kthvalue", "k", k)
    if not 1 <= k <= cols:
        raise ValueError(f"gsearch.kthvalue: k={k} is out of range for a dimension of {cols} elements (1 <= k <= {cols})")
    shape = _shape(A)[:-1]
    kd = _widened(A.dtype)
    with _StreamScope(A.fw, A.dev, stream) as scope:
        values = _new_empty(A.fw, A.dev, (rows,), kd)
        indices = _new_empty(A.fw, A.dev, (rows,), _INT64)
        if rows:
            _core.kthvalue(_flat(A), rows, k - 1, values, indices, scope.handle)
        return KthValue(_result(_own_dtype(values, A), A, shape), _result(indices, A, shape))


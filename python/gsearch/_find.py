"""Search of unsorted data: find (the first, any or a random match, the count, every match),
count, and numpy's isin. Values are compared exactly: a value the data's dtype does not hold is
refused (find, count) or equals nothing (isin)."""

from __future__ import annotations

import operator as _operator
from typing import Any, Literal, Optional

import numpy as _np

from . import _core
from ._arrays import (
    _BOOL,
    _ELEMENT_NAMES,
    _INT64,
    _NATIVE,
    _PY_EXACT,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _adopt,
    _check_supported,
    _choice,
    _classify,
    _convert,
    _empty,
    _exact_value,
    _find_data,
    _full0d,
    _is_bfloat16,
    _ndarray,
    _new_empty,
    _number,
    _representable,
    _resolve,
    _shape,
    _where,
    _widened,
)
from ._common import _FIND_MODES, _FIND_OPS, _IN_OP, _ISIN_METHODS
from ._docs import public as _public

FindMode = Literal["first", "any", "random", "count", "all"]
FindOp = Literal["==", "!=", "<", "<=", ">", ">=", "in", "eq", "ne", "lt", "le", "gt", "ge"]
FindStrategy = Literal["auto", "strided", "coalesced", "unrolled", "one-per-thread"]
IsinMethod = Literal["auto", "sorted", "hash"]

_FIND_STRATEGIES: dict[str, int] = dict(_core.FIND_STRATEGIES)
_FIND_MODE_CODES: dict[str, int] = {**_FIND_MODES, "all": -1}  # 'all' is _core.find_all
_f32 = _np.float32
_F32_MAX = float(_np.finfo(_np.float32).max)
# find's fast path, per native dtype: the Python ints it takes (those in [lo, hi], held
# exactly), whether it takes every Python float (float64), or those float32 holds (checked).
_FIND_FAST = {d: (*_PY_EXACT[d], d == _np.dtype(_np.float32)) for d in _NATIVE}


def _alloc_numpy(count: int) -> _np.ndarray:
    return _empty(count, _INT64)



def _seed(seed: Any) -> int:
    if isinstance(seed, (bool, _np.bool_)):
        raise TypeError("gsearch.find: seed must be an int, not bool")
    try:
        s = _operator.index(seed)
    except TypeError:
        raise TypeError(f"gsearch.find: seed must be an int, not {type(seed).__name__}") from None
    if not 0 <= s < 2**64:
        raise ValueError(f"gsearch.find: seed must be in [0, 2**64), not {s}")
    return s



@_public
def find(
    a: ArrayLike,
    value: Any,
    mode: FindMode = "first",
    op: FindOp = "==",
    *,
    hi: Any = None,
    seed: int = 0,
    strategy: FindStrategy = "auto",
    per_thread: int = 0,
    stream: Any = None,
) -> Any:
    """Search an unsorted 1-D array for the elements that compare with `value` as `op` says.

    With ``m = (a op value)`` elementwise (numpy's comparison), `mode` selects the answer:

    ==========  ==================================================  ===========================
    `mode`      returns                                             numpy equivalent
    ==========  ==================================================  ===========================
    'first'     the lowest matching index, or -1                    ``np.argmax(m)`` if any
    'any'       some matching index (the fastest to find), or -1
    'random'    a uniformly random matching index drawn from
                `seed` (reproducible, the same on CPU and GPU),
                or -1
    'count'     the number of matches                               ``np.count_nonzero(m)``
    'all'       every matching index, ascending (int64 array)       ``np.flatnonzero(m)``
    ==========  ==================================================  ===========================

    Parameters
    ----------
    a : array_like, shape (N,)
        The data, 1-D, in any order: a numpy array (searched on the CPU, all cores for large
        arrays), a torch tensor or cupy array on a CUDA device (searched on the GPU, in place),
        or anything ``np.asarray`` takes. Dtypes: int8-64, uint8-64, float16-64, bool (and
        torch's bfloat16).
    value : scalar
        The value to compare with: a Python int / float / bool, a numpy scalar or a 0-d array
        (of any framework). It must be exactly a value of `a`'s dtype (see Notes); ValueError
        otherwise.
    mode : {'first', 'any', 'random', 'count', 'all'}, optional
        What to return (table above). Default 'first'.
    op : {'==', '!=', '<', '<=', '>', '>=', 'in'}, optional
        The comparison ``x op value`` of each element x; 'in' is ``value <= x < hi``. The names
        'eq', 'ne', 'lt', 'le', 'gt', 'ge' are accepted too. Default '=='.
    hi : scalar, optional
        The exclusive upper end of op='in' (required there, refused with any other op), under
        the same rule as `value`.
    seed : int, optional
        The seed of mode='random', in [0, 2**64).
    strategy : {'auto', 'strided', 'coalesced', 'unrolled', 'one-per-thread'}, optional
        How the GPU reads the data: 'auto' (the tuned scan, with early exit) or one of the
        study kernels of the unsorted-search study (k = `per_thread` elements per thread, no
        early exit), for modes 'first', 'any' and 'count' only (ValueError otherwise). All give
        the same result; on the CPU they run as a simulated grid.
    per_thread : int, optional
        Elements per thread of 'strided', 'coalesced' and 'unrolled'; 0 (the default) = 12.
    {stream}, as in :func:`searchsorted`. find waits for its
        answer: the int it returns, or for 'all' the count that sizes the result (which is
        then allocated on that stream and filled in order on it).

    Returns
    -------
    int or array
        A Python int for 'first', 'any', 'random' (an index, -1 when nothing matches) and
        'count'. For 'all', a 1-D int64 array of the matching indices in ascending order: a
        numpy array for numpy (and other CPU) input, a tensor / array of the input's framework
        on its device for torch and cupy input.

    Raises
    ------
    ValueError
        `a` not 1-D (use ``a.ravel()``) or a scalar; `value` / `hi` not representable in `a`'s
        dtype; an array as `value`; op='in' without `hi`, or `hi` with another op; a bad
        `mode`, `op`, `strategy`; a study strategy with mode 'random' or 'all'; a negative
        `per_thread`; a `seed` out of range.
    TypeError
        A dtype gsearch cannot search (complex, object, strings, ...); a `value` that is not a
        real number.
    {gpu_errors}

    Notes
    -----
    Semantics are numpy's elementwise comparisons: NaN compares false with everything, so a
    NaN element matches only '!=' (and a NaN `value` matches nothing but '!=', which matches
    every element), and -0.0 == 0.0.

    The value rule: `value` (and `hi`) must be exactly representable in `a`'s dtype, else
    ValueError naming the value and the dtype. So 3e9 or -1 is refused for int32 / uint32 data,
    1.5, NaN and inf for integer data, 1e39 for float32 data, and also 0.1 for float32 data:
    0.1 is not a float32. numpy itself answers ``a == 0.1`` by rounding 0.1 to float32 first
    (NEP 50: a Python float is "weak") but ``a == np.float64(0.1)`` in float64, where no float32
    equals it; rather than choose one of those silently, gsearch asks for the value meant:
    ``np.float32(0.1)`` (the rounded one) is accepted. A float that is an integer (2.0) is
    accepted for integer data, and an integer that the float dtype holds (2**24 for float32)
    for float data. Any value that passes compares exactly as numpy compares it.

    Copies: a contiguous `a` of a native dtype (int32, uint32, int64, uint64, float32,
    float64) is searched in place; other inputs are converted once with their own framework
    (bool, 8- and 16-bit integers and float16 widen exactly to 32 bits).

    Early exit: 'first' and 'any' stop once the answer is certain ('any' at the first hit
    anywhere). 'random' and 'all' read the data once, and again only the 4,096-element blocks
    that hold matches ('all' allocates its result, of the size it counted, in between).

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> a = np.array([4, 7, 1, 7, 9, 7])
    >>> gsearch.find(a, 7)
    1
    >>> gsearch.find(a, 2)
    -1
    >>> gsearch.find(a, 7, mode='count')
    3
    >>> gsearch.find(a, 7, mode='all')
    array([1, 3, 5])
    >>> gsearch.find(a, 5, op='>', mode='all')
    array([1, 3, 4, 5])
    >>> gsearch.find(a, 4, op='in', hi=8, mode='all')
    array([0, 1, 3, 5])
    >>> gsearch.find(a, 7, mode='random', seed=3) in (1, 3, 5)
    True
    >>> gsearch.find(np.array([0.5, np.nan, -0.0]), 0.0)
    2
    >>> gsearch.find(np.array([1, 2], dtype=np.int32), 1.5)
    Traceback (most recent call last):
    ...
    ValueError: gsearch.find: value 1.5 is not representable in int32 (the array's dtype): it is not an integer
    """
    # Fast path: a contiguous 1-D numpy array of a native dtype, a Python int / float that the
    # dtype holds exactly, default options.
    if (
        type(a) is _ndarray
        and hi is None
        and stream is None
        and strategy == "auto"
        and per_thread == 0
        and type(seed) is int
        and type(mode) is str
        and type(op) is str
    ):
        lim = _FIND_FAST.get(a.dtype)
        tv = type(value)
        if lim is not None and a.ndim == 1 and a.flags.c_contiguous and 0 <= seed < 2**64:
            if tv is int:
                ok = lim[0] <= value <= lim[1]
            else:
                ok = tv is float and (
                    lim[2] or (lim[3] and -_F32_MAX <= value <= _F32_MAX and float(_f32(value)) == value)
                )
            code = _FIND_MODE_CODES.get(mode)
            opc = _FIND_OPS.get(op)
            if ok and code is not None and opc is not None and opc != _IN_OP:
                if code < 0:
                    return _core.find_all(a, opc, value, _alloc_numpy, None, 0)
                return _core.find(a, code, opc, value, None, 0, 0, seed, 0)
    mode_code = _choice("find", "mode", mode, _FIND_MODE_CODES)
    op_code = _choice("find", "op", op, _FIND_OPS)
    strategy_code = _choice("find", "strategy", strategy, _FIND_STRATEGIES)
    if mode_code < 0 and strategy_code != 0:
        raise ValueError(
            f"gsearch.find: strategy {strategy!r} is a study of modes 'first', 'any' and 'count', not 'all'"
        )
    try:
        k = _operator.index(per_thread)
    except TypeError:
        raise TypeError(f"gsearch.find: per_thread must be an int, not {type(per_thread).__name__}") from None
    if k < 0:
        raise ValueError(f"gsearch.find: per_thread must be >= 0 (0 = the default, 12), not {k}")
    s = _seed(seed)
    A, kd = _find_data("find", a)
    v = _exact_value("find", "value", value, A)
    h = None
    if op_code == _IN_OP:
        if hi is None:
            raise ValueError("gsearch.find: op='in' needs hi (it matches value <= x < hi)")
        h = _exact_value("find", "hi", hi, A)
    elif hi is not None:
        raise ValueError(f"gsearch.find: hi applies to op='in' only, not to op={op!r}")
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        data = _convert(A, kd)
        if mode_code < 0:
            return _core.find_all(
                data, op_code, v, lambda c: _new_empty(fw, dev, (c,), _INT64), h, scope.handle
            )
        return _core.find(data, mode_code, op_code, v, h, strategy_code, k, s, scope.handle)


@_public
def count(a: ArrayLike, value: Any, op: FindOp = "==", *, hi: Any = None, stream: Any = None) -> int:
    """The number of elements of a 1-D array that compare with `value` as `op` says.

    ``count(a, v, op) == find(a, v, mode='count', op=op) == np.count_nonzero(a op v)``.

    Parameters
    ----------
    a : array_like, shape (N,)
        The data (numpy on the CPU; torch / cupy CUDA arrays on the GPU, in place).
    value : scalar
        Exactly a value of `a`'s dtype (the rule of :func:`find`).
    op : {'==', '!=', '<', '<=', '>', '>=', 'in'}, optional
        As in :func:`find` ('in': ``value <= x < hi``). Default '=='.
    hi : scalar, optional
        The exclusive upper end of op='in'.
    {stream_param}
        As in :func:`find`.

    Returns
    -------
    int
        The number of matches (a Python int).

    Raises
    ------
    ValueError, TypeError, MemoryError, RuntimeError
        As in :func:`find`.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> a = np.array([1.0, np.nan, 3.0, -0.0, 0.0])
    >>> gsearch.count(a, 0.0)
    2
    >>> gsearch.count(a, 0.0, op='!=')
    3
    >>> gsearch.count(a, 0.0, op='>=')
    4
    """
    return find(a, value, "count", op, hi=hi, stream=stream)


def _as_numpy_scalar(x: _Scalar) -> _Arr:
    """A scalar as the 0-d numpy array np.isin makes of it."""
    arr = _np.asarray(x.value)
    return _Arr(arr, "numpy", None, arr.dtype)


@_public
def isin(
    element: ArrayLike,
    test_elements: ArrayLike,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: Optional[str] = None,
    method: IsinMethod = "auto",
    stream: Any = None,
) -> Any:
    """Calculates ``element in test_elements``, broadcasting over `element` only.

    numpy.isin (and torch.isin): a boolean array of the same shape as `element` that is True
    where an element of `element` is in `test_elements` and False otherwise (the opposite with
    `invert`).

    Parameters
    ----------
    element : array_like
        Input array, any shape (a scalar gives a 0-d result).
    test_elements : array_like
        The values against which to test each value of `element`: any shape (flattened), a
        scalar, a sequence.
    assume_unique : bool, optional
        numpy's hint that both inputs hold unique elements: accepted for compatibility; it
        does not change the result (and gsearch does not need it to be fast).
    invert : bool, optional
        If True, the values in the returned array are inverted: ``element not in
        test_elements`` (faster than ``~isin(...)``).
    kind : {None, 'sort', 'table'}, optional
        numpy's choice of algorithm: accepted for compatibility; it does not change the result
        or the algorithm (see `method`). Any other value is a ValueError, as in numpy.
    method : {'auto', 'sorted', 'hash'}, optional
        gsearch's algorithm: 'sorted' (the test elements sorted once, then a binary search
        per element: PBS-CL in shared memory on the GPU when they fit), 'hash' (a hash set of
        the test elements, one expected probe per element), 'auto' (sorted where the sorted
        test elements fit in shared memory, else hash on the GPU; sorted on the CPU). All give
        the same result.
    {stream}, as in :func:`searchsorted`. The call returns
        once the work is enqueued.

    Returns
    -------
    isin : ndarray, bool
        Has the same shape as `element` (0-d for a scalar `element`, as numpy gives). A numpy
        array for numpy input; a torch.bool tensor / cupy bool array on the inputs' device for
        torch / cupy input (of `element`'s framework; of `test_elements`' for a scalar
        `element`).

    Raises
    ------
    ValueError
        The inputs on different devices; a bad `kind` or `method`.
    TypeError
        A dtype gsearch cannot search, or an `element` / `test_elements` dtype pair whose
        promotion would round (int64 or uint64 with a float, uint64 with a signed integer):
        convert one explicitly.
    {gpu_errors}

    Notes
    -----
    Membership is numpy's equality: NaN is never a member (not even of a set holding NaN) and
    -0.0 and 0.0 are the same element.

    Dtypes: arrays (and numpy scalars) of two dtypes are compared in numpy's promotion of the
    pair when it holds every value of both exactly (bool, 8- and 16-bit integers and float16
    widen exactly to 32 bits), and refused with TypeError where it would round (where np.isin
    would compare rounded values). Lists are taken as ``np.asarray`` takes them (an empty one
    takes the other argument's dtype). A Python int
    or float (either argument) compares exactly as Python compares numbers: a value that the
    other argument's dtype does not hold equals none of its elements (``isin(int32_array,
    3.5)`` is all False, ``isin(uint64_array, 3)`` works). This is numpy's answer wherever
    numpy's own conversion is exact.

    Copies: contiguous inputs of the compared dtype are used in place (numpy, torch and cupy
    alike); others are converted once with their own framework.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> element = 2 * np.arange(4).reshape((2, 2))
    >>> element
    array([[0, 2],
           [4, 6]])
    >>> test_elements = [1, 2, 4, 8]
    >>> mask = gsearch.isin(element, test_elements)
    >>> mask
    array([[False,  True],
           [ True, False]])
    >>> element[mask]
    array([2, 4])
    >>> gsearch.isin(element, test_elements, invert=True)
    array([[ True, False],
           [False,  True]])
    >>> gsearch.isin(np.array([np.nan, -0.0, 1.0]), [np.nan, 0.0])
    array([False,  True, False])
    >>> gsearch.isin(3, [1, 2, 3])
    array(True)
    """
    # Fast path: numpy arrays of one native dtype, C-contiguous, default options.
    if (
        type(element) is _ndarray
        and type(test_elements) is _ndarray
        and kind is None
        and method == "auto"
        and stream is None
        and type(invert) is bool
    ):
        dt = element.dtype
        if (
            dt is test_elements.dtype
            and dt in _NATIVE
            and element.flags.c_contiguous
            and test_elements.flags.c_contiguous
        ):
            out = _empty(element.shape, _BOOL)
            _core.isin(element, test_elements, out, invert, 0, 0)
            return out
    if kind is not None and kind not in ("sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    method_code = _choice("isin", "method", method, _ISIN_METHODS)
    invert = bool(invert)
    E = _classify(element, "element")
    T = _classify(test_elements, "test_elements")
    E = _adopt(E, T)
    T = _adopt(T, E)
    if isinstance(E, _Scalar) and isinstance(T, _Scalar):
        E, T = _as_numpy_scalar(E), _as_numpy_scalar(T)  # as np.isin takes them: numpy, 0-d
    if isinstance(E, _Arr) and isinstance(T, _Arr) and E.dev != T.dev:
        raise ValueError(
            f"gsearch: element on {_where(E.dev)} but test_elements on {_where(T.dev)}: "
            "move them to one device"
        )
    base = E if isinstance(E, _Arr) else T
    fw, dev = base.fw, base.dev
    shape = _shape(E) if isinstance(E, _Arr) else ()

    with _StreamScope(fw, dev, stream) as scope:
        # A Python int / float against an array: exactly a value of the array's dtype, or none.
        if isinstance(E, _Scalar) and E.dtype is None:
            _check_supported(T.dtype, "test_elements")
            x, why = _representable(_number("isin", "element", E.value), T.dtype, _is_bfloat16(T))
            if why is not None:
                return _full0d(fw, dev, invert, _BOOL)
            d = _widened(T.dtype)
            elements = _full0d(fw, dev, x, d)
            tests = _convert(T, d)
        elif isinstance(T, _Scalar) and T.dtype is None:
            _check_supported(E.dtype, "element")
            x, why = _representable(_number("isin", "test_elements", T.value), E.dtype, _is_bfloat16(E))
            d = _widened(E.dtype)
            elements = _convert(E, d)
            tests = _new_empty(fw, dev, (0,), d) if why is not None else _full0d(fw, dev, x, d)
        else:
            d = _resolve(E.dtype, T.dtype, _ELEMENT_NAMES)
            elements = (
                _convert(E, d) if isinstance(E, _Arr) else _full0d(fw, dev, _number("isin", "element", E.value), d)
            )
            tests = (
                _convert(T, d)
                if isinstance(T, _Arr)
                else _full0d(fw, dev, _number("isin", "test_elements", T.value), d)
            )
        out = _new_empty(fw, dev, shape, _BOOL)
        _core.isin(elements, tests, out, invert, method_code, scope.handle)
    return out


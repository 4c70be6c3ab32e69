"""numpy's median, quantile and percentile (and their nan* forms), numpy 2's axis, keepdims and
out included, on the selection of _selection.py: every quantile of a slice from one pass over
it, every slice along the axes in one library call (gsearch::quantile's rows)."""

from __future__ import annotations

from functools import lru_cache as _lru_cache
from typing import Any, Literal, NamedTuple, Optional

import numpy as _np

from . import _arrays, _core
from ._arrays import (
    _Arr,
    ArrayLike,
    _cast,
    _choice,
    _classify,
    _FLOAT64,
    _INT64,
    _new_empty,
    _Scalar,
    _shape,
    _size,
    _StreamScope,
    _torch,
    _torch_dtype,
    _torch_dtype_to_numpy,
    _widened,
    _xp,
)
from ._docs import public as _public
from ._selection import _DOCS, _axes, _data, _flat, _result, _stream_of, _tensor

QuantileMethod = Literal[
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]

_QUANTILE_METHODS: dict[str, int] = dict(_core.QUANTILE_METHODS)


@_lru_cache(maxsize=512, typed=True)  # typed: q = 0 and q = 0.0 give numpy different dtypes
def _numpy_result_dtype(kind: str, data: _np.dtype, q: Any, method: str) -> _np.dtype:
    """The dtype numpy's quantile (kind 'quantile') or median ('median') gives data of dtype
    `data` for q (a Python int / float for a scalar q, else the dtype of the q array): numpy
    asked on one element, so that its rule (weak Python scalars, integer q, discontinuous
    methods, float16) is followed exactly. numpy's own TypeError for what it refuses (boolean
    data with an interpolating method)."""
    one = _np.zeros(1, dtype=data)
    if kind == "median":
        return _np.asarray(_np.median(one)).dtype
    qq = q if isinstance(q, (int, float)) else _np.zeros(1, dtype=q)
    return _np.asarray(_np.quantile(one, qq, method=method)).dtype


def _element_ranks(method: str, n: int, q: _np.ndarray) -> Optional[_np.ndarray]:
    """The rank numpy takes for each q (an array of q's own dtype, so that numpy's arithmetic is
    numpy's: float32 q rounds (n - 1) * q to float32) when its result is an element (the
    discontinuous methods; any method at an integer q, whose lerp numpy then runs in the
    integer dtype between two equal elements), or None for the other methods."""
    q = q.reshape(-1)
    if q.dtype.kind in "biu":  # q is 0 or 1: the first or the last element, whatever the method
        return q.astype(_INT64) * (n - 1)
    if method == "lower":
        return _np.floor((n - 1) * q).astype(_INT64)
    if method == "higher":
        return _np.ceil((n - 1) * q).astype(_INT64)
    if method == "nearest":
        return _np.around((n - 1) * q).astype(_INT64)
    if method in ("inverted_cdf", "closest_observation"):
        index = (n * q) - 1 if method == "inverted_cdf" else (n * q) - 1 - 0.5
        previous = _np.floor(index)
        on = (index - previous) == 0
        if method == "closest_observation":
            on &= previous % 2 == 1
        return _np.maximum(_np.where(on, previous, previous + 1), 0).astype(_INT64)
    return None


def _arithmetic(A: _Arr, qa: _np.ndarray, od: _np.dtype) -> dict:
    """The dtypes numpy computes in (NEP 50 decides them), as _core.quantile takes them: q's
    float dtype for the index arithmetic (float64 for a Python float, whose 0-d array is
    float64, and for integer q), the result dtype for the interpolation, float16 data, integer
    q. A Python float q needs no flag: float64 indices and the data's dtype for the lerp are
    what numpy's result dtype (od) says."""
    return dict(
        q_bits=qa.dtype.itemsize * 8 if qa.dtype.kind == "f" else 64,
        lerp_bits=od.itemsize * 8 if od.kind == "f" else 64,
        half_data=A.dtype == _np.float16,
        integer_q=qa.dtype.kind in "biu",
    )


def _all_nan(fw: str, x: Any, every: bool = True) -> bool:
    """Every element (every=False: some element) of x (a float array of framework fw, on its
    device) is NaN."""
    if fw == "torch":
        nan = _torch().isnan(x)
        return bool((nan.all() if every else nan.any()).item())
    nan = _xp(fw).isnan(x)
    return bool(nan.all() if every else nan.any())


def _nan_of_data_dtype(A: _Arr, R: "_Rows", res: Any, qa: _np.ndarray, skip_nan: bool) -> bool:
    """Whether numpy answers in the data's own dtype (float data whose result dtype is another):
    nanquantile whose first row (the whole data for axis=None) is all NaN (numpy's
    apply_along_axis takes its dtype from the first row's answer, np.full(q.shape, nan, data's
    dtype), and casts the other rows' to it), and quantile with a NaN in the data and a 0-d
    result (numpy returns the NaN element itself, arr[-1]). A pass over the data only when the
    first row's results are all NaN."""
    if not skip_nan and not (qa.ndim == 0 and R.kept == ()):
        return False  # (known here: no pass over the results, no wait for them)
    first = res.reshape(-1, R.rows)[:, 0]  # q first: the first row's results
    if not _all_nan(A.fw, first):
        return False
    if skip_nan:
        return _all_nan(A.fw, _flat(R.A)[: R.cols])
    return qa.ndim == 0 and R.kept == () and _all_nan(A.fw, R.A.x, every=False)


def _host_q(fn: str, q: Any, percent: bool) -> tuple:
    """(q as numpy takes it: a float64 array in [0, 1], the key of its dtype rule)."""
    weak = type(q) in (int, float)
    if hasattr(q, "__dlpack__") and not isinstance(q, _np.ndarray) and hasattr(q, "tolist"):
        q = _np.asarray(q.tolist(), dtype=str(q.dtype).rsplit(".", 1)[-1])  # torch / cupy
    qa = _np.asarray(q)
    if qa.dtype.kind not in "biuf":
        raise TypeError(f"gsearch.{fn}: q must be real numbers, not {qa.dtype}")
    if percent:
        qa = _np.true_divide(qa, 100)
    if qa.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if not (qa.size == 0 or (qa.min() >= 0 and qa.max() <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]" if percent else "Quantiles must be in the range [0, 1]")
    if weak:
        key = float(qa) if percent else q  # percentile divides first (a float), quantile keeps q
    else:
        key = qa.dtype
    return qa, key


# numpy's methods whose result is an element (np.take, with out cast 'unsafe'); the others
# interpolate (a ufunc, with out cast 'same_kind').
_ELEMENT_METHODS = frozenset(("inverted_cdf", "closest_observation", "lower", "higher", "nearest"))


class _Rows(NamedTuple):
    """The data as numpy's axis takes it: rows x cols (the reduced axes last, merged), the
    shape of the kept axes (the result's, after q's), and keepdims' shape of them."""

    A: _Arr
    rows: int
    cols: int
    kept: tuple
    keep_shape: tuple


def _by_rows(fn: str, A: _Arr, axis: Any) -> _Rows:
    """numpy's _ureduce: the axes of `axis` (None: all) moved last (the kept ones first, in
    their order) and merged, so that each row is one quantile's data."""
    shape = _shape(A)
    axes = _axes(fn, axis, len(shape))
    if axes is None:
        axes = tuple(range(len(shape)))
        x = A.x.reshape(-1) if len(shape) != 1 else A.x
    else:
        keep = [i for i in range(len(shape)) if i not in axes]
        x = _xp(A.fw).moveaxis(A.x, keep, list(range(len(keep)))) if keep != list(range(len(keep))) else A.x
    kept = tuple(shape[i] for i in range(len(shape)) if i not in axes)
    cols = 1
    for i in axes:
        cols *= shape[i]
    rows = 1
    for d in kept:
        rows *= d
    keep_shape = tuple(1 if i in axes else shape[i] for i in range(len(shape)))
    return _Rows(A._replace(x=x), rows, cols, kept, keep_shape)


def _store(fn: str, A: _Arr, out: Any, res: Any, casting: str) -> Any:
    """numpy's `out`: res (an array of A's framework) written into out, cast by numpy's rule for
    the call ('same_kind' for a ufunc's result, 'unsafe' for take and assignment); out itself
    returned."""
    O = None if isinstance(out, (list, tuple)) or _np.isscalar(out) else _classify(out, "out")
    if O is None or isinstance(O, _Scalar) or O.fw != A.fw or (A.fw == "numpy" and not isinstance(out, _np.ndarray)):
        raise TypeError(f"gsearch.{fn}: out must be an array of the data's kind ({A.fw}), not {type(out).__name__}")
    have = res.dtype if A.fw != "torch" else _np.dtype(str(res.dtype).rsplit(".", 1)[-1])
    if not _np.can_cast(have, O.dtype, casting=casting):
        raise TypeError(
            f"gsearch.{fn}: cannot cast the result from dtype('{have}') to out's dtype('{O.dtype}') "
            f"with casting rule '{casting}' (as numpy)"
        )
    if A.fw == "numpy":
        _np.copyto(out, res, casting="unsafe")
    elif A.fw == "torch":
        out.copy_(res.reshape(tuple(out.shape)) if res.numel() == out.numel() else res)
    else:
        _xp("cupy").copyto(out, res, casting="unsafe")
    return out


def _finish(fn: str, A: _Arr, R: _Rows, res: Any, qshape: tuple, keepdims: bool, out: Any, casting: str) -> Any:
    """res (q first, then the rows, flat) in numpy's shape; into `out` when given."""
    res = res.reshape(qshape + (R.keep_shape if keepdims else R.kept))
    if out is not None:
        return _store(fn, A, out, res, casting)
    return _result(res, A, tuple(res.shape))


def _check_extras(fn: str, overwrite_input: Any, weights: Any) -> None:
    """numpy's parameters gsearch takes but does nothing with (overwrite_input: the input is
    never written, which numpy allows), or refuses (weights)."""
    del overwrite_input
    if weights is not None:
        raise NotImplementedError(f"gsearch.{fn}: weights are not supported (numpy's weighted quantiles); pass weights=None")


def _empty_answer(fn: str, A: _Arr, numpy_fn: Any, axis: Any, keepdims: bool, out: Any, casting: str, **kw: Any) -> Any:
    """numpy's own answer for data with no elements to reduce (an IndexError, or NaN with its
    RuntimeWarning, or an empty array), in A's framework."""
    ref = _np.asarray(numpy_fn(_np.empty(_shape(A), A.dtype), axis=axis, keepdims=keepdims, **kw))
    res = _like_array(A, ref)
    if out is not None:
        return _store(fn, A, out, res, casting)
    return res[()] if A.fw == "numpy" and ref.ndim == 0 else res


def _fast_q(q: Any) -> Optional[tuple]:
    """q as a tuple of Python floats when it is one in [0, 1] or a non-empty list or tuple of them
    (the torch fast path's q: float64 index arithmetic, numpy's dtype rule for a Python float or a
    float64 array), else None."""
    if type(q) is float:
        return (q,) if 0.0 <= q <= 1.0 else None
    if type(q) in (list, tuple) and q and all(type(v) is float and 0.0 <= v <= 1.0 for v in q):
        return tuple(q)
    return None


def _quantile(
    fn: str, a: Any, q: Any, axis: Any, out: Any, method: str, keepdims: bool, skip_nan: bool, percent: bool, stream: Any
) -> Any:
    code = _choice(fn, "method", method, _QUANTILE_METHODS)
    t = _tensor(a)
    fast = t is not None and axis is None and out is None and not keepdims and not percent and stream is None
    qs = _fast_q(q) if fast and a.numel() else None
    if qs is not None:
        # The torch fast path (_selection._tensor): a result that is not an 8-byte integer (the
        # element itself, which float64 would round), and no NaN of the data's dtype to look for
        # (_nan_of_data_dtype: nanquantile of float data at an array q). _arithmetic's dtypes.
        own = _torch_dtype_to_numpy(a.dtype)
        od = _numpy_result_dtype("quantile", own, q if type(q) is float else _FLOAT64, method)
        nan_free = od == own or own.kind != "f" or not skip_nan and type(q) is not float
        if (od.kind == "f" or od.itemsize < 8) and nan_free:
            shape = () if type(q) is float else (len(qs),)
            res = _arrays._torch_empty(shape, dtype=_arrays._FLOAT64_T, device=a.device)
            _core.quantile_pointers(a.data_ptr(), a.numel(), _np.array(qs, _FLOAT64), code, bool(skip_nan),
                                    res.data_ptr(), t[0], t[1], _stream_of(t[1]),
                                    lerp_bits=od.itemsize * 8 if od.kind == "f" else 64)
            return _cast(res, "torch", od)
    A = _data(fn, a)
    qa, key = _host_q(fn, q, percent)
    od = _numpy_result_dtype("quantile", A.dtype.newbyteorder("="), key, method)
    R = _by_rows(fn, A, axis)
    own = A.dtype.newbyteorder("=")
    float_nan_form = skip_nan and own.kind == "f"  # numpy's nanquantile proper (else quantile's code)
    casting = "unsafe" if float_nan_form or method in _ELEMENT_METHODS or qa.dtype.kind in "biu" else "same_kind"
    if R.rows * R.cols == 0:
        ref_fn = _np.nanquantile if skip_nan else _np.quantile
        return _empty_answer(fn, A, ref_fn, axis, keepdims, out, casting, q=qa, method=method)
    n, rows = R.cols, R.rows
    if qa.dtype == _np.float16 and n >= 65520:  # numpy: NaN or IndexError (n * q is inf)
        raise ValueError(
            f"gsearch.{fn}: float16 q cannot index {n} elements (numpy's float16 index arithmetic "
            "overflows from 65520); give q as float32 or float64"
        )
    kd = _widened(A.dtype)
    q64 = _np.ascontiguousarray(qa, dtype=_FLOAT64).reshape(-1)  # q's values, exactly
    m = q64.size
    with _StreamScope(A.fw, A.dev, stream) as scope:
        data = _flat(R.A)
        ranks = _element_ranks(method, n, qa) if od.kind in "iu" and od.itemsize == 8 else None
        if ranks is not None:  # 8-byte integers: the element itself (float64 would round it)
            ranks = _np.minimum(ranks, n - 1)  # a float16 / float32 q's rounding past the end (numpy raises): the last
            res = _new_empty(A.fw, A.dev, (m * rows,), kd)
            if m and rows == 1:
                _core.select(data, ranks, res, scope.handle)
            elif m:  # every row partitioned at the ranks in one call, then those columns
                kth = _np.unique(ranks)
                part = _new_empty(A.fw, A.dev, (rows * n,), kd)
                _core.partition(data, kth, part, scope.handle, rows=rows)
                res = _columns(A, part.reshape(rows, n), ranks).reshape(-1)
        else:
            res = _new_empty(A.fw, A.dev, (m * rows,), _FLOAT64)
            if m:
                _core.quantile(data, q64, code, bool(skip_nan), res, scope.handle, rows=rows, **_arithmetic(A, qa, od))
        rd = od
        if out is None and od != own and own.kind == "f" and m and _nan_of_data_dtype(A, R, res, qa, skip_nan):
            rd = own  # numpy's NaN of the data's dtype
        return _finish(fn, A, R, _cast(res, A.fw, rd), qa.shape, keepdims, out, casting)


def _columns(A: _Arr, x: Any, cols: _np.ndarray) -> Any:
    """x[:, cols].T (rows x n in, len(cols) x rows out, C-contiguous) in A's framework."""
    if A.fw == "torch":
        idx = _torch().as_tensor(cols, device=x.device)
        return x.index_select(1, idx).T.contiguous()
    return _xp(A.fw).ascontiguousarray(x[:, cols].T)


def _like(A: _Arr, x: _np.ndarray) -> Any:
    """A numpy result as A's kind of array on its device (0-d numpy: a numpy scalar)."""
    if A.fw == "numpy":
        return x[()] if x.ndim == 0 else x
    return _like_array(A, x)


def _like_array(A: _Arr, x: _np.ndarray) -> Any:
    """A numpy result as an array of A's kind on its device."""
    if A.fw == "numpy":
        return x
    if A.fw == "torch":
        torch = _torch()
        device = torch.device("cuda", A.dev) if A.dev is not None else torch.device("cpu")
        return torch.as_tensor(x, dtype=_torch_dtype(x.dtype), device=device)
    return _xp("cupy").asarray(x)


_QUANTILE_DOC = """{title}

    numpy.{name}(a, q, axis, out, overwrite_input, method, keepdims){what}, numpy 2's
    signature and semantics.

    Parameters
    ----------
    {data}
        Any shape.
    q : float or array_like of floats
        {q_text} A scalar gives a scalar, an array an array of its shape (at most 2-D).
    axis : None, int or tuple of ints, optional
        The axes to reduce (negative from the end): None (the default) all of them. Every
        1-D slice along them (a row of a 2-D array) is reduced in one library call.
    out : array, optional
        Where to put the result (an array of `a`'s kind, of the result's shape or one it
        broadcasts to), cast as numpy casts: 'same_kind' for the methods that interpolate,
        'unsafe' for those that pick an element (and for an integer q) and for nan{name_plain}
        of float data. It is returned.
    overwrite_input : bool, optional
        numpy's permission to modify `a`; gsearch never does (accepted, no effect).
    method : str, optional
        numpy's: 'inverted_cdf', 'averaged_inverted_cdf', 'closest_observation',
        'interpolated_inverted_cdf', 'hazen', 'weibull', 'linear' (the default),
        'median_unbiased', 'normal_unbiased', 'lower', 'higher', 'midpoint', 'nearest'.
        (numpy's sixth parameter: pass it by name.)
    keepdims : bool, optional
        Keep the reduced axes, of length 1 (after q's axes), as numpy.
    weights : None
        numpy's weighted quantiles are not supported: anything but None raises
        NotImplementedError.
    {stream}, as in :func:`searchsorted`. The call waits for
        the result.

    Returns
    -------
    {name} : scalar or array
        numpy's shape: q's, then the axes not reduced (keepdims: all of `a`'s, the reduced
        of length 1); a scalar for a scalar q reduced to nothing. `out` when given.
        numpy's dtype (numpy 2's promotion of the data's dtype with q's): the data's for the
        methods that pick an element; for the methods that interpolate, the data's own for a
        Python float q with float data, else the promotion (float32 data with an array or a
        numpy float64 q gives float64; integer data float64). {returned_kind}

    Raises
    ------
    ValueError
        {range_error}; a bad `method`; q of more than two dimensions; float16 q with 65520
        elements or more along the axes (numpy's float16 index arithmetic overflows: give q
        as float32 or float64); a repeated axis; an `out` of a shape the result does not
        broadcast to.
    numpy.exceptions.AxisError
        An axis out of range.
    IndexError
        {empty_error}
    TypeError
        A dtype gsearch cannot select in (complex, strings, ...); q that are not numbers;
        boolean data with a method that interpolates (as numpy); an axis that is not an int
        (a string there: the method given in gsearch's old third place); an `out` of another
        kind, or of a dtype the result cannot be cast to by numpy's rule.
    NotImplementedError
        weights.
    {gpu_errors}

    Notes
    -----
    {nan_note} {order} All the quantiles come from one pass over the data (and a few short
    ones), whatever their number.

    Values equal numpy 2.4's bit for bit, computed in the types numpy computes in: q's dtype for
    the ranks and gamma (a float32 q rounds (n - 1) q to float32), the data's for b - a (float16
    too), the result dtype for the interpolation (so float32 data with ``[0.1]`` interpolates in
    float64, with ``0.1`` in float32). Except where numpy has no meaningful answer: integer data
    whose two neighbours differ by more than the dtype holds (numpy's ``b - a`` wraps around
    there; gsearch's difference is exact), integer q of a dtype narrower than int64 (numpy's
    index arithmetic wraps in it; gsearch's is exact), a float16 or float32 q whose rounding
    takes a rank past the last element (numpy raises IndexError or ValueError; gsearch takes
    the last element), and float16 q with 65520 elements or more (numpy's index overflows to
    inf; gsearch raises ValueError). With an `out` of a narrower float dtype, numpy
    interpolates part of the way in out's dtype; gsearch rounds numpy's result into it (a
    last-bit difference at most). nanquantile with q of two dimensions and a tuple of several
    axes: numpy 2.4 scrambles its result's axes; gsearch's shape is q's, then the kept axes, as
    quantile's. NaN of the data's dtype where numpy gives it: nanquantile whose first slice is
    all NaN (numpy takes the whole result's dtype from the first slice's answer), quantile of a
    0-d result with a NaN.

    Examples
    --------
    >>> import numpy as np, gsearch
    {examples}
    """


def _quantile_doc(name: str, percent: bool, skip_nan: bool, examples: str) -> str:
    return _QUANTILE_DOC.format(
        title=(
            ("The q-th percentile" if percent else "The q-th quantile")
            + (" of the data, ignoring NaN" if skip_nan else " of the data")
            + f": numpy.{name}."
        ),
        name=name,
        name_plain=name[3:] if skip_nan else name,
        what=" (the values that are not NaN)" if skip_nan else "",
        q_text=(
            "The percentiles, each in [0, 100] (50: the median)."
            if percent
            else "The quantiles, each in [0, 1] (0.5: the median)."
        ),
        range_error=(
            "q outside [0, 100] or NaN (\"Percentiles must be in the range [0, 100]\")"
            if percent
            else "q outside [0, 1] or NaN (\"Quantiles must be in the range [0, 1]\")"
        ),
        empty_error=(
            "Never: empty data gives NaN, with numpy's RuntimeWarning (all-NaN data gives NaN\n"
            "        without it)."
            if skip_nan
            else "Empty data (as numpy)."
        ),
        nan_note=(
            "NaN elements are skipped; all-NaN data gives NaN."
            if skip_nan
            else "A NaN in the data makes every quantile NaN (numpy's rule); see nan" + name + "."
        ),
        examples=examples.replace("\n", "\n    "),
        data="{data}",
        stream="{stream}",
        returned_kind="{returned_kind}",
        gpu_errors="{gpu_errors}",
        order="{order}",
    )


@_public(
    doc=_quantile_doc(
        "quantile",
        False,
        False,
        ">>> a = np.array([[10, 7, 4], [3, 2, 1]])\n"
        ">>> gsearch.quantile(a, 0.5)\n"
        "np.float64(3.5)\n"
        ">>> gsearch.quantile(a, [0.25, 1.0], method='lower')\n"
        "array([ 2, 10])\n"
        ">>> gsearch.quantile(np.array([1.0, np.nan]), 0.5)\n"
        "np.float64(nan)",
    ),
    **_DOCS,
)
def quantile(
    a: ArrayLike,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: QuantileMethod = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
    stream: Any = None,
) -> Any:
    _check_extras("quantile", overwrite_input, weights)
    return _quantile("quantile", a, q, axis, out, method, bool(keepdims), False, False, stream)


@_public(
    doc=_quantile_doc(
        "nanquantile",
        False,
        True,
        ">>> gsearch.nanquantile(np.array([3.0, np.nan, 1.0, 2.0]), [0.0, 0.5])\narray([1., 2.])",
    ),
    **_DOCS,
)
def nanquantile(
    a: ArrayLike,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: QuantileMethod = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
    stream: Any = None,
) -> Any:
    _check_extras("nanquantile", overwrite_input, weights)
    return _quantile("nanquantile", a, q, axis, out, method, bool(keepdims), True, False, stream)


@_public(
    doc=_quantile_doc(
        "percentile",
        True,
        False,
        ">>> gsearch.percentile(np.array([1, 2, 3, 4]), [25, 50])\narray([1.75, 2.5 ])",
    ),
    **_DOCS,
)
def percentile(
    a: ArrayLike,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: QuantileMethod = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
    stream: Any = None,
) -> Any:
    _check_extras("percentile", overwrite_input, weights)
    return _quantile("percentile", a, q, axis, out, method, bool(keepdims), False, True, stream)


@_public(
    doc=_quantile_doc(
        "nanpercentile",
        True,
        True,
        ">>> gsearch.nanpercentile(np.array([np.nan, 4.0, 1.0]), 50)\nnp.float64(2.5)",
    ),
    **_DOCS,
)
def nanpercentile(
    a: ArrayLike,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: QuantileMethod = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
    stream: Any = None,
) -> Any:
    _check_extras("nanpercentile", overwrite_input, weights)
    return _quantile("nanpercentile", a, q, axis, out, method, bool(keepdims), True, True, stream)


def _median(fn: str, a: Any, axis: Any, out: Any, keepdims: bool, skip_nan: bool, stream: Any) -> Any:
    t = _tensor(a)
    if t is not None and axis is None and out is None and not keepdims and stream is None and a.numel():
        # The torch fast path (_selection._tensor): a 0-d result in numpy's dtype.
        res = _arrays._torch_empty((), dtype=_arrays._FLOAT64_T, device=a.device)
        _core.median_pointers(a.data_ptr(), a.numel(), bool(skip_nan), res.data_ptr(), t[0], t[1], _stream_of(t[1]))
        return _cast(res, "torch", _numpy_result_dtype("median", _torch_dtype_to_numpy(a.dtype), None, ""))
    A = _data(fn, a)
    od = _numpy_result_dtype("median", A.dtype.newbyteorder("="), None, "")
    R = _by_rows(fn, A, axis)
    if R.rows * R.cols == 0:  # numpy's NaN (and RuntimeWarning), or its empty array
        return _empty_answer(fn, A, _np.nanmedian if skip_nan else _np.median, axis, keepdims, out, "unsafe")
    with _StreamScope(A.fw, A.dev, stream) as scope:
        res = _new_empty(A.fw, A.dev, (R.rows,), _FLOAT64)
        _core.median(_flat(R.A), bool(skip_nan), res, scope.handle, rows=R.rows)
        return _finish(fn, A, R, _cast(res, A.fw, od), (), keepdims, out, "unsafe")


_MEDIAN_DOC = """The median of an array{ignoring}: numpy.{name}(a, axis, out, overwrite_input, keepdims).

    The middle value of the sorted data, or the mean of the two middle values when the count
    is even (for every array kind, torch's too).

    Parameters
    ----------
    {{data}}
        Any shape.
    axis : None, int or tuple of ints, optional
        The axes to reduce (None, the default: all); every slice along them in one library
        call.
    out : array, optional
        Where to put the result (an array of `a`'s kind; cast 'unsafe', as numpy's mean); it
        is returned.
    overwrite_input : bool, optional
        numpy's permission to modify `a`; gsearch never does (accepted, no effect).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.
    {{stream}}, as in :func:`searchsorted`. The call waits for
        the result.

    Returns
    -------
    median : scalar or array
        The axes not reduced (keepdims: every axis, the reduced of length 1); `out` when given.
        numpy's dtype: the data's for float data, float64 for integers and bool. A numpy scalar
        for numpy input reduced to nothing, a 0-d array of the input's framework on its device
        otherwise.

    Raises
    ------
    TypeError
        A dtype gsearch cannot select in (complex, strings, ...); an axis that is not an int;
        an `out` of another kind.
    numpy.exceptions.AxisError
        An axis out of range.
    ValueError
        A repeated axis; an `out` of a shape the result does not broadcast to.
    {{gpu_errors}}

    Notes
    -----
    {nan_note} Empty data gives NaN with numpy's RuntimeWarning (all-NaN data gives NaN
    without it). {{order}}

    Examples
    --------
    >>> import numpy as np, gsearch
    {examples}
    """


@_public(
    doc=_MEDIAN_DOC.format(
        ignoring="",
        name="median",
        nan_note="A NaN in the data gives NaN (see nanmedian).",
        examples=">>> gsearch.median(np.array([[10, 7, 4], [3, 2, 1]]))\n    np.float64(3.5)\n"
        "    >>> gsearch.median(np.array([3.0, 1.0, 2.0], dtype=np.float32))\n    np.float32(2.0)",
    ),
    **_DOCS,
)
def median(
    a: ArrayLike, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False, *, stream: Any = None
) -> Any:
    _check_extras("median", overwrite_input, None)
    return _median("median", a, axis, out, bool(keepdims), False, stream)


@_public(
    doc=_MEDIAN_DOC.format(
        ignoring=", ignoring NaN",
        name="nanmedian",
        nan_note="NaN elements are skipped; all-NaN data gives NaN.",
        examples=">>> gsearch.nanmedian(np.array([np.nan, 3.0, 1.0, 2.0]))\n    np.float64(2.0)",
    ),
    **_DOCS,
)
def nanmedian(
    a: ArrayLike, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False, *, stream: Any = None
) -> Any:
    _check_extras("nanmedian", overwrite_input, None)
    return _median("nanmedian", a, axis, out, bool(keepdims), True, stream)

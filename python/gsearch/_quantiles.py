"""numpy's median, quantile and percentile (and their nan* forms) of all the elements of an
array, on the selection of _selection.py: every quantile from one pass over the data."""

from __future__ import annotations

from functools import lru_cache as _lru_cache
from typing import Any, Literal, Optional

import numpy as _np

from . import _core
from ._arrays import (
    _Arr,
    ArrayLike,
    _cast,
    _choice,
    _FLOAT64,
    _INT64,
    _new_empty,
    _size,
    _StreamScope,
    _torch,
    _torch_dtype,
    _widened,
    _xp,
)
from ._docs import public as _public
from ._selection import _DOCS, _data, _flat, _result

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


def _nan_of_data_dtype(A: _Arr, qa: _np.ndarray, skip_nan: bool) -> bool:
    """Whether numpy answers NaN *of the data's dtype* (float data whose result dtype is
    another, all of whose results are NaN): nanquantile of all-NaN data (np.full(q.shape, nan,
    data's dtype)), and quantile of data with a NaN at a 0-d q (numpy returns the NaN element
    itself, arr[-1]). One more pass over the data, only when every result is NaN."""
    if skip_nan:
        return _all_nan(A.fw, A.x)
    return qa.ndim == 0 and _all_nan(A.fw, A.x, every=False)


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


def _quantile(fn: str, a: Any, q: Any, method: str, skip_nan: bool, percent: bool, stream: Any) -> Any:
    code = _choice(fn, "method", method, _QUANTILE_METHODS)
    A = _data(fn, a)
    qa, key = _host_q(fn, q, percent)
    od = _numpy_result_dtype("quantile", A.dtype.newbyteorder("="), key, method)
    n = _size(A.x)
    if n == 0:  # numpy's own answer (an IndexError, or NaN for nanquantile), in A's framework
        ref = (_np.nanquantile if skip_nan else _np.quantile)(_np.empty(0, A.dtype), qa, method=method)
        return _like(A, _np.asarray(ref, dtype=od))
    if qa.dtype == _np.float16 and n >= 65520:  # numpy: NaN or IndexError (n * q is inf)
        raise ValueError(
            f"gsearch.{fn}: float16 q cannot index {n} elements (numpy's float16 index arithmetic "
            "overflows from 65520); give q as float32 or float64"
        )
    kd = _widened(A.dtype)
    q64 = _np.ascontiguousarray(qa, dtype=_FLOAT64).reshape(-1)  # q's values, exactly
    with _StreamScope(A.fw, A.dev, stream) as scope:
        ranks = _element_ranks(method, n, qa) if od.kind in "iu" and od.itemsize == 8 else None
        if ranks is not None:  # 8-byte integers: the element itself (float64 would round it)
            out = _new_empty(A.fw, A.dev, (q64.size,), kd)
            if q64.size:  # a float16 / float32 q's rounding past the end (numpy raises): the last
                _core.select(_flat(A), _np.minimum(ranks, n - 1), out, scope.handle)
        else:
            out = _new_empty(A.fw, A.dev, (q64.size,), _FLOAT64)
            if q64.size:
                _core.quantile(_flat(A), q64, code, bool(skip_nan), out, scope.handle, **_arithmetic(A, qa, od))
        own = A.dtype.newbyteorder("=")
        if od != own and own.kind == "f" and q64.size and _all_nan(A.fw, out) and _nan_of_data_dtype(A, qa, skip_nan):
            return _like(A, _np.full(qa.shape, _np.nan, dtype=own))
        return _result(_cast(out, A.fw, od), A, qa.shape)


def _like(A: _Arr, x: _np.ndarray) -> Any:
    """A numpy result as A's kind of array on its device."""
    if A.fw == "numpy":
        return x[()] if x.ndim == 0 else x
    if A.fw == "torch":
        torch = _torch()
        device = torch.device("cuda", A.dev) if A.dev is not None else torch.device("cpu")
        return torch.as_tensor(x, dtype=_torch_dtype(x.dtype), device=device)
    return _xp("cupy").asarray(x)


_QUANTILE_DOC = """{title}

    numpy.{name}(a, q, method=method) of all the elements of `a` (axis=None){what}.

    Parameters
    ----------
    {data}
        All of its elements are taken (any shape).
    q : float or array_like of floats
        {q_text} A scalar gives a scalar, an array an array of its shape (at most 2-D).
    method : str, optional
        numpy's: 'inverted_cdf', 'averaged_inverted_cdf', 'closest_observation',
        'interpolated_inverted_cdf', 'hazen', 'weibull', 'linear' (the default),
        'median_unbiased', 'normal_unbiased', 'lower', 'higher', 'midpoint', 'nearest'.
    {stream}, as in :func:`searchsorted`. The call waits for
        the result.

    Returns
    -------
    {name} : scalar or array
        numpy's dtype (numpy 2's promotion of the data's dtype with q's): the data's for the
        methods that pick an element; for the methods that interpolate, the data's own for a
        Python float q with float data, else the promotion (float32 data with an array or a
        numpy float64 q gives float64; integer data float64). {returned_kind}

    Raises
    ------
    ValueError
        {range_error}; a bad `method`; q of more than two dimensions; float16 q with 65520
        elements or more (numpy's float16 index arithmetic overflows: give q as float32 or
        float64).
    IndexError
        {empty_error}
    TypeError
        A dtype gsearch cannot select in (complex, strings, ...); q that are not numbers;
        boolean data with a method that interpolates (as numpy).
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
    inf; gsearch raises ValueError).

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
def quantile(a: ArrayLike, q: Any, method: QuantileMethod = "linear", *, stream: Any = None) -> Any:
    return _quantile("quantile", a, q, method, False, False, stream)


@_public(
    doc=_quantile_doc(
        "nanquantile",
        False,
        True,
        ">>> gsearch.nanquantile(np.array([3.0, np.nan, 1.0, 2.0]), [0.0, 0.5])\narray([1., 2.])",
    ),
    **_DOCS,
)
def nanquantile(a: ArrayLike, q: Any, method: QuantileMethod = "linear", *, stream: Any = None) -> Any:
    return _quantile("nanquantile", a, q, method, True, False, stream)


@_public(
    doc=_quantile_doc(
        "percentile",
        True,
        False,
        ">>> gsearch.percentile(np.array([1, 2, 3, 4]), [25, 50])\narray([1.75, 2.5 ])",
    ),
    **_DOCS,
)
def percentile(a: ArrayLike, q: Any, method: QuantileMethod = "linear", *, stream: Any = None) -> Any:
    return _quantile("percentile", a, q, method, False, True, stream)


@_public(
    doc=_quantile_doc(
        "nanpercentile",
        True,
        True,
        ">>> gsearch.nanpercentile(np.array([np.nan, 4.0, 1.0]), 50)\nnp.float64(2.5)",
    ),
    **_DOCS,
)
def nanpercentile(a: ArrayLike, q: Any, method: QuantileMethod = "linear", *, stream: Any = None) -> Any:
    return _quantile("nanpercentile", a, q, method, True, True, stream)


def _median(fn: str, a: Any, skip_nan: bool, stream: Any) -> Any:
    A = _data(fn, a)
    od = _numpy_result_dtype("median", A.dtype.newbyteorder("="), None, "")
    if _size(A.x) == 0:  # numpy's NaN (and RuntimeWarning)
        return _like(A, _np.asarray((_np.nanmedian if skip_nan else _np.median)(_np.empty(0, A.dtype)), dtype=od))
    with _StreamScope(A.fw, A.dev, stream) as scope:
        out = _new_empty(A.fw, A.dev, (1,), _FLOAT64)
        _core.median(_flat(A), bool(skip_nan), out, scope.handle)
        return _result(_cast(out, A.fw, od), A, ())


_MEDIAN_DOC = """The median of all the elements of an array{ignoring}: numpy.{name}.

    The middle value of the sorted data, or the mean of the two middle values when the count
    is even (for every array kind, torch's too).

    Parameters
    ----------
    {{data}}
        All of its elements are taken (any shape).
    {{stream}}, as in :func:`searchsorted`. The call waits for
        the result.

    Returns
    -------
    median : scalar
        numpy's dtype: the data's for float data, float64 for integers and bool. A numpy scalar
        for numpy input, a 0-d array of the input's framework on its device otherwise.

    Raises
    ------
    TypeError
        A dtype gsearch cannot select in (complex, strings, ...).
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
def median(a: ArrayLike, *, stream: Any = None) -> Any:
    return _median("median", a, False, stream)


@_public(
    doc=_MEDIAN_DOC.format(
        ignoring=", ignoring NaN",
        name="nanmedian",
        nan_note="NaN elements are skipped; all-NaN data gives NaN.",
        examples=">>> gsearch.nanmedian(np.array([np.nan, 3.0, 1.0, 2.0]))\n    np.float64(2.0)",
    ),
    **_DOCS,
)
def nanmedian(a: ArrayLike, *, stream: Any = None) -> Any:
    return _median("nanmedian", a, True, stream)

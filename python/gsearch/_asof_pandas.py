"""pandas' merge_asof on gsearch's as-of join (_asof.py's layers): the frames' key and `by`
columns taken as arrays (to the GPU and back with device="cuda"), the gather map, then pandas'
result frame built as pandas builds it (_pandas_result)."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional, Sequence

import numpy as _np

from ._arrays import _Arr, _StreamScope, _torch
from ._asof import (
    AsofDirection,
    _check_direction,
    _check_exact,
    _compute_dtype,
    _contiguous_int64,
    _gather_map,
    _group_codes,
    _incompatible_keys,
    _incompatible_tolerance,
    _Keys,
    _merge_error,
    _negative_tolerance_words,
    _raise_nulls,
    _tolerance,
)
from ._docs import public as _public


# --- pandas ------------------------------------------------------------------------------------


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("gsearch.merge_asof needs pandas: pip install pandas") from e
    return pd


def _pandas_operand(pd: Any, obj: Any) -> Any:
    if isinstance(obj, pd.DataFrame):
        return obj
    if isinstance(obj, pd.Series):
        if obj.name is None:
            raise ValueError("Cannot merge a Series without a name")
        return obj.to_frame()
    raise TypeError(f"Can only merge Series or DataFrame objects, a {type(obj)} was passed")


def _as_list(x: Any) -> Optional[list]:
    if x is None:
        return None
    if isinstance(x, (list, tuple)) or (hasattr(x, "__array__") and not isinstance(x, str) and _np.ndim(x) == 1):
        return list(x)
    return [x]


def _pandas_on(pd: Any, left: Any, right: Any, on: Any, left_on: Any, right_on: Any, li: bool, ri: bool) -> tuple:
    """pandas' resolution of on / left_on / right_on / the indexes (its messages): the key
    labels of each side, None where the key is the index."""
    left_on, right_on = _as_list(left_on), _as_list(right_on)
    if on is None and left_on is None and right_on is None:
        if li and ri:
            return [None], [None]
        if li:
            raise _merge_error("Must pass right_on or right_index=True")
        if ri:
            raise _merge_error("Must pass left_on or left_index=True")
        common = left.columns.intersection(right.columns)
        if len(common) == 0:
            raise _merge_error(
                "No common columns to perform merge on. "
                f"Merge options: left_on={left_on}, right_on={right_on}, left_index={li}, right_index={ri}"
            )
        if not left.columns.join(common, how="inner").is_unique or not right.columns.join(common, how="inner").is_unique:
            raise _merge_error(f"Data columns not unique: {common!r}")
        left_on = right_on = list(common)
    elif on is not None:
        if left_on is not None or right_on is not None:
            raise _merge_error('Can only pass argument "on" OR "left_on" and "right_on", not a combination of both.')
        if li or ri:
            raise _merge_error(
                'Can only pass argument "on" OR "left_index" and "right_index", not a combination of both.'
            )
        left_on = right_on = _as_list(on)
    elif left_on is not None:
        if li:
            raise _merge_error('Can only pass argument "left_on" OR "left_index" not both.')
        if not ri and right_on is None:
            raise _merge_error('Must pass "right_on" OR "right_index".')
        if ri and right_on is not None:
            raise _merge_error('Can only pass argument "right_on" OR "right_index" not both.')
        if ri:
            if len(left_on) != right.index.nlevels:
                raise ValueError('len(left_on) must equal the number of levels in the index of "right"')
            right_on = [None] * len(left_on)
    elif right_on is not None:
        if ri:
            raise _merge_error('Can only pass argument "right_on" OR "right_index" not both.')
        if not li and left_on is None:
            raise _merge_error('Must pass "left_on" OR "left_index".')
        if li:
            if len(right_on) != left.index.nlevels:
                raise ValueError('len(right_on) must equal the number of levels in the index of "left"')
            left_on = [None] * len(right_on)
    if len(right_on) != len(left_on):
        raise ValueError("len(right_on) must equal len(left_on)")
    if len(left_on) != 1 and not li:
        raise _merge_error("can only asof on a key for left")
    if len(right_on) != 1 and not ri:
        raise _merge_error("can only asof on a key for right")
    if li and isinstance(left.index, pd.MultiIndex):
        raise _merge_error("left can only have one index")
    if ri and isinstance(right.index, pd.MultiIndex):
        raise _merge_error("right can only have one index")
    return left_on[-1:], right_on[-1:]


def _pandas_column(fn: str, frame: Any, label: Any, key: bool = False) -> Any:
    """The column `label` of frame (pandas' KeyError when it has none, worded as pandas words it
    for an `on` key and a `by` column; index levels, which pandas also takes, are not supported
    here)."""
    if not isinstance(label, (str, int, float, tuple, _np.generic)) and label is not None:
        raise NotImplementedError(
            f"gsearch.{fn}: keys and by columns are column labels here (not arrays): add the array as a column"
        )
    if label in frame.columns:
        col = frame[label]
        if not hasattr(col, "dtype"):  # duplicate labels: a frame
            raise ValueError(f"The column label '{label}' is not unique.")
        return col
    if label in frame.index.names:
        raise NotImplementedError(
            f"gsearch.{fn}: {label!r} is an index level: pass frame.reset_index() (or left_index / "
            "right_index for a one-level index), or use pandas.merge_asof"
        )
    if key:  # pandas looks the key up among the index levels last
        if frame.index.nlevels > 1:
            raise KeyError(f"Level {label} not found")
        raise KeyError(f"Requested level ({label}) does not match index name ({frame.index.name})")
    raise KeyError(label)


def _pandas_key(pd: Any, values: Any) -> tuple:
    """A pandas key column or index as (the numpy array the library joins, whether it holds
    nulls, the numpy dtype its tolerance is converted for)."""
    dtype = values.dtype
    if isinstance(dtype, _np.dtype):
        x = values.to_numpy()
        if dtype.kind in "mM":
            return x.view(_np.int64), bool(_np.isnat(x).any()), dtype
        return x, False, dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        x = _np.asarray(values.array.asi8)
        return x, bool((x == _np.iinfo(_np.int64).min).any()), _np.dtype(f"M8[{dtype.unit}]")
    null = bool(values.isna().any())
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # pandas' masked dtypes (Int64, Float64, ...)
    if numpy_dtype is not None and not null:
        x = values.to_numpy(dtype=numpy_dtype)
    else:
        x = values.dropna().to_numpy() if null else values.to_numpy()
        if null:
            return x, True, x.dtype
    if x.dtype.kind in "mM":
        return x.view(_np.int64), null, x.dtype
    if x.dtype.kind not in "biuf":
        raise TypeError(f"gsearch.merge_asof: keys of dtype {dtype} are not supported")
    return x, null, x.dtype


def _pandas_tolerance(pd: Any, tolerance: Any, lt: Any) -> None:
    """pandas' checks of the tolerance against the left key's dtype lt, and its messages."""
    from pandas.api import types

    if tolerance is None:
        return
    if getattr(lt, "kind", None) in ("m", "M") or isinstance(lt, pd.PeriodDtype):
        if not isinstance(tolerance, _dt.timedelta):
            raise _incompatible_tolerance(tolerance, lt)
        if tolerance < pd.Timedelta(0):
            raise _merge_error(_negative_tolerance_words())
    elif types.is_integer_dtype(lt):
        if not types.is_integer(tolerance):
            raise _incompatible_tolerance(tolerance, lt)
        if tolerance < 0:
            raise _merge_error(_negative_tolerance_words())
    elif types.is_float_dtype(lt):
        if not types.is_number(tolerance):
            raise _incompatible_tolerance(tolerance, lt)
        if tolerance < 0:
            raise _merge_error(_negative_tolerance_words())
    else:
        raise _merge_error("key must be integer, timestamp or float")


def _pandas_by_parts(pd: Any, lcol: Any, rcol: Any) -> tuple:
    """A pair of `by` columns as arrays _group_codes factorizes as pandas does: numeric numpy
    columns as they are (datetimes as int64), any other dtype as codes of pandas' joint
    factorization (nulls one value, as pandas' merge keys)."""
    dtype = lcol.dtype
    if isinstance(dtype, _np.dtype) and dtype.kind in "biufmM":
        lx, rx = lcol.to_numpy(), rcol.to_numpy()
        if dtype.kind in "mM":
            lx, rx = lx.view(_np.int64), rx.view(_np.int64)
        elif dtype.kind == "f" and dtype.itemsize < 4:
            lx, rx = lx.astype(_np.float32), rx.astype(_np.float32)
        return lx, rx
    both = pd.concat([lcol.reset_index(drop=True), rcol.reset_index(drop=True)], ignore_index=True)
    codes, uniques = pd.factorize(both, use_na_sentinel=True)
    codes = _np.asarray(codes, dtype=_np.int64)
    codes[codes < 0] = len(uniques)
    return codes[: len(lcol)], codes[len(lcol) :]


def _plain_labels(index: Any) -> Optional[list]:
    """The labels of a column Index as a list where they are all str and unique (the common case,
    which sets decide exactly as pandas' Index operations do); None otherwise. (pandas 3's
    labels are Arrow strings: each Index operation costs some 0.1 ms, a third of a 10^3-row
    merge_asof, bench/results/cpu/issue44/.)"""
    labels = index.tolist()
    if all(type(x) is str for x in labels) and len(set(labels)) == len(labels):
        return labels
    return None


def _overlap_suffixes(pd: Any, left: Any, right: Any, suffixes: Any) -> tuple:
    """pandas' column labels of a merge: the overlapping ones suffixed, its checks and messages."""
    if not pd.api.types.is_list_like(suffixes, allow_sets=False) or isinstance(suffixes, dict):
        raise TypeError(
            f"Passing 'suffixes' as a {type(suffixes)}, is not supported. Provide 'suffixes' as a tuple instead."
        )
    ll, rl = _plain_labels(left), _plain_labels(right)
    if ll is not None and rl is not None:  # with sets; any error is the Index path's below
        overlap = set(ll).intersection(rl)
        if not overlap:
            return left, right
        lsuffix, rsuffix = suffixes
        lnew = [f"{x}{lsuffix}" if x in overlap and lsuffix is not None else x for x in ll]
        rnew = [f"{x}{rsuffix}" if x in overlap and rsuffix is not None else x for x in rl]
        lset, rset = set(lnew), set(rnew)
        if (lsuffix or rsuffix) and len(lset) == len(lnew) and len(rset) == len(rnew) and not (
            lset & (set(rl) - overlap) or rset & (set(ll) - overlap)
        ):
            return (pd.Index(lnew, name=left.name, tupleize_cols=False),
                    pd.Index(rnew, name=right.name, tupleize_cols=False))
    to_rename = left.intersection(right)
    if len(to_rename) == 0:
        return left, right
    lsuffix, rsuffix = suffixes
    if not lsuffix and not rsuffix:
        raise ValueError(f"columns overlap but no suffix specified: {to_rename}")

    def renamed(index: Any, suffix: Any) -> Any:
        return pd.Index(
            [f"{x}{suffix}" if x in to_rename and suffix is not None else x for x in index],
            name=index.name,
            tupleize_cols=False,
        )

    llabels, rlabels = renamed(left, lsuffix), renamed(right, rsuffix)
    dups = []
    if not llabels.is_unique:
        dups.extend(llabels[(llabels.duplicated()) & (~left.duplicated())].tolist())
    if not rlabels.is_unique:
        dups.extend(rlabels[(rlabels.duplicated()) & (~right.duplicated())].tolist())
    dups.extend(llabels.intersection(right.difference(to_rename)).tolist())
    dups.extend(rlabels.intersection(left.difference(to_rename)).tolist())
    if dups:
        raise _merge_error(f"Passing 'suffixes' which cause duplicate columns {set(dups)} is not allowed.")
    return llabels, rlabels


def _pandas_result(pd: Any, left: Any, right: Any, keep: Any, right_index: Any, index: Any, suffixes: Any) -> Any:
    """pandas.merge_asof's frame from the gather map: left's columns, then right's at positions
    `keep` (None: all) gathered (missing rows filled as pandas' reindex fills them: int ->
    float64 NaN, bool -> object, datetime -> NaT, extension dtypes their NA), on `index`."""
    import types

    keep = range(right.shape[1]) if keep is None else keep
    rlabels = right.columns if len(keep) == right.shape[1] else right.columns[list(keep)]
    llabels, rlabels = _overlap_suffixes(pd, left.columns, rlabels, suffixes)
    lres = left.copy(deep=False)
    lres.index = index
    # Each right column taken by the map, -1 filled as pandas' take_nd fills it (int -> float64
    # NaN, bool -> object, datetime -> NaT, an extension dtype its NA) where a row is missing: a
    # column at a time, by position (labels may repeat), without the frame's index checks
    # (reindex then take measured 1.4x slower at 10^7 rows, bench/results/cpu/issue44/).
    fill = bool(len(right_index)) and bool((right_index < 0).any())
    columns = {k: right.iloc[:, j].array.take(right_index, allow_fill=fill) for k, j in enumerate(keep)}
    rres = pd.DataFrame(columns, index=index, copy=False)
    lres.columns, rres.columns = llabels, rlabels
    result = pd.concat([lres, rres], axis=1)
    return result.__finalize__(types.SimpleNamespace(input_objs=[left, right], left=left, right=right), method="merge")


def _to_device(parts: list, device: str) -> list:
    torch = _torch()
    if torch is None:
        try:
            import torch  # type: ignore[no-redef]
        except ImportError as e:
            raise ImportError("gsearch.merge_asof(device='cuda') needs torch with CUDA") from e
    import warnings

    with warnings.catch_warnings():  # pandas' read-only views: only read (copied to the device)
        warnings.simplefilter("ignore", UserWarning)
        return [torch.from_numpy(_np.ascontiguousarray(p)).to(device) for p in parts]


def _host_join(
    fn: str,
    lx: Any,
    rx: Any,
    kd: _np.dtype,
    dtype: _np.dtype,
    lparts: list,
    rparts: list,
    direction: int,
    tolerance: Any,
    exact: bool,
    sort: bool,
    device: str,
) -> Any:
    """The gather map (numpy) of host keys and `by` parts joined on `device`: 'cpu', or 'cuda'
    / 'cuda:N' (the keys and parts copied there through torch, factorized and joined there, the
    map copied back)."""
    n = len(lx)
    lx, rx = _np.ascontiguousarray(lx, dtype=kd), _np.ascontiguousarray(rx, dtype=kd)
    if device == "cpu":
        keys = _Keys(lx, rx, kd, dtype, "numpy", None)
        lcodes = rcodes = None
        groups = 0
        if lparts:
            lcodes, rcodes, groups = _group_codes("numpy", lparts, rparts, n)
            lcodes, rcodes = _contiguous_int64("numpy", lcodes), _contiguous_int64("numpy", rcodes)
        return _gather_map(keys, lcodes, rcodes, groups, direction, tolerance, exact, sort, 0)
    if not isinstance(device, str) or not device.startswith("cuda"):
        raise ValueError(f"gsearch.{fn}: device must be 'cpu' or 'cuda' ('cuda:N'), not {device!r}")
    moved = _to_device([lx, rx] + lparts + rparts, device)
    k = len(lparts)
    gl, gr, glb, grb = moved[0], moved[1], moved[2 : 2 + k], moved[2 + k :]
    dev = gl.device.index if gl.device.index is not None else _torch().cuda.current_device()
    with _StreamScope("torch", dev, None) as scope:
        keys = _Keys(gl, gr, kd, dtype, "torch", dev)
        lcodes = rcodes = None
        groups = 0
        if k:
            lcodes, rcodes, groups = _group_codes("torch", glb, grb, n)
            lcodes, rcodes = _contiguous_int64("torch", lcodes), _contiguous_int64("torch", rcodes)
        return _gather_map(keys, lcodes, rcodes, groups, direction, tolerance, exact, sort, scope.handle).cpu().numpy()


@_public
def merge_asof(
    left: Any,
    right: Any,
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    left_index: bool = False,
    right_index: bool = False,
    by: Any = None,
    left_by: Any = None,
    right_by: Any = None,
    suffixes: Sequence = ("_x", "_y"),
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    direction: AsofDirection = "backward",
    device: str = "cpu",
) -> Any:
    """pandas.merge_asof, by gsearch's as-of join: the same frame (columns, their order and
    dtypes, index, values) and the same errors.

    For each left row, the right row whose `on` key is the closest in `direction` (among the
    right rows of the same `by` values), as :func:`asof_indices`; the result is left's columns,
    then right's (less its `on` and `by` columns of the same names as left's, which pandas
    drops), gathered, with the right columns of unmatched rows missing (int columns become
    float64 with NaN, bool ones object, datetimes NaT, extension dtypes their NA), and
    overlapping names suffixed.

    Parameters
    ----------
    left, right : pandas.DataFrame or named pandas.Series
        Both sorted by their key (pandas' rule: "left keys must be sorted" otherwise).
    on, left_on, right_on : label, optional
        The key column (one), of one dtype on both sides: integers, floats, datetime64 (tz-aware
        too), timedelta64, pandas' nullable integer / float dtypes (without NA).
    left_index, right_index : bool, optional
        The key is the side's (one-level) index. Supported: both, and ``left_on=`` with
        ``right_index=True``; ``left_index=True`` with ``right_on=`` is not (pandas fills the
        right key column's unmatched rows from the left index there): NotImplementedError,
        pass ``left.reset_index()`` and ``left_on=`` instead.
    by, left_by, right_by : label or list of labels, optional
        Match only rows of equal values in these columns (any dtypes; nulls equal, as pandas).
    suffixes : (str or None, str or None), optional
        For overlapping column names, as pandas.
    tolerance : int, float or datetime.timedelta / pandas.Timedelta, optional
        The largest distance of a match, inclusive, of the key's kind (pandas' rule).
    allow_exact_matches : bool, optional
        False: strictly before (backward) or after (forward) the left key.
    direction : {'backward', 'forward', 'nearest'}, optional
        As in :func:`asof_indices`.
    device : {'cpu', 'cuda', 'cuda:N'}, optional
        Where the join runs. 'cuda' (torch with CUDA) copies the key columns (8 bytes a row of
        each side for int64 / datetime keys) and the `by` columns (numeric ones as they are,
        others as int64 codes factorized by pandas on the CPU) to the GPU, factorizes the `by`
        columns there, joins there, and copies the gather map back (8 bytes a left row); the
        frames themselves never move: the gather of the right's columns runs on the CPU. The
        copies cost about (bytes moved) / (the host link's bandwidth, ~25 GB/s on PCIe 5)
        plus a few launches: worth it for large joins with many groups.

    Returns
    -------
    pandas.DataFrame
        Equal to ``pandas.merge_asof(left, right, ...)`` with the same arguments.

    Raises
    ------
    pandas.errors.MergeError, ValueError, TypeError, KeyError
        Where pandas raises them, with its messages (unsorted keys, null keys, keys of different
        dtypes, a bad tolerance, direction or suffixes, missing columns).
    NotImplementedError
        Index levels as keys, arrays as keys, ``left_index=True`` with ``right_on``.

    Notes
    -----
    Where they differ from pandas' own: float16 keys are joined (widened to float32; pandas
    refuses them), and integer distances are exact (pandas subtracts in the key's dtype and
    wraps past its range: only keys near the dtype's limits, with a tolerance or 'nearest', can
    differ). See docs/semantics.md.

    Examples
    --------
    >>> import pandas as pd, gsearch
    >>> quotes = pd.DataFrame({"time": [1, 2, 5, 9], "bid": [10.0, 10.5, 11.0, 11.5]})
    >>> trades = pd.DataFrame({"time": [2, 6, 10], "qty": [100, 200, 300]})
    >>> gsearch.merge_asof(trades, quotes, on="time", tolerance=3)
       time  qty   bid
    0     2  100  10.5
    1     6  200  11.0
    2    10  300  11.5
    """
    pd = _pandas()
    fn = "merge_asof"
    d = _check_direction(direction)
    exact = _check_exact(allow_exact_matches)
    left, right = _pandas_operand(pd, left), _pandas_operand(pd, right)
    if left.columns.nlevels != right.columns.nlevels:
        raise _merge_error(
            "Not allowed to merge between different levels. "
            f"({left.columns.nlevels} levels on the left, {right.columns.nlevels} on the right)"
        )
    li, ri = bool(left_index), bool(right_index)
    lon, ron = _pandas_on(pd, left, right, on, left_on, right_on, li, ri)
    if by is not None:
        if left_by is not None or right_by is not None:
            raise _merge_error("Can only pass by OR left_by and right_by")
        left_by = right_by = by
    if left_by is None and right_by is not None:
        raise _merge_error("missing left_by")
    if left_by is not None and right_by is None:
        raise _merge_error("missing right_by")
    lkey = left.index if li else _pandas_column(fn, left, lon[0], key=True)
    rkey = right.index if ri else _pandas_column(fn, right, ron[0], key=True)
    types = pd.api.types
    if any(types.is_object_dtype(k.dtype) or types.is_string_dtype(k.dtype) for k in (lkey, rkey)):
        raise _merge_error(
            f"Incompatible merge dtype, {lkey.dtype!r} and {rkey.dtype!r}, both sides must have numeric dtype"
        )
    lby = [] if left_by is None else (list(left_by) if types.is_list_like(left_by) else [left_by])
    rby = [] if right_by is None else (list(right_by) if types.is_list_like(right_by) else [right_by])
    if len(lby) != len(rby):
        raise _merge_error("left_by and right_by must be the same length")
    lbycols = [_pandas_column(fn, left, b) for b in lby]
    rbycols = [_pandas_column(fn, right, b) for b in rby]
    for i, (lc, rc) in enumerate(zip(lbycols, rbycols)):
        if lc.dtype != rc.dtype:
            if isinstance(lc.dtype, pd.CategoricalDtype) and isinstance(rc.dtype, pd.CategoricalDtype):
                raise _merge_error(
                    f"incompatible merge keys [{i}] {lc.dtype!r} and {rc.dtype!r}, both sides category, but not equal ones"
                )
            raise _incompatible_keys(i, lc.dtype, rc.dtype)
    if lkey.dtype != rkey.dtype:
        raise _incompatible_keys(len(lby), lkey.dtype, rkey.dtype)
    _pandas_tolerance(pd, tolerance, lkey.dtype)
    if li and not ri:
        raise NotImplementedError(
            "gsearch.merge_asof: left_index=True with right_on is not supported (pandas fills the "
            "right key column's unmatched rows from the left index): pass left.reset_index() and "
            "left_on=, or use pandas.merge_asof"
        )
    # The right's key and by columns of the left's names are dropped, as pandas drops them.
    right_drop = [r for l, r in zip(lby + lon, rby + ron) if l is not None and l == r]
    lx, lnull, tdtype = _pandas_key(pd, lkey)
    rx, rnull, _ = _pandas_key(pd, rkey)
    kd = _compute_dtype(fn, _Arr(lx, "numpy", None, lx.dtype), "the key")
    tol = _tolerance(tolerance, tdtype, kd)
    _raise_nulls(lnull, rnull, _np.ascontiguousarray(lx, dtype=kd), False, 0)
    lparts, rparts = [], []
    for lc, rc in zip(lbycols, rbycols):
        lp, rp = _pandas_by_parts(pd, lc, rc)
        lparts.append(lp)
        rparts.append(rp)
    n = len(lx)
    gathered = _host_join(fn, lx, rx, kd, tdtype, lparts, rparts, d, tol, exact, False, device)
    if ri or li:
        index = left.index.take(_np.arange(n)) if n > 0 else right.index.take(gathered)
    else:
        index = pd.RangeIndex(n)
    keep = None
    if right_drop:
        labels = _plain_labels(right.columns)
        if labels is None:
            right = right.drop(columns=right_drop)
        else:  # the same columns by position, without the frame drop()'s Index operations
            dropped = set(right_drop)
            keep = [j for j, label in enumerate(labels) if label not in dropped]
    return _pandas_result(pd, left, right, keep, gathered, index, suffixes)

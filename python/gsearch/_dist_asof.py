"""gsearch.distributed.asof_indices (distributed.py re-exports it): the as-of join's gather map
over the ranks of a communicator, gsearch.asof_indices' arguments and errors; the `by` columns
numbered alike on every rank (small-range integers by their offset from the least value of all
ranks, anything else by the union of the ranks' distinct right values), then
gsearch::dist::asof_join (bind_dist.cpp's dist_asof_join)."""

from __future__ import annotations

import pickle as _pickle
from typing import Any

import numpy as _np

from . import _asof, _core
from ._arrays import (
    _INT64,
    ArrayLike,
    _Arr,
    _StreamScope,
    _adopt,
    _cupy,
    _new_empty,
    _shape,
    _torch,
    _where,
)
from ._dist_comm import _agree, _agreed, _bind, _public, _together


# --- as-of join -----------------------------------------------------------------------------------


def _gather_objects(c: Any, mine: Any) -> list:
    """Every rank's `mine` (any picklable value), in rank order: two allgathers, the pickles'
    lengths, then the pickles padded to the longest. Collective: every rank calls it at the same
    point, after an agreement."""
    data = _np.frombuffer(_pickle.dumps(mine, protocol=_pickle.HIGHEST_PROTOCOL), dtype=_np.uint8)
    size = int(c.size)
    lengths = _np.empty(size, dtype=_np.int64)
    c.allgather(_np.array([data.size], dtype=_np.int64).view(_np.uint8), lengths.view(_np.uint8))
    width = max(int(lengths.max()), 1)
    padded = _np.zeros(width, dtype=_np.uint8)
    padded[: data.size] = data
    everyone = _np.empty(width * size, dtype=_np.uint8)
    c.allgather(padded, everyone)
    return [_pickle.loads(everyone[r * width : r * width + int(lengths[r])].tobytes()) for r in range(size)]


def _xp_of(fw: str) -> Any:
    return _torch() if fw == "torch" else _cupy() if fw == "cupy" else _np


def _canonical(fw: str, x: Any) -> Any:
    """A `by` column as the values that tell its groups apart, as gsearch.asof_indices compares
    them: datetimes as int64, bool as uint8, 16-bit floats as float32."""
    if fw == "torch":
        torch = _torch()
        if x.dtype == torch.bool:
            return x.to(torch.uint8)
        if x.dtype in (torch.bfloat16, torch.float16):
            return x.float()
        return x
    kind = x.dtype.kind
    if kind in "mM":
        return (_np.ascontiguousarray(x) if fw == "numpy" else x).view(_np.int64)
    if kind == "b":
        return x.view(_np.uint8) if fw == "numpy" else x.astype(_np.uint8)
    if x.dtype == _np.float16:
        return x.astype(_np.float32)
    return x


def _floating(fw: str, x: Any) -> bool:
    return bool(x.dtype.is_floating_point) if fw == "torch" else x.dtype.kind == "f"


def _integral(fw: str, x: Any) -> bool:
    if fw == "torch":
        return not x.dtype.is_floating_point and not x.dtype.is_complex
    return x.dtype.kind in "iu"


def _objects(fw: str, x: Any) -> bool:
    """An object column (numpy): told apart by pandas' hash equality where pandas imports (as
    gsearch.asof_indices), else by a sort."""
    if fw != "numpy" or x.dtype.kind != "O":
        return False
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def _to_host(fw: str, x: Any) -> _np.ndarray:
    if fw == "torch":
        return x.cpu().numpy()
    if fw == "cupy":
        return x.get()
    return _np.asarray(x)


def _full(fw: str, x: Any, n: int, value: int) -> Any:
    """n int64 values `value` beside x (its framework and device)."""
    if fw == "torch":
        torch = _torch()
        return torch.full((n,), value, dtype=torch.int64, device=x.device)
    return _xp_of(fw).full(n, value, dtype=_np.int64)


def _distinct(fw: str, x: Any) -> _np.ndarray:
    """The distinct values of a canonical column, on the host: sorted (NaN once, last), or for an
    object column pandas' uniques (nulls kept)."""
    if _objects(fw, x):
        import pandas as pd

        return _np.asarray(pd.unique(x), dtype=object)
    if fw == "numpy":
        return _np.unique(x)
    u = _torch().unique(x) if fw == "torch" else _cupy().unique(x)
    return _np.unique(_to_host(fw, u))  # NaN once (a CUDA unique keeps NaNs apart)


def _union(parts: list, objects: bool) -> _np.ndarray:
    """The ranks' distinct values of one column as one array, the same on every rank: sorted
    unique, or for objects their concatenation in rank order (pandas' factorization numbers it)."""
    parts = [p for p in parts if p.size]
    if objects:
        return _np.concatenate(parts) if parts else _np.empty(0, dtype=object)
    return _np.unique(_np.concatenate(parts)) if parts else _np.empty(0, dtype=_np.int64)


def _codes_in(fw: str, x: Any, union: _np.ndarray) -> tuple:
    """(codes, k): each value of the canonical column x numbered by its place among the values of
    `union` (the same array on every rank), NaN (or null) one code, and k - 1 for a value not
    among them: a group with no right row, which matches nothing."""
    n = int(x.shape[0])
    if _objects(fw, x):
        import pandas as pd

        codes, uniques = pd.factorize(union, use_na_sentinel=True)
        null = len(uniques)
        k = null + (1 if (codes < 0).any() else 0) + 1
        found = _np.asarray(pd.Index(uniques).get_indexer(x), dtype=_np.int64)
        found[found < 0] = k - 1
        if k - 1 != null:
            found[_np.asarray(pd.isna(x), dtype=bool)] = null
        return found, k
    floating = _floating(fw, x)
    has_nan = bool(floating and union.size and _np.isnan(union).any())
    values = union[~_np.isnan(union)] if has_nan else union
    k = int(values.size) + has_nan + 1
    absent = k - 1
    xp = _xp_of(fw)
    nan = xp.isnan(x) if floating else None
    if values.size == 0:
        codes = _full(fw, x, n, absent)
    elif fw == "torch":
        u = xp.from_numpy(_np.ascontiguousarray(values)).to(device=x.device, dtype=x.dtype)
        v = xp.where(nan, xp.zeros_like(x), x) if floating else x
        i = xp.searchsorted(u, v.contiguous())
        hit = u[xp.clamp(i, max=int(values.size) - 1)] == v
        if floating:
            hit &= ~nan
        codes = xp.where(hit, i, xp.full_like(i, absent))
    else:
        u = values if fw == "numpy" else xp.asarray(values)
        v = xp.where(nan, 0, x).astype(x.dtype, copy=False) if floating else x
        i = xp.searchsorted(u, v).astype(_np.int64, copy=False)
        hit = u[xp.minimum(i, int(values.size) - 1)] == v
        if floating:
            hit &= ~nan
        codes = xp.where(hit, i, absent).astype(_np.int64, copy=False)
    if has_nan:
        codes[nan] = int(values.size)
    return codes, k


def _offset_codes(fw: str, x: Any, lo: int) -> Any:
    """x - lo as int64 (integers of a small range; no copy where lo is 0 and x int64). Computed
    in int64, modulo 2**64: exact, since the difference is small."""
    x64 = x.to(_torch().int64) if fw == "torch" else x.astype(_np.int64, copy=False)
    if lo == 0:
        return x64
    return x64 - (lo - 2**64 if lo >= 2**63 else lo)


def _renumber(fn: str, comm: Any, c: Any, fw: str, lcodes: Any, rcodes: Any) -> tuple:
    """Group codes numbered again by the union of every rank's distinct right codes (left codes
    outside it: one code of no right row): (left, right, k), k about the right rows at most."""
    mine = _agreed(fn, comm, lambda: _distinct(fw, rcodes))
    union = _union(_gather_objects(c, mine), False)

    def numbered() -> tuple:
        cl, k = _codes_in(fw, lcodes, union)
        return cl, _codes_in(fw, rcodes, union)[0], k

    return _agreed(fn, comm, numbered)


def _sharded_codes(fn: str, comm: Any, c: Any, fw: str, lcols: list, rcols: list, everyone: list) -> tuple:
    """(left codes, right codes, groups) of the canonical `by` columns, one code for one value
    tuple on every rank (the library sends each rank's right codes to every rank).

    Each column: integers whose values over all ranks span a small range, by their offset from
    the least (no copy where that is 0 and they are int64, as gsearch.asof_indices does); any
    other against the union of every rank's distinct right values, gathered (a left value
    outside it matches nothing: one code of no right row). The columns combine into one code per
    tuple; where that range would outgrow int64, or in the end the rows, the right's tuples are
    numbered by their union across the ranks."""
    total = sum(s["n"] + s["m"] for s in everyone)
    limit = 4 * total + 1024
    offsets: list = []
    for i in range(len(lcols)):
        spans = [s["ranges"][i] for s in everyone if s["ranges"][i] is not None]
        lo = min((a for a, _ in spans), default=0)
        hi = max((b for _, b in spans), default=0)
        offsets.append((lo, hi - lo + 1) if spans and hi - lo < limit else None)
    need = [i for i, o in enumerate(offsets) if o is None]
    unions: dict = {}
    if need:
        mine = _agreed(fn, comm, lambda: [_distinct(fw, rcols[i]) for i in need])
        gathered = _gather_objects(c, mine)
        for j, i in enumerate(need):
            unions[i] = _union([g[j] for g in gathered], _objects(fw, rcols[i]))

    def column(i: int) -> tuple:
        if offsets[i] is not None:
            lo, k = offsets[i]
            return _offset_codes(fw, lcols[i], lo), _offset_codes(fw, rcols[i], lo), k
        cl, k = _codes_in(fw, lcols[i], unions[i])
        return cl, _codes_in(fw, rcols[i], unions[i])[0], k

    columns = _agreed(fn, comm, lambda: [column(i) for i in range(len(lcols))])
    lcodes, rcodes, k = columns[0]
    for cl, cr, kc in columns[1:]:
        if k * kc >= 2**63:
            lcodes, rcodes, k = _renumber(fn, comm, c, fw, lcodes, rcodes)
        if k * kc >= 2**63:  # the same on every rank: all raise
            raise ValueError(f"gsearch.distributed.{fn}: the by columns' value tuples are too many to number in int64")
        lcodes, rcodes = _agreed(fn, comm, lambda a=lcodes, b=rcodes, kc=kc, cl=cl, cr=cr: (a * kc + cl, b * kc + cr))
        k *= kc
    if k > limit:
        lcodes, rcodes, k = _renumber(fn, comm, c, fw, lcodes, rcodes)
    return lcodes, rcodes, max(int(k), 1)


def _column_name(fw: str, C: _Arr) -> str:
    """A by column's dtype as the ranks compare it (strings and objects by kind: their widths
    differ with the data)."""
    if fw != "torch" and C.dtype.kind in "USO":
        return {"U": "str", "S": "bytes", "O": "object"}[C.dtype.kind]
    return str(_asof._key_dtype_name(C))


_ARGUMENTS = ("direction", "allow_exact_matches", "tolerance", "sort", "sharded", "numbers of by columns",
              "by column dtypes")


def _same_arguments(fn: str, everyone: list) -> None:
    """ValueError on every rank (each has every rank's arguments) unless all passed the same."""
    for r, s in enumerate(everyone):
        for name, a, b in zip(_ARGUMENTS, everyone[0]["args"], s["args"]):
            if a != b:
                raise ValueError(
                    f"gsearch.distributed.{fn}: the ranks pass different {name} (rank 0: {a}, rank {r}: {b}); "
                    "every rank passes the same arguments, only its part of the data differs"
                )


def _left_in_order(fn: str, everyone: list) -> None:
    """pandas' "left keys must be sorted" on every rank where one rank's left keys start below
    the last of the nearest non-empty rank before it (the ranks' parts in rank order are the left
    keys; each part's own order is checked by the library, and NaN keys are its error first)."""
    if any(s["left"][1] for s in everyone):
        return
    before = None
    for r, s in enumerate(everyone):
        any_, _, first, last = s["left"]
        if not any_:
            continue
        if before is not None and first < before[1]:
            raise ValueError(
                f"left keys must be sorted (gsearch.distributed.{fn}: rank {r}'s first left key {first!r} is below "
                f"rank {before[0]}'s last {before[1]!r}; the ranks' left keys in rank order are the left keys)"
            )
        before = (r, last)


@_public
def asof_indices(
    left_on: ArrayLike,
    right_on: ArrayLike,
    *,
    left_by: Any = None,
    right_by: Any = None,
    direction: str = "backward",
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    sort: bool = False,
    comm: Any = None,
    sharded: bool = True,
) -> Any:
    """gsearch.asof_indices (pandas.merge_asof's matches) of this rank's left rows against right
    rows spread across the ranks: global right row numbers.

    Parameters
    ----------
    left_on : array_like, 1-D
        This rank's left keys (the ranks' parts in rank order are the left keys: sorted, as
        pandas requires, unless `sort`).
    right_on : array_like, 1-D
        With `sharded` (the default), this rank's part of the right keys: the parts of all ranks,
        concatenated in rank order, are the right keys (sorted unless `sort`; empty parts are
        fine), and rank r's row i is right row ``offset_r + i``. Without, every rank holds all
        the right keys (replicated: nothing is exchanged).
    left_by, right_by : array_like or sequence of array_like, optional
        Groups, as in gsearch.asof_indices: one row per key of this rank, any dtype. A value is
        the same group on every rank.
    direction, tolerance, allow_exact_matches, sort
        As in gsearch.asof_indices, the same on every rank (ValueError on every rank if not).
    comm : communicator, optional
        See the module's docstring.
    sharded : bool, optional
        Whether `right_on` (and `right_by`) is this rank's part (True) or all of it (False).

    Returns
    -------
    right_index : int64 array, len(left_on)
        For each of this rank's left rows, the global right row matched to it, or -1:
        ``gsearch.asof_indices(all_left, all_right, ...)`` restricted to this rank's rows, with
        `all_left` and `all_right` the concatenations of the ranks' parts. numpy for numpy input,
        else the keys' framework and device.

    Raises
    ------
    ValueError, TypeError, pandas.errors.MergeError
        gsearch.asof_indices' errors, on every rank (the failed rank's own, elsewhere the same
        type naming it), and pandas' "left keys must be sorted" where a rank's left keys start
        below those of the rank before it; the ranks passing different arguments; the
        communicator's errors (see :func:`searchsorted`).

    Notes
    -----
    Sharded, each rank receives from every rank the right rows its left keys can match: those
    in its left keys' range and, per group, the last before it and the first after it (all of
    the right's parts with ``sort=True``), then joins its left rows: the result of
    gsearch::dist::asof_join.
    `by` columns are numbered consistently across the ranks: integers of a small range (group
    ids) by their offset from the least value over all ranks, any other by the union of the
    ranks' distinct right values (gathered to every rank; a left value outside it matches
    nothing). Replicated, each rank numbers its own, with no exchange.
    """
    fn = "asof_indices"
    qual = f"distributed.{fn}"

    def prepare() -> tuple:
        d = _asof._check_direction(direction)
        exact = _asof._check_exact(allow_exact_matches)
        if (left_by is None) != (right_by is None):
            raise _asof._merge_error("missing left_by" if left_by is None else "missing right_by")
        L, R = _asof._key_arrays(qual, left_on, right_on)
        n, m = _shape(L)[0], _shape(R)[0]
        lcols = _asof._by_columns(qual, left_by, n, "left_by", "left_on")
        rcols = _asof._by_columns(qual, right_by, m, "right_by", "right_on")
        if len(lcols) != len(rcols):
            raise _asof._merge_error("left_by and right_by must be the same length")
        lcols = [_adopt(lc, rc) for lc, rc in zip(lcols, rcols)]
        rcols = [_adopt(rc, lc) for lc, rc in zip(lcols, rcols)]
        for i, (lc, rc) in enumerate(zip(lcols, rcols)):  # pandas' order: the by columns, then the key
            if lc.dev != L.dev or rc.dev != L.dev:
                raise ValueError(f"gsearch.{qual}: the by columns must be on the keys' device ({_where(L.dev)})")
            if not _asof._same_dtype(lc, rc):
                raise _asof._incompatible_keys(i, _asof._key_dtype_name(lc), _asof._key_dtype_name(rc))
        if not _asof._same_dtype(L, R):
            raise _asof._incompatible_keys(len(lcols), _asof._key_dtype_name(L), _asof._key_dtype_name(R))
        kd = _asof._compute_dtype(qual, L, "left_on")
        tol = _asof._tolerance(tolerance, L.dtype.newbyteorder("="), kd)
        args = (direction, exact, repr(tol), bool(sort), bool(sharded), len(lcols),
                tuple(_column_name(L.fw, C) for C in lcols))
        return d, exact, tol, L, R, lcols, rcols, kd, args, _bind(fn, comm, L.dev)

    d, exact, tol, L, R, lcols, rcols, kd, args, c = _agreed(fn, comm, prepare)
    _agree(c, fn, kd, L.dev)
    fw, dev = L.fw, L.dev
    with _StreamScope(fw, dev, None) as scope:

        def convert() -> tuple:
            keys = _asof._keys(qual, L, R, bool(sort), scope.handle)
            lc = [_canonical(fw, C.x) for C in lcols]
            rc = [_canonical(fw, C.x) for C in rcols]
            lx, n = keys.left, int(keys.left.shape[0])
            has_nan = bool(n and kd.kind == "f" and bool(_xp_of(fw).isnan(lx).any()))
            ends = (n > 0, has_nan, lx[0].item() if n else None, lx[n - 1].item() if n else None)
            ranges = []
            for a, b in zip(lc, rc):
                sides = [x for x in (a, b) if x.shape[0]]
                ranges.append(
                    (min(int(x.min()) for x in sides), max(int(x.max()) for x in sides))
                    if sides and _integral(fw, a) else None
                )
            summary = {"args": args, "n": n, "m": int(keys.right.shape[0]), "left": ends, "ranges": ranges}
            return keys, lc, rc, summary

        keys, lc, rc, summary = _agreed(fn, comm, convert)
        everyone = _gather_objects(c, summary)
        _same_arguments(fn, everyone)
        if not sort:
            _left_in_order(fn, everyone)
        lcodes = rcodes = None
        groups = 0
        if lcols:
            if sharded:
                lcodes, rcodes, groups = _sharded_codes(fn, comm, c, fw, lc, rc, everyone)
            else:
                n = summary["n"]
                lcodes, rcodes, groups = _agreed(
                    fn, comm, lambda: _asof._group_codes(fw, [C.x for C in lcols], [C.x for C in rcols], n)
                )
        with _together(c):
            lx, rx, t, ed = keys.left, keys.right, tol, keys.kd
            if isinstance(t, tuple):  # ("flip", t): beyond the signed dtype's range
                lx, rx, t = _asof._flip(lx, fw, ed), _asof._flip(rx, fw, ed), t[1]
                ed = _np.dtype(f"uint{ed.itemsize * 8}")
            tol_arr = None if t is None else _np.array([t], dtype=ed)
            if lcols:
                lcodes, rcodes = _asof._contiguous_int64(fw, lcodes), _asof._contiguous_int64(fw, rcodes)
            out = _new_empty(fw, dev, (int(lx.shape[0]),), _INT64)
        _core.dist_asof_join(
            c, fw, lx, rx, out, lcodes, rcodes, int(groups), d, exact, tol_arr, True, bool(sort), not sharded,
            scope.handle,
        )
    return out

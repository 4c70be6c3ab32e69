"""gsearch.dask: searchsorted, isin, find, count, sort and join of Dask arrays, by partitions: gsearch's
single-process functions run on the blocks (numpy blocks on the CPU, cupy blocks on a GPU), and
the results are Dask arrays, lazy like the inputs. Dask is imported when a function runs, so
``import gsearch`` never needs it.

Layouts:

- A key set (or an isin test set) given as a numpy / cupy array is *replicated*: it goes into the
  graph once and every block of the queries is searched against it (a block-wise map).
- Keys given as a Dask array are *sharded*: its chunks, in order, are the global sorted order
  (as :func:`sort` leaves them; chunk sizes may be unknown). Each chunk's size and first key are
  read (tiny tasks), each block of queries is split by owner (the chunk whose range holds a
  query's answer), each piece is searched in its own chunk only, and the answers are put back
  in query order: O(Q log K) work, each query moved to one chunk, instead of every query
  searched in every chunk.
- Test elements given as a Dask array are gathered into one chunk and replicated (test sets are
  small beside the data they test), as gsearch::dist::isin does.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from . import _core, _find, _merge, _search
from ._arrays import _check_supported, _classify, _convert, _StreamScope, _widened
from ._common import _NUMPY_SIDES

__all__ = ["count", "find", "isin", "join", "merge_asof", "searchsorted", "sort"]

# Samples per output partition that sort's splitters are chosen from: the partitions' sizes are
# within about 1/_OVERSAMPLE of each other.
_OVERSAMPLE = 32


def _da() -> Any:
    try:
        import dask.array as da
    except ImportError as e:
        raise ImportError("gsearch.dask needs dask: pip install 'dask[array]'") from e
    return da


def _xp(x: Any) -> Any:
    """The array module of a block: cupy for cupy blocks, else numpy."""
    if type(x).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return _np


def _as_dask(x: Any) -> Any:
    da = _da()
    if isinstance(x, da.Array):
        return x
    return da.from_array(_np.asarray(x) if not hasattr(x, "shape") else x, chunks=-1, name=False)


def _replicated(x: Any) -> Any:
    """x (numpy, cupy, or a Dask array) flat, as one chunk: stored (or concatenated) once in the
    graph, and given whole to every task that reads it."""
    da = _da()
    if not isinstance(x, da.Array):
        x = da.from_array(x, chunks=-1)
    return x.ravel().rechunk(-1)


def _blockwise(fn: Any, x: Any, table: Any, dtype: Any) -> Any:
    """fn(block, table) for every block of x (the same shape and chunks out), with the whole
    one-chunk 1-D array `table` beside each."""
    da = _da()
    index = "".join(chr(ord("a") + i) for i in range(x.ndim))
    meta = _xp(x._meta).empty((0,) * x.ndim, dtype=dtype)
    return da.blockwise(fn, index, x, index, table, "z", concatenate=True, dtype=dtype, meta=meta)


# --- searchsorted -------------------------------------------------------------------------------

_NOT_SORTED = "(ascending, NaN last, -0.0 == 0.0); check_sorted=False skips this check"


def _is_sorted(keys: Any) -> bool:
    """keys (a 1-D numpy / cupy array) sorted in gsearch's key order: the check of the
    one-process searchsorted's check_sorted=True (one O(K) read, on the keys' device)."""
    K = _classify(keys, "keys")
    _check_supported(K.dtype, "key")
    with _StreamScope(K.fw, K.dev, None) as scope:
        return bool(_core.is_sorted(_convert(K, _widened(K.dtype)), scope.handle))


def _head(block: Any, k: int, check: bool) -> tuple:
    """A key chunk's size, first and last keys (None when empty), after the check that chunk k
    is sorted (with `check`)."""
    if check and not _is_sorted(block):
        raise ValueError(f"gsearch.dask.searchsorted: key chunk {k} is not sorted {_NOT_SORTED}")
    return len(block), (block[:1] if len(block) else None), (block[-1:] if len(block) else None)


def _check_chunk_order(heads: list, owners: list) -> None:
    """Each non-empty key chunk ends at or before the next one begins (their keys sorted inside:
    _head): the chunks, in order, are the global sorted order."""
    for k, j in zip(owners, owners[1:]):
        last, first = heads[k][2], heads[j][1]
        if not _is_sorted(_xp(last).concatenate([last, first])):
            raise ValueError(
                f"gsearch.dask.searchsorted: the keys are not sorted across chunks: key chunk {j} "
                f"begins before key chunk {k} ends (the chunks, in order, must be the global "
                f"sorted order, as gsearch.dask.sort returns them) {_NOT_SORTED}"
            )


def _plan(heads: list, check: bool) -> tuple:
    """From every key chunk's (size, first key, last key): (the first keys of the non-empty
    chunks after the first non-empty one: the boundaries a query is routed by; the non-empty
    chunks' numbers; every chunk's global offset), after the check of the chunks' order (with
    `check`)."""
    offsets = _np.concatenate([[0], _np.cumsum([h[0] for h in heads])]).astype(_np.int64)
    owners = [k for k, h in enumerate(heads) if h[0]]
    if check:
        _check_chunk_order(heads, owners)
    firsts = [heads[k][1] for k in owners[1:]]
    boundaries = _xp(firsts[0]).concatenate(firsts) if firsts else None
    return boundaries, owners, offsets


def _route(queries: Any, plan: tuple, side: str, chunks: int) -> tuple:
    """A block of queries split by owning key chunk: (the stable order that groups them by owner,
    the piece for each key chunk, in that order). Side 'left' routes a query equal to a chunk's
    first key to the chunk before (whose keys are all smaller); 'right' to that chunk."""
    boundaries, owners, _ = plan
    xp = _xp(queries)
    q = queries.ravel()
    if boundaries is None:  # at most one non-empty chunk owns everything
        owner = xp.zeros(len(q), dtype=_np.int64)
    else:
        owner = _search.searchsorted(boundaries, q, side)
    order = _merge.argsort(owner)
    counts = xp.bincount(owner, minlength=max(len(owners), 1))
    pieces = xp.split(q[order], [int(c) for c in xp.cumsum(counts)[:-1]])
    by_chunk = [q[:0]] * chunks
    for i, k in enumerate(owners or [0]):
        by_chunk[k] = pieces[i]
    return order, by_chunk


def _answer(piece: Any, keys: Any, plan: tuple, k: int, side: str) -> Any:
    """The global indices of the queries routed to key chunk k."""
    return plan[2][k] + _search.searchsorted(keys, piece, side)


def _assemble(routed: tuple, answers: list, shape: tuple) -> Any:
    order, _ = routed
    xp = _xp(order)
    out = xp.empty(len(order), dtype=_np.int64)
    out[order] = xp.concatenate(answers) if answers else out[:0]
    return out.reshape(shape)


def _sharded_searchsorted(a: Any, v: Any, side: str, check: bool) -> Any:
    import dask

    da = _da()
    delayed = dask.delayed
    keys = list(a.to_delayed().ravel())
    plan = delayed(_plan)([delayed(_head)(key, k, check) for k, key in enumerate(keys)], check)
    grid = v.to_delayed()
    blocks = _np.empty(grid.shape, dtype=object)
    for idx in _np.ndindex(grid.shape):
        routed = delayed(_route, nout=2)(grid[idx], plan, side, len(keys))
        answers = [delayed(_answer)(routed[1][k], key, plan, k, side) for k, key in enumerate(keys)]
        shape = tuple(c[i] for c, i in zip(v.chunks, idx))
        block = delayed(_assemble)(routed, answers, shape)
        blocks[idx] = da.from_delayed(block, shape=shape, dtype=_np.int64, meta=_xp(v._meta).empty((0,) * v.ndim, _np.int64))
    return da.block(blocks.tolist()) if v.ndim else blocks[()]


def searchsorted(a: Any, v: Any, side: str = "left", *, check_sorted: bool = True) -> Any:
    """numpy.searchsorted of a Dask array of queries (gsearch.searchsorted on each block).

    Parameters
    ----------
    a : numpy / cupy array, or Dask array, 1-D
        Sorted keys (NaN last, -0.0 equal to 0.0). An in-memory array is replicated: every
        block of `v` is searched against all of it. A Dask array is sharded: its chunks,
        concatenated, are sorted (as :func:`sort` returns them), and each query is searched in
        the one chunk that holds its answer (see the module's docstring).
    v : Dask array (or array_like), any shape
        The queries.
    side : {'left', 'right'}, optional
        As in numpy.
    check_sorted : bool, optional
        True (the default): check that `a` is sorted, as gsearch.searchsorted(...,
        check_sorted=True) does (ValueError if not), one O(K) read of the keys: unsorted keys
        would give wrong answers without an error (sharded ones, chunks out of order, even
        answers outside numpy's "unspecified" ones). In-memory keys are checked at once, in
        the call (they are concrete, and small beside the queries); a Dask array's in the
        graph (each chunk's order in the task that reads its size and first key, the chunks'
        order from their ends in the routing plan), so the call stays lazy and the error is
        raised when the result is computed. False: no check (unsorted keys then give
        unspecified answers).

    Returns
    -------
    indices : Dask array of int64
        `v`'s shape and chunks: ``np.searchsorted(a, v, side)`` (indices into all of `a`).

    Raises
    ------
    ValueError
        A bad `side`, `a` not 1-D, in-memory keys not sorted (with `check_sorted`). When the
        result is computed: sharded keys not sorted (a chunk, or two chunks out of order; with
        `check_sorted`), and the per-block errors of gsearch.searchsorted (dtypes whose
        promotion would round, ...).
    """
    if not isinstance(side, str) or side not in _NUMPY_SIDES:
        raise ValueError(f"gsearch.dask.searchsorted: side must be 'left' or 'right', not {side!r}")
    if not isinstance(check_sorted, (bool, _np.bool_)):
        raise TypeError(f"gsearch.dask.searchsorted: check_sorted must be True or False, not {check_sorted!r}")
    da = _da()
    v = _as_dask(v)
    if getattr(a, "ndim", 1) != 1:
        raise ValueError(f"gsearch.dask.searchsorted: a must be 1-D, not of shape {a.shape}")
    if isinstance(a, da.Array):
        return _sharded_searchsorted(a, v, side, bool(check_sorted))
    if check_sorted and not _is_sorted(a):
        raise ValueError(f"gsearch.dask.searchsorted: the keys are not sorted {_NOT_SORTED}")
    return _blockwise(lambda q, keys: _search.searchsorted(keys, q, side), v, _replicated(a), _np.int64)


# --- isin -------------------------------------------------------------------------------------


def isin(element: Any, test_elements: Any, *, invert: bool = False) -> Any:
    """numpy.isin of a Dask array (gsearch.isin on each block).

    Parameters
    ----------
    element : Dask array (or array_like), any shape
        The elements.
    test_elements : array_like or Dask array
        The test set: an in-memory array goes into the graph once; a Dask array's chunks are
        gathered into one. Either way each block of `element` is tested against all of it.
    invert : bool, optional
        ``element not in test_elements``.

    Returns
    -------
    isin : Dask array of bool
        `element`'s shape and chunks. NaN is never a member; -0.0 == 0.0.
    """
    element = _as_dask(element)
    tests = test_elements if hasattr(test_elements, "shape") else _np.asarray(test_elements)
    return _blockwise(lambda e, t: _find.isin(e, t, invert=invert), element, _replicated(tests), bool)


# --- find, count --------------------------------------------------------------------------------


def _exclusive(sizes: list) -> list:
    out, at = [], 0
    for n in sizes:
        out.append(at)
        at += n
    return out


def _first(found: list, offsets: list) -> int:
    """The lowest global index among the blocks' answers (-1 for none)."""
    hits = [o + f for f, o in zip(found, offsets) if f >= 0]
    return min(hits) if hits else -1


def _first_array(found: list, offsets: list) -> Any:
    return _np.asarray(_first(found, offsets), dtype=_np.int64)


def _count_array(found: list) -> Any:
    return _np.asarray(sum(found), dtype=_np.int64)


def find(a: Any, value: Any, mode: str = "first", op: str = "==", *, hi: Any = None) -> Any:
    """gsearch.find over the blocks of a 1-D Dask array: global indices.

    Parameters
    ----------
    a : Dask array, 1-D
        The data (chunk sizes may be unknown).
    value, op, hi
        As in gsearch.find (``a op value``; 'in': ``value <= a < hi``).
    mode : {'first', 'any', 'count', 'all'}, optional
        'first': the lowest matching index, or -1; 'any': some matching index (each block's
        'any', the lowest of those), or -1; 'count': the number of matches; 'all': every
        matching index, ascending.

    Returns
    -------
    Dask array of int64
        0-d for 'first', 'any' and 'count'; 1-D of unknown chunk sizes for 'all'.

    Raises
    ------
    ValueError
        `a` not 1-D, a bad `mode`. gsearch.find's errors (a value the dtype does not hold,
        ...) are raised when the result is computed.
    """
    return _find_blocks("find", a, value, mode, op, hi)


def _find_blocks(fn: str, a: Any, value: Any, mode: str, op: str, hi: Any) -> Any:
    """find over the blocks, its errors named after the public function `fn`."""
    import dask

    da = _da()
    a = _as_dask(a)
    if a.ndim != 1:
        raise ValueError(f"gsearch.dask.{fn}: a must be 1-D, not of shape {a.shape}")
    if mode not in ("first", "any", "count", "all"):
        raise ValueError(f"gsearch.dask.{fn}: mode must be 'first', 'any', 'count' or 'all', not {mode!r}")
    delayed = dask.delayed
    blocks = list(a.to_delayed().ravel())
    one = lambda m: [delayed(_find.find)(b, value, m, op, hi=hi) for b in blocks]  # noqa: E731
    if mode == "count":
        return da.from_delayed(delayed(_count_array)(one("count")), shape=(), dtype=_np.int64)
    offsets = delayed(_exclusive)([delayed(len)(b) for b in blocks])
    if mode != "all":
        return da.from_delayed(delayed(_first_array)(one(mode), offsets), shape=(), dtype=_np.int64)
    parts = [
        da.from_delayed(offsets[k] + found, shape=(_np.nan,), dtype=_np.int64, meta=_xp(a._meta).empty(0, _np.int64))
        for k, found in enumerate(one("all"))
    ]
    return da.concatenate(parts)


def count(a: Any, value: Any, op: str = "==", *, hi: Any = None) -> Any:
    """The number of matches over the blocks of a 1-D Dask array: ``find(a, value, 'count', op,
    hi=hi)``, a 0-d Dask array of int64."""
    return _find_blocks("count", a, value, "count", op, hi)


# --- sort -----------------------------------------------------------------------------------------


def _samples(sorted_block: Any, k: int, want: int) -> tuple:
    """Evenly spaced samples of a sorted block: (keys, block number, positions, weight: the
    elements each stands for)."""
    n = len(sorted_block)
    s = min(n, want)
    positions = (_np.arange(s, dtype=_np.int64) * n) // max(s, 1)
    keys = sorted_block[_xp(sorted_block).asarray(positions)] if s else sorted_block[:0]
    return keys, k, positions, (n / s if s else 0.0)


def _splitters(samples: list, parts: int) -> list:
    """parts - 1 splitters (key, block, position) cutting the samples' total weight into equal
    parts. A splitter is a tag of the stable order (key, block, position), so equal keys can be
    cut between partitions and many duplicates do not unbalance them."""
    samples = [s for s in samples if len(s[0])]
    if not samples:
        return []
    xp = _xp(samples[0][0])
    keys = xp.concatenate([s[0] for s in samples])
    blocks = _np.concatenate([_np.full(len(s[2]), s[1]) for s in samples])
    positions = _np.concatenate([s[2] for s in samples])
    weights = _np.concatenate([_np.full(len(s[2]), s[3]) for s in samples])
    order = _np.asarray(_merge.argsort(keys).tolist())  # stable: (key, block, position) order
    cumulative = _np.cumsum(weights[order])
    targets = cumulative[-1] * _np.arange(1, parts) / parts
    picks = _np.minimum(_np.searchsorted(cumulative, targets, "left"), len(order) - 1)
    return [(keys[order[i] : order[i] + 1], int(blocks[order[i]]), int(positions[order[i]])) for i in picks]


def _cuts(sorted_block: Any, k: int, splitters: list, parts: int) -> list:
    """Where block k is cut for the partitions: an element (key, k, i) goes before splitter
    (key', b, p) when key < key', or key == key' and (k, i) < (b, p)."""
    n = len(sorted_block)
    cuts = [0]
    for key, b, p in splitters:
        lo = int(_search.searchsorted(sorted_block, key, "left")[0])
        hi = int(_search.searchsorted(sorted_block, key, "right")[0])
        cuts.append(hi if k < b else lo if k > b else min(max(p, lo), hi))
    cuts += [n] * (parts + 1 - len(cuts))  # fewer splitters than cuts: the rest goes last
    return cuts


def _piece(sorted_block: Any, cuts: list, p: int) -> Any:
    return sorted_block[cuts[p] : cuts[p + 1]]


def _bucket(pieces: list) -> Any:
    """A partition: its pieces of every block, in block order, sorted (stable, so equal keys
    keep the blocks' order)."""
    return _merge.sort(_xp(pieces[0]).concatenate(pieces))


def sort(x: Any) -> Any:
    """A stable sort of a 1-D Dask array (sample sort); the result's chunks are the sorted ranges.

    Each chunk is sorted (gsearch.sort), splitters are sampled from the sorted chunks, each
    sorted chunk is cut by them, and partition p is the concatenation of every chunk's piece p,
    sorted. The partitions are about equal in size whatever the keys: equal keys may be split
    between neighbours.

    Parameters
    ----------
    x : Dask array, 1-D
        The data (numpy or cupy blocks).

    Returns
    -------
    sorted : Dask array, 1-D
        ``np.sort(x, kind='stable')`` (NaN last, -0.0 and 0.0 in their input order), with as
        many chunks as `x`, of unknown sizes (``.compute_chunk_sizes()`` finds them); its
        chunks are the sharded keys that :func:`searchsorted` takes.

    Raises
    ------
    ValueError
        `x` not 1-D. gsearch.sort's errors (unsupported dtypes) are raised when the result is
        computed.
    """
    import dask

    da = _da()
    x = _as_dask(x)
    if x.ndim != 1:
        raise ValueError(f"gsearch.dask.sort: x must be 1-D, not of shape {x.shape}")
    delayed = dask.delayed
    parts = x.numblocks[0]
    runs = [delayed(_merge.sort)(b) for b in x.to_delayed().ravel()]
    splitters = delayed(_splitters)([delayed(_samples)(r, k, _OVERSAMPLE * parts) for k, r in enumerate(runs)], parts)
    cuts = [delayed(_cuts)(r, k, splitters, parts) for k, r in enumerate(runs)]
    meta = x._meta.astype(x.dtype)
    buckets = [
        delayed(_bucket)([delayed(_piece)(r, c, p) for r, c in zip(runs, cuts)]) for p in range(parts)
    ]
    return da.concatenate([da.from_delayed(b, shape=(_np.nan,), dtype=x.dtype, meta=meta) for b in buckets])


# --- join -----------------------------------------------------------------------------------------


def _sorted_rows(block: Any, offset: Any) -> tuple:
    """A block's keys stably sorted, and their global row numbers (offset + position)."""
    order = _merge.argsort(block)
    return block[order], order + offset


def _key_samples(run: tuple, want: int) -> Any:
    keys = run[0]
    n = len(keys)
    s = min(n, want)
    return keys[_xp(keys).asarray((_np.arange(s, dtype=_np.int64) * n) // max(s, 1))] if s else keys[:0]


def _key_splitters(samples: list, parts: int) -> Any:
    """Up to parts - 1 distinct keys cutting the samples (both tables') into about equal
    ranges: a key's rows of both tables fall in one range, so each range joins alone."""
    if not samples or parts < 2:
        return None
    xp = _xp(samples[0])
    keys = _merge.sort(xp.concatenate(samples))  # the tables' promoted dtype
    if len(keys) == 0:
        return None
    return xp.unique(keys[xp.asarray((_np.arange(1, parts, dtype=_np.int64) * len(keys)) // parts)])


def _key_cuts(run: tuple, splitters: Any, parts: int) -> list:
    """Where a sorted run is cut: range p holds the keys in (splitter p - 1, splitter p]."""
    n = len(run[0])
    if splitters is None:
        return [0] + [n] * parts
    cuts = [0] + [int(c) for c in _search.searchsorted(run[0], splitters, "right")]
    return cuts + [n] * (parts + 1 - len(cuts))


def _join_range(left: list, right: list, lcuts: list, rcuts: list, p: int, how: str) -> tuple:
    """gsearch.join of range p: every block's piece of it, in block order (global rows
    ascending), stably sorted, joined, mapped to global rows (-1 kept)."""

    def gather(runs: list, cuts: list) -> tuple:
        xp = _xp(runs[0][0])
        keys = xp.concatenate([r[0][c[p] : c[p + 1]] for r, c in zip(runs, cuts)])
        rows = xp.concatenate([r[1][c[p] : c[p + 1]] for r, c in zip(runs, cuts)])
        order = _merge.argsort(keys)
        return keys[order], rows[order]

    lk, lrows = gather(left, lcuts)
    rk, rrows = gather(right, rcuts)
    li, ri = _merge.join(lk, rk, how, check=False)
    xp = _xp(lrows)

    def mapped(index: Any, rows: Any) -> Any:
        if len(rows) == 0:
            return xp.full(len(index), -1, dtype=_np.int64)
        return xp.where(index >= 0, rows[xp.maximum(index, 0)], -1).astype(_np.int64)

    return mapped(li, lrows), (None if ri is None else mapped(ri, rrows))


def join(left: Any, right: Any, how: str = "inner") -> tuple:
    """gsearch.join of two 1-D Dask arrays of keys in any order (a table's rows), as global row
    numbers: the pattern of gsearch.distributed.join, by Dask's partitions.

    Each table's chunks are sorted (stably), sampled keys of both cut the key range into about
    as many ranges as the larger table has chunks (a key's rows, of both tables, in one range),
    and each range is joined alone (gsearch.join of its sorted pieces); the ranges in order are
    the result.

    Parameters
    ----------
    left, right : Dask array (or array_like), 1-D
        The keys, any order (numpy or cupy blocks; chunk sizes may be unknown).
    how : {'inner', 'left', 'right', 'full', 'semi', 'anti'}, optional
        As in gsearch.join.

    Returns
    -------
    (left_index, right_index) : tuple of 1-D Dask arrays of int64
        Of unknown chunk sizes: the rows of ``gsearch.join`` of the sorted tables, mapped to
        the original (global) row numbers, in its order (by key, then left row, then right
        row); -1 marks a missing side; `right_index` is None for 'semi' and 'anti'.

    Raises
    ------
    ValueError
        An input not 1-D, a bad `how`. gsearch.join's errors (dtypes whose promotion would
        round, unsupported dtypes) are raised when the result is computed.
    """
    import dask

    from ._common import _JOIN_KINDS, _LEFT_ONLY_JOINS

    da = _da()
    left, right = _as_dask(left), _as_dask(right)
    for name, x in (("left", left), ("right", right)):
        if x.ndim != 1:
            raise ValueError(f"gsearch.dask.join: {name} must be 1-D, not of shape {x.shape}")
    if not isinstance(how, str) or how not in _JOIN_KINDS:
        raise ValueError(f"gsearch.dask.join: how must be one of {', '.join(map(repr, _JOIN_KINDS))}, not {how!r}")
    delayed = dask.delayed
    parts = max(left.numblocks[0], right.numblocks[0])

    def runs(x: Any) -> list:
        blocks = list(x.to_delayed().ravel())
        offsets = delayed(_exclusive)([delayed(len)(b) for b in blocks])
        return [delayed(_sorted_rows)(b, offsets[k]) for k, b in enumerate(blocks)]

    lruns, rruns = runs(left), runs(right)
    samples = [delayed(_key_samples)(r, _OVERSAMPLE * parts) for r in lruns + rruns]
    splitters = delayed(_key_splitters)(samples, parts)
    lcuts = [delayed(_key_cuts)(r, splitters, parts) for r in lruns]
    rcuts = [delayed(_key_cuts)(r, splitters, parts) for r in rruns]
    ranges = [delayed(_join_range, nout=2)(lruns, rruns, lcuts, rcuts, p, how) for p in range(parts)]
    meta = _xp(left._meta).empty(0, _np.int64)
    li = da.concatenate([da.from_delayed(r[0], shape=(_np.nan,), dtype=_np.int64, meta=meta) for r in ranges])
    if how in _LEFT_ONLY_JOINS:
        return li, None
    ri = da.concatenate([da.from_delayed(r[1], shape=(_np.nan,), dtype=_np.int64, meta=meta) for r in ranges])
    return li, ri


# --- merge_asof ------------------------------------------------------------------------------------


def _asof_stats(part: Any, key: Any) -> tuple:
    """A partition's (rows, first key, last key, its key monotonic increasing, it holds nulls)."""
    k = part[key]
    n = len(k)
    if n == 0:
        return 0, None, None, True, False
    mono = bool(k.is_monotonic_increasing)
    return n, k.iloc[0], k.iloc[-1], mono, (False if mono else bool(k.isna().any()))


def _asof_tail(rows: Any, by: list, last: bool) -> Any:
    """Each group's last (first) row of `rows`, in their order: the halo's candidates."""
    if len(rows) == 0:
        return rows
    if not by:
        return rows.iloc[-1:] if last else rows.iloc[:1]
    return rows.drop_duplicates(subset=by, keep="last" if last else "first")


def _asof_fold(a: Any, b: Any, by: list, last: bool) -> Any:
    """The tail (head) of rows a followed by rows b."""
    import pandas as pd

    if a is None:
        return b
    if b is None:
        return a
    return _asof_tail(pd.concat([a, b]), by, last)


def _asof_piece(before: Any, p_part: Any, core: list, q_part: Any, after: Any, key: Any, lo: Any, hi: Any, by: list) -> Any:
    """The right rows a left partition of keys [lo, hi] can match, in the right's order: each
    group's last row before lo (the fold `before` of the partitions before p, then p's rows <
    lo), every row in [lo, hi] (the `core` partitions'), each group's first row after hi (q's
    rows > hi, then the fold `after` of the partitions after q). p or q None: no such
    partition (the folds are then of all partitions)."""
    import pandas as pd

    halo_before = before
    if p_part is not None:
        halo_before = _asof_fold(before, _asof_tail(p_part[p_part[key] < lo], by, True), by, True)
    halo_after = after
    if q_part is not None:
        halo_after = _asof_fold(_asof_tail(q_part[q_part[key] > hi], by, False), after, by, False)
    pieces = [halo_before] if halo_before is not None else []
    pieces += [c[(c[key] >= lo) & (c[key] <= hi)] for c in core]
    if halo_after is not None:
        pieces.append(halo_after)
    return pd.concat(pieces) if len(pieces) > 1 else pieces[0]


def _asof_part(left: Any, piece: Any, offset: int, kwargs: dict) -> Any:
    import pandas as pd

    out = _asof_merge_asof(left, piece, **kwargs)
    out.index = pd.RangeIndex(offset, offset + len(out))
    return out


def _asof_merge_asof(left: Any, right: Any, **kwargs: Any) -> Any:
    from ._asof_pandas import merge_asof as one_process

    return one_process(left, right, **kwargs)


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
    suffixes: Any = ("_x", "_y"),
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    direction: str = "backward",
) -> Any:
    """pandas.merge_asof of two Dask DataFrames partitioned on the key (their partitions, in
    order, sorted by it, as pandas requires of the whole column): a Dask DataFrame whose
    computed value equals pandas.merge_asof (and gsearch.merge_asof) of the computed frames,
    index included (0 .. len(left) - 1).

    Each left partition is joined alone (gsearch.merge_asof) with the right rows it can match:
    those of its key range [lo, hi], plus a halo: each right group's last row before lo
    (backward, nearest) and first row after hi (forward, nearest). The halo is found from every
    right partition's tail (each group's last row, ``drop_duplicates(by, keep='last')``) folded
    left to right (and the heads, folded right to left): the fold over the partitions entirely
    before lo, then the rows before lo of the partition that holds lo. Tolerances only shrink
    what can match, so the same rows serve.

    Planning reads each partition's key once when called (its size, first and last keys, and
    whether it is sorted: one small task a partition, computed at once), to raise pandas'
    errors for unsorted or null keys across partitions and to give each left partition only
    the right partitions of its range; the rest is lazy. The right's column dtypes in the
    result follow pandas' fill rules (an int column of a partition with an unmatched row is
    float64), so a computed partition may differ from the meta; the concatenation equals
    pandas'.

    Parameters
    ----------
    left, right : dask.dataframe.DataFrame (or pandas.DataFrame)
    on, left_on, right_on, by, left_by, right_by, suffixes, tolerance, allow_exact_matches, direction
        As in pandas.merge_asof (keys are column labels).
    left_index, right_index : bool
        Not supported here: NotImplementedError (pass the index as a column).

    Returns
    -------
    dask.dataframe.DataFrame
        Of as many partitions as `left`.

    Raises
    ------
    pandas.errors.MergeError, ValueError, TypeError, KeyError
        As pandas.merge_asof (bad arguments, when called; unsorted or null keys, when called:
        the plan reads them).
    """
    import dask
    import pandas as pd

    try:
        import dask.dataframe as dd
    except ImportError as e:
        raise ImportError("gsearch.dask.merge_asof needs dask.dataframe: pip install 'dask[dataframe]'") from e
    if left_index or right_index:
        raise NotImplementedError(
            "gsearch.dask.merge_asof: left_index / right_index are not supported: pass the index as a "
            "column (reset_index()) and on= / left_on= / right_on="
        )
    if isinstance(left, pd.DataFrame):
        left = dd.from_pandas(left, npartitions=1)
    if isinstance(right, pd.DataFrame):
        right = dd.from_pandas(right, npartitions=1)
    kwargs = dict(
        on=on, left_on=left_on, right_on=right_on, by=by, left_by=left_by, right_by=right_by,
        suffixes=suffixes, tolerance=tolerance, allow_exact_matches=allow_exact_matches, direction=direction,
    )
    # The arguments' checks (pandas' errors) and the result's columns, on the empty frames.
    meta = _asof_merge_asof(left._meta, right._meta, **kwargs)
    lkey = on if on is not None else left_on
    rkey = on if on is not None else right_on
    if lkey is None or rkey is None:  # the common column pandas takes
        common = left._meta.columns.intersection(right._meta.columns)
        lkey = rkey = common[0]
    lkey, rkey = (k[0] if isinstance(k, (list, tuple)) else k for k in (lkey, rkey))
    rby = by if by is not None else right_by
    rby = [] if rby is None else (list(rby) if isinstance(rby, (list, tuple)) else [rby])
    delayed = dask.delayed
    lparts, rparts = left.to_delayed(), right.to_delayed()
    lstats, rstats = dask.compute(
        [delayed(_asof_stats)(p, lkey) for p in lparts], [delayed(_asof_stats)(p, rkey) for p in rparts]
    )
    for side, stats in (("left", lstats), ("right", rstats)):  # pandas' order: left, then right
        full = [s for s in stats if s[0]]
        mono = all(s[3] for s in full) and all(not (b[1] < a[2]) for a, b in zip(full, full[1:]))
        if not mono:
            if any(s[4] for s in full) or any(pd.isna(s[1]) or pd.isna(s[2]) for s in full):
                raise ValueError(f"Merge keys contain null values on {side} side")
            raise ValueError(f"{side} keys must be sorted")
    # Each right partition's tail and head, folded: before[j] = the tails of partitions < j,
    # after[j] = the heads of partitions > j.
    tails = [delayed(_asof_tail)(p, rby, True) for p in rparts]
    heads = [delayed(_asof_tail)(p, rby, False) for p in rparts]
    before, acc = [], None
    for t in tails:
        before.append(acc)
        acc = delayed(_asof_fold)(acc, t, rby, True)
    after, acc = [None] * len(heads), None
    for j in range(len(heads) - 1, -1, -1):
        after[j] = acc
        acc = heads[j] if acc is None else delayed(_asof_fold)(heads[j], acc, rby, False)
    full = [j for j, s in enumerate(rstats) if s[0]]
    all_tails = delayed(_asof_fold)(before[full[-1]], tails[full[-1]], rby, True) if full else None
    all_heads = None
    for j in reversed(full):
        all_heads = heads[j] if all_heads is None else delayed(_asof_fold)(heads[j], all_heads, rby, False)
    parts, offset = [], 0
    for lp, (n, lo, hi, _, _) in zip(lparts, lstats):
        if n == 0 or not full:
            piece = right._meta
        else:
            # p: the first non-empty right partition ending at or after lo; q: the last one
            # starting at or before hi; the core: those that overlap [lo, hi].
            p = next((j for j in full if not (rstats[j][2] < lo)), None)
            q = next((j for j in reversed(full) if not (rstats[j][1] > hi)), None)
            core = [rparts[j] for j in full if not (rstats[j][2] < lo) and not (rstats[j][1] > hi)]
            piece = delayed(_asof_piece)(
                before[p] if p is not None else all_tails,
                rparts[p] if p is not None else None,
                core,
                rparts[q] if q is not None else None,
                after[q] if q is not None else all_heads,
                rkey,
                lo,
                hi,
                rby,
            )
        parts.append(delayed(_asof_part)(lp, piece, offset, kwargs))
        offset += n
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


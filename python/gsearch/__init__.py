"""gsearch: batched search on GPUs, with a CPU backend.

``searchsorted`` (numpy's, and torch's row-batched form), ``predecessor``, ``equal_range`` and
``bucketize`` (torch's) for sorted data, ``Index`` (a static search index: sorted keys built
once into an S+ tree, searched many times), ``find``, ``count`` and ``isin`` (numpy's) for unsorted
data, the merge family (``merge``, stable ``sort`` and ``argsort``, the multiset
``set_intersection`` / ``set_union`` / ``set_difference`` / ``set_symmetric_difference``,
numpy's ``intersect1d`` / ``union1d`` / ``setdiff1d`` / ``setxor1d``, and ``join``), as-of
joins (``asof_indices``, pandas' ``merge_asof``, polars' ``join_asof``), the
selection family (``select``, numpy's ``partition`` / ``argpartition``, ``median``,
``quantile``, ``percentile`` and their nan* forms, torch's ``topk`` and ``kthvalue``), over
numpy arrays (the C++ CPU backend, all cores for large calls) and over CUDA
arrays (torch tensors, cupy arrays, anything with ``__dlpack__`` or
``__cuda_array_interface__`` on a CUDA device), which are searched on the GPU in place, on the
caller's current stream, and answered with an array of the same kind on the same device.

Keys sort in numpy's order: NaN after +inf, -0.0 equal to 0.0. Mixed key and query dtypes are
searched in numpy's promoted dtype when that promotion is exact, and rejected with TypeError
when it would round (int64 / uint64 with a float, uint64 with a signed integer): gsearch never
casts lossily. An empty Python sequence (``[]``, ``()``) has no dtype of its own (numpy makes it
float64): paired with an array, it takes the array's dtype, so ``searchsorted(int64_keys, [])``
and ``merge([], a)`` answer as numpy does.

Sortedness: what the caller tells gsearch is sorted beyond numpy's contract is checked by
default (the queries of ``sorted_queries=True``, the keys of ``Index``, the inputs of the merge
family); ``check_sorted=False`` / ``check=False`` skips the check. The keys of
``searchsorted`` are not checked unless ``check_sorted=True``, as in numpy and torch.

Examples
--------
>>> import numpy as np, gsearch
>>> gsearch.searchsorted(np.array([1, 2, 3, 5]), [0, 3, 4], side="right")
array([0, 3, 3])
>>> gsearch.predecessor(np.array([1.0, 2.0, np.nan]), 1.5)
np.int64(0)
>>> gsearch.find(np.array([5, 3, 8, 3]), 3)
1
>>> gsearch.isin(np.array([1, 2, 3]), [3, 1])
array([ True, False,  True])
"""

from __future__ import annotations

# The typing vocabulary of the signatures (help() shows them; the functions' own modules resolve
# them for typing.get_type_hints), kept here as before, unlisted by dir().
from typing import Any, Literal, Optional, Union

from . import _core
from ._arrays import ArrayLike

# Search of sorted keys (numpy's and torch's searchsorted, torch's bucketize).
from ._search import Algo, Side, bucketize, equal_range, predecessor, searchsorted

# The static search index.
from ._index import Index

# Index intervals: an order refined only where it is queried (select, range, sort).
from ._index_intervals import IndexIntervals

# Search of unsorted data (numpy's isin).
from ._find import FindMode, FindOp, FindStrategy, IsinMethod, count, find, isin

# The merge family: merge, sort, joins.
from ._merge import JoinHow, argsort, join, merge, sort

# As-of joins: the gather map of arrays, pandas' merge_asof, polars' join_asof.
from ._asof import asof_indices
from ._asof_pandas import merge_asof
from ._asof_polars import join_asof

# Set operations: the multiset ones (std::set_*) and numpy's *1d functions.
from ._sets import (
    SetOp,
    intersect1d,
    set_difference,
    set_intersection,
    set_symmetric_difference,
    set_union,
    setdiff1d,
    setxor1d,
    union1d,
)

# Selection: order statistics without sorting (numpy's partition and quantiles, torch's topk).
from ._quantiles import median, nanmedian, nanpercentile, nanquantile, percentile, quantile
from ._selection import argpartition, kthvalue, partition, select, topk
from ._server import Server

# The search server of another process, over a socket.
from ._client import Client

# Functional arrays: persistent sparse arrays, each operation one pass over a machine's cells.
from ._functional_arrays import FunctionalArray, FunctionalArrays

__version__: str = _core.__version__

__all__ = [
    "Client",
    "FunctionalArray",
    "FunctionalArrays",
    "Index",
    "IndexIntervals",
    "Server",
    "__version__",
    "argpartition",
    "argsort",
    "asof_indices",
    "bucketize",
    "build_info",
    "built_with_cuda",
    "count",
    "cuda_available",
    "equal_range",
    "find",
    "intersect1d",
    "isin",
    "join",
    "join_asof",
    "kthvalue",
    "median",
    "merge",
    "merge_asof",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "partition",
    "percentile",
    "predecessor",
    "quantile",
    "searchsorted",
    "select",
    "set_difference",
    "set_intersection",
    "set_symmetric_difference",
    "set_union",
    "setdiff1d",
    "setxor1d",
    "sort",
    "topk",
    "union1d",
]


def __dir__() -> list:
    """dir(gsearch), and so tab completion: the public API (__all__, __version__ included). The
    typing names and type aliases of the signatures (Any, Optional, ArrayLike, Side, ...) stay
    module attributes, for typing.get_type_hints and readable help(), but are not listed."""
    return sorted(__all__)


def build_info() -> dict:
    """What this build of gsearch is: the code behind a result.

    Returns
    -------
    dict
        ``{'version': '0.1.0', 'commit': <git commit of the source, or 'unknown'>, 'dirty':
        <the source tree had uncommitted changes>, 'cuda': <built with the CUDA backend>}``.
        The benchmarks write ``commit`` and ``dirty`` into every result file as ``"source"``.
    """
    return dict(_core.build_info())


def built_with_cuda() -> bool:
    """True when the extension was built with gsearch's CUDA backend."""
    return _core.built_with_cuda()


def cuda_available() -> bool:
    """True when CUDA arrays can be searched: the CUDA backend is built and a GPU is usable.

    Returns
    -------
    bool
        ``built_with_cuda()`` and at least one CUDA device with a working driver.
    """
    return _core.built_with_cuda() and _core.cuda_device_count() > 0

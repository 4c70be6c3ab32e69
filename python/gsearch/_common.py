"""What the families share that is not about arrays (those helpers are in _arrays.py): the one
table of the sides of a search (_SIDES) and the one of the key types (_KEY_DTYPES), both the
library's codes (gsearch::side, gsearch::dtype), which the extension and the socket protocol
number alike; the check of searchsorted's `side` and `right`; and the option tables that more
than one family reads (find's modes, operators and isin methods, which gsearch.distributed takes
too; the join kinds of merge's join and of gsearch.distributed.join)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as _np

from . import _core

# --- sides -------------------------------------------------------------------------------------

Side = Literal["left", "right"]


class _DefaultSide(str):
    """'left', as the default of `side`: told apart from an explicit 'left' (torch's check
    that side and right do not conflict)."""

    __slots__ = ()


_LEFT: Side = _DefaultSide("left")  # type: ignore[assignment]
# The sides and their codes (gsearch::side; the extension's SIDES, and the side byte of the socket
# protocol, server_protocol.hpp: 0 left, 1 right, 2 pred): left, right, and the predecessor
# (right - 1: the largest i with keys[i] <= q, else -1). Server.search and Client.search take all
# three names.
_SIDES: dict[str, int] = dict(_core.SIDES)
_LEFT_I, _RIGHT_I, _PRED_I = _SIDES["left"], _SIDES["right"], _SIDES["pred"]
# numpy's sides (searchsorted's `side`, here and in gsearch.distributed and gsearch.dask): all
# but pred.
_NUMPY_SIDES: dict[str, int] = {name: code for name, code in _SIDES.items() if code != _PRED_I}


def _side_code(side: Any, right: Any) -> int:
    if right is not None and not isinstance(right, (bool, _np.bool_)):
        raise TypeError(f"gsearch: right must be a bool, not {type(right).__name__}")
    if not isinstance(side, str):
        raise TypeError(f"search side must be str, not {type(side).__name__}")
    if side not in _NUMPY_SIDES:
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if right is None:
        return _RIGHT_I if side == "right" else _LEFT_I
    if side is _LEFT:
        return _RIGHT_I if right else _LEFT_I
    if right and side == "left":
        raise ValueError("gsearch: side and right can't be set to opposites (side='left', right=True)")
    return _RIGHT_I if side == "right" else _LEFT_I


# --- key types ---------------------------------------------------------------------------------

# The dtypes the library searches and their codes, in gsearch::dtype's order: a dtype's code is
# its index (the extension's KEY_DTYPES and key_type, the ranks' agreement of gsearch.distributed,
# and the dtype byte of the socket protocol, server_protocol.hpp: 0 int32, 1 uint32, 2 int64,
# 3 uint64, 4 float32, 5 float64). Arrays of these are searched in place (_arrays._NATIVE).
_KEY_DTYPE_NAMES: tuple[str, ...] = tuple(_core.KEY_DTYPES)
_KEY_DTYPES: tuple[_np.dtype, ...] = tuple(_np.dtype(n) for n in _KEY_DTYPE_NAMES)
_KEY_CODES: dict[_np.dtype, int] = {d: i for i, d in enumerate(_KEY_DTYPES)}


# --- option tables -----------------------------------------------------------------------------

# find's modes, operators ('in': lo <= x <= hi) and isin's methods (gsearch.find, gsearch.isin
# and their gsearch.distributed forms).
_FIND_MODES: dict[str, int] = dict(_core.FIND_MODES)
_FIND_OPS: dict[str, int] = dict(_core.FIND_OPS)
_ISIN_METHODS: dict[str, int] = dict(_core.ISIN_METHODS)
_IN_OP = _FIND_OPS["in"]

# The join kinds (gsearch.join, gsearch.distributed.join); 'semi' and 'anti' return the left
# side's indices only.
_JOIN_KINDS: dict[str, int] = dict(_core.JOIN_KINDS)
_LEFT_ONLY_JOINS = frozenset(("semi", "anti"))

"""The docstring prose that several public functions share, written once, and the decorator that
fills it in at import (so that help() and doctest see the full text).

A docstring names a shared paragraph by a token, ``{stream}``, where the text goes: a paragraph
of several lines keeps the indentation of the token's line (a parameter's description stays
under its name). Tokens are lower-case words in braces; an unknown one is an error at import.
"""

from __future__ import annotations

import re
from typing import Any, Optional

# The paragraphs, dedented: a parameter's name line, then its description indented by 4.
PARAGRAPHS = {
    # The stream parameter of every function that runs on CUDA arrays: the name line and the
    # opening words. Each docstring goes on to say what that call does on the stream (waits,
    # returns once enqueued, ...).
    "stream_param": "stream : int or stream object, optional",
    "stream": "stream : int or stream object, optional\n    For CUDA arrays: the stream to run on",
    # The errors a call on a GPU (or any allocation) can raise beyond its own.
    "gpu_errors": "MemoryError\n    An allocation failed.\nRuntimeError\n    A CUDA error (the message names it).",
    "errors_as_searchsorted": "ValueError, TypeError, MemoryError, RuntimeError\n    As in :func:`searchsorted`.",
    # numpy's *1d set functions.
    "set1d_arrays": (
        "ar1, ar2 : array_like\n"
        "    Any shapes (flattened), any order (numpy on the CPU, torch / cupy CUDA arrays on the\n"
        "    GPU)."
    ),
    "set1d_raises": (
        "Raises\n"
        "------\n"
        "ValueError\n"
        "    The inputs on different devices.\n"
        "TypeError\n"
        "    Dtypes whose promotion would round (int64 with float64, ...), unsupported dtypes."
    ),
}

_TOKEN = re.compile(r"\{([a-z_0-9]+)\}")


def fill(doc: str, **fields: str) -> str:
    """doc with each token replaced by its paragraph (PARAGRAPHS) or by `fields`' value; the
    lines after a paragraph's first take the indentation of the token's line."""

    def one(m: "re.Match[str]") -> str:
        name = m.group(1)
        text = fields[name] if name in fields else PARAGRAPHS.get(name)
        if text is None:
            raise KeyError(f"gsearch._docs: no shared paragraph {{{name}}}")
        line_start = doc.rfind("\n", 0, m.start()) + 1
        line = doc[line_start : m.start()]
        indent = line[: len(line) - len(line.lstrip(" "))]
        return text.replace("\n", "\n" + indent)

    return _TOKEN.sub(one, doc)


def public(obj: Optional[Any] = None, /, *, doc: Optional[str] = None, **fields: str) -> Any:
    """The decorator of every public function and class of gsearch: its docstring (`doc`, or its
    own) filled in by `fill`, and __module__ set to 'gsearch', where it is documented and
    imported from (help(), doctest, pickle), as for the methods of a class."""

    def apply(o: Any) -> Any:
        o.__doc__ = fill(doc if doc is not None else o.__doc__, **fields)
        o.__module__ = "gsearch"
        if isinstance(o, type):
            for member in vars(o).values():
                if isinstance(member, property):
                    for f in (member.fget, member.fset, member.fdel):
                        if f is not None:
                            f.__module__ = "gsearch"
                elif callable(member) and hasattr(member, "__code__"):
                    member.__module__ = "gsearch"
                    if member.__doc__:
                        member.__doc__ = fill(member.__doc__)
        return o

    return apply if obj is None else apply(obj)


"""Argument types the benchmark scripts share (argparse), and the command line they record."""

import argparse
import sys


def count_arg(text):
    """A count: an integer or a power of two written 2^k ("2^24")."""
    base, sep, exponent = text.partition("^")
    try:
        return int(base) ** int(exponent) if sep else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer or 2^k") from None


def invoked_argv():
    """sys.argv as the script was started, for the "command" a result records: run as a module
    (``python3 -m bench.<family>.<script> ARGS``, where sys.argv[0] is the script's full path),
    ["-m", "bench.<family>.<script>", ARGS...]; started as a file, sys.argv itself."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    return ["-m", spec.name, *sys.argv[1:]] if spec is not None else list(sys.argv)

"""Argument types the benchmark scripts share (argparse)."""

import argparse


def count_arg(text):
    """A count: an integer or a power of two written 2^k ("2^24")."""
    base, sep, exponent = text.partition("^")
    try:
        return int(base) ** int(exponent) if sep else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer or 2^k") from None

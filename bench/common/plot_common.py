"""Helpers shared by the plotting scripts of bench/ (find/plot_find.py, merge/plot_merge.py,
index/plot_index.py, pary/plot_pary.py): loading a bench's JSON file, picking rows, formatting
table cells, markdown tables and figure titles, and the command line of a script that reads one
file (Script).

Each script passes its own name (the prefix of its messages) and schema.
"""
import argparse
import json
import os
import sys


def warn(prog, msg):
    print(f"{prog}: {msg}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Data


def load(path, schema, prog):
    """The JSON file at path; exits with a message when its schema is not `schema`."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != schema:
        raise SystemExit(f"{prog}: {path}: schema {doc.get('schema')!r}, expected {schema!r}")
    return doc


def usable_rows(doc, prog, describe):
    """The rows with a time, less those with "verified": false (each left out with a warning
    that names it by describe(row))."""
    rows = []
    for r in doc.get("results", []):
        if r.get("ms") is None:
            continue
        if r.get("verified") is False:
            warn(prog, f"leaving out unverified row {describe(r)}")
            continue
        rows.append(r)
    return rows


def pick(rows, **want):
    """The fastest row whose fields equal `want` (None if there is none). `call_has` matches a
    substring of the call."""
    sub = want.pop("call_has", None)
    hits = [r for r in rows if all(r.get(k) == v for k, v in want.items())
            and (sub is None or sub in (r.get("call") or ""))]
    return min(hits, key=lambda r: r["ms"]) if hits else None


# ---------------------------------------------------------------------------------------------
# Formatting


def fmt_ms(ms, tiny_digits=3):
    """Milliseconds to about three significant digits; below 0.01 ms, `tiny_digits` decimals."""
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    if ms >= 0.01:
        return f"{ms:.3f}"
    return f"{ms:.{tiny_digits}f}"


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def fmt_n(n):
    if n is None:
        return "-"
    if n and n & (n - 1) == 0 and n >= 1024:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None


def md_table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
    return "\n".join(out)


def title(doc, text):
    tag = " (SYNTHETIC sample, not a measurement)" if doc.get("synthetic") else ""
    return f"### {text}{tag}"


def preamble(doc, bench, cub):
    """One line: the device, the versions, the settings and the command. `cub` is how the newer
    CCCL's version is introduced, with {} where it goes ("CUB {}")."""
    dev = (doc.get("device") or {}).get("name", "?")
    v = doc.get("versions") or {}
    c = doc.get("config") or {}
    syn = "**SYNTHETIC sample (made-up times), not a measurement.** " if doc.get("synthetic") else ""
    return (f"{syn}{bench} on {dev}: gsearch {v.get('gsearch', '?')}, thrust {v.get('thrust') or '-'} "
            f"(toolkit CCCL), {cub.format(v.get('cub') or '-')}; median of {c.get('repeat', '?')} runs after "
            f"{c.get('warmup', '?')} warm-up; `{doc.get('command', '')}`")


# ---------------------------------------------------------------------------------------------
# Figures


def suptitle(doc, text):
    dev = (doc.get("device") or {}).get("name", "")
    syn = " (SYNTHETIC)" if doc.get("synthetic") else ""
    return f"{text}{syn}" + (f" — {dev}" if dev else "")


def save(fig, out, name):
    """Lays the figure out, writes it to out/name (120 dpi), closes it; returns the path."""
    fig.tight_layout()
    path = os.path.join(out, name)
    fig.savefig(path, dpi=120)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------
# A script


class Script:
    """A plotting script that reads one benchmark's JSON file: its name (the prefix of its
    messages), the schema it reads and how a warning names a row (describe(row))."""

    def __init__(self, prog, schema, describe):
        self.prog, self.schema, self.describe = prog, schema, describe

    def warn(self, msg):
        warn(self.prog, msg)

    def load(self, path):
        return load(path, self.schema, self.prog)

    def usable_rows(self, doc):
        return usable_rows(doc, self.prog, self.describe)

    def main(self, argv, description, tables, figures, add_options=None):
        """`prog FILE (--out DIR | --no-figures) [options]`: prints tables(doc, rows, args) (markdown)
        and, unless --no-figures, writes figures(doc, rows, out), naming each file on stderr.
        add_options(parser) adds the script's own options. Exit status 0; a bad command line,
        a file of another schema or one without a usable row exits with a message."""
        p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("json", help=f"the benchmark's JSON file ({self.schema})")
        p.add_argument("--out", help="folder for the figures (needed unless --no-figures)")
        p.add_argument("--no-figures", action="store_true", help="print the tables only")
        if add_options:
            add_options(p)
        a = p.parse_args(argv)
        if not a.no_figures and not a.out:
            p.error("--out DIR is needed for the figures (or --no-figures)")
        doc = self.load(a.json)
        rows = self.usable_rows(doc)
        if not rows:
            raise SystemExit(f"{self.prog}: {a.json}: no usable rows")
        sys.stdout.write(tables(doc, rows, a))
        if not a.no_figures:
            for path in figures(doc, rows, a.out):
                print(f"{self.prog}: wrote {path}", file=sys.stderr)
        return 0

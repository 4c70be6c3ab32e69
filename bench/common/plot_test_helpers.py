"""Scaffolding shared by the tests of bench's plotting scripts (test_plot.py, test_plot_find.py,
test_plot_merge.py, test_plot_python.py): running a script as a user would, checking the PNGs
it wrote, and reading its markdown tables. Not a test file itself (pytest collects test_*.py).
"""
import json
import pathlib
import subprocess
import sys


class PlotScript:
    """A plotting script and its synthetic sample file."""

    def __init__(self, script, sample, json_name):
        self.script, self.sample_path, self.json_name = script, sample, json_name

    def run(self, *args, ok=True):
        """Runs the script with args; with ok, asserts it succeeded."""
        r = subprocess.run([sys.executable, str(self.script), *map(str, args)], capture_output=True, text=True)
        if ok:
            assert r.returncode == 0, r.stderr
        return r

    def sample(self):
        """A fresh copy of the sample document."""
        return json.loads(self.sample_path.read_text())

    def write(self, tmp_path, doc, name=None):
        p = tmp_path / (name or self.json_name)
        p.write_text(json.dumps(doc))
        return p


def pngs(folder):
    """The names of the PNG files in folder, sorted; each must be a real PNG of some size."""
    files = sorted(p.name for p in pathlib.Path(folder).glob("*.png"))
    for name in files:
        data = (pathlib.Path(folder) / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
    return files


def table_line(out, start):
    return next(l for l in out.splitlines() if l.startswith(start))


def cells(line):
    return [c.strip() for c in line.strip("|").split("|")]

"""Scaffolding shared by the tests of bench's plotting scripts (search/test_plot_search.py,
find/test_plot_find.py, merge/test_plot_merge.py, search/test_plot_search_python.py, ...): running
a script as a user would (``python3 -m bench.<family>.<script>`` from the repository root), the
checks every script's synthetic sample gets, the PNGs it wrote, and reading its markdown tables.
Not a test file itself (pytest collects test_*.py).
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]  # the repository root: where bench is a package


def module_command(script):
    """The command that runs the bench script at path `script` as bench/README.md says, as a module:
    [python, "-m", "bench.<family>.<script>"]. Run it with cwd=ROOT."""
    rel = pathlib.Path(script).resolve().relative_to(ROOT).with_suffix("")
    return [sys.executable, "-m", ".".join(rel.parts)]


def run_script(script, *args, **kwargs):
    """subprocess.run of the bench script at path `script` with args, as a module from the
    repository root (module_command), its output captured as text; kwargs go to subprocess.run."""
    return subprocess.run([*module_command(script), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          **kwargs)


class PlotScript:
    """A plotting script and its synthetic sample file."""

    def __init__(self, script, sample, json_name):
        self.script, self.sample_path, self.json_name = script, sample, json_name

    def run(self, *args, ok=True):
        """Runs the script with args; with ok, asserts it succeeded."""
        r = run_script(self.script, *args)
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

    # The checks of every sample (each a test of its own in the script's test file).

    def check_synthetic(self, schema):
        """The sample is in the script's schema and marked as made up."""
        doc = self.sample()
        assert doc["schema"] == schema
        assert doc["synthetic"] is True and "SYNTHETIC" in doc["note"]

    def check_row_fields(self, source, loop, readme, section):
        """The sample's rows carry exactly the fields the benchmark's row() writes (the names in
        `source`'s loop matching the regular expression `loop`, in order), and `readme` documents
        each of them in its `section` (from that heading on)."""
        m = re.search(loop, pathlib.Path(source).read_text(), re.S)
        fields = re.findall(r'"(\w+)"', m.group(1))
        assert len(fields) > 20
        for r in self.sample()["results"]:
            assert list(r) == fields, r
        text = pathlib.Path(readme).read_text()
        text = text[text.index(section):]
        for f in fields:
            assert f"`{f}`" in text, f

    def check_figures(self, tmp_path, figures, n_titles):
        """The sample's run with --out: exactly `figures` written, the output flagged as
        synthetic from its first line, n_titles tables, each flagged too. Returns (stdout,
        stderr, the table titles)."""
        r = self.run(self.sample_path, "--out", tmp_path / "fig")
        assert set(pngs(tmp_path / "fig")) == set(figures)
        assert r.stdout.startswith("**SYNTHETIC sample")
        titles = [line for line in r.stdout.splitlines() if line.startswith("### ")]
        assert len(titles) == n_titles and all("SYNTHETIC" in t for t in titles)
        return r.stdout, r.stderr, titles

    def run_subset(self, tmp_path, keep, figures, change=None):
        """The sample cut to its rows with keep(row), change(doc) applied, run with --out:
        exactly `figures` written. Returns stdout."""
        doc = self.sample()
        doc["results"] = [r for r in doc["results"] if keep(r)]
        if change:
            change(doc)
        r = self.run(self.write(tmp_path, doc), "--out", tmp_path / "fig")
        assert set(pngs(tmp_path / "fig")) == set(figures)
        return r.stdout

    def check_bad_input(self, tmp_path, other_schema):
        """A file of another benchmark's schema, and neither --out nor --no-figures: refused."""
        doc = self.sample()
        doc["schema"] = other_schema
        r = self.run(self.write(tmp_path, doc), "--no-figures", ok=False)
        assert r.returncode != 0 and "schema" in r.stderr
        r = self.run(self.sample_path, ok=False)  # neither --out nor --no-figures
        assert r.returncode != 0 and "--out" in r.stderr


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

"""The files the docs cite under bench/results are there (issue 40: the raw device logs went into
one archive per run, `<run>.tar.xz` or `<folder>/logs.tar.xz`).

Scanned: README.md, docs/*.md and every README.md under bench/. Checked:
- every `bench/results/...` path, relative to the repository root;
- in docs/*.md, backticked `logs/...` paths, relative to one of bench/results/<machine>/ (the docs
  write them so, the machine said by the section);
- in bench/**/README.md, backticked `results/...` paths, relative to bench/;
- in the READMEs under bench/results, every backticked relative path or file name with a results
  extension (json, txt, log, png, svg, md, csv, sh, tgz, tar.xz, ...), against the README's folder
  (else anywhere in, or in an archive in, its machine's folder bench/results/<machine>/: the
  tables name a run's folder or archive in one cell and its files in another);
- every archive citation, "`X.tar.xz` (file `name` inside)" or "(files `a`, `b` inside)": the
  archive exists and holds each named file.
Placeholders match anything: `<commit>`, `*`, `{a,b}` (each alternative must exist) and a lone
capital letter between separators (`find-sweep-N.json`).
"""

import fnmatch
import functools
import itertools
import re
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"

EXTENSIONS = (".json", ".jsonl", ".txt", ".log", ".png", ".svg", ".md", ".csv", ".gz", ".tgz", ".xz", ".sh")
ARCHIVES = (".tar.xz", ".tgz", ".tar.gz")
# what a README names that is not a result: carried trees, build trees, the device's $OUT, and
# the repository's own code and docs (a command's script, as named when it ran)
ELSEWHERE = ("carry/", "build/", "out/", "OUT/", "/root/", "$", "-", ".",
             "scripts/", "docs/", "src/", "include/", "python/", "tests/", "tools/", "cmake/", "bench/")

RESULTS_PATH = re.compile(r"bench/results(?:/(?:[\w.*+-]|<[\w-]+>|\{[^}\s]*\})*)*")
BACKTICKED = re.compile(r"`([^`\s]+)`")
ARCHIVE_CITATION = re.compile(
    r"`(?P<archive>[^`\s]+(?:\.tar\.xz|\.tgz|\.tar\.gz))` \(files? "
    r"(?P<names>`[^`\s]+`(?:(?:, |,? and )`[^`\s]+`)*) inside")


def sources():
    if not RESULTS.is_dir():
        return []
    out = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "bench").rglob("README.md"))]
    return [p for p in out if p.is_file()]


def expand(pattern):
    """The glob patterns a cited path stands for: {a,b} gives one each; <x> and a lone capital
    letter between separators become *."""
    pattern = re.sub(r"<[\w-]+>", "*", pattern)
    pattern = re.sub(r"(?<=[-_])[A-Z](?=[._-])", "*", pattern)
    parts = re.split(r"(\{[^}]*\})", pattern)
    choices = [p[1:-1].split(",") if p.startswith("{") and p.endswith("}") else [p] for p in parts]
    return ["".join(c) for c in itertools.product(*choices)]


def has_results_extension(path):
    return path.endswith("/") or path.rsplit("/", 1)[-1].endswith(EXTENSIONS)


def matches(base, pattern):
    """Whether base/pattern (a glob) names an existing file or folder."""
    pattern = pattern.rstrip("/")
    if not pattern or pattern == ".":
        return base.exists()
    if any(c in pattern for c in "*?["):
        return any(True for _ in base.glob(pattern))
    return (base / pattern).exists()


@functools.lru_cache(maxsize=None)
def members(archive):
    with tarfile.open(archive) as tar:
        return tuple(m.name[2:] if m.name.startswith("./") else m.name for m in tar.getmembers() if m.isfile())


def in_archive(archive, pattern):
    return any(fnmatch.fnmatchcase(m, pattern) or fnmatch.fnmatchcase(m.rsplit("/", 1)[-1], pattern)
               for m in members(archive))


def archives_below(folder):
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and p.name.endswith(ARCHIVES)]


def found_below(folder, pattern):
    """A README's relative name: anywhere in its machine's folder (bench/results/<machine>/), or in
    an archive there."""
    pattern = pattern.rstrip("/")
    while pattern.startswith("../"):
        pattern = pattern[3:]
    machine = RESULTS / folder.relative_to(RESULTS).parts[0] if folder != RESULTS else RESULTS
    if any(True for _ in machine.glob("**/" + pattern)):
        return True
    return any(in_archive(a, pattern) for a in archives_below(machine))


def machine_folders():
    return [p for p in sorted(RESULTS.iterdir()) if p.is_dir()]


def citations():
    """(source, line, kind, text) for every path the scanned files cite."""
    out = []
    for src in sources():
        text = src.read_text(encoding="utf-8")
        line_of = lambda pos: text.count("\n", 0, pos) + 1  # noqa: E731
        rel = src.relative_to(ROOT).as_posix()
        in_results = src.parent == RESULTS or RESULTS in src.parents
        handled = []
        for m in ARCHIVE_CITATION.finditer(text):
            handled.append((m.start(), m.end()))
            out.append((rel, line_of(m.start()), "archive", (m["archive"], re.findall(r"`([^`]+)`", m["names"]))))
        for m in RESULTS_PATH.finditer(text):
            if not any(a <= m.start() < b for a, b in handled):
                out.append((rel, line_of(m.start()), "root", m.group(0).rstrip(".,:;")))
        for m in BACKTICKED.finditer(text):
            span = m.group(1)
            if any(a <= m.start() < b for a, b in handled) or "bench/results" in span:
                continue
            if src.parent == ROOT / "docs" and span.startswith("logs/"):
                out.append((rel, line_of(m.start()), "machine", span))
            elif not in_results and span.startswith("results/") and RESULTS_PATH.fullmatch("bench/" + span):
                out.append((rel, line_of(m.start()), "bench", span))
            elif in_results and not span.startswith(ELSEWHERE) and "=" not in span and ":" not in span \
                    and all(has_results_extension(p) for p in expand(span)):
                out.append((rel, line_of(m.start()), "relative", span))
    return out


def resolve(src, kind, cited):
    """The citation's problems: an empty list when everything it names exists."""
    folder = (ROOT / src).parent
    if kind == "archive":
        archive, names = cited
        bases = [ROOT] if archive.startswith("bench/results/") else [folder]
        if src.startswith("docs/") and archive.startswith("logs/"):
            bases = machine_folders()
        found = [a for b in bases for pattern in expand(archive) for a in sorted(b.glob(pattern)) if a.is_file()]
        if not found:
            return [f"archive {archive} missing"]
        # each archive the citation names (`checks_*/logs.tar.xz`: every one) holds every name
        return [f"{n} not in {a.relative_to(ROOT)}" for n in names for a in found
                if not all(in_archive(a, p) for p in expand(n))]
    missing = []
    for pattern in expand(cited):
        if kind == "root":
            ok = matches(ROOT, pattern)
        elif kind == "machine":
            ok = any(matches(m, pattern) for m in machine_folders())
        elif kind == "bench":
            ok = matches(ROOT / "bench", pattern)
        else:
            ok = matches(folder, pattern) or matches(ROOT, pattern) or found_below(folder, pattern)
        if not ok:
            missing.append(f"{pattern} missing")
    return missing


CITATIONS = citations()


def test_the_scan_finds_citations():
    if not RESULTS.is_dir():
        pytest.skip("not run from a source tree")
    kinds = {c[2] for c in CITATIONS}
    assert {"root", "relative", "archive", "machine"} <= kinds, kinds
    assert len(CITATIONS) > 300


def test_every_cited_results_file_is_kept():
    if not RESULTS.is_dir():
        pytest.skip("not run from a source tree")
    problems = [f"{src}:{line}: {cited!r}: {'; '.join(p)}"
                for src, line, kind, cited in CITATIONS if (p := resolve(src, kind, cited))]
    assert not problems, "cited but not in the tree:\n" + "\n".join(problems)


@pytest.mark.parametrize("pattern, expected", [
    ("a/b.json", ["a/b.json"]),
    ("x.{json,txt}", ["x.json", "x.txt"]),
    ("3-call<N>-<commit>.tgz", ["3-call*-*.tgz"]),
    ("tuning/find-sweep-N.json", ["tuning/find-sweep-*.json"]),
])
def test_placeholders(pattern, expected):
    assert expand(pattern) == expected


def test_an_archive_citation_is_parsed():
    text = "see `logs.tar.xz` (files `a.log`, `b-*.log` and `c.txt` inside) and `run.tar.xz` (file `d.log` inside)"
    found = [(m["archive"], re.findall(r"`([^`]+)`", m["names"])) for m in ARCHIVE_CITATION.finditer(text)]
    assert found == [("logs.tar.xz", ["a.log", "b-*.log", "c.txt"]), ("run.tar.xz", ["d.log"])]

"""compare_runs.py on the synthetic samples and the committed H100 runs: rows pair with
themselves one to one, a slower row shows in the ratios, unverified rows and other schemas are
left out, a roofline row pairs whatever configuration won.

    python3 -m pytest bench/common/test_compare_runs.py
"""
import copy
import json
import pathlib

from . import compare_runs

BENCH = pathlib.Path(__file__).resolve().parent.parent
SAMPLES = [BENCH / "search" / "sample_search_results.json", BENCH / "find" / "sample_find_results.json",
           BENCH / "merge" / "sample_merge_results.json", BENCH / "results" / "h100" / "pary.json",
           BENCH / "results" / "h100" / "index.json"]


def test_every_row_pairs_with_itself():
    for path in SAMPLES:
        doc = compare_runs.load(path)
        ps = compare_runs.pairs(doc, doc)
        timed = [r for r in doc["results"] if r.get("verified") is not False and compare_runs.time_of(r)]
        assert len(ps) == len(timed) > 0, path
        assert all(o is n for o, n in ps), path
        assert all(x["median"] == 1.0 for x in compare_runs.summary(ps, 0.05).values())


def test_slower_rows_unverified_rows_and_rooflines(tmp_path):
    old = compare_runs.load(BENCH / "merge" / "sample_merge_results.json")
    new = copy.deepcopy(old)
    gs = [r for r in new["results"] if r["impl"] == "gsearch" and r["verified"] is not False]
    gs[0]["ms"] *= 2
    gs[1]["verified"] = False
    roof = next(r for r in new["results"] if r["impl"] == "roofline")
    roof["call"] = "u9-b9-t256-cs"  # another configuration won
    ps = compare_runs.pairs(old, new)
    assert any(n is roof for _, n in ps)
    assert not any(n is gs[1] for _, n in ps)
    s = compare_runs.summary(ps, 0.05)["gsearch"]
    assert s["max"] == 2.0 and s["outside"] == 1
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(old))
    b.write_text(json.dumps(new))
    assert compare_runs.main([str(a), str(b), "--rows", "--json", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["summary"]["gsearch"]["outside"] == 1
    new["schema"] = "gsearch-bench-find/1"
    b.write_text(json.dumps(new))
    assert compare_runs.main([str(a), str(b)]) == 1

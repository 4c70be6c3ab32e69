"""plot_python.py, py_vs_cpp.py and plot.py's gsearch-py/jax columns, on small synthetic files
(made-up times: these test the code, they are not results).

    python3 -m pytest bench/search/test_plot_search_python.py
"""
import json
import pathlib

import pytest

from ..common.plot_test_helpers import pngs, run_script
from . import plot_search as plot
from . import plot_search_python as plot_python
from . import py_vs_cpp, rows_bench

HERE = pathlib.Path(__file__).resolve().parent

Q = 1 << 27


def row_1d(impl, kt, k, gqps, algo=None, out_type="int32", verified=True, timer=None):
    ms = Q / (gqps * 1e6)
    r = {"impl": impl, "algo": algo, "key_type": kt, "k": k, "query_kind": "random", "q": Q,
         "out_type": out_type, "ms": ms, "ms_min": ms, "ms_max": ms, "runs": 15, "gqps": gqps,
         "gbps": 1.0, "bytes": 1, "verified": verified, "peer_version": None, "threads": None,
         "items": None, "copies": 1}
    if timer:
        r["timer"] = timer
    return r


def search_doc():
    rows = []
    for kt in ("int32", "float32"):
        for k, base in ((1024, 200.0), (16384, 150.0), (49152, 140.0)):
            rows += [row_1d("gsearch", kt, k, base * 1.1, "pbs-cl"),
                     row_1d("gsearch", kt, k, base, "auto:pbs-cl"),
                     row_1d("torch", kt, k, base / 4, timer="cuda-event"),
                     row_1d("cupy", kt, k, base / 5, out_type="int64", timer="cuda-event"),
                     row_1d("gsearch-py", kt, k, base * (0.97 if k != 49152 else 0.8), "auto",
                            timer="cuda-event"),
                     row_1d("jax", kt, k, base / 6, "scan", timer="wall")]
    return {"schema": "gsearch-bench-search/1", "device": {"backend": "cuda", "name": "Test GPU"},
            "config": {"queries": Q}, "results": rows}


def rows_doc():
    doc = {"schema": rows_bench.SCHEMA, "device": {"name": "Test GPU"},
           "copy_bandwidth": {"gbps": 3000.0}, "results": []}
    for shape in rows_bench.SHAPES:
        traffic = rows_bench.traffic_bytes(*shape)
        roof = rows_bench.roofline_ms(traffic, 3000.0)
        st = lambda ms: {"ms": ms, "ms_min": ms, "ms_max": ms, "runs": 15}  # noqa: E731
        doc["results"] += [
            rows_bench.make_row("gsearch", shape, st(roof * 1.25), traffic, roof, roof * 5, True,
                                1, "0.1"),
            rows_bench.make_row("torch", shape, st(roof * 5), traffic, roof, roof * 5, True, 1,
                                "2.11"),
            rows_bench.make_row("roofline", shape, st(roof), traffic, roof, roof * 5, None, 1,
                                None)]
    return doc


def cpu_doc():
    from . import cpu_bench

    rows = []
    for dtype in ("int32", "float64"):
        for side in ("left", "right"):
            for k in (1024, 1 << 20):
                for q in (10, 1000, 1 << 22):
                    g, n = 1e-6 + q * 1e-8, 1e-6 + q * 3e-8
                    if q == 10:
                        g = 2 * n  # slower at 10 queries
                    rows.append(cpu_bench.make_row(dtype, side, k, q, g, n, 10, 10, 5, True,
                                                   "int64"))
    return {"schema": "gsearch-bench-cpu/1", "device": {"cpu": "Test CPU", "cores": 2},
            "results": rows}


def write(tmp_path, name, doc):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def test_all_figures_and_tables(tmp_path):
    pytest.importorskip("matplotlib")
    args = ["--rows", write(tmp_path, "rows.json", rows_doc()),
            "--cpu", write(tmp_path, "cpu.json", cpu_doc()),
            "--search", write(tmp_path, "search.json", search_doc()), "--out", tmp_path / "fig"]
    r = run_script(HERE / "plot_search_python.py", *args)
    assert r.returncode == 0, r.stderr
    assert pngs(tmp_path / "fig") == ["cpu_float64.png", "cpu_int32.png", "py_1d_float32.png",
                                      "py_1d_int32.png", "rows_gqps.png"]
    out = r.stdout
    assert "| 1,048,576 x 64 x 128 |" in out and "| 80% | 20% | 4.00x |" in out
    assert "| int32 | left | 2^10 | 10 |" in out and "(slower)" in out
    assert ("| K | gsearch (C++) | gsearch-py | torch | cupy | jax (wall clock) | C++ row | "
            "gsearch-py / torch | C++ / torch |") in out
    assert "| 1024 | 200.0 | 194.0 | 50.0 | 40.0 | 33.3 | auto:pbs-cl | 3.88x | 4.00x |" in out


def test_partial_inputs(tmp_path):
    doc = search_doc()
    doc["results"] = [r for r in doc["results"] if r["impl"] in ("gsearch", "jax")]
    doc["results"][0]["verified"] = False
    p = write(tmp_path, "s.json", doc)
    r = run_script(HERE / "plot_search_python.py", "--search", p, "--no-figures")
    assert r.returncode == 0, r.stderr
    assert "| K | gsearch (C++) | jax (wall clock) |" in r.stdout
    assert "leaving out unverified row" in r.stderr
    with pytest.raises(SystemExit):
        plot_python.main(["--no-figures"])


def test_cpp_row_choice():
    pts = plot_python.search_points(search_doc())
    assert pts["int32"][1024]["gsearch"]["algo"] == "auto:pbs-cl"  # auto, though pbs-cl is faster
    doc = search_doc()
    doc["results"] = [r for r in doc["results"] if r["algo"] != "auto:pbs-cl"]
    assert plot_python.search_points(doc)["int32"][1024]["gsearch"]["algo"] == "pbs-cl"


def test_py_vs_cpp(tmp_path, capsys):
    p = write(tmp_path, "s.json", search_doc())
    status = py_vs_cpp.main([str(p), "--json", str(tmp_path / "cmp.json")])
    out = capsys.readouterr().out
    assert status == 4  # K = 49152: gsearch-py at 0.8 of the C++ row
    rows = json.loads((tmp_path / "cmp.json").read_text())["rows"]
    assert len(rows) == 6
    r = next(x for x in rows if x["key_type"] == "int32" and x["k"] == 1024)
    assert r["cpp_algo"] == "auto:pbs-cl"
    assert r["ratio_cpp_torch"] == pytest.approx(4.0)
    assert r["ratio_py_torch"] == pytest.approx(3.88)
    assert r["difference"] == pytest.approx(-0.03) and r["within"] is True
    bad = [x for x in rows if not x["within"]]
    assert {(x["key_type"], x["k"]) for x in bad} == {("int32", 49152), ("float32", 49152)}
    assert "| int32 | 1024 | random | 2^27 | auto:pbs-cl | 200.0 | 194.0 | 50.0 | 4.00x | 3.88x | " \
           "-3.0% | yes |" in out
    assert "4 of 6 configurations within 10%" in out
    assert py_vs_cpp.main([str(p), "--ks", "1024,16384"]) == 0
    assert py_vs_cpp.main([str(p), "--ks", "49152", "--tolerance", "0.25"]) == 0
    doc = search_doc()
    doc["results"] = [r for r in doc["results"] if r["impl"] != "gsearch-py"]
    assert py_vs_cpp.main([str(write(tmp_path, "t.json", doc))]) == 1


def test_plot_table_with_gsearch_py_and_jax():
    doc = search_doc()
    rows = plot.load_rows(doc)
    text = plot.table(doc, rows, "int32", "random")
    header = next(l for l in text.splitlines() if l.startswith("| K |"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells == ["K", "PBS-CL", "auto (PBS-CL)", "roofline", "thrust", "cub", "torch", "cupy",
                     "jax scan", "gsearch-py auto", "best gsearch / best peer"]
    line = next(l for l in text.splitlines() if l.startswith("| 1024 |"))
    assert line.endswith("| 4.40x (PBS-CL / torch) |")  # jax is a peer, gsearch-py is not

"""pytest over bench/: the tests of each family's tools live beside them (bench/<family>/test_*.py)
and import the shared modules of bench/common (inputs, source_stamp, plot_common,
plot_test_helpers, machine, bench_json), which this puts on the path."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "common"))

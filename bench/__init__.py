"""gsearch's benchmarks as a package: bench.common (what the benchmarks share: the input
replica, the source stamp, the JSON and plot helpers) and one subpackage per family
(bench.search, bench.find, bench.merge, ...), each importing the others package-relatively
(``from ..common import inputs``). Run a script as a module from the repository root,
``python3 -m bench.<family>.<script> ...``, and the tests with ``python3 -m pytest bench`` (pytest
imports them as bench.<family>.test_*). The scripts that scripts/device/bench.sh starts as files
(``python3 bench/<family>/<script>.py``) run that way too: bench/_as_package.py."""

"""Lets a bench script started as a file, ``python3 bench/<family>/<script>.py`` (as
scripts/device/bench.sh starts its Python steps, and as some of bench/results' READMEs record),
import as it does when run as a module, ``python3 -m bench.<family>.<script>``: this folder is
imported as the package ``bench`` by its path (into sys.modules; nothing is added to sys.path),
and the script then names its own package (``__package__``, PEP 366), so that its
package-relative imports (``from ..common import inputs``) resolve as under ``-m``. Such a script
has, before those imports,

    if not __package__:  # started as a file, not with -m: bench/_as_package.py
        import runpy
        runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
        __package__ = "bench.<family>"
"""
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if "bench" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("bench", os.path.join(_HERE, "__init__.py"),
                                                   submodule_search_locations=[_HERE])
    _bench = importlib.util.module_from_spec(_spec)
    sys.modules["bench"] = _bench
    _spec.loader.exec_module(_bench)

"""The package itself: version, CUDA probe, typing files, docstrings, error mapping."""

import importlib.resources
import re
from pathlib import Path

import numpy as np
import pytest

import gsearch


def test_version_is_the_cmake_project_version():
    cmake = Path(__file__).resolve().parents[2] / "CMakeLists.txt"
    if not cmake.exists():
        pytest.skip("not run from a source tree")
    m = re.search(r"project\(gsearch\s+VERSION\s+([0-9.]+)", cmake.read_text())
    assert gsearch.__version__ == m.group(1)


def test_cuda_probe():
    assert isinstance(gsearch.cuda_available(), bool)
    assert isinstance(gsearch.built_with_cuda(), bool)
    if not gsearch.built_with_cuda():
        assert not gsearch.cuda_available()


# The typing vocabulary of the signatures: module attributes (typing.get_type_hints resolves
# the annotations in the module's namespace) that dir() does not list.
SIGNATURE_NAMES = {
    "Any", "Literal", "Optional", "Union", "annotations",
    "Algo", "ArrayLike", "FindMode", "FindOp", "FindStrategy", "IsinMethod", "JoinHow", "SetOp", "Side",
}

PUBLIC_SUBMODULES = {"dask", "distributed"}  # imported by name, never by `import gsearch`


def test_dir_is_the_documented_public_api():
    api = sorted(set(gsearch.__all__) - {"__version__"})
    assert [n for n in dir(gsearch) if not n.startswith("_")] == api  # tab completion
    assert "__version__" in dir(gsearch) and "__version__" in gsearch.__all__
    assert len(set(gsearch.__all__)) == len(gsearch.__all__)
    for name in api:
        obj = getattr(gsearch, name)
        doc = obj.__doc__
        assert doc and len(doc.strip()) > 40, name  # documented, not a stub line
        assert doc is not type(obj).__doc__, name  # its own docstring, not its type's
    # The namespace holds nothing else public: imports are private (import numpy as _np); the
    # public submodules (gsearch.distributed, gsearch.dask) are attributes once imported.
    extra = {n for n in vars(gsearch) if not n.startswith("_")} - set(api)
    assert extra <= SIGNATURE_NAMES | PUBLIC_SUBMODULES, extra - SIGNATURE_NAMES - PUBLIC_SUBMODULES
    namespace = {}
    exec("from gsearch import *", namespace)
    assert sorted(n for n in namespace if n != "__builtins__") == sorted(gsearch.__all__)
    import typing

    assert typing.get_type_hints(gsearch.searchsorted)["check_sorted"] == typing.Optional[bool]


def test_typing_files_installed():
    files = importlib.resources.files("gsearch")
    assert files.joinpath("py.typed").is_file()
    stub_path = Path(gsearch._core.__file__).with_name("_core.pyi")  # installed next to the module
    assert stub_path.is_file()
    stub = stub_path.read_text()
    assert "def search(" in stub and "def search_fast(" in stub


@pytest.mark.parametrize("fn", [gsearch.searchsorted, gsearch.predecessor, gsearch.bucketize])
def test_numpy_style_docstrings(fn):
    doc = fn.__doc__
    for section in ("Parameters\n    ----------", "Returns\n    -------", "Raises\n    ------", "Examples\n    --------"):
        assert section in doc, (fn.__name__, section)


def test_docstring_examples():
    """Every example of the public docstrings runs as written; those that import pandas or
    polars (the as-of joins) where they import (not in the oldest-numpy CI step, whose numpy is
    older than pandas needs)."""
    import doctest

    def imports(name):
        try:
            __import__(name)
        except ImportError:
            return False
        return True

    missing = [name for name in ("pandas", "polars") if not imports(name)]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(gsearch):
        if any(f"import {name}" in (test.docstring or "") for name in missing):
            continue
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0 and results.attempted > 5


def test_errors_map_to_python_exceptions():
    from gsearch import _core

    a = np.array([3, 2, 1], dtype=np.int64)
    out = np.empty(1, dtype=np.int64)
    with pytest.raises(ValueError, match="sorted"):  # gsearch::invalid_argument
        _core.search(a, a[:1], out, 0, 0, True)
    with pytest.raises(ValueError):  # size mismatch
        _core.search(a, a, out, 0)
    with pytest.raises(TypeError):  # mixed dtypes never reach the library
        _core.search(a, a[:1].astype(np.int32), out, 0)
    with pytest.raises(TypeError):
        _core.search(a.astype(np.int8), a[:1].astype(np.int8), out, 0)
    if not gsearch.built_with_cuda():
        # The CUDA entry points exist and say why they cannot run.
        assert _core.cuda_device_count() == 0


def test_fast_path_declines_what_it_cannot_do():
    from gsearch import _core

    a = np.arange(10, dtype=np.int64)
    out = np.empty(3, dtype=np.int64)
    assert _core.search_fast(a, a[:3], out, 1) and out.tolist() == [1, 2, 3]
    assert not _core.search_fast(a[::2], a[:3], out, 0)  # non-contiguous
    assert not _core.search_fast(a, a[:3].astype(np.int32), out, 0)  # dtypes differ
    assert not _core.search_fast(a.astype(np.int8), a[:3].astype(np.int8), out, 0)


def test_build_info_names_the_source():
    import re

    b = gsearch.build_info()
    assert set(b) == {"version", "commit", "dirty", "cuda"}
    assert b["version"] == gsearch.__version__
    assert b["commit"] == "unknown" or re.fullmatch(r"[0-9a-f]{7,40}", b["commit"])
    assert isinstance(b["dirty"], bool) and b["cuda"] == gsearch.built_with_cuda()

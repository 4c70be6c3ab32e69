"""source_stamp.source(): the commit every result JSON carries."""

import re
import types

from . import source_stamp


def test_the_package_stamp_comes_first():
    gs = types.SimpleNamespace(build_info=lambda: {"commit": "abc123", "dirty": False, "version": "0.1.0"})
    assert source_stamp.source(gs) == {"commit": "abc123", "dirty": False, "from": "gsearch"}


def test_this_checkout_by_git():
    s = source_stamp.source(None)
    if s["from"] == "git":  # a checkout with .git (CI, this machine)
        assert re.fullmatch(r"[0-9a-f]{40}", s["commit"]) and isinstance(s["dirty"], bool)
    else:
        assert s["from"] in ("SOURCE_COMMIT", "unknown")


def test_a_copy_without_git_reads_source_commit(tmp_path):
    (tmp_path / "SOURCE_COMMIT").write_text("0123abcd dirty\n")
    assert source_stamp.source(None, root=str(tmp_path)) == {"commit": "0123abcd", "dirty": True,
                                                              "from": "SOURCE_COMMIT"}


def test_nothing_known_says_unknown(tmp_path):
    assert source_stamp.source(None, root=str(tmp_path))["commit"] == "unknown"

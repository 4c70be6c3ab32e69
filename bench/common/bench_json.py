"""Writing a benchmark's JSON file: atomically (a temporary file in the same folder, flushed to
disk, then renamed over the target, keeping its permissions), so that a reader never sees half
a file and an interrupted run leaves the old file whole. The C++ benchmarks do the same
(bench/common/bench_host.hpp's write_json)."""
import json
import os
import tempfile


def write_atomic(path, doc):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bench.", suffix=".json.tmp", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        except OSError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise

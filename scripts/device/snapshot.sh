#!/usr/bin/env bash
# The tree as committed, for a device call while the working tree holds someone's uncommitted
# work (a helper's, say): HEAD's files (less bench/results, but for its scripts) with .deps and
# HEAD's commit stamp, in .snap (ignored: .git/info/exclude). Carry `.snap` (and
# `build/_deps/cccl` if the build wants CUB 3.6) and begin the call's command with
#   cd .snap && mkdir -p build/_deps && ln -sfn "$OLDPWD/build/_deps/cccl" build/_deps/cccl && ...
# so that what runs is exactly the commit. Used by the ninth session's calls 2-4 (issue 41).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .git/info
grep -qx "/.snap/" .git/info/exclude 2>/dev/null || echo "/.snap/" >> .git/info/exclude
[ -d .deps ] || bash scripts/device/pack_deps.sh >/dev/null
rm -rf .snap && mkdir .snap
git archive HEAD | tar -x -C .snap --exclude=bench/results
git ls-files 'bench/results/*.sh' | while read -r f; do mkdir -p ".snap/$(dirname "$f")" && cp "$f" ".snap/$f"; done
cp -r .deps .snap/
git rev-parse HEAD > .snap/.deps/source_commit.txt
echo ".snap: $(cat .snap/.deps/source_commit.txt), $(du -sh .snap | cut -f1)"

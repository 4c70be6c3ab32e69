#!/usr/bin/env bash
# The tree as committed, for a device call while the working tree holds someone's uncommitted
# work (a helper's, say), or a branch not checked out: `snapshot.sh [REF]` (HEAD by default) puts
# REF's files (less bench/results, but for its scripts) with .deps and
# REF's commit stamp, in .snap (ignored: .git/info/exclude). Carry `.snap` (and
# `build/_deps/cccl` if the build wants CUB 3.6) and begin the call's command with
#   cd .snap && mkdir -p build/_deps && ln -sfn "$OLDPWD/build/_deps/cccl" build/_deps/cccl && ...
# so that what runs is exactly the commit. Used by the ninth session's calls 2-4 (issue 41).
set -euo pipefail
REF=${1:-HEAD}
cd "$(dirname "$0")/../.."
mkdir -p .git/info
grep -qx "/.snap/" .git/info/exclude 2>/dev/null || echo "/.snap/" >> .git/info/exclude
[ -d .deps ] || bash scripts/device/pack_deps.sh >/dev/null
rm -rf .snap && mkdir .snap
git archive "$REF" | tar -x -C .snap --exclude=bench/results
git ls-tree -r --name-only "$REF" -- bench/results | grep '\.sh$' |
  while read -r f; do mkdir -p ".snap/$(dirname "$f")" && git show "$REF:$f" > ".snap/$f"; done
cp -r .deps .snap/
git rev-parse "$REF" > .snap/.deps/source_commit.txt
echo ".snap: $(cat .snap/.deps/source_commit.txt), $(du -sh .snap | cut -f1)"

#!/usr/bin/env bash
# Packs what the GPU machine lacks to build the whole tree itself (scripts/device/build.sh):
# GoogleTest, CLI11 and nlohmann_json from this machine's Debian packages, as a relocatable
# prefix in .deps/ (git-ignored; carry it), with .deps/source_commit.txt, the commit of this
# tree (" dirty" after it if it has changes), which the copy there, without .git, cannot tell.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .deps && mkdir -p .deps/include .deps/lib/x86_64-linux-gnu/cmake .deps/share/cmake
cp -r /usr/include/gtest /usr/include/gmock /usr/include/CLI /usr/include/nlohmann .deps/include/
cp /usr/lib/x86_64-linux-gnu/libgtest*.a /usr/lib/x86_64-linux-gnu/libgmock*.a .deps/lib/x86_64-linux-gnu/
cp -r /usr/lib/x86_64-linux-gnu/cmake/GTest .deps/lib/x86_64-linux-gnu/cmake/
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json .deps/share/cmake/
# GTestTargets.cmake pins its prefix when it sits at its Debian path; copied, it is relative.
echo "$(git rev-parse HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo ' dirty')" > .deps/source_commit.txt
du -sh .deps

#!/usr/bin/env python3
"""Finds memory instructions whose descriptor register nothing writes, in cuobjdump's SASS.

CUDA 13.0's ptxas compiled some instances of the selection's tile ring (cp.async with an L2
cache-policy operand) to an LDGSTS whose `desc[URn]` names a uniform register pair that no
instruction of the function writes; on the H200 those kernels ended in
cudaErrorIllegalInstruction (docs/perf-notes.md, issue 41). This scans each function of
`cuobjdump -sass FILE` for LDG / LDGSTS / STG / ATOMG / RED instructions with such a descriptor.

    python3 scripts/device/sass_desc_check.py OBJECT_OR_BINARY [...]   (cuobjdump and nvdisasm on PATH)

Prints one line a suspect function; exit status 1 if any.
"""
import re
import subprocess
import sys

MEMORY = re.compile(r"\b(LDGSTS|LDG|STG|ATOMG|RED)\b[^;]*desc\[UR(\d+)\]")


def suspects(sass: str):
    for body in re.split(r"\n\s+Function : ", sass)[1:]:
        name = body.split("\n", 1)[0].strip()
        lines = [l.split("*/", 1)[1] for l in body.split("\n") if "*/" in l and ";" in l]
        written = set()
        for l in lines:  # a uniform register as the first operand is written (UR pairs: both halves)
            m = re.match(r"\s*(@!?U?P\w+\s+)?[A-Z][A-Z0-9._]*\s+UR(\d+)\b", l)
            if m and not MEMORY.search(l):
                r = int(m.group(2))
                written.update({r, r + 1} if ".64" in l.split()[0 if not m.group(1) else 1] else {r})
        bad = [l.strip() for l in lines if (m := MEMORY.search(l)) and int(m.group(2)) not in written]
        if bad:
            yield name, bad


def main() -> int:
    found = False
    for path in sys.argv[1:]:
        sass = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True, check=True).stdout
        for name, bad in suspects(sass):
            found = True
            print(f"{path}: {name}: {len(bad)} instruction(s), e.g. {bad[0]}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

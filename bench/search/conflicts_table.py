#!/usr/bin/env python3
"""Joins the bank model's predictions (conflicts_probe's JSON lines) with Nsight Compute's
shared-memory counters (ncu --csv, one row per metric per kernel) in launch order, and prints a
markdown table (and, with --json FILE, the joined records).

usage: conflicts_table.py model.jsonl ncu.csv [--json out.json]
"""
import csv
import io
import json
import sys

WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
REQUESTS = "smsp__inst_executed_op_shared_ld.sum"


def read_ncu(path):
    text = open(path).read()
    start = text.find('"ID"')  # ncu prints its own log lines before the CSV
    if start < 0:
        sys.exit(f"{path}: no ncu CSV found")
    kernels = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        value = float(row["Metric Value"].replace(",", ""))
        kernels.setdefault(int(row["ID"]), {"name": row["Kernel Name"]})[row["Metric Name"]] = value
    return [kernels[i] for i in sorted(kernels)]


def main():
    args = sys.argv[1:]
    json_out = None
    if "--json" in args:
        i = args.index("--json")
        json_out = args[i + 1]
        del args[i : i + 2]
    model = [json.loads(line) for line in open(args[0]) if line.strip()]
    ncu = read_ncu(args[1])
    if len(model) != len(ncu):
        sys.exit(f"{len(model)} model lines but {len(ncu)} profiled kernels")
    rows = []
    print("| algo | key bytes | K | queries | steps | model accesses/warp | ncu wavefronts/warp | "
          "model conflicts/warp | ncu conflicts/warp | ncu loads/warp | agree |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for m, n in zip(model, ncu):
        w = m["warps"]
        r = dict(m)
        r["ncu_wavefronts"] = n[WAVEFRONTS]
        r["ncu_conflicts"] = n[CONFLICTS]
        r["ncu_requests"] = n[REQUESTS]
        agree = abs(n[WAVEFRONTS] - m["model_passes"]) <= 0.01 * m["model_passes"]
        r["agree"] = agree
        rows.append(r)
        print(f"| {m['algo']} | {m['key_bytes']} | {m['k']} | {m['queries']} | {m['steps']} | "
              f"{m['model_passes'] / w:.2f} | {n[WAVEFRONTS] / w:.2f} | {m['model_conflicts'] / w:.2f} | "
              f"{n[CONFLICTS] / w:.2f} | {n[REQUESTS] / w:.2f} | {'yes' if agree else 'no'} |")
    if json_out:
        json.dump(rows, open(json_out, "w"), indent=1)


if __name__ == "__main__":
    main()

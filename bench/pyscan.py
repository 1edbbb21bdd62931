#!/usr/bin/env python3
"""A straight Python re-scan of a scratch root, the way Backend.AI's agent
does it per query (scan_gpu_alloc_map): read each kernel's resource.txt,
parse it as resource.txt's reader does (split lines, first '=', *_SHARES keys
lower-cased into slot names, entries split at the first ':'), and sum
cuda.shares + cuda.device per device with Decimal.

    python3 bench/pyscan.py SCRATCH-ROOT
"""
import json
import os
import sys
from decimal import Decimal


def parse(text):
    kv = {}
    for line in text.split("\n"):
        if "=" not in line:
            continue
        k, v = line.strip().split("=", 1)
        kv[k] = v
    allocs = {}
    for k, v in kv.items():
        if not k.endswith("_SHARES"):
            continue
        slot = k[: -len("_SHARES")].lower()
        per_dev = {}
        for entry in v.split(","):
            dev, _, amount = entry.partition(":")
            if not dev or not amount:
                continue
            if slot == "mem":
                continue  # bytes slot; not needed for the GPU map
            per_dev[dev] = Decimal(amount)
        allocs[slot] = per_dev
    for required in ("MOUNTS", "SLOTS", "SCRATCH_SIZE"):
        kv[required]
    json.loads(kv["SLOTS"])
    return allocs


def main():
    root = sys.argv[1]
    alloc_map = {}
    for kid in os.listdir(root):
        path = os.path.join(root, kid, "config", "resource.txt")
        try:
            with open(path) as f:
                allocs = parse(f.read())
        except FileNotFoundError:
            continue
        for slot in ("cuda.shares", "cuda.device"):
            for dev, amount in allocs.get(slot, {}).items():
                alloc_map[dev] = alloc_map.get(dev, Decimal(0)) + amount
    print(json.dumps({k: str(v) for k, v in alloc_map.items()}, sort_keys=True))


if __name__ == "__main__":
    main()

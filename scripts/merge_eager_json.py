#!/usr/bin/env python3
"""Merges PyTorch eager baselines (scripts/kb1_torch_eager.py --json) into one file.

Usage: merge_eager_json.py KEPT NEW
Rows of NEW whose (problem, size) KEPT lacks are added to KEPT (created from NEW when absent);
rows KEPT already has stay as they were, so a set's speedups are each against one measurement.
"""
import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    kept_path, new_path = argv[1], argv[2]
    if not os.path.exists(new_path):
        print(f"merge_eager_json: {new_path}: no such file (the eager step failed?)")
        return 1
    with open(new_path) as f:
        new = json.load(f)
    if not os.path.exists(kept_path):
        kept = new
        added = len(new.get("rows", []))
    else:
        with open(kept_path) as f:
            kept = json.load(f)
        if kept.get("device") != new.get("device") or kept.get("torch") != new.get("torch"):
            print(f"merge_eager_json: {new_path} is from {new.get('device')} / torch "
                  f"{new.get('torch')}, {kept_path} from {kept.get('device')} / torch "
                  f"{kept.get('torch')}: not merged", file=sys.stderr)
            return 1
        have = {(r["problem"], r["size"]) for r in kept.get("rows", [])}
        added = 0
        for row in new.get("rows", []):
            if (row["problem"], row["size"]) not in have:
                kept.setdefault("rows", []).append(row)
                added += 1
    tmp = kept_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(kept, f, indent=1)
    os.replace(tmp, kept_path)
    print(f"merge_eager_json: {added} row(s) added; {kept_path} holds {len(kept.get('rows', []))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

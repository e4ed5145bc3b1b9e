"""Adds NCCL's unlimited curve (the serial plan's one call, tune::serial_candidate) to a tuner
profile from `kiln bench collective` run in the same device call, for the 4xH200 profiles of
2026-11-27 that `kiln tune profile` measured before it measured that curve itself.

Both time the same call on the same machine: one NCCL AllReduce / ReduceScatter on the default
communicator, bytes = what each rank sends, time = median over iterations of the max over ranks.
The source and the conversion are written into the profile's provenance.

    python3 add_unlimited_curve.py PROFILE.json COLLECTIVE.json OUT.json
"""
import json
import sys

profile_path, collective_path, out_path = sys.argv[1:4]
profile = json.load(open(profile_path))
collective = json.load(open(collective_path))
op = {"rs": "reducescatter", "ar": "allreduce"}[profile["op"]]
if collective["op"] != op or collective["world_size"] != profile["world"] or collective["dtype"] != profile["dtype"]:
    sys.exit(f"{collective_path}: {collective['op']} on {collective['world_size']} ranks in "
             f"{collective['dtype']}, not the profile's {op} on {profile['world']} in {profile['dtype']}")
if any(c["transport"] == "nccl" and c["nccl_ctas"] == 0 for c in profile["curves"]):
    sys.exit(f"{profile_path} already has an unlimited NCCL curve")
rows = [r for r in collective["rows"] if r["wrong"] == 0]
profile["curves"].append({"transport": "nccl", "nccl_ctas": 0,
                          "bytes": [float(r["bytes"]) for r in rows],
                          "us": [r["time_us"]["median"] for r in rows]})
profile["provenance"]["unlimited_nccl_curve"] = {
    "from": collective["provenance"]["command"],
    "date": collective["provenance"]["date"],
    "commit": collective["provenance"]["commit"],
    "note": "kiln bench collective of the same device call (docs/results/2026-11-27-h200-x4/call1); "
            "bytes = each rank's send bytes, us = median over iterations of the max over ranks"}
json.dump(profile, open(out_path, "w"), indent=1)
print(f"wrote {out_path}: {len(rows)} samples, {rows[0]['bytes']}..{rows[-1]['bytes']} B")

#!/usr/bin/env python3
"""Fits a candidate timeline model of comm=ce2 (the two-phase copy-engine AllReduce) to a measured
sweep, offline: which physics explains the measured plans, before any of it goes into the tuner.

Inputs: a tuner profile with a ce2 curve (`kiln tune profile --op ar`, one group alone) and an
overlap sweep that timed ce2 plans (`kiln overlap bench --op ar --comms ce ce2 --json`), both from
the same machine. The sweep's plans must use the 128x256 tile (the bench's default GEMM).

The model, per wave group of B bytes on the in-order communication stream:
  - its phases start when its waves are done and the stream is free;
  - the curve alone is split into a fixed latency (the curve's floor, L0) and a bandwidth part;
    the latency is paid (times LAT) only when the stream was idle, since queued groups overlap it;
  - beside the GEMM with a cap, the copies take KC times the bandwidth part and the owner's sum of
    (1 + 1/W)·B bytes runs on the SMs the cap leaves, at R_SM GB/s per SM;
  - without a cap (the GEMM holds every SM) half the copies run beside the GEMM and the sum and
    the rest wait for its end;
  - after the GEMM, the curve alone.
It grid-searches (R_SM, KC, LAT), prints the mean |error| per shape and cap, and whether the
model's fastest plan is the fastest measured.
Usage: python3 scripts/fit_ce2_model.py --profile P.json --sweep S.json [--world 4] [--sms 132]
"""
import argparse
import bisect
import json
import math


def curve_of(profile, transport):
    for c in profile["curves"]:
        if c["transport"] == transport and c["nccl_ctas"] == 0:
            return c["bytes"], c["us"]
    raise SystemExit(f"--profile: no {transport} curve (measure one with kiln tune profile --op ar)")


def at(curve, b):
    xs, ys = curve
    if b <= xs[0]:
        return ys[0]
    i = min(bisect.bisect_right(xs, b), len(xs) - 1)
    lo = i - 1
    return ys[lo] + (ys[i] - ys[lo]) / (xs[i] - xs[lo]) * (b - xs[lo])


def sweep_points(sweep, sms):
    points = []
    for row in sweep["rows"]:
        gemm_us = row["kiln_gemm_us"]["median"]
        for s in row["sweep"]:
            plan = dict(kv.split("=", 1) for kv in s["plan"].split())
            if plan.get("comm") != "ce2":
                continue
            if plan.get("tile", "128x256") != "128x256":
                raise SystemExit(f"--sweep: plan {s['plan']} is not of the 128x256 tile")
            cap = int(plan["cap"])
            grid = cap if cap else sms
            tiles = math.ceil(row["m"] / 128) * math.ceil(row["n"] / 256)
            points.append({"shape": row["shape"], "cap": cap, "grid": grid, "tiles": tiles,
                           "waves": math.ceil(tiles / grid), "gemm_us": gemm_us, "us": s["us"],
                           "groups": [int(g) for g in plan["groups"].split(",")], "plan": s["plan"]})
    if not points:
        raise SystemExit("--sweep: no comm=ce2 plan in the sweep")
    return points


def predict(p, curve, world, sms, r_sm, kc, lat):
    floor = at(curve, 1)
    per_wave = p["gemm_us"] / p["waves"]
    free_sms = sms - p["grid"] if p["cap"] else 0
    t, waves_done = 0.0, 0
    for g in p["groups"]:
        tiles = min(p["tiles"], (waves_done + g) * p["grid"]) - waves_done * p["grid"]
        waves_done += g
        group_bytes = tiles * 128 * 256 * 2
        compute_done = per_wave * waves_done
        fixed = lat * floor if compute_done >= t else 0.0
        start = max(compute_done, t)
        bandwidth = at(curve, group_bytes) - floor
        if start >= p["gemm_us"]:
            t = start + fixed + bandwidth
        elif free_sms == 0:
            t = max(start + fixed + kc * bandwidth / 2, p["gemm_us"]) + bandwidth / 2
        else:
            sum_us = group_bytes * (1 + 1 / world) / (free_sms * r_sm) / 1e3
            t = start + fixed + kc * bandwidth + sum_us
    return max(t, p["gemm_us"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--sms", type=int, default=132)
    a = ap.parse_args()
    if a.world < 3:
        raise SystemExit(f"--world {a.world}: comm=ce2 is modelled for 3 or more ranks")
    with open(a.profile) as f:
        curve = curve_of(json.load(f), "ce2")
    with open(a.sweep) as f:
        points = sweep_points(json.load(f), a.sms)

    def error(params, keep=lambda p: True):
        e = [abs(predict(p, curve, a.world, a.sms, *params) - p["us"]) / p["us"] for p in points if keep(p)]
        return sum(e) / len(e)

    grid = [(r, k, l) for r in (20, 40, 60, 80, 100, 130, 160, 200)
            for k in (0.4, 0.6, 0.8, 1.0, 1.2, 1.5) for l in (0, 0.25, 0.5, 0.75, 1.0)]
    best = min(grid, key=error)
    print(f"# {len(points)} ce2 plans; best R_SM {best[0]} GB/s per SM, KC {best[1]}, LAT {best[2]}: "
          f"mean |error| {100 * error(best):.1f}%")
    print(f"{'shape':>18} {'cap 0':>8} {'cap>0':>8} {'model pick':>11} {'best meas':>10} {'ratio':>6}")
    for shape in sorted({p["shape"] for p in points}):
        mine = [p for p in points if p["shape"] == shape]
        pick = min(mine, key=lambda p: predict(p, curve, a.world, a.sms, *best))
        fastest = min(mine, key=lambda p: p["us"])
        cells = []
        for capped in (False, True):
            sel = [p for p in mine if bool(p["cap"]) == capped]
            cells.append(f"{100 * error(best, lambda p, s=sel: p in s):7.1f}%" if sel else f"{'-':>8}")
        print(f"{shape:>18} {cells[0]} {cells[1]} {pick['us']:11.1f} {fastest['us']:10.1f} "
              f"{fastest['us'] / pick['us']:6.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# A/B of tuner profiles through `kiln overlap bench --plan auto` on one host (issue 17's follow-up
# of the ce2 tuner): per round, the plans the built-in profiles give (A: no profile in the cache
# directory) and the plans the profiles in PROFILE_DIR give (B: copied to <cache>/kiln/profiles/),
# for each op in OPS, alternating A and B for ROUNDS rounds so that neither owns the cooler chip.
# Usage: PROFILE_DIR=dir [OPS="rs ar"] [ROUNDS=2] [GPUS=2] bash scripts/device_profile_ab.sh
# Writes /tmp/kiln-profile-ab/profile-ab/ (bench text and JSON per run, summary.txt) and packs it
# as $OUT/profile-ab.tar.gz after every run, the summary beside it: the device tool returns a
# limited number of files, and on 2026-11-28 it left out 15 of the A/B's 21.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit
[ -n "${PROFILE_DIR:-}" ] && [ -d "$PROFILE_DIR" ] || { echo "PROFILE_DIR: a folder of profiles is required" >&2; exit 2; }
gpus=${GPUS:-2}; rounds=${ROUNDS:-2}
final=${OUT:-out}; mkdir -p "$final"
out=/tmp/kiln-profile-ab/profile-ab; rm -rf "$out"; mkdir -p "$out"
for side in a b; do rm -rf "/tmp/kiln-ab-$side"; mkdir -p "/tmp/kiln-ab-$side/kiln/profiles"; done
cp "$PROFILE_DIR"/*.json /tmp/kiln-ab-b/kiln/profiles/
for r in $(seq 1 "$rounds"); do
  for op in ${OPS:-rs ar}; do
    for side in a b; do
      rm -f "/tmp/kiln-ab-$side/kiln/plans.json"
      log="$out/$op-$side-r$r"
      XDG_CACHE_HOME=/tmp/kiln-ab-$side timeout 120 build/kiln overlap bench -g "$gpus" --op "$op" \
        --plan auto --json "$log.json" > "$log.txt" 2>&1
      echo "$op $side round $r: exit $? $(grep -E 'geo-mean' "$log.txt" | head -1)" | tee -a "$out/summary.txt"
      tar -czf "$final/profile-ab.tar.gz" -C "$(dirname "$out")" profile-ab
      cp "$out/summary.txt" "$final/profile-ab-summary.txt"
    done
  done
done

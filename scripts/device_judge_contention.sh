#!/usr/bin/env bash
# Does a busy host slow the judge? (issue 20's engine speed: in a set run the judge servers share
# the host with the candidates' compiles, and the judge's phases took ~2x what their GPU work
# should.) One screened judgement of one candidate (CONTENTION_CASE "problem:size:source"),
# CONTENTION_RUNS times in each of three host states: idle; one busy loop per core; the same
# loops at nice 19. contention.md: each phase's median seconds per state.
# Usage: bash scripts/device_judge_contention.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}/contention; mkdir -p "$o"
IFS=: read -r p size src <<< "${CONTENTION_CASE:-kb1-19-relu:kb:docs/results/2026-11-25-evolve-set/screen/kb1-19-relu/best.cu}"
common=(bench candidate --problem "$p" --sizes "$size" -g 1 --source "$src" --build-dir /tmp/kiln-contention
  --reuse-builds -w 3 -n 10 --trials 1 --timeout 60 --skip-reference-timing --timing screen)
build/kiln "${common[@]}" > "$o/build.txt" 2>&1 || { echo "build run failed: $(tail -3 "$o/build.txt")"; exit 1; }
busy() {  # $1: nice level; one loop per core until killed
  for _ in $(seq "$(nproc)"); do nice -n "$1" bash -c 'while :; do :; done' & done
}
for state in idle busy niced; do
  pids=()
  case $state in
    busy) busy 0; pids=($(jobs -p)) ;;
    niced) busy 19; pids=($(jobs -p)) ;;
  esac
  sleep 1
  for i in $(seq 1 "${CONTENTION_RUNS:-3}"); do
    start=$(date +%s.%N)
    build/kiln "${common[@]}" --json "$o/$state-$i.json" > "$o/$state-$i.txt" 2>&1
    echo "$state run $i: exit $? in $(awk "BEGIN { print $(date +%s.%N) - $start }") s" | tee -a "$o/summary.txt"
  done
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2> /dev/null; wait 2> /dev/null
done
python3 - "$o" <<'PY' | tee "$o/contention.md"
import glob, json, os, statistics, sys
sys.path.insert(0, "scripts")
from verdict_rows import rows
root = sys.argv[1]
table = {}
for path in sorted(glob.glob(os.path.join(root, "*-[0-9].json"))):
    state = os.path.basename(path).split("-")[0]
    try:
        doc = json.load(open(path))
    except Exception as e:
        print(f"{path}: unreadable ({e})"); continue
    for row in rows(doc):  # every judged row (scripts/verdict_rows.py)
        if "phase_seconds" not in row:
            continue
        for phase, seconds in row["phase_seconds"].items():
            table.setdefault(phase, {}).setdefault(state, []).append(seconds)
        us = row.get("solution_us")
        if isinstance(us, dict) and "median" in us:
            table.setdefault("solution median us", {}).setdefault(state, []).append(us["median"])
states = ["idle", "busy", "niced"]
print("| phase (median s) | " + " | ".join(states) + " |")
print("|---|" + "---|" * len(states))
for phase, by_state in sorted(table.items()):
    cells = [f"{statistics.median(by_state[s]):.4f}" if s in by_state else "-" for s in states]
    print(f"| {phase} | " + " | ".join(cells) + " |")
PY

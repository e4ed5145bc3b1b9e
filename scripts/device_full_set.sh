#!/usr/bin/env bash
# Issue 20's engine-speed run: `kiln evolve set` over every KernelBench level-1 problem with a
# generator, at KernelBench's size, FULLSET_BUDGET (100) evaluations each, in one or more device
# calls of at most FULLSET_LIMIT (520) s each. Each call resumes from the state a previous call
# brought back (fullset-state/ in the repository root, carried: every problem's log.json, run.json,
# seeds.json and report.json, the pool, and units.tar.xz: the CUTLASS units the run built), so a
# run cut at the limit goes on where it stopped without building its units again.
# Writes to $OUT: fullset.txt (the set's output), monitor.txt (GPU and host memory every 5 s),
# failures.txt (the end of each judge log that reports a failure), fullset.md (evaluations per problem and family,
# new this call and in all, the call's evaluations per second), fullset-state.tar.xz (the state
# for the next call: unpack it in the repository root here, then carry fullset-state).
# Judge settings: -w 3 -n 10, 1 screened trial, FULLSET_CONFIRM (2) confirmations with 3 trials
# (the best screened kernel and the best of another work mapping: 2026-11-29g's avgpool-3d set
# kept a kernel the screen put at U 0.588 and the guarded judge at 0.348), the best confirmed.
# CUTLASS GEMM units compiled ahead here (`bash scripts/prebuild_sm90_units.sh prebuilt-units`:
# every sm90 configuration, 3.6 MB; `bash scripts/prebuild_pool_units.sh POOL prebuilt-units`: the
# units of a pool's CUTLASS genomes, sm80 included) go into the set's build cache (PREBUILT_UNITS
# names another folder holding units/). Carry prebuilt-units/units as it is, or packed with the
# binaries (`bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests
# .deps/cutlass-4.2.0.0/include prebuilt-units/units`: compressed, restored in place).
# FULLSET_POOL: a strategy pool to start a fresh run from (default: an empty pool; a relative path
# is from the repository root).
# Usage: bash scripts/device_full_set.sh   (FULLSET_PROBLEMS, FULLSET_PARALLEL, FULLSET_EXTRA, FULLSET_POOL)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
dir=/tmp/fullset; rm -rf "$dir"; mkdir -p "$dir/set"
if [ -d fullset-state/set ]; then
  cp -r fullset-state/set/. "$dir/set/"; [ -f fullset-state/pool.json ] && cp fullset-state/pool.json "$dir/"
  echo "resuming: $(ls "$dir/set" | wc -l) problem folders from fullset-state/" | tee "$o/fullset.md"
  [ -n "${FULLSET_POOL:-}" ] && echo "FULLSET_POOL ignored: a resumed run goes on with its own pool" | tee -a "$o/fullset.md"
else
  echo "starting afresh (no fullset-state/ carried)" | tee "$o/fullset.md"
  # A pool from earlier runs (FULLSET_POOL, e.g. one `kiln evolve merge-pools` made): each search
  # starts from what worked before (issue 20's retrieval); without it the pool starts empty.
  if [ -n "${FULLSET_POOL:-}" ]; then
    cp "$FULLSET_POOL" "$dir/pool.json" || exit 1
    echo "pool: $FULLSET_POOL ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$dir/pool.json") entries)" | tee -a "$o/fullset.md"
  fi
fi
# CUTLASS units compiled ahead (scripts/prebuild_sm90_units.sh, no GPU needed; carry the folder):
# into the set's build cache, where a matmul candidate finds its unit built.
units=${PREBUILT_UNITS:-prebuilt-units}
if [ -d "$units/units" ]; then
  mkdir -p "$dir/set/build-cache/units" && cp -p "$units"/units/*.o "$dir/set/build-cache/units/" 2> /dev/null
  echo "prebuilt units: $(find "$dir/set/build-cache/units" -name '*.o' | wc -l) from $units/units" | tee -a "$o/fullset.md"
fi
# The units earlier calls of this run built (fullset-state/units.tar.xz): a resumed call does not
# build them again (2026-11-29e: each resumed call rebuilt its predecessor's, 16 of call 3's 16).
if [ -f fullset-state/units.tar.xz ]; then
  mkdir -p "$dir/set/build-cache/units" && tar -xJf fullset-state/units.tar.xz -C "$dir/set/build-cache/units"
  echo "units built by earlier calls: $(tar -tJf fullset-state/units.tar.xz | grep -c '\.o$') from fullset-state/units.tar.xz" | tee -a "$o/fullset.md"
fi
before=$(find "$dir/set" -name log.json -exec python3 -c 'import json,sys; print(sum(len(json.load(open(p))) for p in sys.argv[1:]))' {} + 2> /dev/null | awk '{ s += $1 } END { print s + 0 }')
set -f
# shellcheck disable=SC2206
problems=(${FULLSET_PROBLEMS:-kb1-*})
# shellcheck disable=SC2206
extra=(${FULLSET_EXTRA:-})
set +f
# The GPU's memory and use, the host's memory and load, every 5 s (a judge that ends without a
# report is found beside what the machine was short of).
( while :; do
    echo "$(date -u +%T) gpu $(nvidia-smi --query-gpu=memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits | head -1) gpu-processes $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l) host-mem-MiB $(free -m | awk 'NR == 2 { print $3 "/" $2 }') load $(cut -d' ' -f1 /proc/loadavg)"
    sleep 5
  done ) > "$o/monitor.txt" 2>&1 &
monitor=$!
start=$SECONDS
call_start=$(date +%s.%N)  # after the carried state was copied in (its files are older)
timeout --kill-after=15 "${FULLSET_LIMIT:-520}" build/kiln evolve set --problems "${problems[@]}" --size kb \
  --budget "${FULLSET_BUDGET:-100}" --seed 1 --out "$dir/set" --pool "$dir/pool.json" \
  --parallel-problems "${FULLSET_PARALLEL:-8}" -w 3 -n 10 --trials 3 --screen-trials 1 --confirm "${FULLSET_CONFIRM:-2}" \
  "${extra[@]}" > "$o/fullset.txt" 2>&1
code=$?
wall=$((SECONDS - start))
pkill -f "bench candidate" 2> /dev/null  # judge servers a cut set left behind
kill "$monitor" 2> /dev/null
# Why judges ended without a report: the end of every server log and judge log that says so.
for log in $(grep -rlE "ended without|out of memory|Killed|signal|error" "$dir/set" --include='*.log' 2> /dev/null | head -40); do
  echo "=== $log"; tail -n 25 "$log"
done > "$o/failures.txt" 2>&1
dmesg 2> /dev/null | grep -iE "oom|killed process" | tail -20 >> "$o/failures.txt"
echo "kiln evolve set: exit $code after $wall s (the limit: ${FULLSET_LIMIT:-520} s)" | tee -a "$o/fullset.md"
# Whether the units built ahead served: the device's nvcc release is part of a unit's name (a
# unit built by another release is not found), and the units this call had to build.
if [ -d "$dir/set/build-cache/units" ]; then
  echo "CUTLASS units: nvcc $("${KILN_NVCC:-$( [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc || echo nvcc)}" --version 2> /dev/null | grep -o 'release [0-9.]*' | head -1) here; $(find "$dir/set/build-cache/units" -name '*.o' -newermt "@${call_start%.*}" | wc -l) built in this call, $(find "$dir/set/build-cache/units" -name '*.o' | wc -l) in the cache now" | tee -a "$o/fullset.md"
fi
# How busy the GPU was: the monitor's 5-s samples of nvidia-smi's utilization.gpu by band.
awk '$2 == "gpu" { u = $5 + 0; n++; if (u < 10) a++; else if (u < 50) b++; else if (u < 90) c++; else d++ }
  END { if (n) printf "GPU use in %d samples: under 10%% %d, 10-49%% %d, 50-89%% %d, 90%% or more %d\n", n, a, b, c, d }' \
  "$o/monitor.txt" | tee -a "$o/fullset.md"
python3 - "$dir/set" "$before" "$wall" "${FULLSET_BUDGET:-100}" "$call_start" <<'PY' | tee -a "$o/fullset.md"
import glob, json, os, re, sys
root, before, wall, budget = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
call_start = float(sys.argv[5])
def family(genome):
    return genome.get("family", "?")
rows, fams = [], {}
for d in sorted(glob.glob(os.path.join(root, "kb1-*"))):
    name = os.path.basename(d)
    try:
        log = json.load(open(os.path.join(d, "log.json")))
    except Exception:
        log = []
    done = os.path.exists(os.path.join(d, "report.json"))
    fam = family(log[0]["genome"]) if log else "?"
    best = max((e.get("evaluation", {}).get("fitness", 0) or 0) for e in log) if log else 0
    rows.append((name, fam, len(log), done, best))
    f = fams.setdefault(fam, [0, 0, 0])
    f[0] += 1; f[1] += len(log); f[2] += done
total = sum(r[2] for r in rows)
new = total - before
print(f"\n{len(rows)} problems started, {sum(r[3] for r in rows)} finished (report.json); "
      f"{total} evaluations logged in all, {new} new in this call's {wall:.0f} s: "
      f"**{new / max(wall, 1):.2f} evaluations per second**; budget {budget} per problem")
print("\n| family | problems started | finished | evaluations |\n|---|---|---|---|")
for fam, (n, e, d) in sorted(fams.items()):
    print(f"| {fam} | {n} | {d} | {e} |")
# Where this call's time went: each problem's engine.json (written after every evaluation, so a
# problem cut by the limit counts too) from this call, summed over the problems.
keys = ["compile", "judge", "gpu_wait", "alone_judge", "alone_judgements"]
sums, segment, counted = dict.fromkeys(keys, 0.0), 0.0, 0
for name, *_ in rows:
    path = os.path.join(root, name, "engine.json")
    if not os.path.exists(path) or os.path.getmtime(path) < call_start:
        continue
    e = json.load(open(path))
    counted += 1
    segment += e.get("seconds", 0.0)
    for k in keys:
        sums[k] += e.get(k, 0.0)
print(f"\nThis call's searches ({counted} problems): {segment:.0f} s summed; of them "
      + ", ".join(f"{k} {v:.0f}" for k, v in sums.items())
      + " (alone_judgements is a count; the remainder: generating sources, the search itself, "
      "waiting for compiles)")
print("\n| problem | family | evaluations | finished | best screened U |\n|---|---|---|---|---|")
for name, fam, n, done, best in rows:
    print(f"| {name} | {fam} | {n} | {'yes' if done else 'no'} | {best:.3f} |")
PY
rm -rf /tmp/fullset-pack && mkdir -p /tmp/fullset-pack/fullset-state/set
( cd "$dir/set" && for p in kb1-*; do
    mkdir -p "/tmp/fullset-pack/fullset-state/set/$p"
    cp "$p"/log.json "$p"/run.json "$p"/seeds.json "$p"/report.json "$p"/engine.json "$p"/best.cu "/tmp/fullset-pack/fullset-state/set/$p/" 2> /dev/null
  done
  cp summary.md summary.json set-run.json /tmp/fullset-pack/fullset-state/set/ 2> /dev/null )
cp "$dir/pool.json" /tmp/fullset-pack/fullset-state/ 2> /dev/null
# Every unit object this run built (this call's and earlier calls'), not the prebuilt ones,
# compressed (similar objects: ~30x), for the next call.
if [ -d "$dir/set/build-cache/units" ]; then
  units_abs=$(cd "$units" 2> /dev/null && pwd || echo /nonexistent)
  ( cd "$dir/set/build-cache/units" && for u in *.o; do
      [ -f "$u" ] && { [ -f "$units_abs/units/$u" ] || echo "$u"; }
    done ) > /tmp/fullset-pack/units.list
  [ -s /tmp/fullset-pack/units.list ] &&
    tar -cJf /tmp/fullset-pack/fullset-state/units.tar.xz -C "$dir/set/build-cache/units" -T /tmp/fullset-pack/units.list
  echo "units this run built, kept for the next call: $(wc -l < /tmp/fullset-pack/units.list)" | tee -a "$o/fullset.md"
fi
tar -cJf "$o/fullset-state.tar.xz" -C /tmp/fullset-pack fullset-state
ls -la "$o/fullset-state.tar.xz"

#!/usr/bin/env bash
# Judges hand-picked genomes side by side in one device call: a hypothesis about the search space
# ("would this configuration win?") tested without a search. LIST holds one genome a line:
#   <problem> <name> <genome as JSON, as in a run's log.json or `kiln evolve generate --genome`>
# (blank lines and # comments skipped). Sources and libraries live in evolve-set/probe/
# (git-ignored, carried):
#   bash scripts/device_probe_genomes.sh prepare LIST   here (no GPU): generates and compiles,
#                                                       PROBE_JOBS (2) at a time (the judge reuses
#                                                       each library; on the device, PROBE_JOBS=16),
#                                                       with PROBE_VS_SET the set's kernels too
#   bash scripts/device_probe_genomes.sh run LIST       on the device (carry ["carry",
#                                                       "evolve-set"]): each problem's genomes in
#                                                       one `kiln bench candidate` launch at SIZE
#                                                       (kb), guarded timing; OUT/probe.tar.gz
#                                                       holds the verdicts, OUT/probe-summary.txt
#                                                       one line per genome (U, µs, correct);
#                                                       PROBE_TIMING "guarded" (default), "screen"
#                                                       or "guarded screen" (both, one after the
#                                                       other: where the search's screen and the
#                                                       verdict disagree); PROBE_VS_SET=STATE
#                                                       judges STATE/set/<problem>/best.cu beside
#                                                       the probes (as <problem>--set) and lets a
#                                                       probe more than PROBE_MARGIN (0.02) above
#                                                       its guarded U replace it
#                                                       (scripts/pick_probe_winner.py; carry
#                                                       STATE); PROBE_BUILD_CACHE names a build
#                                                       cache (CUTLASS units) for both steps: units
#                                                       built here once and carried
# Needs: bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests [.deps/cutlass-4.2.0.0/include]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
step=${1:-}; list=${2:-}
[ "$step" = prepare ] || [ "$step" = run ] || { echo "usage: $0 prepare|run LIST" >&2; exit 2; }
[ -f "$list" ] || { echo "$0: LIST $list: no such file" >&2; exit 2; }
w=evolve-set/probe; mkdir -p "$w/src" "$w/build"
SIZE=${SIZE:-kb}
# Lines of the list as "problem name json" (the JSON may hold spaces: it is the rest of the line).
entries() { grep -vE '^[[:space:]]*(#|$)' "$list"; }
cache=(); [ -n "${PROBE_BUILD_CACHE:-}" ] && cache=(--build-cache "$PROBE_BUILD_CACHE")
if [ "$step" = prepare ]; then
  {
    entries | while read -r problem name genome; do
      build/kiln evolve generate --problem "$problem" --genome "$genome" \
        --out "$w/src/$problem--$name.cu" > /dev/null || { echo "# $problem $name: not generated" >&2; continue; }
      echo "$problem $w/src/$problem--$name.cu"
    done
    # With PROBE_VS_SET, the set's kernels of the list's problems too (run judges them beside).
    if [ -n "${PROBE_VS_SET:-}" ]; then
      for p in $(entries | awk '{print $1}' | sort -u); do
        [ -f "$PROBE_VS_SET/set/$p/best.cu" ] || continue
        cp "$PROBE_VS_SET/set/$p/best.cu" "$w/src/$p--set.cu" && echo "$p $w/src/$p--set.cu"
      done
    fi
  } | xargs -P "${PROBE_JOBS:-2}" -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir "'"$w/build"'" '"${cache[*]}"' 2>&1 | grep -E "^kiln: |error: --source" | cut -c1-300'
  echo "# prepared: $(ls "$w/build"/*.so 2>/dev/null | wc -l) libraries in $w/build"
  exit 0
fi
# On the device only: unpacking the carry replaces build/ with the binaries packed here.
command -v nvidia-smi > /dev/null || { echo "$0 run: no nvidia-smi here; run it on the device (it unpacks carry/ over build/)" >&2; exit 2; }
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o/probe"
vs=${PROBE_VS_SET:-}
[ -z "$vs" ] || [ -d "$vs/set" ] || { echo "$0: PROBE_VS_SET $vs: no $vs/set" >&2; exit 2; }
summary="$o/probe-summary.txt"
echo "device_probe_genomes $list on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) at $(date -u +%FT%TZ), size $SIZE" | tee "$summary"
for problem in $(entries | awk '{print $1}' | sort -u); do
  sources=()
  while read -r p name genome; do
    [ "$p" = "$problem" ] || continue
    src="$w/src/$problem--$name.cu"
    [ -f "$src" ] || build/kiln evolve generate --problem "$problem" --genome "$genome" --out "$src" > /dev/null || continue
    sources+=(--source "$src")
  done < <(entries)
  [ ${#sources[@]} -gt 0 ] || continue
  if [ -n "$vs" ] && [ -f "$vs/set/$problem/best.cu" ]; then
    cp "$vs/set/$problem/best.cu" "$w/src/$problem--set.cu"
    sources+=(--source "$w/src/$problem--set.cu")
  fi
  for timing in ${PROBE_TIMING:-guarded}; do
    rm -f "$w/src/$problem"--*.json
    timeout "${PROBE_LIMIT:-240}" build/kiln bench candidate --reuse-builds --problem "$problem" --sizes "$SIZE" \
      "${sources[@]}" --json-per-source --build-dir "$w/build" "${cache[@]}" -w 3 -n 10 --trials 2 --timeout 60 \
      --timing "$timing" > "$o/probe/$problem-$timing-judge.txt" 2>&1
    echo "$problem ($timing timing): judge exit $?" | tee -a "$summary"
    for src in "$w/src/$problem"--*.cu; do
      j="${src%.cu}.json"
      [ -f "$j" ] || continue
      cp "$j" "$o/probe/$(basename "${src%.cu}")-$timing.json"
      python3 scripts/verdict_rows.py "$j" "$(basename "${src%.cu}") $timing" --width 56 | tee -a "$summary"
    done
    if [ -n "$vs" ] && [ "$timing" = guarded ] && [ -f "$w/src/$problem--set.cu" ]; then
      python3 scripts/pick_probe_winner.py "$w/src" "$problem" "$vs/set" --size "$SIZE" \
        --margin "${PROBE_MARGIN:-0.02}" | tee -a "$summary"
    fi
  done
done
tar -czf "$o/probe.tar.gz" -C "$o" probe && rm -rf "$o/probe"

#!/usr/bin/env bash
# Device run for the wave-group tuner (issue 4): GPU tests, then per operation the profile
# (`kiln tune profile`), the validation (`kiln tune validate`: predicted vs measured, CSV + CDF)
# and the comparison with the equal-size, one-wave-per-group and issue-3 hand-picked plans
# (`kiln tune compare`), on every GPU of the machine. Binaries come prebuilt in build/.
# Logs, JSON, CSV and SVG go to /tmp/kiln-tune/tune/, packed after every step as
# $OUT/tune.tar.gz (a killed run still returns the pack).
# Usage on the device machine: bash scripts/device_tune.sh [steps]
# steps: any of tests sanitizer rs ar auto (default: tests rs ar auto). auto: `kiln overlap bench
# --plan auto` per op, the runtime picking its plans from the plan cache the profile steps wrote.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh
steps=${*:-tests rs ar auto}
out=/tmp/kiln-tune/tune; rm -rf "$out"; mkdir -p "$out"
pack() { tar -czf "${OUT:-out}/tune.tar.gz" -C "$(dirname "$out")" tune; }
gpus=$(nvidia-smi -L | wc -l)
{ nvidia-smi; nvidia-smi topo -m; } > "$out/device.txt" 2>&1
k=build/kiln
nvidia-smi dmon -s pct -o T > "$out/dmon.txt" 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null' EXIT
step() { pack; [[ " $steps " == *" $1 "* ]]; }
run() { echo "+ $*"; "$@"; echo "exit $?"; }
# The issue-3 plans the comparison is against (chosen by its sweep on 2xH200; REF_RS / REF_AR
# name another `kiln overlap bench --json` file, e.g. a sweep on this machine's GPU count).
ref_rs=${REF_RS:-docs/results/2026-11-23-overlap/h200-x2-run12/rs-g2.json}
ref_ar=${REF_AR:-docs/results/2026-11-23-overlap/h200-x2-run11/ar-g2.json}
step tests && run timeout 200 build/kiln_gpu_tests --gtest_filter="${TESTS:-TunerGpu.*:AutomaticPlanGpu.*:OverlapGpu.*}" > "$out/gpu_tests.txt" 2>&1
step tests && tail -n 30 "$out/gpu_tests.txt"
if step sanitizer; then
  for tool in memcheck racecheck synccheck; do
    run timeout 90 compute-sanitizer --tool $tool --report-api-errors no --kernel-name-exclude kns=ncclDevKernel \
      build/kiln_gpu_tests --gtest_filter='TunerGpu.SmProbe*:TunerGpu.SmallProfileOneRank' \
      > "$out/sanitizer-$tool.txt" 2>&1
    tail -n 3 "$out/sanitizer-$tool.txt"
  done
fi
for op in rs ar; do
  step $op || continue
  ref=ref_$op
  run timeout ${PROFILE_LIMIT:-200} $k tune profile -g "$gpus" --op $op --out "$out/profile-$op-g$gpus.json" \
    --cache "$out/plans-g$gpus.json" > "$out/profile-$op-g$gpus.txt" 2>&1
  tail -n 45 "$out/profile-$op-g$gpus.txt"
  pack
  run timeout ${VALIDATE_LIMIT:-260} $k tune validate -g "$gpus" --op $op --profile "$out/profile-$op-g$gpus.json" \
    ${VALIDATE_ARGS:-} --csv "$out/validate-$op-g$gpus.csv" --svg "$out/validate-$op-g$gpus.svg" \
    --json "$out/validate-$op-g$gpus.json" > "$out/validate-$op-g$gpus.txt" 2>&1
  grep -v "^validate \[" "$out/validate-$op-g$gpus.txt" | tail -n 20
  pack
  run timeout 150 $k tune compare -g "$gpus" --op $op --profile "$out/profile-$op-g$gpus.json" \
    --reference-json "${!ref}" --json "$out/compare-$op-g$gpus.json" > "$out/compare-$op-g$gpus.txt" 2>&1
  grep -v "^compare \[" "$out/compare-$op-g$gpus.txt" | tail -n 40
done
for op in rs ar; do
  step auto || break
  run timeout 150 env KILN_PLAN_CACHE="$out/plans-g$gpus.json" $k overlap bench -g "$gpus" --op $op \
    --plan auto --json "$out/auto-$op-g$gpus.json" > "$out/auto-$op-g$gpus.txt" 2>&1
  grep -v "^#   group" "$out/auto-$op-g$gpus.txt" | tail -n 25
  pack
done
pack

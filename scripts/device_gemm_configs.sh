#!/usr/bin/env bash
# Device run for issue 17, part 2: the signaling GEMM's configurations (tile, cluster, cooperative
# or ping-pong) on one GPU. Steps:
#   tests  every configuration against cuBLAS (bf16/fp16, nk/kn), the host geometry, the overlap
#          runtime with the new kernels (multi-rank tests with their ranks on the one GPU)
#   same   torch.matmul, kiln's cuBLAS baseline and kiln's GEMM (searched configuration, with its
#          signal) in one process, interleaved (scripts/torch_gemm_same_process.py), DTYPES and
#          SAME_LAYOUTS (default nk; "nk kn" adds B stored K×N, what issue 24 found slower on H200);
#          NARROW_SWIZZLE=8 also times kiln's GEMM searched without the wide swizzles (16, 32),
#          SECOND_SEARCH="sustained=6,finalists=10" one searched with other options
#   gemm   `kiln overlap gemm` on the 12 shapes (the search's ranking, signal costs, reorders)
#   sanitizer  memcheck and racecheck on every configuration (cuBLAS's nvjet kernels excluded)
#   names  the cuBLAS kernels torch.matmul runs for the shapes (torch.profiler)
#   tune   `kiln tune profile` on one GPU with the per-shape GEMM search
#   power  sustained SM clock, board power and cycles per product of the three contenders
#          (scripts/gemm_power_clock.py) on POWER_SHAPES in POWER_DTYPES (default bf16)
#   ncu    Nsight Compute (clocks left alone) on one launch each of the baseline, kiln's GEMM and
#          torch.matmul per NCU_SHAPES, kiln's configuration searched (scripts/gemm_profile_once.py)
# Writes /tmp/kiln-gemm-configs/c/ and packs it as $OUT/gemm-configs.tar.gz.
# Usage: bash scripts/device_gemm_configs.sh [tests] [same] [gemm] [sanitizer] [names] [tune] [power] [ncu]
#        (env DTYPES="bf16 fp16", OVERLAP_TESTS=gtest filter of the multi-rank tests,
#         SANITIZER_TOOLS="memcheck racecheck", SANITIZER_CONFIG_MATCH=regex of configurations)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
steps=${*:-tests same gemm}
out=/tmp/kiln-gemm-configs/c; rm -rf "$out"; mkdir -p "$out"
archive=gemm-configs
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"
shapes="4096x8192x8192 8192x8192x8192 16384x8192x4096 8192x4096x14336 4096x8192x2048 16384x16384x2048 8192x8192x2048 8192x8192x7168 16384x4096x3584 5000x8192x8192 4096x7168x4096 1000x8192x8192"

if step tests; then
  timed 300 tests-configs.txt build/kiln_gpu_tests --gtest_filter="${CONFIG_TESTS:-SignalingGemmGpu.*:TunerGpu.*}"
  grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED" "$out/tests-configs.txt" | tee -a "$out/summary.txt"
  [ "${OVERLAP_TESTS:-x}" != none ] && KILN_TEST_RANKS_PER_GPU=4 timed 300 tests-overlap.txt \
    build/kiln_gpu_tests --gtest_filter="${OVERLAP_TESTS:-OverlapGpu.*:AutomaticPlanGpu.*}"
  grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|SKIPPED" "$out/tests-overlap.txt" | tee -a "$out/summary.txt"
fi

if step same; then
  for layout in ${SAME_LAYOUTS:-nk}; do
    for dtype in ${DTYPES:-bf16 fp16}; do
      name=same-process-$dtype; [ "$layout" = nk ] || name=$name-$layout
      timed "${SAME_LIMIT:-420}" "$name.txt" python3 scripts/torch_gemm_same_process.py --dtype "$dtype" \
        --layout "$layout" --narrow-swizzle "${NARROW_SWIZZLE:-0}" --second-search "${SECOND_SEARCH:-}" --json "$out/$name.json"
      cat "$out/$name.txt" >> "$out/summary.txt"
    done
  done
fi

if step gemm; then
  args=(); for s in $shapes; do args+=(--shape "$s"); done
  timed 420 overlap-gemm-bf16.txt build/kiln overlap gemm "${args[@]}" --caps 128 --json "$out/overlap-gemm-bf16.json"
  cat "$out/overlap-gemm-bf16.txt" >> "$out/summary.txt"
fi

if step sanitizer; then
  # SANITIZER_CONFIG_MATCH: an extended regex choosing configurations (default: all of them).
  configs=(); while IFS= read -r c; do configs+=(--config "$c"); done < <(build/kiln overlap gemm --help |
    sed -n 's/^ *"\(tile=.*\)"$/\1/p' | grep -E "${SANITIZER_CONFIG_MATCH:-.}")
  note "configurations: $(( ${#configs[@]} / 2 ))"
  # memcheck instruments only CUTLASS's device_kernel (kiln's signaling GEMMs and the plain twin;
  # cuBLAS's candidates were checked in docs/results/2026-11-24-gemm-baseline/ run 5). racecheck
  # instruments everything: with cuBLAS's nvjet kernels left uninstrumented (excluded, or not
  # included) it died with "failed to handle a hardware exception" in the baseline's candidates
  # (runs 2 and 3); its hazards are then counted per kernel family.
  tools=" ${SANITIZER_TOOLS:-memcheck racecheck} "
  if [[ $tools == *" memcheck "* ]]; then
    timed 280 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
      --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${configs[@]}" \
      -w 1 -n 2 --rounds 1 --caps 6
    grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
  fi
  if [[ $tools == *" racecheck "* ]]; then
    timed 400 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
      --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${configs[@]}" \
      -w 1 -n 2 --rounds 1 --caps 6
    grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
    note "racecheck report lines naming kiln/CUTLASS kernels: $(grep -c 'device_kernel' "$out/sanitizer-racecheck.txt"), naming cuBLAS nvjet kernels: $(grep -c 'nvjet' "$out/sanitizer-racecheck.txt")"
  fi
fi

if step names; then
  # The kernels torch.matmul runs for the shapes (cuBLAS's names carry tile, stages and cluster).
  timed 120 torch-kernels.txt python3 - $shapes <<'PY'
import sys, torch
from torch.profiler import profile, ProfilerActivity
for text in sys.argv[1:]:
    m, n, k = (int(v) for v in text.split("x"))
    for dtype in (torch.bfloat16, torch.float16):
        a = torch.randn(m, k, device="cuda", dtype=dtype); b = torch.randn(n, k, device="cuda", dtype=dtype)
        c = torch.matmul(a, b.t()); torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            torch.matmul(a, b.t(), out=c); torch.cuda.synchronize()
        names = sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})
        print(f"{text:>18} {str(dtype)[6:]:>9} {'; '.join(names)}", flush=True)
PY
  cat "$out/torch-kernels.txt" >> "$out/summary.txt"
fi

if step tune; then
  timed 300 tune-profile.txt build/kiln tune profile -g 1 --op ar --shape 4096x8192x2048 \
    --shape 8192x8192x8192 --no-cache --out "$out/tune-profile.json"
  grep -E "GEMM search|error|wrote" "$out/tune-profile.txt" | tee -a "$out/summary.txt"
  python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print('gemm_search:', json.dumps(p['provenance'].get('gemm_search'))); print('base plans:', sorted({g['base_plan'] for g in p['gemms']}))" "$out/tune-profile.json" | tee -a "$out/summary.txt"
fi
if step power; then
  pargs=(); for s in ${POWER_SHAPES:-16384x16384x2048 8192x8192x2048 8192x8192x8192}; do pargs+=(--shape "$s"); done
  for dtype in ${POWER_DTYPES:-bf16}; do
    timed 300 "power-clock-$dtype.txt" python3 scripts/gemm_power_clock.py --dtype "$dtype" "${pargs[@]}" \
      --json "$out/power-clock-$dtype.json"
    cat "$out/power-clock-$dtype.txt" >> "$out/summary.txt"
  done
fi
if step ncu; then
  for s in ${NCU_SHAPES:-8192x8192x8192 16384x16384x2048}; do
    timed 240 "ncu-$s.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
      --metrics sm__cycles_elapsed.max,smsp__cycles_active.avg --csv --page details \
      python3 scripts/gemm_profile_once.py --shape "$s"
    grep -E '"(Duration|SM Frequency|Compute \(SM\) Throughput|Executed Ipc Active|Registers Per Thread|Achieved Occupancy)"' "$out/ncu-$s.csv" | cut -c1-220 | tee -a "$out/summary.txt"
  done
fi
pack

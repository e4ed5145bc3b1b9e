#!/usr/bin/env bash
# Call 3 of 2026-12-03d (issue 17), one H200: every pieced configuration's product against
# torch.matmul in bf16/fp16 and both weight layouts (in place of call 2's GPU tests, which the
# device did not run: it lent no machine for an hour); whether the diagnostic build runs at the default
# build's speed (same plan, same process), then its clock records (call 2's `trace` step: the
# carry cannot hold the GPU tests and this library together); racecheck of a pieced-box kernel (whole process,
# unfiltered: the kernel filter trips the sanitizer on cuBLAS's kernels); issue 17's table in bf16
# and fp16 on this build.
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so build-trace/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03d-pieced-boxes/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-check rep trace racecheck tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so traced=build-trace/libkiln_gemm_capi.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
if step check; then  # every pieced configuration (and a 64-column and a swapped one) against torch.matmul
  plans=(--plan "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1")
  for p in "tile=128x144 cluster=1x2 kernel=pingpong raster=n swizzle=2" \
           "tile=128x160 cluster=2x1 kernel=pingpong raster=n swizzle=16" \
           "tile=128x160 cluster=1x2 kernel=pingpong raster=m swizzle=1 scheduler=claimed" \
           "tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=4 scheduler=serpentine" \
           "tile=128x176 cluster=1x2 kernel=pingpong raster=n swizzle=1" \
           "tile=128x320 cluster=2x1 kernel=coop-n raster=m swizzle=1" \
           "tile=144x128 cluster=1x2 kernel=pingpong-swap raster=n swizzle=1" \
           "tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=2"; do plans+=(--extra-plan "$p"); done
  for dl in bf16-nk fp16-nk bf16-kn fp16-kn; do
    capped 45 "check-$dl.txt" python3 scripts/torch_gemm_same_process.py --lib $lib --shape 1000x2920x264 \
      --shape 520x1040x136 --dtype ${dl%-*} --layout ${dl#*-} "${plans[@]}" --rounds 2 --iters 1 --settle 0 \
      --json "$out/check-$dl.json"
    grep -E "correctness|Error|error" "$out/check-$dl.txt" | tee -a "$out/summary.txt"
  done
fi
if step rep; then
  for shape in 4096x8192x2048 8192x8192x2048; do
    capped 60 "rep-$shape.txt" python3 scripts/torch_gemm_same_process.py --lib $lib --shape $shape \
      --plan "$p144" --extra-lib $traced --extra-plan "$p144" --rounds 12 --json "$out/rep-$shape.json"
    grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/rep-$shape.txt" | cut -c1-190 | tee -a "$out/summary.txt"
  done
fi
if step trace; then
  while IFS='|' read -r shape plan; do
    log="trace-$shape-$(echo "$plan" | cut -d' ' -f1 | tr = -)"
    capped 60 "$log.txt" python3 scripts/gemm_mainloop_trace.py collect --lib $traced --shape $shape \
      --plan "$plan" --json "$out/$log.json"
    cat "$out/$log.txt" | cut -c1-400 | tee -a "$out/summary.txt"
    xz -f "$out/$log.json"
  done <<SHAPES
4096x8192x2048|$p144
2048x8192x2048|$p144
8192x8192x2048|$p144
4096x8192x8192|$p144
4096x8192x2048|tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=1
SHAPES
fi
if step racecheck; then
  plan="tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=1"
  capped 120 racecheck.txt compute-sanitizer --tool racecheck --print-limit 100000 \
    python3 scripts/gemm_profile_once.py --lib $lib --shape 1000x2920x264 --plan "$plan"
  grep -E "RACECHECK SUMMARY|ERROR SUMMARY|Internal" "$out/racecheck.txt" | head -3 | tee -a "$out/summary.txt"
  # hazards per kernel (kiln's is cutlass::device_kernel<...>; cuBLAS's are nvjet_*)
  grep -E "^========= (Error|Warning): Race" "$out/racecheck.txt" | sed -E 's/.* access at ([^+(<]+).*/\1/' \
    | sort | uniq -c | tee -a "$out/summary.txt"
  xz -f "$out/racecheck.txt"
fi
table() {  # name dtype
  capped 215 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --race-top 1 --json "$out/table-$1.json"
  cut -c1-190 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table bf16 bf16
  table fp16 fp16  # skipped by the deadline unless time is left
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack

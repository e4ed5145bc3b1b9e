#!/usr/bin/env bash
# Device run for several ranks on one GPU (--ranks-per-gpu, issue 15): NCCL between ranks that
# share a GPU (with and without kiln's host ids, through kiln's launcher and an outside one), the
# multi-rank GPU tests, `kiln bench suite -g 4 --ranks-per-gpu 4` on every problem at small sizes,
# every test candidate on 2 ranks of one GPU, and `kiln overlap bench` RS/AR with comm=nccl and
# comm=ce. Binaries come prebuilt in build/. Writes /tmp/kiln-shared/shared/ and packs it as
# $OUT/shared.tar.gz after every step; the step lines go to $OUT/summary.txt too.
# Usage: bash scripts/device_shared_gpu.sh [nccl] [tests] [suite] [candidates] [overlap]
# Env: TESTS (gtest filter for the tests step), SUITE_SIZES, CANDIDATES (space-separated names).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
steps=${*:-nccl tests suite candidates overlap}
out=/tmp/kiln-shared/shared; rm -rf "$out"; mkdir -p "$out"
archive=shared
source scripts/device_steps.sh
{ nvidia-smi; nvidia-smi -q -d COMPUTE; build/kiln --version; git log -1 --format=%H 2>/dev/null; } \
  > "$out/device.txt" 2>&1
note "device: $(nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader)"
sizes=${SUITE_SIZES:-16K,1M,4M/16,1Kx32K,4096x8192x2048,S1K-h32,decode}

if step nccl; then
  # kiln's launcher, 2 and 4 ranks on GPU 0, every collective, checked.
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV timed 120 nccl-g2-debug.txt \
    build/kiln bench collective -g 2 --ranks-per-gpu 2 -o allreduce -d fp32 -b 4 -e 4M -f 64 -w 1 -n 3 -c 1
  grep -E "NCCL_HOSTID|NET/Socket|Using network|Duplicate|Wrong elements" "$out/nccl-g2-debug.txt" | sort | uniq -c | head -20 | tee -a "$out/summary.txt"
  for world in 2 4; do
    for op in allreduce reducescatter allgather alltoall broadcast reduce sendrecv; do
      timed 90 "nccl-g$world-$op.txt" build/kiln bench collective -g $world --ranks-per-gpu $world \
        -o $op -d bf16 -b 1K -e 4M -f 64 -w 1 -n 3 -c 1 --json "$out/nccl-g$world-$op.json"
      grep -E "Wrong elements" "$out/nccl-g$world-$op.txt" | sed "s/^/  $op g$world: /" | tee -a "$out/summary.txt"
    done
  done
  # An outside launcher's ranks (RANK/WORLD_SIZE as torchrun sets them), with and without
  # KILN_RANKS_PER_GPU: without it NCCL refuses the second rank on the GPU.
  for shared in 0 2; do
    extra=(); [ $shared -gt 0 ] && extra=(KILN_RANKS_PER_GPU=$shared)
    port=$((29400 + shared))
    for r in 0 1; do
      env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 NCCL_COMM_ID=127.0.0.1:$port NCCL_DEBUG=WARN "${extra[@]}" \
        timeout 60 build/kiln bench collective -o allgather -b 1M -e 1M -w 1 -n 3 -c 1 --timeout 20 \
        > "$out/outside-launcher-rpg$shared-rank$r.txt" 2>&1 &
    done
    wait
    note "outside launcher, KILN_RANKS_PER_GPU=${shared}: $(grep -hE 'Wrong elements|error|Duplicate' "$out"/outside-launcher-rpg$shared-rank*.txt | head -4 | tr '\n' ' ')"
  done
  # Too many ranks for the GPUs without the flag: a usage error that names the way out.
  build/kiln bench collective -g 2 -b 1M -e 1M > "$out/usage-g2.txt" 2>&1; note "-g 2 without --ranks-per-gpu: exit $? $(cat "$out/usage-g2.txt")"
fi

if step tests; then
  timed 560 gpu_tests.txt build/kiln_gpu_tests \
    --gtest_filter="${TESTS:-*TwoRanks*:*FourRanks*:CandidateGpu.*:SuiteGpu.*:WatchdogGpu.*}"
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED|SHARED) |tests ran" "$out/gpu_tests.txt" | tee -a "$out/summary.txt"
fi

if step suite; then
  for world in 4 2; do
    timed 280 "suite-g$world.txt" build/kiln bench suite -g $world --ranks-per-gpu $world --problems '*' \
      --sizes "$sizes" -w 1 -n 3 --trials 3 --json "$out/suite-g$world.json"
    grep -E "^# (correctness|over|[0-9]+ ranks share)" "$out/suite-g$world.txt" | tee -a "$out/summary.txt"
  done
fi

if step candidates; then
  mkdir -p "$out/candidates"
  for name in ${CANDIDATES:-allgather_pull cheat_half_output cheat_previous_output cheat_side_stream cheat_skip_rank crashes hangs does_not_compile no_entry_point wrong_abi}; do
    timeout 150 build/kiln bench candidate --problem allgather --source "tests/candidates/$name.cu" \
      -g 2 --ranks-per-gpu 2 --sizes 64K,1M,16M --timeout 20 --time-limit 120 \
      > "$out/candidates/$name.txt" 2>&1
    note "$name (exit $?): $(grep -E '^# candidate' "$out/candidates/$name.txt" | tail -1)"
  done
fi

if step overlap; then
  shapes=(--shape 2048x4096x1024 --shape 4096x4096x2048)
  for op in rs ar; do
    for plan in "tile=128x256 cap=120 comm=nccl groups=each" "tile=128x256 cap=0 comm=ce groups=each" \
                "tile=128x128 cap=0 signal=deferred comm=ce groups=each"; do
      tag="$op-$(echo "$plan" | sed 's/[^a-z0-9]/_/g' | cut -c1-40)"
      timed 150 "overlap-g2-$tag.txt" build/kiln overlap bench -g 2 --ranks-per-gpu 2 --op $op "${shapes[@]}" \
        --plan "$plan" -w 1 -n 3 --rounds 1 --json "$out/overlap-g2-$tag.json"
      grep -E "correctness|^ *[0-9]+x" "$out/overlap-g2-$tag.txt" | tee -a "$out/summary.txt"
    done
  done
  timed 150 overlap-g4-ar-ce.txt build/kiln overlap bench -g 4 --ranks-per-gpu 4 --op ar "${shapes[@]}" \
    --plan "tile=128x256 cap=0 comm=ce groups=each" -w 1 -n 3 --rounds 1
  grep -E "correctness" "$out/overlap-g4-ar-ce.txt" | tee -a "$out/summary.txt"
fi
pack

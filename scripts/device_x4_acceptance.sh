#!/usr/bin/env bash
# Issue 23 on 4xH200 (nvidia-h200-x4) in one call. The steps run in the order given (default:
# what the issue needs most first), each under its own time limit and all under one deadline
# (DEADLINE s from the start, default 560), and the results are packed after every step, so that a
# budget cut still returns every earlier step. Binaries come prebuilt (carry/, scripts/pack_carry.sh).
#   coll        kiln bench collective -g N, seven ops 1M..1G; NCCL through PyTorch at 1 GiB
#   rs, ar      kiln tune profile -g N --op OP (the built-in h200-sxm-gN profiles come from these),
#               then kiln overlap bench -g N --op OP --plan auto from the plans the profile cached
#   torch       PyTorch's serial and async-TP (fused_matmul_reduce_scatter) on the six shapes
#   newtests    this round's code on GPUs, each test in its own process: the NVLink all-reduce
#               algorithms and broadcast at 3 and 4 ranks, the device compare, the tuner's and the
#               automatic plan's tests, the serial-form AllReduce run as cuBLAS + NCCL, a copy
#               stream per peer, the device comparison, the suite's judged reference (NEWTESTS)
#   sanitize    compute-sanitizer memcheck and racecheck (SAN_TOOLS) on the 3-rank all-reduce and
#               broadcast tests and the device compare (SAN_TESTS, a gtest filter)
#   tests       CollectivesGpu.FourRanks, OverlapGpu.FourRanks, OverlapContiguousRowsGpu.FourRanks,
#               the three-rank copy-engine AllReduce, WatchdogGpu.*
#   suite       kiln bench suite -g N --preset pkb
#   validate    kiln tune validate -g N for rs and ar from this call's profiles
#   nvdiag      the suite's one-shot NVLink collectives at 4 ranks and at 2 (GPUs 0-1) with default
#               timing, and kiln probe (P2P per pair): on 2026-11-27 kiln-nvlink AllReduce ran
#               0.13-0.89x NCCL at 4 ranks where it is 1.1-1.7x on 2xH200; this tells the fabric
#               from the world size
#   collcheck   the suite's six collectives at N ranks, default timing, 16K..64M (the Lamport
#               all-reduce, two-phase broadcast and rotated pulls against 2026-11-27's pkb rows)
#   candidates  kiln bench candidate on allgather at -g N for every multi-GPU test candidate
#               (tests/candidates: the correct pull, the cheats, crashes, hangs, bad builds)
#   g3          kiln bench collective -g 3 (a world that is not a power of two)
#   watchdog    a rank that stops calling collectives (--debug-hang-rank) and a kill -9 of a rank
#   g2          GPUs 0 and 1 alone: kiln overlap bench -g 2 --plan auto for rs and ar (issue 24's
#               figures, from the built-in 2xH200 profiles)
#   torch64m    NCCL through PyTorch at 64 MiB
#   compare     kiln tune compare -g N for rs and ar (equal-size and one-wave-per-group plans)
#   alternate   kiln and PyTorch taking turns in one window (scripts/alternate_kiln_torch.py), both
#               on ALTERNATE_INPUTS values (default normal, torch.randn's)
#   inputs-ab   the same on two shapes, both sides on normal values, then both on uniform (~160 s)
#   sweep       kiln overlap bench -g N --op rs with the plan sweep (a reduced set of caps)
#   ce2         kiln overlap bench -g N --op ar sweeping comm=ce and comm=ce2 (two-phase copy-engine
#               AllReduce), caps 0/128: the best of each transport from the same sweep
#   cestreams   kiln overlap bench --plan auto --ab-copy-streams for rs and ar: the copy-engine plans
#               with a copy stream per peer against one stream, interleaved
#   chunked     kiln overlap bench -g N --op rs --plan auto: kiln's plan beside async-TP's algorithm
#               from kiln's parts (cuBLAS per destination chunk + copy engines, the details line)
#   sum         kiln overlap sum (the W-part sum alone, 2/4/8 parts, against the HBM ceiling) and
#               PartSumGpu.* (its bits against the host's)
#   pyops       pip install . on the device (carry .pydeps), then python -m kiln.bench --nproc N
#               for rs and ar on PYOPS_SHAPES (kiln's op, PyTorch serial, async-TP, one process)
# PRIOR_DIR (a folder in the tree, relative to its root): profile-OP-gN.json and plans-gN.json from
# an earlier call, used by validate, compare and pyops when this call measured none.
# PYOPS_INSTALL=reuse: pyops installs .pydeps/kiln-installed.tar.gz instead of building (~3 min).
# PYOPS_OPS: the ops pyops times (default rs ar); KILN_TORCH_RS_ALGORITHM passes through to it.
# Writes /tmp/kiln-x4/$ARCHIVE/ and packs it as $OUT/$ARCHIVE.tar.gz after every step; summary.txt beside it.
# Usage: bash scripts/device_x4_acceptance.sh [step ...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONUNBUFFERED=1
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null
steps=${*:-coll nvdiag rs torch ar tests suite validate g3 watchdog g2 torch64m compare alternate sweep}
# ARCHIVE: the name of the work folder and of the archive in $OUT (default x4), so that several
# invocations in one device call (e.g. an A/B under different environments) keep their results.
archive=${ARCHIVE:-x4}
out=/tmp/kiln-x4/$archive; rm -rf "$out"; mkdir -p "$out"
source scripts/device_steps.sh
k=build/kiln
gpus=$(nvidia-smi -L | grep -c '^GPU')

# A collective bench's largest row and any wrong result or error.
coll_rows() {
  grep -E "^ +[0-9]+ " "$1" | tail -1 | sed "s/^/  $2: /" | tee -a "$out/summary.txt"
  grep -iE "wrong|error" "$1" | head -2 | tee -a "$out/summary.txt"
}

step_coll() {
  for op in allreduce reducescatter allgather alltoall broadcast reduce sendrecv; do
    capped 40 "coll-$op-g$gpus.txt" $k bench collective -g "$gpus" -o "$op" -d bf16 -b 1M -e 1G -f 4 \
      -w 5 -n 20 -c 1 --json "$out/coll-$op-g$gpus.json"
    coll_rows "$out/coll-$op-g$gpus.txt" "$op g$gpus 1G"
  done
  capped 45 torch-coll-1G.txt python3 scripts/torch_collective_reference.py --gpus "$gpus" --bytes 1G \
    --warmup 5 --iters 20 --json "$out/torch-coll-g$gpus-1G.json"
  grep -v Warning "$out/torch-coll-1G.txt" | tail -5 | tee -a "$out/summary.txt"
}
step_torch64m() {
  capped 45 torch-coll-64M.txt python3 scripts/torch_collective_reference.py --gpus "$gpus" --bytes 64M \
    --warmup 5 --iters 20 --json "$out/torch-coll-g$gpus-64M.json"
  grep -v Warning "$out/torch-coll-64M.txt" | tail -5 | tee -a "$out/summary.txt"
}
profile_and_auto() {
  local op=$1
  capped 150 "profile-$op-g$gpus.txt" $k tune profile -g "$gpus" --op "$op" \
    --out "$out/profile-$op-g$gpus.json" --cache "$out/plans-g$gpus.json"
  grep -vE "^profile \[" "$out/profile-$op-g$gpus.txt" | tail -12 >> "$out/summary.txt"
  capped 45 "auto-$op-g$gpus.txt" env KILN_PLAN_CACHE="$out/plans-g$gpus.json" $k overlap bench \
    -g "$gpus" --op "$op" --plan auto --json "$out/auto-$op-g$gpus.json"
  overlap_rows "$out/auto-$op-g$gpus.txt"
}
step_rs() { profile_and_auto rs; }
step_ar() { profile_and_auto ar; }
step_torch() {
  capped 60 torch-async-tp.txt python3 scripts/torch_async_tp.py --gpus "$gpus" \
    --json "$out/torch-async-tp-g$gpus.json"
  grep '^{' "$out/torch-async-tp.txt" | tee -a "$out/summary.txt"
}
step_tests() {
  # 160 s: OverlapGpu.FourRanks alone took 89 s on 4xH200 (2026-11-27), the filter 125 s.
  capped 160 tests.txt build/kiln_gpu_tests \
    --gtest_filter='CollectivesGpu.FourRanks:OverlapGpu.FourRanks:OverlapContiguousRowsGpu.FourRanks:OverlapGpu.CopyEngineAllReduceBitwiseIdenticalThreeRanks:WatchdogGpu.*'
  grep -E "^\[ +(OK|FAILED|SKIPPED|EXITED [0-9]+) +\]|tests ran|PASSED|FAILED  " "$out/tests.txt" | sort -u | tee -a "$out/summary.txt"
}
step_newtests() {
  gtest_each 150 newtests.txt "${NEWTESTS:-NvlinkCollectivesGpu.*:FirstDifferenceGpu.*:TunerGpu.*:AutomaticPlanGpu.*:OverlapGpu.Serial*:OverlapGpu.CopyStreamPerPeer*:OverlapGpu.TwoPhase*:OverlapGpu.LostTwoPhase*:ChunkedReduceScatterGpu.*:PartSumGpu.*:RelativeDifferenceGpu.*:SuiteGpu.*}"
  grep -E "^\[ +(OK|FAILED|SKIPPED|EXITED [0-9]+) +\]|tests ran|PASSED|FAILED  " "$out/newtests.txt" | sort -u | tee -a "$out/summary.txt"
}
step_sanitize() {
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    # NCCL's own cudaFuncGetAttributes probes report API errors (24 on 2026-11-27): not ours.
    gtest_each 150 "sanitize-$tool.txt" \
      "${SAN_TESTS:-NvlinkCollectivesGpu.AllReduceAlgorithmsExactThreeRanks:NvlinkCollectivesGpu.BroadcastExactThreeRanks:NvlinkCollectivesGpu.LamportBackToBackTwoRanks:FirstDifferenceGpu.*}" \
      compute-sanitizer --tool "$tool" --target-processes all --report-api-errors no
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[ +(OK|FAILED|EXITED [0-9]+) +\]" "$out/sanitize-$tool.txt" | sed "s/^/  $tool: /" | tee -a "$out/summary.txt"
  done
}
step_suite() {
  # The 14 multi-GPU problems (--problems '*' adds the single-GPU kb1 ones, minutes at pkb).
  local problems
  read -ra problems <<< "${SUITE_PROBLEMS:-allreduce reducescatter allgather alltoall broadcast scatter dp-bucketed-allreduce vocab-parallel-ce tp-gemm-allreduce tp-gemm-reducescatter tp-allgather-gemm ulysses-qkv-a2a moe-dispatch moe-combine}"
  capped "${SUITE_LIMIT:-100}" suite-pkb.txt $k bench suite -g "$gpus" --problems "${problems[@]}" \
    --preset pkb --json "$out/suite-g$gpus-pkb.json"
  grep -E "^# " "$out/suite-pkb.txt" | tail -8 | tee -a "$out/summary.txt"
}
step_nvdiag() {
  local sizes=16K,256K,1M,4M,16M,64M
  capped 40 "nvdiag-suite-g$gpus.txt" $k bench suite -g "$gpus" --problems allreduce allgather \
    --sizes "$sizes" --json "$out/nvdiag-suite-g$gpus.json"
  grep -E "kiln-nvlink" "$out/nvdiag-suite-g$gpus.txt" | sed "s/^/  g$gpus /" | tee -a "$out/summary.txt"
  capped 40 "nvdiag-suite-g3.txt" env CUDA_VISIBLE_DEVICES=0,1,2 $k bench suite -g 3 --problems allreduce \
    --sizes "$sizes" --json "$out/nvdiag-suite-g3.json"
  grep -E "kiln-nvlink" "$out/nvdiag-suite-g3.txt" | sed "s/^/  g3 /" | tee -a "$out/summary.txt"
  capped 40 nvdiag-suite-g2.txt env CUDA_VISIBLE_DEVICES=0,1 $k bench suite -g 2 --problems allreduce \
    allgather --sizes "$sizes" --json "$out/nvdiag-suite-g2.json"
  grep -E "kiln-nvlink" "$out/nvdiag-suite-g2.txt" | sed "s/^/  g2 /" | tee -a "$out/summary.txt"
}
step_collcheck() {
  # Default timing (20 warm-up, 50 judged calls): the six collectives at the sizes where the
  # Lamport all-reduce, the two-phase broadcast and the rotated pulls should show.
  capped "${COLLCHECK_LIMIT:-120}" "collcheck-g$gpus.txt" $k bench suite -g "$gpus" --problems \
    allreduce reducescatter allgather alltoall broadcast scatter --sizes "${COLLCHECK_SIZES:-16K,256K,1M,16M,64M}" \
    --json "$out/collcheck-g$gpus.json"
  grep -E "kiln-nvlink" "$out/collcheck-g$gpus.txt" | tee -a "$out/summary.txt"
}
step_candidates() { judge_candidates "$gpus" 90 75; }
# This call's file NAME, else the one an earlier call left in $PRIOR_DIR (carried in the tree: each
# call starts on a fresh machine), else nothing.
this_or_prior() {
  if [ -f "$out/$1" ]; then echo "$out/$1"
  elif [ -n "${PRIOR_DIR:-}" ] && [ -f "$PRIOR_DIR/$1" ]; then echo "$PWD/$PRIOR_DIR/$1"; fi
}
step_validate() {
  local profile
  for op in rs ar; do
    profile=$(this_or_prior "profile-$op-g$gpus.json")
    [ -n "$profile" ] || { note "validate $op: no profile from this call or PRIOR_DIR"; continue; }
    note "validate $op: profile $profile"
    capped "${VALIDATE_LIMIT:-60}" "validate-$op-g$gpus.txt" $k tune validate -g "$gpus" --op "$op" \
      --profile "$profile" --csv "$out/validate-$op-g$gpus.csv" \
      --svg "$out/validate-$op-g$gpus.svg" --json "$out/validate-$op-g$gpus.json"
    grep -v "^validate \[" "$out/validate-$op-g$gpus.txt" | tail -n 12 | tee -a "$out/summary.txt"
  done
}
step_compare() {
  for op in rs ar; do
    # This call's profile, else the built-in one (data/tuner/h200-sxm-gN-OP-bf16.json).
    local profile=() file
    file=$(this_or_prior "profile-$op-g$gpus.json")
    [ -n "$file" ] && profile=(--profile "$file")
    [ ${#profile[@]} -eq 0 ] && note "compare $op: no profile from this call or PRIOR_DIR, the built-in one"
    capped 30 "compare-$op-g$gpus.txt" $k tune compare -g "$gpus" --op "$op" \
      ${profile[@]+"${profile[@]}"} --json "$out/compare-$op-g$gpus.json"
    grep -v "^compare \[" "$out/compare-$op-g$gpus.txt" | tail -n 14 | tee -a "$out/summary.txt"
  done
}
step_g3() {
  for op in allreduce reducescatter allgather alltoall; do
    capped 25 "coll-$op-g3.txt" $k bench collective -g 3 -o "$op" -d bf16 -b 1M -e 1G -f 8 -w 5 -n 20 -c 1 \
      --json "$out/coll-$op-g3.json"
    coll_rows "$out/coll-$op-g3.txt" "$op g3 1G"
  done
}
step_watchdog() {
  capped 40 watchdog.txt $k bench collective -g "$gpus" -b 1M -e 1M --timeout 10 --debug-hang-rank 1
  grep -v "^#" "$out/watchdog.txt" | tail -4 | tee -a "$out/summary.txt"
  [ $((deadline - SECONDS)) -gt 50 ] || { note "kill -9 check: skipped (deadline)"; return; }
  $k bench collective -g "$gpus" -b 256M -e 256M -n 100000 --timeout 30 > "$out/kill.txt" 2>&1 &
  local launcher=$!
  sleep 12
  local victim killed_at code
  victim=$(pgrep -P "$launcher" | sed -n 2p)
  killed_at=$(date +%s.%N)
  kill -9 "$victim"
  wait "$launcher"
  code=$?
  note "kill -9 of rank 1 (pid $victim): launcher exit $code, $(awk "BEGIN{print $(date +%s.%N) - $killed_at}") s after the kill"
  grep -v "^#" "$out/kill.txt" | tail -4 | tee -a "$out/summary.txt"
}
step_g2() {
  for op in rs ar; do
    capped 30 "auto-$op-g2.txt" env CUDA_VISIBLE_DEVICES=0,1 $k overlap bench -g 2 --op "$op" --plan auto \
      --json "$out/auto-$op-g2.json"
    overlap_rows "$out/auto-$op-g2.txt"
  done
}
# kiln's bench and PyTorch's script taking turns on two shapes, both sides on normal values and
# then both on uniform ones: does the operands' distribution explain kiln's cuBLAS reading 7-17%
# slower than torch.mm (docs/results/2026-11-27-h200-x2-x4-d/)? ~80 s per distribution.
step_inputs_ab() {
  local inputs
  for inputs in normal uniform; do
    capped 120 "inputs-ab-$inputs.txt" python3 scripts/alternate_kiln_torch.py --gpus "$gpus" \
      --shape 4096x8192x8192 --shape 8192x4096x14336 --rounds 2 --iters 10 --inputs "$inputs" \
      --timeout 60 --json "$out/inputs-ab-$inputs.json"
    tail -n 6 "$out/inputs-ab-$inputs.txt" 2> /dev/null | tee -a "$out/summary.txt"
  done
}
step_alternate() {
  capped "${ALTERNATE_LIMIT:-150}" alternate.txt python3 scripts/alternate_kiln_torch.py --gpus "$gpus" \
    --rounds "${ALTERNATE_ROUNDS:-2}" --iters 10 --inputs "${ALTERNATE_INPUTS:-normal}" \
    --timeout 60 --json "$out/alternate.json"
  tail -n 20 "$out/alternate.txt" | tee -a "$out/summary.txt"
}
step_pyops() {
  # kiln's PyTorch ops built on the device from this tree (needs .pydeps in the carry, filled by
  # scripts/pack_pydeps.sh; ~3 min), then python -m kiln.bench on N ranks: kiln's op, PyTorch's
  # serial and async-TP interleaved in the same processes (issue 23's "side by side").
  # PYOPS_INSTALL=reuse installs .pydeps/kiln-installed.tar.gz (an earlier build; seconds) instead.
  # Its plans come from this call's (or PRIOR_DIR's) plan cache when there is one: the package's
  # built-in profiles are those of the commit it was built at.
  capped 330 pyops-install.txt bash scripts/device_torch_ops.sh "${PYOPS_INSTALL:-install}"
  tail -n 5 /tmp/kiln-torch-ops/t/summary.txt 2> /dev/null | tee -a "$out/summary.txt"
  local args=() ops=() shape cache op
  for op in ${PYOPS_OPS:-rs ar}; do ops+=(--op "$op"); done
  for shape in ${PYOPS_SHAPES:-8192x8192x8192 16384x8192x4096 4096x8192x2048}; do
    args+=(--shape "$shape")
  done
  cache=$(this_or_prior "plans-g$gpus.json")
  note "pyops plan cache: ${cache:-none, the built-in profiles of the package}"
  capped 240 "pyops-bench-g$gpus.txt" env ${cache:+KILN_PLAN_CACHE="$cache"} bash -c "cd /tmp && \
    python3 -m kiln.bench --nproc $gpus ${ops[*]} ${args[*]} --json $out/pyops-bench-g$gpus.json"
  tail -n 40 "$out/pyops-bench-g$gpus.txt" | tee -a "$out/summary.txt"
}
step_cestreams() {
  # The copy-engine plans with a copy stream per peer against one stream, interleaved
  # (docs/research/async-tp-at-4-ranks.md, item 3), from the built-in profiles' plans.
  for op in rs ar; do
    capped 100 "cestreams-$op-g$gpus.txt" $k overlap bench -g "$gpus" --op "$op" --plan auto \
      --ab-copy-streams --json "$out/cestreams-$op-g$gpus.json"
    grep -E "^ +[0-9]+x|copy stream per peer|geo-mean" "$out/cestreams-$op-g$gpus.txt" |
      cut -c1-160 | tee -a "$out/summary.txt"
  done
}
# comm=ce2 (two-phase copy-engine AllReduce) against comm=ce in one sweep: each row's details say
# the fastest plan of each transport (JSON: sweep_fastest_per_transport), timed in the same rounds.
step_ce2() {
  capped "${CE2_LIMIT:-150}" "ce2-ar-g$gpus.txt" $k overlap bench -g "$gpus" --op ar --comms ce ce2 \
    --caps 0 --ce-caps 0 128 --swizzles 1 8 --signals eager --json "$out/ce2-ar-g$gpus.json"
  overlap_rows "$out/ce2-ar-g$gpus.txt"
}
step_sum() {
  gtest_each 60 sum-tests.txt 'PartSumGpu.*'
  grep -E "^\[ +(OK|FAILED|EXITED [0-9]+) +\]" "$out/sum-tests.txt" | sort -u | tee -a "$out/summary.txt"
  capped "${SUM_LIMIT:-60}" overlap-sum.txt $k overlap sum --parts 2 4 8 --bytes 8M 32M 64M \
    --json "$out/overlap-sum.json"
  grep -vE "^#  " "$out/overlap-sum.txt" | tail -n 22 | tee -a "$out/summary.txt"
}
step_chunked() {
  # CHUNKED_ARGS: more flags for the bench (e.g. --ab-chunked-streams).
  capped "${CHUNKED_LIMIT:-90}" "chunked-rs-g$gpus.txt" $k overlap bench -g "$gpus" --op rs --plan auto \
    ${CHUNKED_ARGS:-} --json "$out/chunked-rs-g$gpus.json"
  grep -E "^ +[0-9]+x|chunked|choice|geo-mean" "$out/chunked-rs-g$gpus.txt" | cut -c1-250 |
    tee -a "$out/summary.txt"
}
step_sweep() {
  capped "${SWEEP_LIMIT:-120}" "sweep-rs-g$gpus.txt" $k overlap bench -g "$gpus" --op rs --caps 0 --ce-caps 0 128 \
    --swizzles 1 8 --signals eager --json "$out/sweep-rs-g$gpus.json"
  overlap_rows "$out/sweep-rs-g$gpus.txt"
}

note "device: $(nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
note "topology: $(nvidia-smi topo -m 2> /dev/null | head -$((gpus + 1)) | tr '\n' ';')"
note "kiln: $($k --version 2>&1 | head -1); $(head -1 carry/MANIFEST 2> /dev/null)"
run_steps

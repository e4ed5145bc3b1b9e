#!/usr/bin/env bash
# Issue 24: is kiln's code the reason the suite's small collectives read ~1 µs slower and the moe
# prefill rows 40% slower than suite run 7 (docs/results/2026-11-27-h200-x2-x4-d/)? Suite run 7's
# binary and today's run the same problems on the same machine, in turn (old, new, new, old, ...),
# so that the machine's state is the same for both.
# Before the call, on the CPU machine:
#   git worktree add /tmp/kiln-old 0f9a2e5 && cmake -S /tmp/kiln-old -B /tmp/kiln-old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release && ninja -C /tmp/kiln-old/build kiln_cli
#   mkdir -p build-old && cp /tmp/kiln-old/build/kiln build-old/kiln
#   bash scripts/pack_carry.sh build/kiln build-old/kiln
# On the device (2 GPUs; AB_ROUNDS rounds, default 2, each ~2 x 40 s):
#   DEADLINE=400 bash scripts/device_x2_suite_ab.sh
# Writes /tmp/kiln-ab/ab/ (suite JSONs per binary and round, ab.txt: the table) and packs it as
# $OUT/ab.tar.gz after every step. Offline: python3 scripts/compare_suite_ab.py <ab folder>.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit
export PYTHONUNBUFFERED=1
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null
out=/tmp/kiln-ab/ab; rm -rf "$out"; mkdir -p "$out"
archive=ab
steps="ab"
source scripts/device_steps.sh
old=${OLD_KILN:-build-old/kiln}
new=${NEW_KILN:-build/kiln}
read -ra problems <<< "${AB_PROBLEMS:-allgather alltoall broadcast scatter allreduce moe-dispatch moe-combine}"

step_ab() {
  local round which bin order
  for ((round = 1; round <= ${AB_ROUNDS:-2}; round++)); do
    order="old new"
    ((round % 2 == 0)) && order="new old"
    for which in $order; do
      bin=$old
      [ "$which" = new ] && bin=$new
      capped 90 "suite-$which-r$round.txt" "$bin" bench suite -g 2 --problems "${problems[@]}" \
        --preset pkb --json "$out/suite-$which-r$round.json"
      grep -E "^# over|correctness" "$out/suite-$which-r$round.txt" | sed "s/^/$which r$round: /" |
        tee -a "$out/summary.txt"
    done
    pack
  done
  python3 scripts/compare_suite_ab.py "$out" > "$out/ab.txt" 2>&1
  tee -a "$out/summary.txt" < "$out/ab.txt"
}

[ -x "$old" ] || { note "no old binary at $old (see this script's header)"; exit 2; }
note "device: $(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tr '\n' ';')"
note "old: $("$old" --version 2>&1 | head -1); new: $("$new" --version 2>&1 | head -1)"
run_steps

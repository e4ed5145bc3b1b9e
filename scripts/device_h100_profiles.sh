#!/usr/bin/env bash
# Built-in tuner profiles for H100 SXM hosts (issues 23 and 24). The multi-GPU kinds now come as
# H100s most of the time, and kiln has built-in profiles for H200 only: on 4xH100 (2026-11-28)
# kiln's PyTorch ops found no profile, so ReduceScatter ran the untuned default plan and AllReduce
# the serial form (x1.00 against PyTorch's serial in `python -m kiln.bench`). Per world in WORLDS
# (default "4 2", GPUs 0..N-1):
#   kiln tune profile -g N --op rs|ar  -> h100-sxm-gN-{rs,ar}-bf16.json (data/tuner/ takes them)
#   python -m kiln.bench --nproc N --op rs --op ar on SHAPES, with those profiles found the way a
#   user's are (<cache dir>/profiles/), so kiln's op runs its tuned plan beside PyTorch's serial
#   and async-TP in the same processes.
# Needs carry/ (build/kiln) and .pydeps/kiln-installed.tar.gz (device_torch_ops.sh install's
# package from an earlier call; reused with this tree's Python files).
# Usage: DEADLINE=560 bash scripts/device_h100_profiles.sh
# Writes /tmp/kiln-h100/h100/ and packs it as $OUT/h100.tar.gz after every step.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit
export PYTHONUNBUFFERED=1
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null
out=/tmp/kiln-h100/h100; rm -rf "$out"; mkdir -p "$out"
archive=h100
steps="install ${WORLDS:-4 2}"
source scripts/device_steps.sh
k=build/kiln
export XDG_CACHE_HOME=/tmp/kiln-h100/cache
mkdir -p "$XDG_CACHE_HOME/kiln/profiles"
shapes=${SHAPES:-4096x8192x8192 8192x8192x8192 16384x8192x4096 8192x4096x14336 4096x8192x2048 16384x16384x2048}

step_install() {
  capped 60 install.txt bash scripts/device_torch_ops.sh reuse
  (cd /tmp && python3 -c 'import kiln, torch; print("import kiln:", kiln.__file__)') 2>&1 | tee -a "$out/summary.txt"
}
# One world: both profiles, then the ops beside PyTorch's with them.
profile_world() {
  local n=$1 op visible args=() shape
  visible=$(seq -s, 0 $((n - 1)))
  for op in rs ar; do
    capped 120 "profile-$op-g$n.txt" env CUDA_VISIBLE_DEVICES="$visible" $k tune profile -g "$n" \
      --op "$op" --out "$out/h100-sxm-g$n-$op-bf16.json" --no-cache
    grep -vE "^profile \[" "$out/profile-$op-g$n.txt" | tail -8 >> "$out/summary.txt"
    # The cache finds a profile by the device it was measured on (plan_lookup's file name): copy
    # it under that name, or on another card the bench would silently use the built-in profiles.
    local slug
    slug=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["device"])' \
      "$out/h100-sxm-g$n-$op-bf16.json" 2> /dev/null) &&
      cp "$out/h100-sxm-g$n-$op-bf16.json" "$XDG_CACHE_HOME/kiln/profiles/$slug-g$n-$op-bf16.json" &&
      note "profile $op g$n: measured on $slug (bench reads it as $slug-g$n-$op-bf16.json)"
  done
  for shape in $shapes; do args+=(--shape "$shape"); done
  capped 150 "pyops-bench-g$n.txt" env CUDA_VISIBLE_DEVICES="$visible" bash -c "cd /tmp && python3 -m kiln.bench \
    --nproc $n --op rs --op ar ${args[*]} --json $out/pyops-bench-g$n.json"
  tail -n 16 "$out/pyops-bench-g$n.txt" | tee -a "$out/summary.txt"
}
step_4() { profile_world 4; }
step_2() { profile_world 2; }
step_8() { profile_world 8; }

note "device: $(nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader | tr '\n' ';')"
note "kiln: $($k --version 2>&1 | head -1); $(head -1 carry/MANIFEST 2> /dev/null)"
run_steps

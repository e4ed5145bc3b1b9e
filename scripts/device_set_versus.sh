#!/usr/bin/env bash
# PyTorch eager against a set run's evolved kernels, taking turns in one device call (issue 20:
# the speedup over eager measured in the same call): scripts/kb1_eager_vs_evolved.py over
# VERSUS_STATE/set/<problem>/best.cu (default fullset-state: the state scripts/device_full_set.sh
# brings back; unpack its fullset-state.tar.xz in the repository root and carry it). Only the
# best.cu files and units.tar.xz are read, so a state too large to carry beside the binaries can
# be slimmed first: `find fullset-state/set -type f ! -name best.cu -delete; rm fullset-state/pool.json`.
# The CUTLASS units come from prebuilt-units/units (carried) and the state's units.tar.xz, so no
# matmul or attention kernel is compiled whole; the rest compile on every core first.
# Writes to $OUT: versus.md (exit codes and the closing line), versus-prepare.txt,
# eager-vs-evolved.txt (one line per problem) and eager-vs-evolved.json (written after every
# problem: a call cut by VERSUS_LIMIT keeps what it measured).
# Usage: bash scripts/device_set_versus.sh   (VERSUS_STATE, VERSUS_PROBLEMS 'kb1-*', VERSUS_ROUNDS 1,
#        VERSUS_LIMIT 350 s for the timing)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
state=${VERSUS_STATE:-fullset-state}
[ -d "$state/set" ] || { echo "$0: no $state/set: unpack a set run's fullset-state.tar.xz in the repository root and carry it" >&2; exit 2; }
cache=/tmp/versus-cache; build=/tmp/versus-build
rm -rf "$cache" "$build"; mkdir -p "$cache/units" "$build"
[ -d prebuilt-units/units ] && cp -p prebuilt-units/units/*.o "$cache/units/" 2> /dev/null
[ -f "$state/units.tar.xz" ] && tar -xJf "$state/units.tar.xz" -C "$cache/units"
set -f
# shellcheck disable=SC2206
problems=(${VERSUS_PROBLEMS:-kb1-*})
set +f
common=(--runs "$state/set" --problems "${problems[@]}" --build-dir "$build" --build-cache "$cache")
python3 scripts/kb1_eager_vs_evolved.py "${common[@]}" --prepare > "$o/versus-prepare.txt" 2>&1
echo "prepare exit $? ($(grep -c ' compiled$' "$o/versus-prepare.txt") compiled; units in the cache: $(ls "$cache/units" | grep -c '\.o$'))" | tee "$o/versus.md"
timeout "${VERSUS_LIMIT:-350}" python3 scripts/kb1_eager_vs_evolved.py "${common[@]}" \
  --rounds "${VERSUS_ROUNDS:-1}" --json "$o/eager-vs-evolved.json" > "$o/eager-vs-evolved.txt" 2>&1
echo "versus exit $? (124: cut by VERSUS_LIMIT; the JSON holds the problems timed)" | tee -a "$o/versus.md"
tail -1 "$o/eager-vs-evolved.txt" | tee -a "$o/versus.md"

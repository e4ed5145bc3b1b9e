// The sm90 3xTF32 GEMM unit with A split in registers (cutlass-sm90 knob copies = 1, issue 20).
// The split pre-pass of the other units writes each operand's big and small parts to memory; on
// one H200 those passes are 12-39% of the sm90 products' time, A's share largest where A is the
// big operand (kb1-11: 1098 of 4630 us; docs/results/2026-11-30c-direct-store, call F). Here A
// is read by TMA as stored (raw fp32 bits: a TF32 descriptor would round it on the way), each
// consumer warp group loads its k-block of A from shared memory into registers and splits it
// there (Ab rounded to TF32, As the exact remainder), and issues the three products Ab Bb,
// Ab Bs and As Bb as register-sourced wgmma (A from registers, B from shared memory) into the
// same accumulators. B keeps its pre-split [Bb | Bs] (wgmma reads a shared-memory operand as
// is), and a stage holds A's tile, Bb's and Bs's. The main loop follows CUTLASS's
// register-sourced sm90 collective (MainloopSm90TmaGmmaRmemAWarpSpecialized: k-block
// pipelining, release of a stage once its wgmma batches are done), whose TMA setup it reuses;
// the split of the A fragment is the idea of NVIDIA's 3xTF32 (CUTLASS example 27) moved from
// the mma.sync warp tile to the warp group.
#pragma once

#include <string>

#include "evolve/matmul_sm90_generator.hpp"

namespace kiln::evolve {

// `kiln_sm90_tf32_gemm(...)` between the kiln-unit markers, for a configuration with copies 1:
// its parameters end `(..., void* stream, int b_small_tiles, int b_k)`: B is stored as rows
// [Bb | Bs] whose small part starts b_small_tiles 32-deep k-tiles after the big part, and B's
// descriptor spans b_k columns a batch (A's spans the problem's K).
std::string sm90_register_split_gemm_unit(const Sm90MatmulConfig& c);

}  // namespace kiln::evolve

// The exploit-structure strategy for triangular products (kb1-14, kb1-15; issue 20). With A and B
// both upper (lower) triangular, C = A B is upper (lower) triangular and its element (i, j) sums
// only the terms k between i and j. In blocks of P x P: output block (I, J) of the triangle needs
// only the K blocks from I to J (upper; J to I lower), so the work is about n^3 / 3 multiply-adds
// instead of n^3. The candidate writes that as one CUTLASS 3.x sm90 grouped GEMM (a ptr-array
// GEMM with a problem shape per group; CUTLASS example 57's design) over the triangle's blocks,
// on the 3xTF32 operands of the sm90 path (matmul_sm90_generator.hpp) laid out K-block by K-block
// ([Ab | Ab | As] for each block of P columns), so that any run of K blocks is one contiguous
// K range holding all three products. A block's K range longer than `slice_blocks` blocks is cut
// into slices (separate groups, summed after in a fixed order): the long corner blocks would
// otherwise keep a few SMs busy after the rest finished, and plain wgmma accumulation stays within
// the 12288 terms measured accurate. Only the blocks the GEMM reads are split; the blocks off the
// triangle are written as zeros.
#pragma once

#include <string>

#include "evolve/genome.hpp"
#include "evolve/matmul_generator.hpp"

namespace kiln::evolve {

// The grouped GEMM unit of a cutlass-sm90 configuration (between kiln-unit markers):
// `kiln_sm90_tf32_grouped_gemm(...)`, built once per configuration like the plain unit.
std::string sm90_tf32_grouped_unit(const Genome& genome);

// The candidate for a triangular `problem` (kind.triangle 'U' or 'L') from a genome with
// cutlass-sm90, tf32x3 and exploit-structure. Throws kiln::UsageError otherwise.
std::string generate_triangle_matmul_candidate(const Genome& genome, const std::string& problem,
                                               const MatmulKind& kind);

}  // namespace kiln::evolve

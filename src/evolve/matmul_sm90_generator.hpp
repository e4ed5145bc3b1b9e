// The sm90 path of the matmul family (issue 20): fp32 products at fp32 accuracy on Hopper's wgmma
// tensor cores. 3xTF32 (A B ~ Ab Bb + Ab Bs + As Bb, with X = Xb + Xs, Xb the operand rounded to
// TF32 and Xs the exact remainder; NVIDIA, "Fast and accurate FP32 via 3xTF32", CUTLASS example
// 27) is written as one TF32 product over three times K: A' = [Ab | Ab | As] (m x 3k) and B' =
// [Bb | Bs | Bb] (n x 3k), both K-major, so that A' B'^T is the three products summed in the
// tensor cores' fp32 accumulators. A split kernel writes A' and B' from the problem's own layouts
// (transposing where K is not contiguous: wgmma reads TF32 only K-major), CUTLASS 3.x's sm90
// warp-specialised GEMM multiplies them, and split-K is a batch of K slices summed by a last
// kernel. With knob copies = 2 the split writes [Xb | Xs] only and the GEMM's TMA producer reads
// the big part twice (PhasedMainloop: three k-phases over the same virtual K of 3k). The GEMM part
// depends only on the configuration (tile, cluster, schedule), never on the problem: it is a
// separate compilation unit of the candidate (bench::compile_candidate's `kiln-unit` markers),
// built once per configuration and reused by every problem of a set run.
#pragma once

#include <string>

#include "evolve/genome.hpp"
#include "evolve/matmul_generator.hpp"

namespace kiln::evolve {

// What a cutlass-sm90 genome's knobs come to: always a configuration CUTLASS builds (cooperative
// tiles at least 128 rows; a warp group's accumulators at most 128 registers a thread, so tiles
// up to 256 x 128 cooperative and 128 x 128 ping-pong, half that with promoted accumulation,
// which keeps two sets).
struct Sm90MatmulConfig {
  int tile_m, tile_n, cluster_m;
  bool pingpong;
  bool raster_n;
  int swizzle, split_k;
  int promote;  // wgmma instructions between promotions (a multiple of 4: one 32-deep k-tile);
                // 0: none, CUTLASS's plain main loop
  int copies;   // copies of each operand the split writes: 3, or 2 read in three k-phases, or 1:
                // one operand split in registers, the other's two copies read
  bool register_b;         // copies 1: B is the operand split in registers (the GEMM computes
                           // C^T = B^T A^T), else A
  bool register_mn_major;  // copies 1: the register operand is stored with its rows (A: m, B: n)
                           // contiguous (set by the candidate from the problem's layouts)
  int shared_split;        // copies 1: 0 the other operand's two copies read from memory, else that
                     // operand read as stored too (one raw K-major copy where it is not K-major)
                     // and split in shared memory, 1 by the consumers, 2 by a transform warp
  // copies 1, square tiles, one block a cluster: a triangular product (exploit-structure's
  // ranged form), whose tile scheduler gives output tile (m, n) only the K range where both
  // operands are non-zero: 1 from m's block to n's (kTriangleKFromM), 2 from n's to m's; 0: a
  // plain product.
  int triangle = 0;
};
Sm90MatmulConfig sm90_matmul_config_of(const Genome& genome);

// Generated-source helpers of the 3xTF32 split (shared by the sm90 and the triangle candidates):
// `dim(args, name)` and `tf32_big(x)`, x rounded to the nearest TF32 value.
std::string tf32_split_helpers();

// The C entry point of an sm90 GEMM unit, `kiln_sm90_tf32_gemm(A, B, D, m, n, k, batch, lda,
// ldb, ldd, batch_a, batch_b, batch_d, raster_n, swizzle, promote, stream...)`, for the unit's
// kiln_unit::Gemm and kiln_unit::Kernel: `extra_parameters` end its parameter list and
// `mainloop_arguments` is the expression of the main loop's arguments.
// `column_strides`: A's and D's strides may be column-major (ld in the second mode);
// `before_run`: statements between the GEMM's initialisation and its launch (`gemm`, `m`, `s`
// in scope; a non-zero status returned).
std::string sm90_gemm_entry_text(const std::string& extra_parameters,
                                 const std::string& mainloop_arguments, bool column_strides = false,
                                 const std::string& before_run = "");

// The configuration's GEMM unit: `kiln_sm90_tf32_gemm(...)` between the kiln-unit markers.
std::string sm90_tf32_gemm_unit(const Sm90MatmulConfig& c);

// The whole candidate for `problem` of `kind`.
std::string generate_sm90_matmul_candidate(const Genome& genome, const std::string& problem,
                                           const MatmulKind& kind);
// The same with the configuration given (the triangle generator's ranged form adjusts it).
std::string generate_sm90_matmul_candidate(const Genome& genome, const std::string& problem,
                                           const MatmulKind& kind, Sm90MatmulConfig config);

}  // namespace kiln::evolve

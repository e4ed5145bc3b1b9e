// Strategy-to-kernel translation for the general fp32 products of KernelBench level 1 (issue 20):
// kb1-1, 2, 3 (batched), 6 (large K), 7 (small K), 8 (irregular sizes), 9 (tall-skinny), 10 and 11
// (3-D and 4-D tensors folded into rows), 13 (symmetric operands), 14 and 15 (triangular
// operands, whose plain product is already triangular) and 16-18 (transposed operands). With
// cutlass-sm90 the candidate is matmul_sm90_generator's (wgmma, 3xTF32 as one GEMM over 3k). With
// cutlass-sm80-mma the generated candidate instantiates CUTLASS 2.x's universal GEMM with the
// genome's tile, warp tile, pipeline depth, swizzle and split-K, on tensor cores with 3xTF32 (each
// fp32 operand as a TF32 big part plus a TF32 remainder: fp32 accuracy at a third of the TF32 rate;
// NVIDIA, "Fast and accurate FP32 via 3xTF32", CUTLASS example 27). The operands' layouts (which
// one is transposed) are the problem's, fixed at generation; an irregular problem also gets an
// instantiation for unaligned leading dimensions. Not covered: kb1-4 (matrix-vector), kb1-12
// (diagonal scaling).
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

struct MatmulKind {
  std::string shape;       // how the dims give (batch, m, n, k): "square", "mkn", "batched",
                           // "tall-skinny", "3d", "4d"
  bool a_t = false;        // A stored k x m
  bool b_t = false;        // B stored n x k
  bool irregular = false;  // leading dimensions need not be multiples of 4
  // Both operands (and so the product) upper ('U') or lower ('L') triangular; 0: none.
  char triangle = 0;
};
std::optional<MatmulKind> matmul_kind_of(const std::string& problem);

// `  const long long batch = ..., m = ..., n = ..., k = ...;` from the problem's dims (as
// problems/kb1_matmul.cpp views them), for a generated entry point with `dim(a, name)`.
std::string matmul_shape_code(const MatmulKind& kind);

// The generated entry point's opening: the ABI version function, then kiln_candidate_run's
// argument checks (k at most `max_k`, a C++ literal) and A, B, C, for a source with `dim(a, name)`.
std::string matmul_entry_opening(const MatmulKind& kind, const std::string& max_k);

// The strategies this generator implements for `problem` (the search's allowed set):
// exploit-structure only where the operands have a structure it exploits (triangular).
const StrategySet& matmul_generated_strategies(const std::string& problem);

// The candidate source for `problem` from `genome` (a valid matmul genome of the allowed set).
// Throws kiln::UsageError when either is not.
std::string generate_matmul_candidate(const Genome& genome, const std::string& problem);

// The CUTLASS configuration a genome's knobs come to (always a valid one: warp tiles grow when a
// tile would need more than 16 warps, stages shrink to fit 200 KiB of shared memory).
struct MatmulConfig {
  int tile_m, tile_n, tile_k, warp_m, warp_n, stages, swizzle, split_k;
};
MatmulConfig matmul_config_of(const Genome& genome);

// `using NAME = cutlass::gemm::device::GemmUniversal<...>;` for fp32 operands (A and B row- or
// column-major, C row-major), 3xTF32 tensor cores, the configuration `c` and `alignment` floats
// per access. Shared with the attention generator.
std::string cutlass_gemm_type(const std::string& name, bool a_column_major, bool b_column_major,
                              const MatmulConfig& c, int alignment);

// The header comment's fields of a generated CUTLASS source ($PROBLEM, $HASH, $DESCRIBE, $TILE,
// $WARP, $STAGES, $SWIZZLE), shared by the matmul and attention generators.
void fill_cutlass_header(std::string& source, const Genome& g, const MatmulConfig& c,
                         const std::string& problem);

// Host-side source shared by the generated CUTLASS candidates: `dim(args, name)` (the problem's
// dimension by name, dimension_helper) and `run_gemm<Gemm>(mode, m, n, k, count, alpha, A, B, C,
// strides, leading dimensions, stream)` (workspace kept between calls; 0 on success, else the
// step that failed, 5-8, or 1; cutlass_run_gemm_helper). The matmul generator puts run_gemm in
// the candidate's unit and dim in the rest, the attention generator both in one file.
std::string dimension_helper();
std::string cutlass_run_gemm_helper();
std::string cutlass_host_helpers();

// The CUTLASS 2.x GEMM unit of one configuration and operand layout (A stored k x m when `a_t`, B
// stored n x k when `b_t`; an unaligned instantiation too when `irregular`), marked as a separate
// unit (bench/candidate_unit.hpp), and the declaration of its entry point for the rest of a
// source: `int SYMBOL(aligned, A, B, C, batch, m, n, k, lda, ldb, ldc, split_k, stream)`, C = A B
// row-major, batched (batch > 1; strides m k, k n, m n) or split over k, 0 or where it failed.
// The matmul candidates are one unit and an entry point; the attention candidates use two units
// of different layouts in one source, so each layout has its own namespace and symbol.
std::string sm80_gemm_unit(bool a_t, bool b_t, bool irregular, const MatmulConfig& c);
std::string sm80_gemm_declaration(bool a_t, bool b_t);
std::string sm80_gemm_symbol(bool a_t, bool b_t);

}  // namespace kiln::evolve

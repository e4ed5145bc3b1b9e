// `kiln overlap gemm`: the single-GPU parts of the overlap runtime, measured against their
// baselines in one run: the signaling GEMM (the best of its configurations and scheduler orders
// for the shape, without and with signals) against cuBLAS, and the post-communication reorder fused
// into restore/RMSNorm against the same kernels on row-major input.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/stats.hpp"
#include "overlap/signaling_gemm.hpp"

namespace kiln::benchmarks {

struct OverlapGemmOptions {
  core::DType dtype = core::DType::kBf16;
  overlap::WeightLayout layout = overlap::WeightLayout::kNK;
  std::vector<overlap::GemmShape> shapes;
  // GEMM configurations searched per shape (empty: every one kiln builds).
  std::vector<overlap::GemmConfig> configs;
  int warmup = 5;
  int iterations = 20;
  int rounds = 4;  // the final figures interleave the variants over this many rounds
  // CTA caps timed for the best schedule without signal (wave quantisation: a cap that divides
  // the tile count keeps every wave full).
  std::vector<int> caps = {128, 124, 120};
};

struct ScheduleTime {
  std::string schedule;   // "tile=128x256 cluster=2x1 kernel=coop raster=n swizzle=2"
  double us = 0.0;        // median with eager signal
  bool finalist = false;  // timed again in the search's second stage
  int stage = 0;          // the search stage `us` is from (3: sustained load; not comparable)
};

struct CapTime {
  int cap = 0;
  int waves = 0;
  core::TimingStats us;
};

struct OverlapGemmRow {
  overlap::GemmShape shape;
  // kiln_us: best schedule, every SM, no signal; kiln_signal_us: the same with one counter per
  // wave signalled eagerly, kiln_deferred_us: signalled at the next epilogue. All interleaved.
  core::TimingStats cublas_us, kiln_us, kiln_signal_us, kiln_deferred_us;
  // The same kernel with CUTLASS's own epilogue (bf16 nk only; count 0 otherwise).
  core::TimingStats cutlass_plain_us;
  double cutlass_plain_relative_error = -1.0;
  std::vector<CapTime> caps;  // best schedule, no signal, under CTA caps
  std::string best_schedule;
  double cublas_over_kiln = 0.0;  // > 1: kiln faster
  std::string cublas_algorithm;   // the baseline's choice (CublasGemm::chosen)
  double gemm_relative_error = -1.0;
  std::vector<ScheduleTime> schedules;
  core::TimingStats restore_row_major_us, restore_reordered_us, rmsnorm_row_major_us,
      rmsnorm_reordered_us;
  double rmsnorm_relative_error = -1.0;  // reordered vs row-major RMSNorm output
};

std::vector<OverlapGemmRow> run_overlap_gemm_bench(
    const OverlapGemmOptions& options, const std::function<void(const OverlapGemmRow&)>& on_row);
std::string format_overlap_gemm_header();
std::string format_overlap_gemm_row(const OverlapGemmRow& row);
nlohmann::json overlap_gemm_row_to_json(const OverlapGemmRow& row);

}  // namespace kiln::benchmarks

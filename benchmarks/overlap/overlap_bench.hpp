// `kiln overlap bench`: GEMM + ReduceScatter / AllReduce per shape, measured in one run:
// serial (cuBLAS then NCCL), decomposition (M in k chunks, GEMM of chunk i+1 beside NCCL of
// chunk i, best k), and kiln's signaling overlap (best plan of a sweep, or the given plan), with
// the theoretical overlap bound, speedups, correctness against the serial path and a per-group
// timeline. Every time is the median over iterations of the per-iteration maximum over ranks.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/fill.hpp"
#include "core/stats.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/plan.hpp"

namespace kiln::comm {
class Communicator;
}

namespace kiln::benchmarks {

struct OverlapBenchOptions {
  overlap::OverlapOp op = overlap::OverlapOp::kReduceScatter;
  core::DType dtype = core::DType::kBf16;
  overlap::WeightLayout layout = overlap::WeightLayout::kNK;
  std::vector<overlap::GemmShape> shapes;
  std::optional<overlap::Plan> plan;  // fixed plan; otherwise a sweep picks the best per shape
  bool automatic_plan = false;  // --plan auto: the tuner's lookup per shape (automatic_plan.hpp)
  // CTA caps the sweep tries with NCCL. 128x128 tiles lost to 128x256 on every shape of the
  // first 2xH200 sweep (docs/results/2026-11-23-overlap/), so the sweep keeps to 128x256.
  // 128 divides the tile count of every issue shape (powers of two), so its last wave is full,
  // but the 4 SMs it leaves make NCCL so slow that it lost everywhere on 2xH200 (run 3).
  std::vector<int> caps = {0, 124, 120};
  // CTA caps with the copy engines, which need no SM: 128 only evens out the waves, and ran the
  // GEMM alone 0.8-4% faster than all 132 SMs on three issue shapes (run 9, `gemm.txt`).
  std::vector<int> ce_caps = {0, 128};
  // Signal modes the sweep tries. With the TMA-store epilogue, deferred signalling costs less
  // than eager (run 9: +0.2-2.9% over no signal vs +0.4-4.1%), but announces groups a wave later.
  std::vector<bool> deferred_signals = {false, true};
  // Transports the sweep tries (comm= values): nccl, ce, and ce2 (AllReduce only).
  std::vector<std::string> transports = {"nccl", "ce"};
  // Scheduler swizzles the sweep tries: with the TMA-store epilogue the GEMM alone was fastest
  // with swizzle 1 on every issue shape (run 10 `gemm.txt`); 8 was before (run 2).
  std::vector<int> swizzles = {1, 8};
  // GEMM configurations the sweep tries (the default kernel; `overlap gemm` compares them all).
  std::vector<overlap::GemmConfig> gemm_configs = {overlap::GemmConfig{}};
  int warmup = 5;
  int iterations = 20;
  int sweep_iterations = 5;
  int rounds = 4;  // the final figures interleave the contenders over this many rounds
  // Seconds of cuBLAS GEMMs back to back on every rank before each shape's final figures: the
  // clock a sustained run holds at the power cap (4xH200, 2026-11-27: 1350-1500 MHz through
  // kiln's bench, 1980 MHz through PyTorch's short script, which made kiln's cuBLAS read 4-7%
  // slower than torch.matmul in the same window). scripts/torch_async_tp.py settles alike.
  double settle_seconds = 1.0;
  // The operands' values (uniform in kiln's records; normal = torch.randn's, for comparisons
  // with PyTorch on the same bits).
  core::ValueDistribution inputs = core::ValueDistribution::kUniform;
  // With a comm=ce plan at 3 or more ranks, also time the plan with a copy stream per peer
  // (OverlapOptions::copy_stream_per_peer), interleaved with the rest: an A/B of that option.
  bool ab_copy_streams = false;
  // ReduceScatter: also time the chunked ReduceScatter with two compute streams (its default is
  // one), interleaved with the rest: an A/B of that option.
  bool ab_chunked_streams = false;
  bool check = true;
  bool spin_wait = false;
  double timeout_seconds = 60.0;
  int world_size = 1;
};

// Throws kiln::UsageError naming the flag.
void validate(const OverlapBenchOptions& options, int visible_gpus);

// Candidate partitions of `waves` waves (each, uniform 2/3/4, small first group then larger,
// increasing, a single group), without duplicates.
std::vector<std::vector<int>> candidate_partitions(int waves);

struct PlanTime {
  std::string plan;
  double us = 0.0;
};

struct OverlapRow {
  overlap::GemmShape shape;
  core::TimingStats serial_us, cublas_us, comm_us, decomposition_us, kiln_us, kiln_no_reorder_us,
      kiln_gemm_us, last_wave_comm_us;
  // ReduceScatter where M splits into whole tiles per rank: the same plan with contiguous row
  // blocks (PyTorch's layout, OverlapOptions::contiguous_rows), interleaved with the others.
  bool has_contiguous = false;
  core::TimingStats kiln_contiguous_us, kiln_contiguous_gemm_us;
  double contiguous_relative_error = -1.0;
  std::string contiguous_plan;  // the kiln plan with raster=m
  // OverlapBenchOptions::ab_copy_streams: the same plan, a copy stream per peer.
  bool has_peer_streams = false;
  bool ab_copy_streams_skipped = false;  // asked for, but the plan or world has no per-peer form
  core::TimingStats kiln_peer_streams_us;
  double peer_streams_relative_error = -1.0;
  // ReduceScatter where M splits into W chunks: PyTorch async-TP's algorithm from kiln's parts
  // (overlap::ChunkedReduceScatter), interleaved with the others.
  bool has_chunked = false;
  core::TimingStats chunked_us;
  double chunked_relative_error = -1.0;
  // OverlapBenchOptions::ab_chunked_streams: the chunked ReduceScatter on two compute streams.
  bool has_chunked_two_streams = false;
  core::TimingStats chunked_two_streams_us;
  double chunked_two_streams_relative_error = -1.0;
  // --plan auto with ReduceScatter: kiln's choice of algorithm for the shape, made the way the
  // PyTorch op makes it at its first call (python/csrc/overlap_ops.cpp, choose_rs_algorithm): the
  // candidates (the plan, its contiguous-row form, the chunked ReduceScatter; those the shape
  // takes) timed interleaved in a short probe before the final rounds, slowest rank, the fastest
  // kept. The choice's figures are then that candidate's from the final rounds, a sample apart
  // from the probe's, so that picking cannot favour the luckier median.
  std::string choice;                  // "" (none made), or kChoice* below
  std::vector<PlanTime> choice_probe;  // each candidate's probe median (us), by name
  core::TimingStats choice_us;
  double speedup_choice_vs_serial = 0.0, fraction_of_bound_choice = 0.0;
  int decomposition_chunks = 0;
  std::string plan;                   // the plan kiln ran
  std::string plan_source = "sweep";  // "sweep", "given", or where the tuner's lookup found it
  double predicted_us = -1.0;         // the tuner's prediction of the full operation; < 0: none
  std::string describe;               // its waves and groups
  double reorder_bytes = 0.0;         // HBM bytes the reorder reads and writes (0: no reorder)
  std::string cublas_algorithm;       // the serial baseline's cuBLAS choice (rank 0's)
  int waves = 0;
  double bound_us = 0.0;
  double speedup_vs_serial = 0.0, speedup_vs_decomposition = 0.0, fraction_of_bound = 0.0;
  double relative_error = -1.0;  // ||kiln - serial|| / ||serial|| over the rows this rank owns
  bool correct = true;
  std::vector<PlanTime> sweep;
  std::vector<overlap::GroupTimeline> timeline;  // rank 0's, of the chosen plan
};

// The names of kiln's ReduceScatter algorithms in OverlapRow::choice.
inline constexpr const char* kChoicePlan = "plan";
inline constexpr const char* kChoiceContiguous = "plan, contiguous rows";
inline constexpr const char* kChoiceChunked = "chunked";

// The candidate with the smallest probe time (the first of equals: the plan before the others);
// throws std::invalid_argument on an empty list.
std::size_t fastest_candidate(const std::vector<PlanTime>& probe);

std::vector<OverlapRow> run_overlap_bench(comm::Communicator& comm,
                                          const OverlapBenchOptions& options,
                                          const std::function<void(const OverlapRow&)>& on_row);

std::string format_overlap_header();
std::string format_overlap_row(const OverlapRow& row);
// The '#' lines under a row: the plan's description, where an automatic plan came from, the
// per-group timeline.
std::string format_overlap_row_details(const OverlapRow& row, bool automatic_plan);
// The result file's fields (parameters and rows; the envelope adds provenance).
nlohmann::json overlap_bench_json(const OverlapBenchOptions& o, const std::vector<OverlapRow>& rows,
                                  int world);
nlohmann::json overlap_row_to_json(const OverlapRow& row);

}  // namespace kiln::benchmarks

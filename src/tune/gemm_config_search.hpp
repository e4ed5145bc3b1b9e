// Choosing the signaling GEMM's configuration for a shape (issue 17): every compiled kernel
// (tile, cluster, cooperative or ping-pong, built_gemm_configs()) under every scheduler order
// (raster along M or N, swizzle 1..32), timed on this GPU with its signal on, the way CUTLASS's
// profiler and PyTorch's TunableOp pick a GEMM: measure the candidates once per shape, keep the
// fastest. All candidates are interleaved over rounds (core::time_rounds), because the chip's clock
// moves by 10-20% over seconds of sustained load and candidates timed one after another would
// differ by the moment as much as by the kernel. A second stage times the fastest candidate of each
// of the fastest configurations again (diverse_finalists), in blocks of launches long enough for a
// kernel's own power draw to set its clock, and a third the best few under sustained load (the
// state a training step runs in: the chip at its power cap, where a kernel's DRAM traffic costs
// clock). Operands smaller than twice the L2 are rotated over copies, as a model's consecutive
// GEMMs would find them: timed on one resident pair, a candidate's tile order (its L2 reuse) would
// not count.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/stats.hpp"
#include "overlap/plan.hpp"
#include "overlap/signaling_gemm.hpp"

namespace kiln::tune {

// What one signaling GEMM launch writes to when no communication follows (the one-GPU benches and
// the search): its slot buffer, tile table, wave-group tables (one group per wave) and counters.
// `shared_slots`, when given, is used instead of an own slot buffer (it must hold
// geometry.slot_buffer_elements() elements); candidates timed together share one.
struct StandaloneTargets {
  overlap::LaunchGeometry launch;
  overlap::SlotGeometry geometry;
  core::DeviceBuffer tables, own_slots, slot_of_tile, counters;
  overlap::EpilogueTargets targets;  // no signal

  StandaloneTargets(overlap::SignalingGemm& gemm, const overlap::GemmShape& shape,
                    const overlap::ScheduleOptions& schedule, int device_sms,
                    std::size_t element_bytes, void* shared_slots = nullptr);
  // The same targets with one counter per wave group signalled (nobody waits on them: the
  // signal's own cost; they wrap after 2^32 tiles).
  overlap::EpilogueTargets signalling(bool deferred) const;
};

// One candidate of the search and its time.
struct GemmCandidate {
  overlap::GemmConfig config;
  overlap::ScheduleOptions schedule;
  core::TimingStats us;  // GEMM with eager signal (the last stage's that timed it)
  bool finalist = false;
  // The stage whose timing `us` is: 1 screening, 2 finalists, 3 sustained load. The ranking is
  // stage 3's candidates, then the other finalists, then the rest, each part fastest first; times
  // of different stages are not comparable (stage 3 runs at the power-capped clock).
  int stage = 0;
};
// "tile=128x256 cluster=2x1 kernel=coop raster=n swizzle=8".
std::string candidate_name(const GemmCandidate& candidate);

struct GemmSearchOptions {
  std::vector<overlap::GemmConfig> configs;  // empty: built_gemm_configs()
  std::vector<bool> rasters_along_n = {true, false};
  // Swizzles past 8 are kiln's widening of CUTLASS's order (overlap/wide_swizzle.hpp). A swizzle
  // that the shape reduces to one already listed (too few tiles for it) is not timed twice.
  std::vector<int> swizzles = {1, 2, 4, 8, 16, 32};
  int cta_cap = 0;  // 0: every SM; candidates whose cluster does not divide it are skipped
  // Stage 1: every candidate, short; stage 2: `finalists` of them (diverse_finalists: the fastest
  // of each configuration first), in blocks of `final_per_round` launches as long as the
  // same-process table's, where a kernel's own power draw sets its clock.
  int screen_per_round = 2, screen_rounds = 3;
  int finalists = 8, final_per_round = 10, final_rounds = 4;
  // Stage 3: the `sustained` fastest of stage 2 and the fastest finalist of each kernel schedule
  // they lack (sustained_finalists), after `sustained_warmup_ms` of back-to-back
  // launches of each (the power-capped clock), for `sustained_rounds` rounds of
  // `sustained_per_round` launches each (`sustained` 0 or 1: no third stage).
  int sustained = 4, sustained_per_round = 10, sustained_rounds = 6;
  double sustained_warmup_ms = 300.0;
  // Stage 3 also times each of its candidates with the balanced CTA cap (as many waves on fewer
  // SMs: overlap::balanced_cta_cap) where that leaves at least one cluster idle and `cta_cap` is
  // 0; 0: not.
  int balanced_cap = 1;
  // 1: also time the configurations built but not yet checked on a GPU
  // (overlap::awaits_gpu_check); 0: leave them out of the built list (a caller's `configs` are
  // timed as given).
  int unchecked = 0;
  // Stage 3 also times each of its ping-pong candidates with tiles claimed at run time
  // (scheduler=claimed, overlap/sm90_claimed_tile_scheduler.cuh); 0: not. On one H200 that was
  // 1-3% faster on 4 of issue 17's 12 shapes and 1% slower on one
  // (docs/results/2026-12-03-claimed/).
  int claimed = 1;
  // Stage 3 also times each of its ping-pong candidates in the claimed band order with the least
  // modelled DRAM traffic (overlap::least_traffic_band_order) where that is at least 10% below its
  // own order's, and among its near-ties puts the least-traffic one first
  // (least_traffic_near_tie); 0: neither.
  int least_traffic = 1;
  bool rotate_inputs = true;  // copies of A and B so the operands timed exceed 2x the L2
};

// The configurations a search with `options` times: options.configs when given (as given), else
// every built one less those that await their GPU check unless options.unchecked.
std::vector<overlap::GemmConfig> searched_gemm_configs(const GemmSearchOptions& options);

// Search options from "key=N,key=N" (the C API's and the same-process script's A/B of search
// settings): max-swizzle (drops wider swizzles), finalists, screen-rounds, final-rounds,
// sustained (finalists timed under sustained load; 0 or 1: no such stage), sustained-rounds,
// sustained-per-round (stage 3's launches of a candidate per block, 1-5000: blocks of a few
// hundred ms let each kernel's own energy set its clock, as scripts/gemm_power_clock.py does),
// sustained-warmup-ms (stage 3's launches of each candidate before its first round, in ms; 0:
// two rounds' worth, as stage 2 takes),
// balanced-cap (0: stage 3 does not also try each candidate on fewer SMs), unchecked (1: also
// the configurations that await their GPU check), claimed (0: stage 3 does not also try each
// ping-pong candidate with claimed tiles), least-traffic (0: stage 3 does not also try each
// ping-pong candidate in its least-traffic band order),
// without-tile-n (repeatable: leaves out the built configurations of that tile width).
// Unset keys keep their defaults; a bad key or value throws kiln::UsageError naming it.
GemmSearchOptions parse_gemm_search_options(const std::string& spec);

// Stage 2's candidates, as indices into stage 1's ranking (`screened`, the candidates'
// configurations fastest first): the fastest candidate of each configuration (tile, cluster,
// kernel), fastest configuration first, until `count` are chosen; when there are fewer
// configurations than `count`, then the fastest of the others. Why: stage 1's bursts of 2 launches
// share one clock among ~250 candidates, so a kernel's own power draw does not cost it there; on
// 8192^3 its top 6 were 6 schedules of two power-hungry configurations (128x320 coop-n, 256x192
// coop 1x2) and the configuration that the table timed 5% faster (128x192 2x1 ping-pong) never
// reached stage 2 (docs/results/2026-12-01-search-race/). Every configuration the table found best
// was among stage 1's 6 fastest configurations.
std::vector<std::size_t> diverse_finalists(const std::vector<overlap::GemmConfig>& screened,
                                           std::size_t count);

// Stage 3's candidates among stage 2's finalists (`kernels`: their kernel schedules, fastest
// first): the `kept` fastest, then the fastest of each kernel schedule that none of those has.
// Why: stage 2's blocks spread by 4% on short kernels, while stage 3 orders schedules differently
// under the sustained-load clock; at 1000x8192x8192 one run's stage 2 put only cooperative tiles
// in its top 4, and the ping-pong 128x128 that earlier runs picked (1.6-1.9% behind cuBLAS,
// against 3.5% for the cooperative pick) was never timed under sustained load
// (docs/results/2026-12-02b-epilogue/). Fewer than 2 kept: none (no stage 3).
std::vector<std::size_t> sustained_finalists(const std::vector<overlap::KernelSchedule>& kernels,
                                             std::size_t kept);

// Stage 3's pick among near-ties (`us`: medians, `bytes`: modelled DRAM operand traffic,
// overlap::modeled_operand_bytes): of the candidates within `tolerance` (a fraction) of the
// fastest, the one with the least traffic if that is at least 10% below the fastest's; else the
// fastest. Why: stage 3's interleaved blocks share one clock, so a kernel's own DRAM traffic shows
// there only in part; run alone at sustained load on one H200, the same 128x144 tile at the same
// cycles took 2-5% longer in an order that read 1.1 GB than in one that read 0.87 GB, at
// 4096x8192x8192 (docs/results/2026-12-03e-kblock-trace/). Throws kiln::UsageError for empty
// or unequal inputs.
std::size_t least_traffic_near_tie(const std::vector<double>& us, const std::vector<double>& bytes,
                                   double tolerance);
// The tolerance the search gives it: stage 3's medians spread by 1-2% between runs.
inline constexpr double kTrafficTieTolerance = 0.01;

// How many operand sets rotate so that their bytes exceed twice the L2 (at most 8, at least 1).
int rotated_input_sets(std::size_t operand_bytes, std::size_t l2_bytes);

// Times the candidates for C = A·op(B) of `shape` (A and B device matrices of `dtype` in
// `layout`) and returns them fastest first: stage 3's first, then the other finalists, then the
// rest, each part by the median of the stage that timed it. Stage 3 adds a copy of each of its
// candidates with the balanced CTA cap (options.balanced_cap, `cap=N` in candidate_name) and of
// each ping-pong one with claimed tiles (options.claimed, `scheduler=claimed`), so the
// list can hold more entries than enumerated candidates and more finalists than
// options.finalists. Throws kiln::UsageError when no candidate can run the shape, naming each
// one's reason.
std::vector<GemmCandidate> search_gemm_configs(const overlap::GemmShape& shape, core::DType dtype,
                                               overlap::WeightLayout layout, const void* a,
                                               const void* b, const GemmSearchOptions& options,
                                               cudaStream_t stream);

}  // namespace kiln::tune

// The tuner's measurements on the GPU (issue 4), per rank and collective over the communicator:
// `kiln tune profile` builds a TunerProfile (latency curves of each transport's per-group call,
// GEMM profiles per shape and base plan, the SMs NCCL's kernels hold); `kiln tune validate` and
// `kiln tune compare` time overlap plans. Every time is the median over iterations of the
// per-iteration maximum over ranks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/dtype.hpp"
#include "core/stats.hpp"
#include "overlap/gemm_collective.hpp"
#include "tune/tuner_profile.hpp"

namespace kiln::tune {

// The runtime's values that the tuner reads and writes.
using overlap::GemmCollective;
using overlap::GemmShape;
using overlap::GroupTimeline;
using overlap::OverlapOp;
using overlap::Plan;
using overlap::WeightLayout;

// The base plans the tuner chooses among by default: copy engines with every SM or a cap of 128
// (full waves on power-of-two tile counts), each with swizzle 1 and 8 (the GEMM alone prefers 1,
// the overlap sweep of issue 3 always chose 8), NCCL on the 8 SMs a cap of 124 leaves, and the
// two-phase copy-engine AllReduce (comm=ce2) with cap 0 and 128, swizzle 8, measured only where it
// can run (an AllReduce on a power-of-two world).
std::vector<overlap::Plan> default_base_plans();

struct TuneProfileOptions {
  overlap::OverlapOp op = overlap::OverlapOp::kReduceScatter;
  core::DType dtype = core::DType::kBf16;
  overlap::WeightLayout layout = overlap::WeightLayout::kNK;
  std::vector<overlap::GemmShape> shapes;
  std::vector<overlap::Plan> base_plans;  // partitions ignored
  int warmup = 3;
  int iterations = 10;      // timed runs per curve sample
  int gemm_iterations = 4;  // timed runs per GEMM-profile part and round
  int rounds = 6;           // rounds of a GEMM profile, each ending with one traced run per plan
  // Seconds of back-to-back runs before a GEMM profile is measured: the H200's clock falls from
  // 1980 to 1500-1800 MHz within seconds at its power cap (dmon logs in docs/results/), and a
  // profile taken in a cool burst under-predicts sustained runs by up to ~13%.
  double settle_seconds = 0.5;
  double min_curve_bytes = 64 * 1024.0;  // smallest sampled message
  int points_per_octave = 4;
  bool probe_nccl_sms = true;
  // Per shape, search the signaling GEMM's configurations on rank 0's GPU first
  // (gemm_config_search.hpp) and profile the base plans with the fastest (their cap, raster and
  // swizzle kept; a base plan whose cap is not whole clusters of it keeps its own). Off: the base
  // plans' own configurations. The choices go into the profile's provenance ("gemm_search").
  bool search_gemm = true;
};

// Called on rank 0 with the units of work just done (see estimated_units) and the next step.
using TuneProgress = std::function<void(double units, const std::string& step)>;

// Units of work of a profile, for the progress bar: one per curve sample, 20 per GEMM profile.
double profile_units(const TuneProfileOptions& options, int curve_count, int curve_points);

// The message sizes a curve samples: min_bytes to max_bytes, points_per_octave per doubling,
// each rounded to a multiple of `granule` (a tile's bytes), without repeats.
std::vector<double> curve_sizes(double min_bytes, double max_bytes, int points_per_octave,
                                double granule);

class OverlapTimer;

// Collective over `comm`.
tune::TunerProfile measure_tuner_profile(comm::Communicator& comm,
                                         const TuneProfileOptions& options,
                                         const TuneProgress& progress);

// The GEMM profile of the timer's shape under `base` (one group per wave): GEMM alone, GEMM
// beside its collectives (traced), launch overhead, reorder, and the collectives' slowdown against
// `profile`'s curve for the plan (1 when the profile has none yet). Collective.
tune::GemmProfile measure_gemm_profile(OverlapTimer& timer, const tune::TunerProfile& profile,
                                       const overlap::Plan& base,
                                       const TuneProfileOptions& options);
// The same for several base plans, all timed interleaved in the same rounds (settled first).
std::vector<tune::GemmProfile> measure_gemm_profiles(OverlapTimer& timer,
                                                     const tune::TunerProfile& profile,
                                                     const std::vector<overlap::Plan>& bases,
                                                     const TuneProfileOptions& options);

// Runs and times overlap plans of one shape on fresh random inputs, with NCCL communicators
// limited to the SMs each plan leaves free (shared between plans that leave as many).
class OverlapTimer {
 public:
  OverlapTimer(comm::Communicator& comm, overlap::OverlapOp op, core::DType dtype,
               overlap::WeightLayout layout, const overlap::GemmShape& shape);
  ~OverlapTimer();
  OverlapTimer(const OverlapTimer&) = delete;
  OverlapTimer& operator=(const OverlapTimer&) = delete;

  // A GemmCollective for `plan` on this timer's communicators.
  std::unique_ptr<overlap::GemmCollective> make(const overlap::Plan& plan, bool trace);
  enum class Part { kFull, kWithoutReorder, kGemmOnly };
  struct Variant {
    overlap::GemmCollective* op = nullptr;
    Part part = Part::kFull;
  };
  // The variants interleaved over `rounds`, each round back to back on the GPU (the variants in
  // turn, starting one later every round; `warmup` runs before a variant's samples in the first
  // round, 2 after; `per_round` timed runs, each between two events) with one host wait and one
  // max-over-ranks reduction per round, so that the chip runs them as a training step would, not
  // with an idle gap after every few samples. `between_rounds(r)` runs after round r's wait.
  std::vector<core::TimingStats> time_variants(
      const std::vector<Variant>& variants, int warmup, int per_round, int rounds,
      const std::function<void(int round)>& between_rounds = {});
  core::TimingStats time(overlap::GemmCollective& op, Part part, int warmup, int iterations);
  // Runs `op` back to back for about `seconds` (the same count on every rank), untimed.
  void settle(overlap::GemmCollective& op, double seconds);
  // `plans` interleaved over `rounds` (clock drift hits them alike); samples pooled per plan.
  std::vector<core::TimingStats> time_interleaved(const std::vector<overlap::Plan>& plans,
                                                  Part part, int warmup, int iterations,
                                                  int rounds);
  // Runs `op` (traced: constructed with trace) once and returns this rank's timeline.
  std::vector<overlap::GroupTimeline> traced_timeline(overlap::GemmCollective& op);
  const overlap::GemmShape& shape() const { return shape_; }
  // Seconds time_interleaved() settles the chip for before it samples (see settle_seconds).
  void set_settle_seconds(double seconds) { settle_seconds_ = seconds; }
  double settle_seconds() const { return settle_seconds_; }
  comm::Communicator& comm() { return comm_; }

 private:
  void enqueue(overlap::GemmCollective& op, Part part);

  comm::Communicator& comm_;
  overlap::OverlapOp op_;
  core::DType dtype_;
  overlap::WeightLayout layout_;
  overlap::GemmShape shape_;
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
  overlap::LimitedCommunicatorPool limited_;
  double settle_seconds_ = 0.5;
};

// One GEMM profile as timed variants (GEMM alone, without reorder, full; one group per wave) plus
// a traced run, so that callers can interleave it with other runs in the same rounds (the same
// clock mix): time variants() with OverlapTimer::time_variants, call trace_once() between rounds,
// then finish() with the three variants' timings. Collective.
class GemmProfileRun {
 public:
  GemmProfileRun(OverlapTimer& timer, const tune::TunerProfile& profile, const overlap::Plan& base);
  ~GemmProfileRun();
  GemmProfileRun(const GemmProfileRun&) = delete;
  GemmProfileRun& operator=(const GemmProfileRun&) = delete;
  // { GEMM alone, without reorder, full } one group per wave, then, from 2 waves on, the coarse
  // partition without reorder (tune::coarse_partition: the second point of the group-cost fit).
  std::vector<OverlapTimer::Variant> variants();
  void trace_once();
  tune::GemmProfile finish(std::span<const core::TimingStats> stats);
  overlap::GemmCollective& op() { return *op_; }

 private:
  OverlapTimer& timer_;
  const tune::TunerProfile& profile_;
  overlap::Plan plan_;
  std::unique_ptr<overlap::GemmCollective> op_, traced_, coarse_;
  std::optional<tune::LatencyCurve> curve_;
  std::vector<double> gemm_ends_, comm_ends_, slowdowns_;
};

}  // namespace kiln::tune

// The wave-group tuner's offline profiles and the plan it picks from them (issue 4). A profile is
// measured once per machine setting (device, world size, operation, dtype) by `kiln tune profile`:
// the latency curve of each transport's per-group call, the GEMM's duration per shape and base
// plan with the collectives running beside it, and how many SMs NCCL's kernels hold. From it the
// tuner predicts every allowed partition of every base plan (wave_predictor.hpp) and keeps the
// fastest, in well under a millisecond and without a GPU. Host logic only.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "overlap/gemm_shape.hpp"
#include "overlap/plan.hpp"
#include "tune/wave_predictor.hpp"

namespace kiln::tune {

// The runtime's values that the tuner reads and writes.
using overlap::GemmShape;
using overlap::LaunchGeometry;
using overlap::Plan;
using overlap::ScheduleOptions;
using overlap::TileShape;

// The latency of one group's communication as the runtime makes it, against the group's slot
// bytes per rank (the x axis of wave_bytes()): comm=ce, the copies of the group to every peer;
// comm=ce2 (AllReduce), both copy-engine phases with the owner's sum between them; comm=nccl, one
// ReduceScatter/AllReduce call on a communicator limited to `nccl_ctas` CTAs (0: NCCL's default
// communicator, no limit: the serial plan's call, serial_candidate()).
struct TransportCurve {
  std::string transport;  // "ce" | "ce2" | "nccl"
  int nccl_ctas = 0;      // nccl: the CTA limit (the SMs the GEMM's cap leaves), 0 none; ce: 0
  std::vector<double> bytes;
  std::vector<double> us;  // median over iterations of the max over ranks
  LatencyCurve curve() const;
};

// One shape under one base plan (a plan without its partition).
struct GemmProfile {
  GemmShape shape;
  std::string base_plan;           // to_string() of the plan with groups=each
  LaunchGeometry launch;           // as CUTLASS launched it
  double gemm_alone_us = 0.0;      // the signaling GEMM alone (no signal, no communication)
  double gemm_with_comm_us = 0.0;  // its start to its last tile, one group per wave, comm beside it
  // Event-timed run without reorder (one group per wave) minus the model's prediction of that same
  // run: the launch and stream-join costs plus what the model misses for this shape, so that the
  // prediction of the profiled partition equals its measurement and only the differences between
  // partitions come from the model. (Profiles before 2026-11-23 run 5 subtracted the traced end of
  // the last communication instead; that left offsets of -18..+12% per shape on 2xH200 AllReduce.)
  double overhead_us = 0.0;
  double traced_comm_end_us = -1.0;  // that run's traced last communication end; < 0: not recorded
  double reorder_us = 0.0;  // full run minus run without reorder (the same for every partition)
  // Median over the groups of that traced run of (communication end - start) / the curve's
  // latency for the group's bytes: how much slower the collective runs beside the GEMM.
  double comm_slowdown = 1.0;
  // What each group's communication costs beside the GEMM on top of the slowed curve
  // (WaveProfile::group_seconds), fitted from two measured partitions (fit_group_cost); 0 in
  // profiles before 2026-11-27.
  double group_cost_us = 0.0;
  // The two measured runs the model is anchored at and fitted to (without the reorder): every
  // wave its own group, and the coarse partition (tune::coarse_partition). Recorded so that a
  // changed fit can be judged offline (kiln tune replay); < 0: not recorded (profiles before
  // 2026-11-28, or no coarse run).
  double anchor_per_wave_us = -1.0, anchor_coarse_us = -1.0;
};

// The group cost and overhead that make the model reproduce two measured runs of one base plan,
// one group per wave (`per_wave_us`) and a coarser `coarse` partition (`coarse_us`), both without
// the reorder: the overhead is common to both, so the difference between the two runs fixes the
// cost per group (a crossing found by bisection; the gap mostly widens with the cost, since the
// per-wave run has more groups), and the per-wave run then fixes the overhead. The cost is clamped
// to [0, 2 ms]: a coarse partition measured slower than the model allows gets none. `wave`'s own
// group_seconds is ignored. Throws kiln::UsageError unless `coarse` has fewer groups than waves.
struct GroupCostFit {
  double group_cost_us = 0.0;
  double overhead_us = 0.0;
};
GroupCostFit fit_group_cost(const WaveProfile& wave, const LatencyCurve& curve, double per_wave_us,
                            const std::vector<int>& coarse, double coarse_us);
// The coarse partition `kiln tune profile` measures beside one group per wave: groups of about
// four waves (fewer groups than waves from 2 waves on; empty below).
std::vector<int> coarse_partition(int waves);

// `kiln tune profile`'s SM probe: SMs a running NCCL kernel held, per communicator CTA limit.
struct NcclSmMeasurement {
  int ctas_limit = 0;  // 0: NCCL's default communicator
  int sms_held = 0;
  bool overlapped = false;  // the probe saw the NCCL kernel running (else sms_held means nothing)
};

struct TunerProfile {
  static constexpr int kVersion = 1;
  std::string device;       // hardware-profile key, e.g. "h200-sxm"
  std::string device_name;  // CUDA's name
  int world = 1;
  std::string op;     // "rs" | "ar"
  std::string dtype;  // "bf16" | "fp16"
  std::string layout = "nk";
  int sms = 0;
  std::vector<TransportCurve> curves;
  std::vector<GemmProfile> gemms;
  std::vector<NcclSmMeasurement> nccl_sms;
  nlohmann::json provenance = nlohmann::json::object();

  // The curve a plan's groups travel on: comm=ce and comm=ce2, their copy-engine curves; comm=nccl,
  // the curve of the communicator limited to device SMs minus the plan's grid. nullptr when not
  // profiled (profiles before 2026-11-28 have no ce2 curve).
  const TransportCurve* curve_for(const Plan& plan, const LaunchGeometry& launch) const;
  // NCCL's default communicator, no CTA limit (what the serial plan's one call runs on); nullptr
  // when not profiled (profiles before 2026-11-27 have none).
  const TransportCurve* unlimited_nccl_curve() const;
  // Every distinct base plan among the GEMM profiles, in first-seen order.
  std::vector<std::string> base_plans() const;
  // The base plans the tuner weighs for `shape`: those measured on this very shape when there
  // are any (measured beats extrapolated: a base scaled from another shape inherits that shape's
  // overheads and slowdown, and the minimum over many such guesses picks the most optimistic;
  // on 4xH200 an AllReduce plan scaled from 4096x8192x2048 was predicted 2221 us at
  // 16384x8192x4096 and ran 2859, slower than serial, 2026-11-27), else every base plan. The
  // tuner falls back to every base plan where the shape's own give no candidate (no curve, no
  // cap-0 base for the serial plan).
  std::vector<std::string> base_plans_for(const overlap::GemmShape& shape) const;

  nlohmann::json to_json() const;
  // Throws kiln::UsageError naming `source` and the field that is missing or wrong.
  static TunerProfile from_json(const nlohmann::json& json, const std::string& source);
};

// The plan without its partition, as GemmProfile::base_plan spells it.
std::string base_plan_string(const Plan& plan);

// How the waves are grouped.
enum class PartitionStrategy {
  kPredictive,       // the predicted-fastest allowed partition (best_partition)
  kEqualSize,        // the predicted-fastest of the k-equal-groups partitions, 2 <= k < T
  kOneWavePerGroup,  // every wave its own group
};
std::string strategy_name(PartitionStrategy strategy);  // "predictive", "equal", "per-wave"

// One base plan's best prediction for a shape.
struct PlanCandidate {
  Plan plan;
  Prediction prediction;      // GEMM start to last communication done
  double predicted_us = 0.0;  // overhead + prediction + reorder: the full operation
  double overhead_us = 0.0, reorder_us = 0.0;  // the two parts no partition changes
  std::string gemm_source;  // "profiled" or "scaled from MxNxK" (nearest profiled shape)
  // Whether the model describes the base plan's measured run (model_describes_run); tune_plan
  // never chooses a candidate for which it does not.
  bool model_fits = true;
};

// Whether the wave model describes a base plan's profiled run: its anchor correction (overhead_us,
// the measured run minus the model's prediction of it) is no larger than the GEMM alone. Where it
// is larger, the group latencies beside the GEMM are not the curve's times a constant slowdown,
// and the model's predictions for other partitions are not to be trusted. On 4xH200 (2026-11-28)
// 34 of the 36 comm=ce2 base plans had corrections of -0.36 to -295 ms (their groups beside the
// GEMM ran 1.5-25x the curve alone: the owner's sum gets the few SMs the GEMM leaves), and the
// tuner's ce2 plans ran 0.73-0.96x the serial baseline. The comm=ce and nccl corrections of that
// profile stayed within 0.98 of the GEMM alone (the built-in H200 profiles' within 0.66).
bool model_describes_run(const GemmProfile& gemm);

// One GEMM profile as a profile file's "gemms" entry holds it, and back (`where` names it in
// errors).
nlohmann::json gemm_profile_to_json(const GemmProfile& gemm);
GemmProfile gemm_profile_from_json(const nlohmann::json& entry, const std::string& where);

struct TunedPlan {
  PlanCandidate chosen;
  std::vector<PlanCandidate>
      considered;  // every base plan (and the serial plan), the chosen one included
  std::vector<std::string> excluded;  // base plans left out, each with why
};

// Overlap is not always worth it: where every transport's bandwidth beside the GEMM is well below
// NCCL's own (AllReduce at 4 ranks on 4xH200, where copy engines send w/2 times a ring's bytes and
// NCCL on the 8 SMs a cap leaves runs at half its rate: docs/results/2026-11-27-h200-x4/), the
// fastest plan is the serial one: the GEMM on every SM, then one collective of the whole output on
// NCCL's default communicator (ReduceScatter: then the reorder). As a plan that is comm=nccl cap=0
// with one group (the runtime then calls NCCL once, unlimited, after the last tile; an AllReduce
// runs as cuBLAS + NCCL on the row-major output, GemmCollective::run_serial_baseline). Predicted
// as the GEMM alone (profiled, or scaled like wave_profile_for) + the unlimited curve at the
// output's bytes per rank (+ the reorder for ReduceScatter); of the profile's cap-0 base plans,
// the GEMM configuration with the smallest total.
// `config`: only that GEMM configuration (for predict_plan of a given serial plan). nullopt when
// the profile has no unlimited NCCL curve or no cap-0 base plan (with that configuration).
std::optional<PlanCandidate> serial_candidate(const TunerProfile& profile, const GemmShape& shape,
                                              const overlap::GemmConfig* config = nullptr);
// Whether a plan is the serial form above (overlap/plan.hpp).
using overlap::is_serial_plan;

// The wave profile of `shape` under a base plan: profiled, or scaled from the nearest profiled
// shape with that base plan (the time of a wave, grid_ctas tiles of BM x BN x K, taken as
// proportional to K; reorder time to M x N). `gemm` receives the profile used (scaled), `source`
// "profiled" or "scaled from MxNxK". Throws kiln::UsageError when no shape has this base plan.
WaveProfile wave_profile_for(const TunerProfile& profile, const GemmShape& shape, const Plan& base,
                             GemmProfile* gemm = nullptr, std::string* source = nullptr);

// The wave profile of one measured GEMM profile as it stands (no lookup, no scaling).
WaveProfile wave_profile_of(const TunerProfile& profile, const GemmProfile& gemm, const Plan& base);

// The best partition of each base plan in the profile for `shape` by `strategy`, and the base plan
// predicted fastest overall; with kPredictive and `with_serial`, the serial plan competes too (and
// wins where no overlap plan is predicted faster). Throws kiln::UsageError when the profile has no
// GEMM or no curve for any base plan.
TunedPlan tune_plan(const TunerProfile& profile, const GemmShape& shape,
                    const PartitionLimits& limits,
                    PartitionStrategy strategy = PartitionStrategy::kPredictive,
                    bool with_serial = true);

// The predicted full-operation time of a given plan (partition included); a serial plan
// (is_serial_plan) whose base the profile never measured is predicted by serial_candidate().
PlanCandidate predict_plan(const TunerProfile& profile, const GemmShape& shape, const Plan& plan);

// The profile as `kiln tune profile` prints it: curves (sampled), NCCL's SMs, per-shape GEMM
// figures.
std::string describe_profile(const TunerProfile& profile);

}  // namespace kiln::tune

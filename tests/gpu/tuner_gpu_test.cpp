// The tuner on a GPU: the host launch geometry equals CUTLASS's kernel geometry; the SM probe
// finds every SM free when nothing else runs and finds the SMs a resident kernel holds; a small
// profile measures sane values (positive, curves non-decreasing at the large end) and plans from
// it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "comm/communicator.hpp"
#include "comm/sm_probe.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/plan.hpp"
#include "rank_failures.hpp"
#include "tune/tune_measure.hpp"

namespace kiln {
namespace {

int check_geometry(const comm::RankInfo&) {
  int failures = 0;
  const int sms = overlap::current_device_sms();
  for (const overlap::GemmConfig& config : overlap::built_gemm_configs()) {
    auto kernel =
        overlap::make_signaling_gemm(core::DType::kBf16, overlap::WeightLayout::kNK, config);
    for (const overlap::GemmShape shape : {overlap::GemmShape{4096, 8192, 8192},
                                           {16384, 16384, 2048},
                                           {300, 264, 136},
                                           {6144, 8192, 4096},
                                           {1280, 2560, 64},
                                           {8192, 4096, 14336},
                                           {128, 256, 64},
                                           {5000, 8192, 8192}}) {
      for (const int cap : {0, 128, 124, 120, 8, 2, 131, 7}) {
        if (cap % config.cluster.size() != 0) continue;
        for (const int swizzle : {1, 2, 4, 8, 16, 32}) {
          for (const auto& [along_n, claimed] :
               {std::pair{true, false}, {false, false}, {true, true}, {false, true}}) {
            // Claimed tiles (ping-pong only): no swizzle padding in either (band_order.hpp).
            if (claimed && !overlap::is_pingpong(config.kernel)) continue;
            const overlap::ScheduleOptions s{cap, along_n, swizzle, claimed};
            const overlap::LaunchGeometry k = kernel->geometry(shape, s, sms);
            const overlap::LaunchGeometry h = overlap::host_launch_geometry(shape, config, s, sms);
            if (k.grid_ctas != h.grid_ctas || k.slots != h.slots || k.tiles_m != h.tiles_m ||
                k.tiles_n != h.tiles_n) {
              std::fprintf(stderr,
                           "geometry %dx%dx%d %s cap %d swizzle %d raster %s%s: kernel "
                           "grid %d slots %d, host grid %d slots %d\n",
                           shape.m, shape.n, shape.k, overlap::gemm_config_name(config).c_str(),
                           cap, swizzle, along_n ? "n" : "m", claimed ? " claimed" : "",
                           k.grid_ctas, k.slots, h.grid_ctas, h.slots);
              ++failures;
            }
          }
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

TEST(TunerGpu, HostLaunchGeometryMatchesTheKernel) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(comm::launch_local_ranks(1, check_geometry), 0);
}

int check_probe_alone(const comm::RankInfo&) {
  core::Stream stream;
  const int sms = overlap::current_device_sms();
  const comm::SmProbeSamples samples = comm::run_sm_probe(stream, 100'000);
  const comm::SmProbeResult r = comm::count_probe(samples, sms, 20'000);
  std::fprintf(stderr, "probe alone: %d of %d SMs at once, spread %.1f us\n", r.started_at_once,
               sms, r.first_wave_spread_us);
  return r.held_elsewhere == 0 ? 0 : 1;
}

TEST(TunerGpu, SmProbeFindsEverySmFreeWhenNothingElseRuns) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(comm::launch_local_ranks(1, check_probe_alone), 0);
}

int check_small_profile(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  tune::TuneProfileOptions o;
  o.shapes = {{1024, 2048, 1024}, {2048, 2048, 2048}};
  overlap::Plan ce;
  ce.copy_engine = true;
  overlap::Plan nccl;
  nccl.schedule.cta_cap = 120;
  o.base_plans = {ce, nccl};
  o.iterations = 5;
  o.points_per_octave = 2;
  const tune::TunerProfile p = tune::measure_tuner_profile(comm, o, nullptr);
  kiln::testing::RankFailures fail(comm.rank());
  // Copy engines, NCCL on the 12 SMs cap 120 leaves (swizzle 8 pads both shapes to 128 tiles,
  // so both grids are 120 CTAs), and NCCL unlimited (the serial plan's call).
  if (p.curves.size() != 3 || p.curves[0].transport != "ce" || p.curves[1].nccl_ctas != 12 ||
      p.curves[2].transport != "nccl" || p.curves[2].nccl_ctas != 0 ||
      p.unlimited_nccl_curve() != &p.curves[2])
    fail("expected a ce curve, an nccl curve of 12 CTAs and an unlimited nccl curve");
  for (const auto& c : p.curves) {
    for (double us : c.us)
      if (!(us > 0)) fail("non-positive latency on curve " + c.transport);
    // One rank sends nothing: only with peers must a large message take longer than a small one.
    // Ranks sharing a GPU are time-sliced by it (NCCL between them over sockets): a small
    // message's latency is then the other process's time slice, which can exceed a large one's
    // (seen in docs/results/2026-11-24-gemm-configs run 6), so the order is checked only for ranks
    // with a GPU each.
    if (comm.size() > 1 && info.ranks_per_gpu == 1 && c.us.back() < c.us.front())
      fail("the largest message is faster than the smallest on " + c.transport);
  }
  if (p.gemms.size() != 4) fail("expected 2 shapes x 2 base plans");
  for (const auto& g : p.gemms) {
    if (!(g.gemm_alone_us > 0) || !(g.gemm_with_comm_us > 0) || g.reorder_us < 0)
      fail("GEMM profile of " + g.base_plan + " not positive");
  }
  for (const auto& m : p.nccl_sms) {
    std::fprintf(stderr, "NCCL limit %d: held %d SMs (overlapped %d)\n", m.ctas_limit, m.sms_held,
                 m.overlapped ? 1 : 0);
    if (m.overlapped && m.ctas_limit > 0 && m.sms_held > m.ctas_limit)
      fail("NCCL held more SMs than its CTA limit");
  }
  const tune::TunedPlan tuned = tune::tune_plan(p, {1536, 2048, 1536}, {});
  if (!(tuned.chosen.predicted_us > 0)) fail("no positive prediction for an unprofiled shape");
  // The serial plan is among the candidates, predicted from the measured unlimited curve.
  const auto serial =
      std::find_if(tuned.considered.begin(), tuned.considered.end(),
                   [](const tune::PlanCandidate& c) { return tune::is_serial_plan(c.plan); });
  if (serial == tuned.considered.end() || !(serial->predicted_us > 0))
    fail("no serial candidate with a positive prediction");
  const tune::TunerProfile back = tune::TunerProfile::from_json(p.to_json(), "round trip");
  if (back.to_json() != p.to_json()) fail("profile JSON does not round-trip");
  return fail.exit_code();
}

// comm=ce2 in a profile: its own curve (both copy-engine phases and the owner's sum, per group
// alone), its GEMM profile beside the comm=ce one, and a prediction the tuner can choose; a base
// plan that cannot run (comm=ce2 for a ReduceScatter) is left out, not measured.
int check_two_phase_profile(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  kiln::testing::RankFailures fail(comm.rank());
  tune::TuneProfileOptions o;
  o.op = overlap::OverlapOp::kAllReduce;
  o.shapes = {{2048, 2048, 1024}};
  overlap::Plan ce2;
  ce2.copy_engine = true;
  ce2.two_phase = true;
  ce2.schedule.cta_cap = 128;
  ce2.schedule.swizzle = 8;
  overlap::Plan ce;
  ce.copy_engine = true;
  o.base_plans = {ce2, ce};
  o.iterations = 5;
  o.points_per_octave = 2;
  o.search_gemm = false;
  const tune::TunerProfile p = tune::measure_tuner_profile(comm, o, nullptr);
  for (const auto& c : p.curves)
    for (double us : c.us)
      if (!(us > 0)) fail("non-positive latency on curve " + c.transport);
  const tune::TunedPlan tuned = tune::tune_plan(p, o.shapes[0], {});
  const auto two_phase =
      std::find_if(tuned.considered.begin(), tuned.considered.end(),
                   [](const tune::PlanCandidate& c) { return c.plan.two_phase; });
  const auto ce2_excluded = std::count_if(
      tuned.excluded.begin(), tuned.excluded.end(),
      [](const std::string& why) { return why.find("comm=ce2") != std::string::npos; });
  if (comm.size() < 3) {
    // Two ranks: comm=ce2 moves no fewer bytes than comm=ce, so it is neither measured nor chosen.
    if (p.curves.size() != 2 || p.curves[0].transport != "ce" ||
        p.unlimited_nccl_curve() == nullptr)
      fail("expected a ce curve and the unlimited nccl curve, no ce2 curve");
    if (p.gemms.size() != 1) fail("expected 1 shape x 1 base plan (comm=ce only)");
    if (two_phase != tuned.considered.end()) fail("a comm=ce2 candidate at two ranks");
  } else {
    if (p.curves.size() != 3 || p.curves[0].transport != "ce2" || p.curves[1].transport != "ce" ||
        p.unlimited_nccl_curve() == nullptr)
      fail("expected a ce2 curve, a ce curve and the unlimited nccl curve");
    if (p.gemms.size() != 2) fail("expected 1 shape x 2 base plans");
    // The tuner considers it, or says why not (its model does not describe the profiled run).
    if (two_phase != tuned.considered.end() ? !(two_phase->predicted_us > 0) : ce2_excluded != 1)
      fail("comm=ce2 neither a candidate with a positive prediction nor excluded with a reason");
    for (const auto& g : p.gemms) {
      if (g.base_plan.find("comm=ce2") == std::string::npos) continue;
      const tune::PlanCandidate predicted =
          tune::predict_plan(p, o.shapes[0], overlap::parse_plan(g.base_plan, "profiled ce2"));
      if (!(predicted.predicted_us > 0)) fail("no positive prediction for the profiled ce2 plan");
    }
  }
  const tune::TunerProfile back = tune::TunerProfile::from_json(p.to_json(), "round trip");
  if (back.to_json() != p.to_json()) fail("profile JSON does not round-trip");
  // The same base plans for a ReduceScatter: comm=ce2 cannot run one and is not profiled.
  o.op = overlap::OverlapOp::kReduceScatter;
  const tune::TunerProfile rs = tune::measure_tuner_profile(comm, o, nullptr);
  for (const auto& g : rs.gemms)
    if (g.base_plan.find("comm=ce2") != std::string::npos) fail("profiled ce2 for a ReduceScatter");
  for (const auto& c : rs.curves)
    if (c.transport == "ce2") fail("measured a ce2 curve for a ReduceScatter");
  return fail.exit_code();
}

TEST(TunerGpu, TwoPhaseProfileTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(kiln::testing::launch_test_ranks(2, check_two_phase_profile), 0);
}

TEST(TunerGpu, TwoPhaseProfileFourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  EXPECT_EQ(kiln::testing::launch_test_ranks(4, check_two_phase_profile), 0);
}

TEST(TunerGpu, SmallProfileOneRank) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(comm::launch_local_ranks(1, check_small_profile), 0);
}

TEST(TunerGpu, SmallProfileTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(kiln::testing::launch_test_ranks(2, check_small_profile), 0);
}

}  // namespace
}  // namespace kiln

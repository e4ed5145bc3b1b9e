// The signaling GEMM's configurations without a GPU: the built list and the compiled kernels agree
// for every dtype and layout, plans carry a configuration through their text form (the default one
// printed as before, so older plans and profiles still match), and bad configurations and caps
// are refused with the accepted values.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/plain_gemm.hpp"
#include "overlap/plan.hpp"
#include "overlap/signaling_gemm.hpp"
#include "tune/gemm_config_search.hpp"

namespace kiln::overlap {
namespace {

TEST(GemmConfigs, EveryBuiltConfigurationHasAKernelForEveryDtypeAndLayout) {
  std::set<std::string> names;
  for (const GemmConfig& config : built_gemm_configs()) {
    EXPECT_TRUE(names.insert(gemm_config_name(config)).second) << gemm_config_name(config);
    for (const core::DType dtype : {core::DType::kBf16, core::DType::kFp16}) {
      for (const WeightLayout layout : {WeightLayout::kNK, WeightLayout::kKN}) {
        const auto gemm = make_signaling_gemm(dtype, layout, config);
        EXPECT_EQ(gemm->config(), config) << gemm_config_name(config);
        EXPECT_EQ(gemm->dtype(), dtype);
        EXPECT_EQ(gemm->weight_layout(), layout);
      }
    }
  }
  EXPECT_EQ(built_gemm_configs().front(), GemmConfig{});  // the default kernel comes first
}

TEST(GemmConfigs, UnbuiltConfigurationsAreRefusedWithTheList) {
  const GemmConfig pingpong_wide{{128, 256}, {2, 1}, KernelSchedule::kPingpong};
  try {
    (void)make_signaling_gemm(core::DType::kBf16, WeightLayout::kNK, pingpong_wide);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tile=128x256 cluster=2x1 kernel=pingpong: not built"), std::string::npos)
        << what;
    EXPECT_NE(what.find("tile=64x256 cluster=1x1 kernel=pingpong"), std::string::npos) << what;
  }
  EXPECT_THROW((void)make_signaling_gemm(core::DType::kFp32, WeightLayout::kNK, GemmConfig{}),
               UsageError);
}

TEST(GemmConfigs, PlansCarryTheConfigurationInTheirText) {
  const Plan plain = parse_plan("tile=128x256 cap=124 swizzle=8", "--plan");
  EXPECT_EQ(plain.gemm, GemmConfig{});
  EXPECT_EQ(to_string(plain).find("cluster"), std::string::npos);  // default: printed as before
  const Plan pp = parse_plan("tile=64x256 cluster=1x1 kernel=pingpong cap=7", "--plan");
  EXPECT_EQ(pp.gemm, (GemmConfig{{64, 256}, {1, 1}, KernelSchedule::kPingpong}));
  EXPECT_EQ(pp.schedule.cta_cap, 7);
  EXPECT_EQ(parse_plan(to_string(pp), "--plan").gemm, pp.gemm);
  const Plan coop12 = parse_plan("tile=256x128 cluster=1x2", "--plan");
  EXPECT_NE(to_string(coop12).find("cluster=1x2 kernel=coop"), std::string::npos);
  // The split-N kernel's name goes through the plan text and back (run 5 lost it in the parser).
  const Plan split = parse_plan("tile=128x320 cluster=2x1 kernel=coop-n", "--plan");
  EXPECT_EQ(split.gemm, (GemmConfig{{128, 320}, {2, 1}, KernelSchedule::kCooperativeSplitN}));
  EXPECT_NE(to_string(split).find("kernel=coop-n"), std::string::npos);
  EXPECT_EQ(parse_plan(to_string(split), "--plan").gemm, split.gemm);
}

// Ping-pong-swap runs CUTLASS's ping-pong kernel on Cᵀ: its name and plan text are C's tile and
// cluster, its scheduler sees the transposed problem (the same grid and slot count as the
// unswapped kernel of the transposed tile on the transposed shape), and the tile counts kiln keeps
// (slot_of_tile, the slot layout) are C's.
TEST(GemmConfigs, SwappedKernelsScheduleTheTransposedProblem) {
  using enum KernelSchedule;
  const GemmConfig swapped{{144, 128}, {1, 2}, kPingpongSwapAB};
  const Plan plan = parse_plan("tile=144x128 cluster=1x2 kernel=pingpong-swap cap=8", "--plan");
  EXPECT_EQ(plan.gemm, swapped);
  EXPECT_NE(to_string(plan).find("kernel=pingpong-swap"), std::string::npos) << to_string(plan);
  EXPECT_EQ(parse_plan(to_string(plan), "--plan").gemm, swapped);
  EXPECT_EQ(gemm_config_name(swapped), "tile=144x128 cluster=1x2 kernel=pingpong-swap");

  const SchedulerFrame f = scheduler_frame({5000, 8192, 4096}, swapped);
  EXPECT_TRUE(f.swapped);
  EXPECT_EQ(f.problem.m, 8192);
  EXPECT_EQ(f.problem.n, 5000);
  EXPECT_EQ(f.problem.k, 4096);
  EXPECT_EQ(f.tile, (TileShape{128, 144}));
  EXPECT_EQ(f.cluster, (ClusterShape{2, 1}));
  const GemmConfig transposed{{128, 144}, {2, 1}, kPingpong};
  const SchedulerFrame same = scheduler_frame({5000, 8192, 4096}, transposed);
  EXPECT_FALSE(same.swapped);
  EXPECT_EQ(same.problem.m, 5000);
  EXPECT_EQ(same.tile, transposed.tile);
  EXPECT_EQ(same.cluster, transposed.cluster);

  for (const GemmShape shape :
       {GemmShape{5000, 8192, 8192}, {16384, 4096, 3584}, {300, 264, 136}, {1000, 8192, 8192}}) {
    for (const int cap : {0, 128, 8}) {
      for (const int swizzle : {1, 4, 16}) {
        for (const bool along_n : {true, false}) {
          const ScheduleOptions s{cap, along_n, swizzle};
          const LaunchGeometry g = host_launch_geometry(shape, swapped, s, 132);
          const LaunchGeometry t =
              host_launch_geometry({shape.n, shape.m, shape.k}, transposed, s, 132);
          EXPECT_EQ(g.grid_ctas, t.grid_ctas) << shape_name(shape);
          EXPECT_EQ(g.slots, t.slots) << shape_name(shape);
          EXPECT_EQ(g.tiles_m, (shape.m + 143) / 144);
          EXPECT_EQ(g.tiles_n, (shape.n + 127) / 128);
        }
      }
    }
  }
  // The shape the tile is for: 35 x 64 tiles in 17 waves of 132 (every 128-row tile takes 16 at
  // 95% busy; docs/research/gemm-tile-heights-for-the-last-wave.md).
  const LaunchGeometry m5000 = host_launch_geometry({5000, 8192, 8192}, swapped, {}, 132);
  EXPECT_EQ(m5000.tiles_m * m5000.tiles_n, 35 * 64);
  EXPECT_EQ(m5000.waves(), 17);
}

// `kiln overlap gemm` times the CUTLASS-epilogue twin only where one is built; asking for another
// is a usage error (the swapped kernel's twin would need a column-major D).
TEST(GemmConfigs, PlainTwinsExistWhereTheBenchAsksForThem) {
  using enum KernelSchedule;
  for (const GemmConfig& config : built_gemm_configs()) {
    const bool twin = has_plain_cutlass_twin(core::DType::kBf16, WeightLayout::kNK, config);
    EXPECT_EQ(twin, config.kernel != kCooperativeSplitN && config.kernel != kPingpongSwapAB)
        << gemm_config_name(config);
    if (twin) {
      EXPECT_NO_THROW((void)make_plain_cutlass_gemm(core::DType::kBf16, WeightLayout::kNK, config));
    } else {
      EXPECT_THROW((void)make_plain_cutlass_gemm(core::DType::kBf16, WeightLayout::kNK, config),
                   UsageError);
    }
    EXPECT_FALSE(has_plain_cutlass_twin(core::DType::kFp16, WeightLayout::kNK, config));
    EXPECT_FALSE(has_plain_cutlass_twin(core::DType::kBf16, WeightLayout::kKN, config));
  }
  EXPECT_FALSE(has_plain_cutlass_twin(core::DType::kBf16, WeightLayout::kNK,
                                      GemmConfig{{128, 256}, {2, 1}, kPingpong}));  // not built
}

TEST(GemmConfigs, BadConfigurationsAndCapsNameTheField) {
  const auto message = [](const std::string& text) {
    try {
      (void)parse_plan(text, "--plan");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("kernel=fast").find("kernel=fast: accepted coop, coop-n, pingpong"),
            std::string::npos);
  EXPECT_NE(message("cluster=2").find("cluster=2: expected MxN"), std::string::npos);
  EXPECT_NE(message("tile=128x256 cluster=4x1").find("not built"), std::string::npos);
  EXPECT_NE(message("tile=128x256 cap=7").find("cap=7: must be a multiple of 2"),
            std::string::npos);
  EXPECT_EQ(message("tile=128x256 cluster=1x1 cap=7"), "no error");
}

TEST(GemmConfigs, HostGeometryLaunchesWholeClusters) {
  for (const GemmConfig& config : built_gemm_configs()) {
    for (const int cap : {0, 124, 8}) {
      for (const bool along_n : {true, false}) {
        const LaunchGeometry g =
            host_launch_geometry({4096, 8192, 2048}, config, {cap, along_n, 2}, 132);
        EXPECT_EQ(g.grid_ctas % config.cluster.size(), 0) << gemm_config_name(config);
        EXPECT_LE(g.grid_ctas, cap == 0 ? 132 : cap);
        EXPECT_EQ(g.tiles_m, (4096 + config.tile.m - 1) / config.tile.m);
        EXPECT_GE(g.slots, g.tiles_m * g.tiles_n);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::overlap

namespace kiln::tune {
namespace {

// The search rotates operand copies until they exceed twice the L2, as the same-process script
// does: a small shape timed on one resident pair would hide its tile order's L2 reuse.
TEST(GemmSearchInputs, RotatesEnoughCopiesToExceedTwiceTheL2) {
  const std::size_t l2 = 50u << 20;
  EXPECT_EQ(rotated_input_sets(256u << 20, l2), 1);  // 8192^3 bf16: A + B are 256 MiB
  // 4096x8192x2048 bf16: 48 MiB of operands, 3 sets = 144 MiB > 100 MiB.
  EXPECT_EQ(rotated_input_sets(48u << 20, l2), 3);
  EXPECT_GT(3 * (48u << 20), 2 * l2);
  EXPECT_EQ(rotated_input_sets(1u << 20, l2), 8);  // capped
  EXPECT_EQ(rotated_input_sets(0, l2), 1);
}

}  // namespace
}  // namespace kiln::tune

namespace kiln::tune {
namespace {

// The search options the C API and the same-process script take ("search:key=N,..."): each key
// sets its field, the rest keep their defaults, and bad keys or values are named.
TEST(GemmSearchOptionsText, SetsTheNamedFieldsAndRefusesTheRest) {
  const GemmSearchOptions defaults;
  const GemmSearchOptions o =
      parse_gemm_search_options("max-swizzle=8,finalists=10,sustained=0,sustained-rounds=8");
  EXPECT_EQ(o.swizzles, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(o.finalists, 10);
  EXPECT_EQ(o.sustained, 0);
  EXPECT_EQ(o.sustained_rounds, 8);
  EXPECT_EQ(o.screen_rounds, defaults.screen_rounds);
  EXPECT_EQ(parse_gemm_search_options("").swizzles, defaults.swizzles);
  EXPECT_EQ(parse_gemm_search_options("screen-rounds=5,final-rounds=6").final_rounds, 6);
  const auto message = [](const std::string& spec) {
    try {
      (void)parse_gemm_search_options(spec);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("fastest=1").find("accepted max-swizzle"), std::string::npos);
  EXPECT_NE(message("finalists=0").find("1 <= N <= 1000"), std::string::npos);
  EXPECT_NE(message("finalists=3x").find("finalists=3x"), std::string::npos);
  EXPECT_NE(message("sustained").find("expected sustained=N"), std::string::npos);
  EXPECT_NE(message("max-swizzle=0").find("1 <= N"), std::string::npos);
  EXPECT_NE(message("balanced-cap=2").find("0 <= N <= 1"), std::string::npos);
  EXPECT_EQ(parse_gemm_search_options("balanced-cap=0").balanced_cap, 0);
  EXPECT_EQ(defaults.claimed, 1);
  EXPECT_EQ(parse_gemm_search_options("claimed=0").claimed, 0);
  EXPECT_NE(message("claimed=2").find("0 <= N <= 1"), std::string::npos);
  EXPECT_EQ(defaults.balanced_cap, 1);
  EXPECT_EQ(message("sustained=0"), "no error");
  EXPECT_EQ(defaults.sustained_warmup_ms, 300.0);
  EXPECT_EQ(parse_gemm_search_options("sustained-warmup-ms=0").sustained_warmup_ms, 0.0);
  EXPECT_EQ(parse_gemm_search_options("finalists=9").sustained_warmup_ms, 300.0);
  EXPECT_NE(message("sustained-warmup-ms=5001").find("0 <= N <= 5000"), std::string::npos);
  EXPECT_EQ(parse_gemm_search_options("sustained-per-round=250").sustained_per_round, 250);
  EXPECT_EQ(parse_gemm_search_options("").sustained_per_round, defaults.sustained_per_round);
  EXPECT_NE(message("sustained-per-round=0").find("1 <= N <= 5000"), std::string::npos);
  EXPECT_EQ(parse_gemm_search_options("least-traffic=0").least_traffic, 0);
  EXPECT_EQ(defaults.least_traffic, 1);
  EXPECT_NE(message("least-traffic=2").find("0 <= N <= 1"), std::string::npos);
}

// Stage 3 takes stage 2's `kept` fastest and the fastest of each kernel schedule they lack, in
// stage 2's order; nothing when fewer than 2 are kept (no stage 3).
TEST(SustainedFinalists, TheFastestFewThenTheFastestOfEachMissingSchedule) {
  using enum overlap::KernelSchedule;
  const std::vector<overlap::KernelSchedule> kernels{kCooperative,    kCooperative, kCooperative,
                                                     kCooperative,    kPingpong,    kCooperative,
                                                     kPingpongSwapAB, kPingpong};
  EXPECT_EQ(sustained_finalists(kernels, 4), (std::vector<std::size_t>{0, 1, 2, 3, 4, 6}));
  EXPECT_EQ(sustained_finalists(kernels, 5), (std::vector<std::size_t>{0, 1, 2, 3, 4, 6}));
  EXPECT_EQ(sustained_finalists(kernels, 2), (std::vector<std::size_t>{0, 1, 4, 6}));
  EXPECT_EQ(sustained_finalists(kernels, 8), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sustained_finalists(kernels, 100).size(), kernels.size());
  EXPECT_TRUE(sustained_finalists(kernels, 1).empty());
  EXPECT_TRUE(sustained_finalists(kernels, 0).empty());
  EXPECT_TRUE(sustained_finalists({}, 4).empty());
  // Every schedule already among the fastest: nothing added.
  const std::vector<overlap::KernelSchedule> mixed{kPingpong, kCooperative, kPingpong,
                                                   kCooperative};
  EXPECT_EQ(sustained_finalists(mixed, 2), (std::vector<std::size_t>{0, 1}));
  // A single finalist of two: kept is cut to the finalists.
  EXPECT_EQ(sustained_finalists({kPingpong, kCooperative}, 4), (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(sustained_finalists({kPingpong}, 4).empty());
}

// Stage 2 takes the fastest schedule of each configuration first (stage 1's fastest six can all be
// schedules of one or two configurations), then fills up in stage 1's order.
TEST(DiverseFinalists, TheFastestOfEachConfigurationFirstThenTheRestInOrder) {
  using enum overlap::KernelSchedule;
  const overlap::GemmConfig a{{128, 320}, {2, 1}, kCooperativeSplitN};
  const overlap::GemmConfig b{{256, 192}, {1, 2}, kCooperative};
  const overlap::GemmConfig c{{128, 192}, {2, 1}, kPingpong};
  const overlap::GemmConfig d{{128, 192}, {1, 2}, kPingpong};  // c's tile, another cluster
  const std::vector<overlap::GemmConfig> screened{a, a, b, a, b, c, a, d};
  EXPECT_EQ(diverse_finalists(screened, 3), (std::vector<std::size_t>{0, 2, 5}));
  EXPECT_EQ(diverse_finalists(screened, 4), (std::vector<std::size_t>{0, 2, 5, 7}));
  EXPECT_EQ(diverse_finalists(screened, 6), (std::vector<std::size_t>{0, 2, 5, 7, 1, 3}));
  EXPECT_EQ(diverse_finalists(screened, 100).size(), screened.size());  // every one, once
  std::vector<std::size_t> all = diverse_finalists(screened, 100);
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);
  EXPECT_EQ(diverse_finalists(screened, 1), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(diverse_finalists({}, 4).empty());
  EXPECT_TRUE(diverse_finalists(screened, 0).empty());
}

// Configurations built but not yet checked on a GPU (overlap::awaits_gpu_check) are searched only
// when asked; a plan may still name them.
TEST(GemmSearchOptionsText, UncheckedConfigurationsAreSearchedOnlyWhenAsked) {
  const auto& built = overlap::built_gemm_configs();
  const auto awaiting = std::count_if(built.begin(), built.end(), overlap::awaits_gpu_check);
  const std::vector<overlap::GemmConfig> searched = searched_gemm_configs({});
  EXPECT_EQ(searched.size(), built.size() - static_cast<std::size_t>(awaiting));
  EXPECT_TRUE(std::none_of(searched.begin(), searched.end(), overlap::awaits_gpu_check));
  const GemmSearchOptions all = parse_gemm_search_options("unchecked=1");
  EXPECT_EQ(all.unchecked, 1);
  EXPECT_EQ(searched_gemm_configs(all).size(), built.size());
  EXPECT_THROW(parse_gemm_search_options("unchecked=2"), UsageError);
  if (awaiting > 0) {
    // Named by the caller (kiln overlap gemm --config): timed as asked.
    GemmSearchOptions only;
    only.configs = {*std::find_if(built.begin(), built.end(), overlap::awaits_gpu_check)};
    EXPECT_EQ(searched_gemm_configs(only), only.configs);
    // without-tile-n starts from the built list: it leaves them out too, unless asked.
    const std::vector<overlap::GemmConfig> narrow =
        parse_gemm_search_options("without-tile-n=320").configs;
    EXPECT_TRUE(std::none_of(narrow.begin(), narrow.end(), overlap::awaits_gpu_check));
    const std::vector<overlap::GemmConfig> narrow_all =
        parse_gemm_search_options("unchecked=1,without-tile-n=320").configs;
    EXPECT_EQ(narrow_all.size(), narrow.size() + static_cast<std::size_t>(awaiting));
  }
}

// without-tile-n leaves out every built configuration of that width, and only those: the A/B of
// the ping-pong 128x160 / 128x176 kernels against the set without them.
TEST(GemmSearchOptionsText, WithoutTileNLeavesOutThoseWidthsOnly) {
  EXPECT_TRUE(parse_gemm_search_options("finalists=4").configs.empty());  // all built ones
  const auto& built = overlap::built_gemm_configs();
  const GemmSearchOptions o = parse_gemm_search_options("without-tile-n=160,without-tile-n=176");
  std::size_t wide = 0;
  for (const overlap::GemmConfig& c : built) wide += c.tile.n == 160 || c.tile.n == 176;
  EXPECT_GE(wide, 4u);
  // (Configurations awaiting their GPU check are left out too: UncheckedConfigurations...)
  std::size_t awaiting_other_widths = 0;
  for (const overlap::GemmConfig& c : built)
    awaiting_other_widths += overlap::awaits_gpu_check(c) && c.tile.n != 160 && c.tile.n != 176;
  EXPECT_EQ(o.configs.size(), built.size() - wide - awaiting_other_widths);
  for (const overlap::GemmConfig& c : o.configs) {
    EXPECT_NE(c.tile.n, 160);
    EXPECT_NE(c.tile.n, 176);
  }
  try {
    std::string all;
    for (const overlap::GemmConfig& c : built) all += fmt::format("without-tile-n={},", c.tile.n);
    all.pop_back();
    (void)parse_gemm_search_options(all);
    FAIL() << "a search with no configuration left was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no configuration left"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)parse_gemm_search_options("without-tile-n=4"), UsageError);
}

// Stage 3's near-tie rule: a candidate within the tolerance of the fastest wins only with at
// least 10% less modelled DRAM traffic, and then the least-traffic such candidate wins; anything
// slower than the tolerance never does.
TEST(LeastTrafficNearTie, PrefersClearlyLessTrafficOnlyWithinTheTolerance) {
  // fastest alone: nothing near it reads 10% less
  EXPECT_EQ(least_traffic_near_tie({100.0, 100.5, 103.0}, {1000.0, 950.0, 500.0}, 0.01), 0u);
  // a near-tie with 21% less traffic wins; of two such, the one with less traffic
  EXPECT_EQ(least_traffic_near_tie({100.0, 100.8, 100.9}, {1100.0, 870.0, 790.0}, 0.01), 2u);
  // the fastest need not be first in the input
  EXPECT_EQ(least_traffic_near_tie({101.0, 100.0}, {800.0, 1100.0}, 0.01), 0u);
  EXPECT_EQ(least_traffic_near_tie({101.5, 100.0}, {800.0, 1100.0}, 0.01), 1u);
  // a zero tolerance keeps the fastest unless another is exactly as fast
  EXPECT_EQ(least_traffic_near_tie({100.0, 100.0}, {1000.0, 800.0}, 0.0), 1u);
  EXPECT_THROW(least_traffic_near_tie({}, {}, 0.01), UsageError);
  EXPECT_THROW(least_traffic_near_tie({1.0, 2.0}, {1.0}, 0.01), UsageError);
}

}  // namespace
}  // namespace kiln::tune

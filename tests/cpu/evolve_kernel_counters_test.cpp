// --ncu guidance (issue 20): Nsight Compute's CSV into per-candidate counters (launches grouped
// by ID, percentages weighted by duration), the regime they show, what that does to the mutation
// weights, the counters' place in the log (a replay guides the same way), and which kernels of a
// generated source ncu is told to profile (the candidate's, never the judge's own).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "evolve/candidate_evaluator.hpp"
#include "evolve/kernel_counters.hpp"
#include "evolve/search.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

// One line of ncu's --csv details page.
std::string row(int id, const std::string& kernel, const std::string& metric,
                const std::string& unit, const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"4242\",\"kiln\",\"127.0.0.1\",\"" + kernel +
         "\",\"1\",\"7\",\"(256, 1, 1)\",\"(528, 1, 1)\",\"0\",\"9.0\",\"Command line profiler "
         "metrics\",\"" +
         metric + "\",\"" + unit + "\",\"" + value + "\"\n";
}

const char* kHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
    "Unit\",\"Metric Value\"\n";

std::string two_launches() {
  std::string csv = "==PROF== Connected to process 4242 (/work/build/kiln)\n# kiln bench suite\n";
  csv += kHeader;
  csv += row(0, "loss_kernel", "gpu__time_duration.sum", "usecond", "300");
  csv += row(0, "loss_kernel", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "90");
  csv += row(0, "loss_kernel", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "20");
  csv += row(0, "loss_kernel", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "80");
  csv += row(1, "finish_kernel", "gpu__time_duration.sum", "nsecond", "100,000");
  csv += row(1, "finish_kernel", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "10");
  csv += row(1, "finish_kernel", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "60");
  csv += row(1, "finish_kernel", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "20");
  return csv;
}

TEST(EvolveKernelCounters, LaunchesGroupedByIdAndWeightedByDuration) {
  const std::vector<core::NcuValue> values = core::parse_ncu_csv(two_launches());
  ASSERT_EQ(values.size(), 8u);
  EXPECT_EQ(values[0].launch, 0);
  EXPECT_EQ(values[4].launch, 1);
  EXPECT_EQ(values[4].kernel, "finish_kernel");
  const KernelCounters c = counters_from_ncu(values);
  ASSERT_TRUE(c.measured()) << c.error;
  EXPECT_EQ(c.launches, 2);
  EXPECT_DOUBLE_EQ(c.duration_us, 400.0);  // 300 us + 100,000 ns
  EXPECT_DOUBLE_EQ(c.dram_pct, (90.0 * 300 + 10.0 * 100) / 400);
  EXPECT_DOUBLE_EQ(c.sm_pct, (20.0 * 300 + 60.0 * 100) / 400);
  EXPECT_DOUBLE_EQ(c.warps_active_pct, (80.0 * 300 + 20.0 * 100) / 400);
}

TEST(EvolveKernelCounters, NothingProfiledIsNotMeasuredAndSaysWhy) {
  const KernelCounters none = counters_from_ncu(core::parse_ncu_csv(
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters\n"));
  EXPECT_FALSE(none.measured());
  EXPECT_EQ(none.error, "ncu reported no metrics");
  EXPECT_EQ(core::ncu_error_line("x\n==ERROR== ERR_NVGPUCTRPERM - no\nmore"),
            "==ERROR== ERR_NVGPUCTRPERM - no");
  // A launch without every metric is left out, not read as zeros.
  std::string partial = kHeader;
  partial += row(0, "k", "gpu__time_duration.sum", "usecond", "5");
  partial += row(0, "k", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "50");
  // A duration in a unit not known here leaves its launch out rather than misreading it.
  partial += row(1, "k", "gpu__time_duration.sum", "fortnight", "1");
  partial += row(1, "k", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "50");
  partial += row(1, "k", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "50");
  partial += row(1, "k", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "50");
  const KernelCounters half = counters_from_ncu(core::parse_ncu_csv(partial));
  EXPECT_FALSE(half.measured());
  EXPECT_NE(half.error.find("no profiled launch has all of"), std::string::npos) << half.error;
  EXPECT_EQ(counter_regime(half), CounterRegime::kUnmeasured);
}

KernelCounters counters(double dram, double sm, double warps = 50) {
  KernelCounters c;
  c.dram_pct = dram;
  c.sm_pct = sm;
  c.warps_active_pct = warps;
  c.duration_us = 100;
  c.launches = 1;
  return c;
}

TEST(EvolveKernelCounters, RegimesFromTheCounters) {
  EXPECT_EQ(counter_regime(counters(90, 30)), CounterRegime::kDramSaturated);
  EXPECT_EQ(counter_regime(counters(90, 80)), CounterRegime::kDramSaturated);
  EXPECT_EQ(counter_regime(counters(40, 70)), CounterRegime::kIssueBound);
  EXPECT_EQ(counter_regime(counters(30, 20)), CounterRegime::kLatencyBound);
  EXPECT_EQ(counter_regime(counters(60, 50)), CounterRegime::kBetween);
  EXPECT_EQ(counter_regime_name(CounterRegime::kLatencyBound), "latency-bound");
}

Evaluation memory_kernel_at(double u) {
  Evaluation e;
  e.correct = true;
  e.roof_us = 100;
  e.us = 100 / u;
  e.binding = "memory";
  return e;
}

TEST(EvolveKernelCounters, CountersSteerTheGuidance) {
  const Evaluation model_only = memory_kernel_at(0.5);
  const auto plain = guidance_weights(model_only);
  EXPECT_GT(plain.at(Resource::kHbm), plain.at(Resource::kL2));  // the model alone: HBM first

  Evaluation saturated = model_only;
  saturated.counters = counters(92, 30);
  const auto fewer_bytes = guidance_weights(saturated);
  EXPECT_GT(fewer_bytes.at(Resource::kL2), fewer_bytes.at(Resource::kHbm));
  EXPECT_GT(fewer_bytes.at(Resource::kL2), plain.at(Resource::kL2));

  Evaluation latency = model_only;
  latency.counters = counters(30, 20, 25);
  const auto in_flight = guidance_weights(latency);
  EXPECT_GT(in_flight.at(Resource::kOccupancy), plain.at(Resource::kOccupancy));
  EXPECT_GT(in_flight.at(Resource::kHbm), in_flight.at(Resource::kL2));

  Evaluation issue = model_only;
  issue.counters = counters(40, 75);
  const auto fewer_instructions = guidance_weights(issue);
  EXPECT_GT(fewer_instructions.at(Resource::kCompute), plain.at(Resource::kCompute));

  // Between the regimes, or at the roof, the counters change nothing.
  Evaluation between = model_only;
  between.counters = counters(60, 50);
  EXPECT_EQ(guidance_weights(between), plain);
  Evaluation at_roof = memory_kernel_at(1.0);
  at_roof.counters = counters(92, 30);
  EXPECT_DOUBLE_EQ(guidance_weights(at_roof).at(Resource::kL2),
                   guidance_weights(at_roof).at(Resource::kCompute));
}

TEST(EvolveKernelCounters, CountersRideInTheLog) {
  Evaluation e = memory_kernel_at(0.7);
  e.counters = counters(91.5, 22.25, 63);
  const Evaluation back = Evaluation::from_json(e.to_json(), "test");
  EXPECT_DOUBLE_EQ(back.counters.dram_pct, 91.5);
  EXPECT_DOUBLE_EQ(back.counters.sm_pct, 22.25);
  EXPECT_EQ(back.counters.launches, 1);
  EXPECT_EQ(guidance_weights(back), guidance_weights(e));
  // Without counters the log entry has none (as before --ncu), and reads back unmeasured.
  const nlohmann::json plain = memory_kernel_at(0.7).to_json();
  EXPECT_FALSE(plain.contains("counters"));
  EXPECT_FALSE(Evaluation::from_json(plain, "test").counters.measured());
  // A failed profile keeps its reason.
  Evaluation failed = memory_kernel_at(0.7);
  failed.counters.error = "ncu exit 124: ncu reported no metrics";
  EXPECT_EQ(Evaluation::from_json(failed.to_json(), "test").counters.error, failed.counters.error);
  nlohmann::json broken = e.to_json();
  broken["counters"].erase("sm_pct");
  EXPECT_THROW(Evaluation::from_json(broken, "log.json"), UsageError);
}

TEST(EvolveKernelCounters, OnlyTheCandidatesKernelsAreProfiled) {
  const std::string hand = R"(
// a comment naming __global__ in passing (
__global__ void __launch_bounds__(kTeam * kTeamsPerBlock)
    scan_kernel(const float* x, float* y) {}
template <int N> __global__ void finish(double* p) {}
__global__ void __launch_bounds__(256, 2) map_kernel(const float* x) {}
__global__ void finish(double* p, int) {}
)";
  const std::vector<std::string> names = candidate_kernel_names(hand);
  ASSERT_EQ(names.size(), 4u);  // the comment's word, then the three kernels, each once
  EXPECT_EQ(names[1], "scan_kernel");
  EXPECT_EQ(names[2], "finish");
  EXPECT_EQ(names[3], "map_kernel");
  const std::string filter = candidate_kernel_filter({"scan_kernel", "finish"});
  ASSERT_EQ(filter.rfind("regex:", 0), 0u) << filter;
  const std::regex whole(filter.substr(6));
  // Demangled names as ncu prints them: the candidate's own, at global scope, match.
  for (const char* name : {"void scan_kernel(const float *, float *)", "finish(double *, int)",
                           "void finish<256>(double *)"})
    EXPECT_TRUE(std::regex_match(name, whole)) << name;
  // Near misses, and a judge kernel of the same name in kiln's namespaces (kb1-12's reference
  // and its generated kernel are both row_scale), do not.
  for (const char* name :
       {"void scan_kernel2(const float *)", "void my_finish(double *)", "void finish_kernel()",
        "void kiln::problems::kb1::(anonymous namespace)::finish(double *)",
        "void kiln::core::fill_random_kernel(float *, long)"})
    EXPECT_FALSE(std::regex_match(name, whole)) << name;
  const std::regex cutlass(candidate_kernel_filter({"device_kernel"}).substr(6));
  EXPECT_TRUE(std::regex_match("void cutlass::device_kernel<GemmKernel<X>>(Params)", cutlass));
  EXPECT_EQ(candidate_kernel_filter({}), "");
  // Generated sources: the map kernel alone; a CUTLASS matmul adds CUTLASS's entry points.
  const std::string relu =
      generate_candidate(genome_of(Family::kMap, {"vector16-loads", "grid-stride"}), "kb1-19-relu");
  const std::vector<std::string> map_names = candidate_kernel_names(relu);
  ASSERT_FALSE(map_names.empty());
  for (const std::string& name : map_names) EXPECT_NE(name.find("kernel"), std::string::npos);
  const std::string gemm = generate_candidate(
      genome_of(Family::kMatmul, {"cutlass-sm90", "tf32x3"}), "kb1-1-square-matmul");
  const std::vector<std::string> gemm_names = candidate_kernel_names(gemm);
  EXPECT_NE(std::find(gemm_names.begin(), gemm_names.end(), "device_kernel"), gemm_names.end());
}

}  // namespace
}  // namespace kiln::evolve

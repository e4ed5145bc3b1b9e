// The parse of Nsight Compute's --csv output for `kiln reduce bench --ncu`: quoted fields with
// commas inside (kernel names, thousands separators), units, and output without metrics.
#include <gtest/gtest.h>

#include "benchmarks/reduce/reduce_bench.hpp"

namespace kiln::benchmarks {
namespace {

const char* kSample =
    "==PROF== Connected to process 4242 (/work/build/kiln)\n"
    "==PROF== Profiling \"reduce_pass_kernel\": 0%....50%....100% - 9 passes\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
    "\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"4242\",\"kiln\",\"127.0.0.1\",\"void reduce_pass_kernel<int, (ReduceOp)0, 512, 4, "
    "4>(const T1 *, PassArgs)\",\"1\",\"13\",\"(512, 1, 1)\",\"(264, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"usecond\",\"1,285.44\"\n"
    "\"0\",\"4242\",\"kiln\",\"127.0.0.1\",\"void reduce_pass_kernel<int, (ReduceOp)0, 512, 4, "
    "4>(const T1 *, PassArgs)\",\"1\",\"13\",\"(512, 1, 1)\",\"(264, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"%\",\"93.41\"\n"
    "\"0\",\"4242\",\"kiln\",\"127.0.0.1\",\"k\",\"1\",\"13\",\"(512, 1, 1)\",\"(264, 1, 1)\","
    "\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"smsp__thread_inst_executed_per_inst_executed.ratio\",\"\",\"31.5\"\n"
    "\"0\",\"4242\",\"kiln\",\"127.0.0.1\",\"k\",\"1\",\"13\",\"(512, 1, 1)\",\"(264, 1, 1)\","
    "\"0\",\"9.0\",\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"nsecond\","
    "\"2500\"\n";

TEST(NcuParse, ReadsQuotedValuesAndUnits) {
  const std::vector<NcuValue> values = parse_ncu_csv(kSample);
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0].metric, "gpu__time_duration.sum");
  EXPECT_EQ(values[0].unit, "usecond");
  EXPECT_DOUBLE_EQ(values[0].value, 1285.44);
  EXPECT_DOUBLE_EQ(values[1].value, 93.41);
  NcuMetrics m;
  apply_ncu_values({values[0], values[1], values[2]}, m);
  EXPECT_DOUBLE_EQ(m.duration_us, 1285.44);
  EXPECT_DOUBLE_EQ(m.dram_pct_of_peak, 93.41);
  EXPECT_NEAR(m.warp_execution_efficiency_pct, 31.5 / 32 * 100, 1e-9);
  NcuMetrics ns;
  apply_ncu_values({values[3]}, ns);
  EXPECT_DOUBLE_EQ(ns.duration_us, 2.5);  // nanoseconds converted
}

TEST(NcuParse, OutputWithoutMetricsSaysSo) {
  const std::string refused =
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters\n";
  EXPECT_TRUE(parse_ncu_csv(refused).empty());
  NcuMetrics m;
  apply_ncu_values(parse_ncu_csv(refused), m);
  EXPECT_EQ(m.error, "ncu reported no metrics");
  EXPECT_EQ(ncu_metric_names().size(), 5u);
}

}  // namespace
}  // namespace kiln::benchmarks

// `kiln reduce bench` (see reduce_bench.hpp).
#include "benchmarks/reduce/reduce_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "benchmarks/reduce/cub_reduce.hpp"
#include "benchmarks/reduce/reduce_inputs.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/probe.hpp"
#include "core/run_command.hpp"
#include "core/stream.hpp"
#include "core/table.hpp"
#include "kernels/reduce.hpp"

namespace kiln::benchmarks {
namespace {

using kernels::ReduceOp;

std::size_t align256(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

// Device-to-device copy rate (read + write) of 1 GiB, median of 10: the ceiling a reduction's read
// rate is compared with, measured as `kiln probe` measures it.
double measure_copy_gbps(cudaStream_t stream) {
  const std::size_t bytes = 1ull << 30;
  return core::copy_gbps(bytes, core::time_copy(stream, bytes, {2, 10}));
}

// Host references of every requested prefix length, in one pass over a host copy of the input.
struct Reference {
  double value = 0.0;  // sums of floats in double; int32 results exact as int
  int int_value = 0;
};

std::vector<Reference> host_references(const void* device_input, core::DType dtype, ReduceOp op,
                                       const std::vector<std::int64_t>& ascending_sizes) {
  const std::int64_t n = ascending_sizes.back();
  const std::size_t element = core::dtype_size(dtype);
  std::vector<unsigned char> host(static_cast<std::size_t>(n) * element);
  KILN_CUDA_CHECK(cudaMemcpy(host.data(), device_input, host.size(), cudaMemcpyDeviceToHost));
  std::vector<Reference> refs;
  unsigned wrapped_sum = 0;
  int int_min = std::numeric_limits<int>::max(), int_max = std::numeric_limits<int>::min();
  double sum = 0.0;
  float fmin = std::numeric_limits<float>::infinity(), fmax = -fmin;
  std::int64_t i = 0;
  for (const std::int64_t size : ascending_sizes) {
    for (; i < size; ++i) {
      if (dtype == core::DType::kInt32) {
        int v;
        std::memcpy(&v, host.data() + i * 4, 4);
        wrapped_sum += static_cast<unsigned>(v);
        int_min = std::min(int_min, v);
        int_max = std::max(int_max, v);
      } else {
        float v;
        if (dtype == core::DType::kFp32) {
          std::memcpy(&v, host.data() + i * 4, 4);
        } else {
          std::uint16_t bits;
          std::memcpy(&bits, host.data() + i * 2, 2);
          v = core::half_bits_to_float(bits, dtype);
        }
        sum += v;
        fmin = std::min(fmin, v);
        fmax = std::max(fmax, v);
      }
    }
    Reference r;
    if (dtype == core::DType::kInt32) {
      r.int_value = op == ReduceOp::kSum ? static_cast<int>(wrapped_sum)
                                         : (op == ReduceOp::kMin ? int_min : int_max);
      r.value = r.int_value;
    } else {
      r.value = op == ReduceOp::kSum ? sum : (op == ReduceOp::kMin ? fmin : fmax);
    }
    refs.push_back(r);
  }
  return refs;
}

// Relative error of a device result against the reference (0 when exact).
double result_error(const void* device_out, core::DType dtype, const Reference& ref) {
  if (dtype == core::DType::kInt32) {
    int got = 0;
    KILN_CUDA_CHECK(cudaMemcpy(&got, device_out, 4, cudaMemcpyDeviceToHost));
    return got == ref.int_value ? 0.0
                                : std::abs(static_cast<double>(got) - ref.int_value) /
                                      std::max(1.0, std::abs(static_cast<double>(ref.int_value)));
  }
  float got = 0.0f;
  KILN_CUDA_CHECK(cudaMemcpy(&got, device_out, 4, cudaMemcpyDeviceToHost));
  if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
  return std::abs(static_cast<double>(got) - ref.value) / std::max(1.0, std::abs(ref.value));
}

// Tolerance: integers and min/max are exact; float sums are reported, and fail above 1e-3.
double tolerance(core::DType dtype, ReduceOp op) {
  return dtype == core::DType::kInt32 || op != ReduceOp::kSum ? 0.0 : 1e-3;
}

// Runs one step of one row (building its workspace, checking it, timing it) and returns "" or,
// when it threw a kiln::Error, the error's text: the row then records it and the bench goes on
// with the next row. Only for errors that leave the CUDA context usable (cudaErrorInvalidValue,
// cudaErrorMemoryAllocation, a launch-configuration error, a UsageError): a sticky one (an illegal
// address, a device-side trap) poisons the context for the rest of the process, every later row
// would fail with it too, so it is rethrown and ends the run with its message as before. Which
// kind it was is read off the context rather than guessed from the text: cudaGetLastError clears
// a non-sticky error (CUB only peeks at a launch error, which would otherwise surface at the next
// row's launch check), while a sticky one comes back from every later call.
std::string run_step(const std::function<void()>& step) {
  try {
    step();
    return {};
  } catch (const Error& error) {
    (void)cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) throw;
    const std::string text = error.what();
    return text.empty() ? "error without a message" : text;
  }
}

}  // namespace

namespace {

const core::Table& reduce_table() {
  static const core::Table table({{"size", 12},
                                  {"variant", 11, true},
                                  {"median", 10},
                                  {"min", 10},
                                  {"max", 10},
                                  {"cv%", 6},
                                  {"GB/s", 9},
                                  {"%copy", 7},
                                  {"cub/this", 8},
                                  {"error", 9},
                                  {"ok"},
                                  {"note"}});
  return table;
}

}  // namespace

std::string reduce_table_header() {
  return reduce_table().header();
}

std::string format_reduce_row(const ReduceResult& r) {
  if (!r.failure.empty()) {
    return reduce_table().row({std::to_string(r.size), r.variant, "-", "-", "-", "-", "-", "-", "-",
                               "-", "-", "did not run: " + r.failure});
  }
  return reduce_table().row({std::to_string(r.size), r.variant, fmt::format("{:.2f}", r.us.median),
                             fmt::format("{:.2f}", r.us.min), fmt::format("{:.2f}", r.us.max),
                             fmt::format("{:.1f}", 100.0 * r.us.cv), fmt::format("{:.1f}", r.gbps),
                             fmt::format("{:.1f}%", 100.0 * r.copy_fraction),
                             r.cub_over_this > 0.0 ? fmt::format("{:.3f}", r.cub_over_this) : "-",
                             fmt::format("{:.2e}", r.error), r.correct ? "yes" : "NO"});
}

std::vector<std::int64_t> parse_sizes(const std::string& text, const std::string& argument) {
  std::vector<std::int64_t> sizes;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    double value = 0.0;
    std::size_t used = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || !(value >= 1.0) || value > 1e13 ||
        value != std::floor(value)) {
      throw UsageError(fmt::format("{} {}: '{}' is not a whole number of elements in 1..1e13",
                                   argument, text, item));
    }
    sizes.push_back(static_cast<std::int64_t>(value));
  }
  if (sizes.empty()) throw UsageError(argument + ": no sizes given");
  return sizes;
}

std::vector<std::string> ncu_metric_names() {
  return {"gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
          "smsp__thread_inst_executed_per_inst_executed.ratio",
          "sm__warps_active.avg.pct_of_peak_sustained_active",
          "smsp__sass_average_branch_targets_threads_uniform.pct"};
}

void apply_ncu_values(const std::vector<NcuValue>& values, NcuMetrics& m) {
  for (const NcuValue& v : values) {
    if (v.metric == "gpu__time_duration.sum") {
      // A unit not known here was read as microseconds before the conversion was shared.
      const double us = core::ncu_microseconds(v.value, v.unit);
      m.duration_us = us >= 0.0 ? us : v.value;
    } else if (v.metric == "dram__throughput.avg.pct_of_peak_sustained_elapsed") {
      m.dram_pct_of_peak = v.value;
    } else if (v.metric == "smsp__thread_inst_executed_per_inst_executed.ratio") {
      m.warp_execution_efficiency_pct = v.value / 32.0 * 100.0;
    } else if (v.metric == "sm__warps_active.avg.pct_of_peak_sustained_active") {
      m.achieved_occupancy_pct = v.value;
    } else if (v.metric == "smsp__sass_average_branch_targets_threads_uniform.pct") {
      m.branch_efficiency_pct = v.value;
    }
  }
  if (values.empty() && m.error.empty()) m.error = "ncu reported no metrics";
}

namespace {

// Profiles every variant's first pass at `size` elements in a child run of this binary.
std::vector<NcuMetrics> profile_with_ncu(const ReduceBenchOptions& o,
                                         const std::vector<kernels::ReduceVariant>& variants,
                                         std::int64_t size) {
  std::vector<NcuMetrics> out;
  std::string ignored;
  const bool have_ncu = core::run_command("command -v ncu > /dev/null", ignored) == 0;
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string metrics;
  for (const std::string& name : ncu_metric_names()) metrics += (metrics.empty() ? "" : ",") + name;
  for (const auto& v : variants) {
    NcuMetrics m;
    m.variant = v.name;
    m.size = size;
    if (!have_ncu || length <= 0) {
      m.error = have_ncu ? "cannot find this executable" : "ncu (Nsight Compute) not found";
      out.push_back(m);
      continue;
    }
    // Clocks left alone (--clock-control none), as the shared machines require.
    const std::string command = fmt::format(
        "ncu --clock-control none --csv --metrics {} --kernel-name regex:reduce_pass_kernel "
        "--launch-count 1 '{}' reduce bench --ncu-pass-only --op {} -d {} --sizes {} "
        "--misalign {} --variants '{}'",
        metrics, std::string(self, static_cast<std::size_t>(length)), kernels::reduce_op_name(o.op),
        core::dtype_name(o.dtype), size, o.misalign, kernels::to_string(v));
    std::fprintf(stderr, "# ncu: %s at %lld elements\n", v.name.c_str(),
                 static_cast<long long>(size));
    std::string csv;
    const int status = core::run_command(command, csv);
    apply_ncu_values(parse_ncu_csv(csv), m);
    if (m.duration_us == 0.0) {
      // Keep ncu's own words (e.g. ERR_NVGPUCTRPERM) for the report.
      const std::string error = core::ncu_error_line(csv);
      m.error = !error.empty() ? error : fmt::format("ncu exited with status {}", status);
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace

void validate(const ReduceBenchOptions& o) {
  KILN_REQUIRE(o.warmup >= 0 && o.iterations >= 2, "-w must be >= 0 and -n >= 2");
  KILN_REQUIRE(o.misalign >= 0 && o.misalign < 64,
               fmt::format("--misalign {}: accepted 0..63 elements", o.misalign));
  for (const auto& v : o.variants) {
    if (const auto reason = kernels::invalid_reason(v, o.dtype, o.op)) {
      throw UsageError(fmt::format("--variants {}: {}", v.name, *reason));
    }
  }
}

ReduceBenchReport run_reduce_bench(const ReduceBenchOptions& o) {
  validate(o);
  std::vector<kernels::ReduceVariant> variants = o.variants;
  if (variants.empty()) {
    // Every preset that can run this operation (vec-atomic has no float min/max).
    for (const auto& v : kernels::reduce_presets())
      if (!kernels::invalid_reason(v, o.dtype, o.op)) variants.push_back(v);
  }
  std::vector<std::int64_t> sizes = o.sizes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  ReduceBenchReport report;
  core::Stream stream;
  if (o.profile_only) {
    // One call per variant and size on filled input: the launches ncu profiles.
    const std::size_t element = core::dtype_size(o.dtype);
    core::DeviceBuffer input(align256((sizes.back() + o.misalign) * element));
    fill_reduce_input(input.data(), o.dtype, sizes.back() + o.misalign, o.seed, stream.get());
    core::DeviceBuffer result(256);
    for (const std::int64_t size : sizes) {
      for (const auto& v : variants) {
        const kernels::ReduceWorkspace workspace(v, o.dtype, size, o.op);
        kernels::reduce(v, o.op, o.dtype,
                        static_cast<const char*>(input.data()) + o.misalign * element, size,
                        result.data(), workspace, stream.get());
        KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      }
    }
    return report;
  }
  int device = 0, l2 = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  report.l2_bytes = l2;
  std::fprintf(stderr, "# measuring the copy bandwidth (1 GiB device to device)\n");
  report.copy_gbps = measure_copy_gbps(stream.get());

  const std::size_t element = core::dtype_size(o.dtype);
  const std::size_t offset = static_cast<std::size_t>(o.misalign) * element;
  const std::int64_t largest = sizes.back();
  core::DeviceBuffer main_input(align256(offset + static_cast<std::size_t>(largest) * element));
  fill_reduce_input(static_cast<char*>(main_input.data()) + offset, o.dtype, largest, o.seed,
                    stream.get());
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::fprintf(stderr, "# host reference over %lld elements\n", static_cast<long long>(largest));
  const std::vector<Reference> refs =
      host_references(static_cast<char*>(main_input.data()) + offset, o.dtype, o.op, sizes);
  core::DeviceBuffer out(256);
  // One CUB for every size (its storage serves any count up to the largest); should even that
  // fail, every CUB row says why and the variants still run.
  std::optional<CubReduce> cub;
  const std::string cub_failure = run_step([&] { cub.emplace(o.op, o.dtype, largest); });

  std::printf(
      "# kiln reduce bench: %s %s, copy %.0f GB/s (read + write), L2 %d MiB, inputs "
      "start %d element(s) after a 256-byte boundary\n",
      kernels::reduce_op_name(o.op).c_str(), core::dtype_name(o.dtype).c_str(), report.copy_gbps,
      l2 >> 20, o.misalign);
  std::printf(
      "# times in us: median of %d iterations (warm-up %d), interleaved with CUB over 2 "
      "rounds; inputs smaller than 2x L2 rotate over copies spanning 2x L2 (up to 2^15)\n",
      o.iterations, o.warmup);
  std::printf("%s\n", reduce_table_header().c_str());
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const std::int64_t size = sizes[s];
    const std::size_t bytes = static_cast<std::size_t>(size) * element;
    // Rotate over copies spanning twice the L2 when one input would stay in it between calls;
    // every call (any variant, warm-up included) takes the next copy, so a copy comes back only
    // after 2x L2 of other data was read. (At most 2^15 copies: 1e3 int32 elements still span
    // 100 MiB.)
    const std::size_t stride = align256(offset + bytes);
    const int copies =
        bytes >= 2ull * l2
            ? 1
            : static_cast<int>(std::min<std::size_t>(32768, (2ull * l2 + stride - 1) / stride));
    core::DeviceBuffer rotation;
    std::vector<const void*> inputs;
    if (copies == 1) {
      inputs.push_back(static_cast<const char*>(main_input.data()) + offset);
    } else {
      rotation = core::DeviceBuffer(stride * copies);
      for (int c = 0; c < copies; ++c) {
        char* p = static_cast<char*>(rotation.data()) + c * stride + offset;
        KILN_CUDA_CHECK(cudaMemcpyAsync(p, static_cast<const char*>(main_input.data()) + offset,
                                        bytes, cudaMemcpyDeviceToDevice, stream.get()));
        inputs.push_back(p);
      }
    }
    std::size_t next_input = 0;
    const auto input = [&]() { return inputs[next_input++ % inputs.size()]; };
    std::vector<std::unique_ptr<kernels::ReduceWorkspace>> workspaces;
    std::vector<std::function<void(int)>> bodies;
    std::vector<std::string> names = {"cub"}, knobs = {"cub::DeviceReduce"};
    // failures[b]: why body b has no row of numbers at this size ("" while it runs); a failed
    // body is neither checked nor timed again.
    std::vector<std::string> failures = {cub_failure};
    bodies.push_back([&, size](int) { cub->run(input(), size, out.data(), stream.get()); });
    for (const auto& v : variants) {
      workspaces.push_back(nullptr);
      failures.push_back(run_step([&] {
        workspaces.back() = std::make_unique<kernels::ReduceWorkspace>(v, o.dtype, size, o.op);
      }));
      const kernels::ReduceWorkspace* ws = workspaces.back().get();
      bodies.push_back([&, v, ws, size](int) {
        kernels::reduce(v, o.op, o.dtype, input(), size, out.data(), *ws, stream.get());
      });
      names.push_back(v.name);
      knobs.push_back(kernels::to_string(v));
    }
    std::fprintf(stderr, "# size %lld: %zu variants + CUB, %d input cop%s\n",
                 static_cast<long long>(size), variants.size(), copies, copies == 1 ? "y" : "ies");
    // Correctness first, on a poisoned output.
    std::vector<double> errors(bodies.size());
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      if (!failures[b].empty()) continue;
      failures[b] = run_step([&] {
        core::poison(out.data(), out.bytes(), stream.get());
        bodies[b](0);
        KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        errors[b] = result_error(out.data(), o.dtype, refs[s]);
      });
    }
    // A body that fails while its launches are enqueued is left out of the later rounds (its
    // times are dropped with the row); the others go on.
    const auto samples = core::time_rounds(stream.get(), static_cast<int>(bodies.size()),
                                           [&](int b, int i) {
                                             if (failures[b].empty())
                                               failures[b] = run_step([&] { bodies[b](i); });
                                           },
                                           {o.warmup, core::per_round(o.iterations, 2), 2});
    std::vector<ReduceResult> rows;
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      ReduceResult r;
      r.variant = names[b];
      r.knobs = knobs[b];
      r.size = size;
      r.failure = failures[b];
      if (!r.failure.empty()) {
        std::fprintf(stderr, "# size %lld: %s did not run: %s\n", static_cast<long long>(size),
                     r.variant.c_str(), r.failure.c_str());
        rows.push_back(r);
        continue;
      }
      std::vector<double> us;
      for (float t : samples[b]) us.push_back(t);  // time_rounds gives microseconds
      r.us = core::summarize(us);
      r.gbps = static_cast<double>(bytes) / (r.us.median * 1e-6) / 1e9;
      r.copy_fraction = r.gbps / report.copy_gbps;
      r.error = errors[b];
      r.correct = errors[b] <= tolerance(o.dtype, o.op);
      rows.push_back(r);
    }
    for (ReduceResult& r : rows) {
      // Left at 0 ("-") when CUB or this row did not run.
      if (rows[0].failure.empty() && r.failure.empty())
        r.cub_over_this = rows[0].us.median / r.us.median;
      std::printf("%s\n", format_reduce_row(r).c_str());
      report.results.push_back(r);
    }
    std::fflush(stdout);
  }
  if (o.ncu) {
    const std::int64_t size = o.ncu_size > 0 ? o.ncu_size : sizes.back();
    report.ncu = profile_with_ncu(o, variants, size);
    std::printf("# Nsight Compute, first pass of each variant at %lld elements\n",
                static_cast<long long>(size));
    std::printf("%-11s %12s %8s %10s %10s %10s %s\n", "variant", "duration_us", "dram%",
                "warp_eff%", "occupancy%", "branch%", "note");
    for (const NcuMetrics& m : report.ncu) {
      std::printf("%-11s %12.2f %8.1f %10.1f %10.1f %10.1f %s\n", m.variant.c_str(), m.duration_us,
                  m.dram_pct_of_peak, m.warp_execution_efficiency_pct, m.achieved_occupancy_pct,
                  m.branch_efficiency_pct, m.error.c_str());
    }
  }
  return report;
}

nlohmann::json to_json(const ReduceBenchOptions& o, const ReduceBenchReport& report) {
  nlohmann::json j;
  j["benchmark"] = "reduce";
  j["op"] = kernels::reduce_op_name(o.op);
  j["dtype"] = core::dtype_name(o.dtype);
  j["misalign_elements"] = o.misalign;
  j["warmup"] = o.warmup;
  j["iterations"] = o.iterations;
  j["copy_gbps"] = report.copy_gbps;
  j["l2_bytes"] = report.l2_bytes;
  j["results"] = nlohmann::json::array();
  for (const ReduceResult& r : report.results) {
    j["results"].push_back({{"variant", r.variant},
                            {"knobs", r.knobs},
                            {"size", r.size},
                            {"median_us", r.us.median},
                            {"min_us", r.us.min},
                            {"max_us", r.us.max},
                            {"cv", r.us.cv},
                            {"gbps", r.gbps},
                            {"copy_fraction", r.copy_fraction},
                            {"cub_over_this", r.cub_over_this},
                            {"error", r.error},
                            {"correct", r.correct},
                            {"failure", r.failure}});
  }
  j["ncu"] = nlohmann::json::array();
  for (const NcuMetrics& m : report.ncu) {
    j["ncu"].push_back({{"variant", m.variant},
                        {"size", m.size},
                        {"duration_us", m.duration_us},
                        {"dram_pct_of_peak", m.dram_pct_of_peak},
                        {"warp_execution_efficiency_pct", m.warp_execution_efficiency_pct},
                        {"achieved_occupancy_pct", m.achieved_occupancy_pct},
                        {"branch_efficiency_pct", m.branch_efficiency_pct},
                        {"error", m.error}});
  }
  return j;
}

}  // namespace kiln::benchmarks

// `kiln reduce bench` (see reduce_bench.hpp).
#include "bench/reduce_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>

#include "bench/cub_reduce.hpp"
#include "bench/reduce_inputs.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/stream.hpp"
#include "kernels/reduce.hpp"

namespace kiln::bench {
namespace {

using kernels::ReduceOp;

std::size_t align256(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

// Device-to-device copy rate (read + write) of 1 GiB, median of 10: the ceiling a reduction's read
// rate is compared with, as `kiln probe` measures it.
double measure_copy_gbps(cudaStream_t stream) {
  const std::size_t bytes = 1ull << 30;
  core::DeviceBuffer a(bytes), b(bytes);
  KILN_CUDA_CHECK(cudaMemsetAsync(a.data(), 1, bytes, stream));
  const std::vector<float> ms = core::time_iterations(stream, {2, 10}, [&](int) {
    KILN_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  const core::TimingStats t = core::summarize(ms);
  return 2.0 * static_cast<double>(bytes) / (t.median * 1e-3) / 1e9;
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

}  // namespace

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
  const CubReduce cub(o.op, o.dtype, largest);

  std::printf(
      "# kiln reduce bench: %s %s, copy %.0f GB/s (read + write), L2 %d MiB, inputs "
      "start %d element(s) after a 256-byte boundary\n",
      kernels::reduce_op_name(o.op).c_str(), core::dtype_name(o.dtype).c_str(), report.copy_gbps,
      l2 >> 20, o.misalign);
  std::printf(
      "# times in us: median of %d iterations (warm-up %d), interleaved with CUB over 2 "
      "rounds; inputs smaller than 2x L2 rotate over copies\n",
      o.iterations, o.warmup);
  std::printf("%12s %-11s %10s %10s %10s %6s %9s %7s %8s %9s %s\n", "size", "variant", "median",
              "min", "max", "cv%", "GB/s", "%copy", "cub/this", "error", "ok");
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const std::int64_t size = sizes[s];
    const std::size_t bytes = static_cast<std::size_t>(size) * element;
    // Rotate over copies when the input would stay in L2 between iterations.
    const int copies =
        bytes >= 2ull * l2
            ? 1
            : static_cast<int>(std::min<std::size_t>(64, (2ull * l2 + bytes - 1) / bytes));
    core::DeviceBuffer rotation;
    const std::size_t stride = align256(offset + bytes);
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
    std::vector<std::unique_ptr<kernels::ReduceWorkspace>> workspaces;
    std::vector<std::function<void(int)>> bodies;
    std::vector<std::string> names = {"cub"}, knobs = {"cub::DeviceReduce"};
    bodies.push_back(
        [&, size](int i) { cub.run(inputs[i % inputs.size()], size, out.data(), stream.get()); });
    for (const auto& v : variants) {
      workspaces.push_back(std::make_unique<kernels::ReduceWorkspace>(v, o.dtype, size));
      const kernels::ReduceWorkspace* ws = workspaces.back().get();
      bodies.push_back([&, v, ws, size](int i) {
        kernels::reduce(v, o.op, o.dtype, inputs[i % inputs.size()], size, out.data(), *ws,
                        stream.get());
      });
      names.push_back(v.name);
      knobs.push_back(kernels::to_string(v));
    }
    std::fprintf(stderr, "# size %lld: %zu variants + CUB, %d input cop%s\n",
                 static_cast<long long>(size), variants.size(), copies, copies == 1 ? "y" : "ies");
    // Correctness first, on a poisoned output.
    std::vector<double> errors(bodies.size());
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      core::poison(out.data(), out.bytes(), stream.get());
      bodies[b](0);
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      errors[b] = result_error(out.data(), o.dtype, refs[s]);
    }
    const auto samples = core::sample_interleaved(
        static_cast<int>(bodies.size()), 2, o.warmup, o.iterations,
        [&](int b, int warmup, int iterations) {
          return core::time_iterations(stream.get(), {warmup, iterations}, bodies[b]);
        });
    std::vector<ReduceResult> rows;
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      ReduceResult r;
      r.variant = names[b];
      r.knobs = knobs[b];
      r.size = size;
      std::vector<double> us;
      for (float ms : samples[b]) us.push_back(ms * 1e3);
      r.us = core::summarize(us);
      r.gbps = static_cast<double>(bytes) / (r.us.median * 1e-6) / 1e9;
      r.copy_fraction = r.gbps / report.copy_gbps;
      r.error = errors[b];
      r.correct = errors[b] <= tolerance(o.dtype, o.op);
      rows.push_back(r);
    }
    for (ReduceResult& r : rows) {
      r.cub_over_this = rows[0].us.median / r.us.median;
      std::printf("%12lld %-11s %10.2f %10.2f %10.2f %6.1f %9.1f %6.1f%% %8.3f %9.2e %s\n",
                  static_cast<long long>(r.size), r.variant.c_str(), r.us.median, r.us.min,
                  r.us.max, 100.0 * r.us.cv, r.gbps, 100.0 * r.copy_fraction, r.cub_over_this,
                  r.error, r.correct ? "yes" : "NO");
      report.results.push_back(r);
    }
    std::fflush(stdout);
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
                            {"correct", r.correct}});
  }
  return j;
}

}  // namespace kiln::bench

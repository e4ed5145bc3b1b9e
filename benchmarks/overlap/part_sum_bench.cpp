// `kiln overlap sum` (see part_sum_bench.hpp).
#include "benchmarks/overlap/part_sum_bench.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/size_parse.hpp"
#include "core/stream.hpp"
#include "core/table.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/part_sum.hpp"

namespace kiln::benchmarks {

void validate(const PartSumBenchOptions& o) {
  KILN_REQUIRE(o.dtype == core::DType::kBf16 || o.dtype == core::DType::kFp16,
               "-d " + core::dtype_name(o.dtype) + ": accepted bf16, fp16");
  KILN_REQUIRE(!o.parts.empty(), "--parts: at least one count");
  for (int p : o.parts) {
    KILN_REQUIRE(p >= 1 && p <= overlap::PartList::kMaxParts,
                 fmt::format("--parts {}: accepted range 1..{}", p, overlap::PartList::kMaxParts));
  }
  KILN_REQUIRE(!o.part_bytes.empty(), "--bytes: at least one size");
  for (std::uint64_t b : o.part_bytes) {
    KILN_REQUIRE(b >= 16 && b % 16 == 0 && b <= (std::uint64_t{4} << 30),
                 fmt::format("--bytes {}: accepted 16 B..4 GiB, a multiple of 16 B", b));
  }
  KILN_REQUIRE(!o.ctas_per_sm.empty(), "--ctas-per-sm: at least one value");
  for (int c : o.ctas_per_sm) {
    KILN_REQUIRE(c >= 1 && c <= overlap::kMaxCtasPerSm,
                 fmt::format("--ctas-per-sm {}: accepted range 1..{}", c, overlap::kMaxCtasPerSm));
  }
  KILN_REQUIRE(o.warmup >= 0 && o.iterations >= 1, "-w must be >= 0 and -n >= 1");
  KILN_REQUIRE(
      o.rounds >= 1 && o.rounds <= o.iterations,
      fmt::format("--rounds {}: accepted range 1..{} (the -n iterations)", o.rounds, o.iterations));
}

double part_sum_hbm_bytes(int parts, std::uint64_t part_bytes) {
  return static_cast<double>(parts + 1) * static_cast<double>(part_bytes);
}

std::vector<PartSumRow> run_part_sum_bench(const PartSumBenchOptions& o,
                                           double hbm_bytes_per_second) {
  validate(o);
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  int l2 = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const int sms = overlap::current_device_sms();
  core::Stream stream;
  std::vector<PartSumRow> rows;
  std::uint64_t seed = 2026;
  for (const int parts : o.parts) {
    for (const std::uint64_t bytes : o.part_bytes) {
      // Sets of (parts + 1) buffers, rotated per iteration, covering at least twice the L2.
      const double set_bytes = part_sum_hbm_bytes(parts, bytes);
      const int sets = static_cast<int>(std::clamp(2.0 * l2 / set_bytes + 1.0, 1.0, 64.0));
      const std::int64_t elements = static_cast<std::int64_t>(bytes / 2);
      std::vector<core::DeviceBuffer> inputs, outputs;
      std::vector<overlap::PartList> lists(static_cast<std::size_t>(sets));
      for (int s = 0; s < sets; ++s) {
        lists[static_cast<std::size_t>(s)].count = parts;
        for (int p = 0; p < parts; ++p) {
          inputs.emplace_back(bytes);
          core::fill_uniform(inputs.back().data(), o.dtype, static_cast<std::uint64_t>(elements),
                             ++seed, stream.get());
          lists[static_cast<std::size_t>(s)].parts[p] = inputs.back().data();
        }
      }
      // One output set per grid (for the comparison of bits), `sets` buffers each.
      const std::size_t grids = o.ctas_per_sm.size();
      for (std::size_t g = 0; g < grids * static_cast<std::size_t>(sets); ++g)
        outputs.emplace_back(bytes);
      const auto out_of = [&](std::size_t grid, int set) {
        return outputs[grid * static_cast<std::size_t>(sets) + static_cast<std::size_t>(set)]
            .data();
      };
      const auto pooled = core::time_rounds(
          stream.get(), static_cast<int>(grids),
          [&](int v, int i) {
            const int set = i % sets;
            overlap::sum_parts(lists[static_cast<std::size_t>(set)], elements, o.dtype,
                               out_of(static_cast<std::size_t>(v), set), sms, stream.get(),
                               o.ctas_per_sm[static_cast<std::size_t>(v)]);
          },
          {o.warmup, core::per_round(o.iterations, o.rounds), o.rounds});
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      std::vector<unsigned char> first(bytes), other(bytes);
      KILN_CUDA_CHECK(cudaMemcpy(first.data(), out_of(0, 0), bytes, cudaMemcpyDeviceToHost));
      for (std::size_t g = 0; g < grids; ++g) {
        PartSumRow row;
        row.parts = parts;
        row.part_bytes = bytes;
        row.ctas_per_sm = o.ctas_per_sm[g];
        row.buffer_sets = sets;
        row.us = core::summarize(std::span<const float>(pooled[g]));
        row.hbm_bytes = set_bytes;
        row.gb_per_second = set_bytes / (row.us.median * 1e-6) / 1e9;
        row.fraction_of_hbm =
            hbm_bytes_per_second > 0 ? row.gb_per_second * 1e9 / hbm_bytes_per_second : 0.0;
        KILN_CUDA_CHECK(cudaMemcpy(other.data(), out_of(g, 0), bytes, cudaMemcpyDeviceToHost));
        row.same_bits_as_first = std::memcmp(first.data(), other.data(), bytes) == 0;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

namespace {

const core::Table& part_sum_table() {
  static const core::Table table({{"parts", 5},
                                  {"bytes/part", 10},
                                  {"CTAs/SM", 7},
                                  {"sets", 4},
                                  {"median", 9, false, "us"},
                                  {"min", 9, false, "us"},
                                  {"cv", 6},
                                  {"GB/s", 8},
                                  {"of HBM", 7},
                                  {"bits"}});
  return table;
}

}  // namespace

std::string format_part_sum_header() {
  return part_sum_table().header();
}

std::string format_part_sum_row(const PartSumRow& r) {
  return part_sum_table().row(
      {fmt::format("{}", r.parts), core::format_size(r.part_bytes),
       fmt::format("{}", r.ctas_per_sm), fmt::format("{}", r.buffer_sets),
       fmt::format("{:.1f}", r.us.median), fmt::format("{:.1f}", r.us.min),
       fmt::format("{:.3f}", r.us.cv), fmt::format("{:.0f}", r.gb_per_second),
       r.fraction_of_hbm > 0 ? fmt::format("{:.1f}%", 100.0 * r.fraction_of_hbm) : std::string("-"),
       r.same_bits_as_first ? "same" : "DIFFER"});
}

nlohmann::json part_sum_row_to_json(const PartSumRow& r) {
  return {{"parts", r.parts},
          {"part_bytes", r.part_bytes},
          {"ctas_per_sm", r.ctas_per_sm},
          {"buffer_sets", r.buffer_sets},
          {"us", core::to_json(r.us)},
          {"hbm_bytes", r.hbm_bytes},
          {"gb_per_second", r.gb_per_second},
          {"fraction_of_hbm", r.fraction_of_hbm},
          {"same_bits_as_first", r.same_bits_as_first}};
}

}  // namespace kiln::benchmarks

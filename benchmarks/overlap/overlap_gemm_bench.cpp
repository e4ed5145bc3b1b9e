// The single-GPU overlap measurements (see overlap_gemm_bench.hpp).
#include "benchmarks/overlap/overlap_gemm_bench.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "benchmarks/overlap/overlap_bench.hpp"
#include "core/device_buffer.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/stream.hpp"
#include "core/table.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/plain_gemm.hpp"
#include "overlap/plan.hpp"
#include "overlap/reorder_kernels.hpp"
#include "tune/gemm_config_search.hpp"

namespace kiln::benchmarks {
namespace {

core::TimingStats time_us(cudaStream_t stream, int warmup, int iterations,
                          const std::function<void(int)>& body) {
  std::vector<float> ms = core::time_iterations(stream, {warmup, iterations}, body);
  for (float& v : ms) v *= 1000.0f;
  return core::summarize(std::span<const float>(ms));
}

double relative_error(const core::DeviceBuffer& got, const core::DeviceBuffer& want,
                      std::size_t count, core::DType dtype) {
  std::vector<std::uint16_t> x(count), y(count);
  KILN_CUDA_CHECK(cudaMemcpy(x.data(), got.data(), count * 2, cudaMemcpyDeviceToHost));
  KILN_CUDA_CHECK(cudaMemcpy(y.data(), want.data(), count * 2, cudaMemcpyDeviceToHost));
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double a = core::half_bits_to_float(x[i], dtype),
                 b = core::half_bits_to_float(y[i], dtype);
    if (!std::isfinite(a)) return 1e30;
    diff += (a - b) * (a - b);
    norm += b * b;
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

struct Variant {
  std::function<void(int)> body;
  core::TimingStats* result;
};

// Variants interleaved over rounds (core::time_rounds), times in microseconds.
void time_interleaved(cudaStream_t stream, int warmup, int iterations, int rounds,
                      const std::vector<Variant>& variants) {
  const auto pooled = core::time_rounds(stream, static_cast<int>(variants.size()),
                                        [&](int v, int i) { variants[v].body(i); },
                                        {warmup, core::per_round(iterations, rounds), rounds});
  for (std::size_t v = 0; v < variants.size(); ++v) {
    *variants[v].result = core::summarize(std::span<const float>(pooled[v]));
  }
}

}  // namespace

std::vector<OverlapGemmRow> run_overlap_gemm_bench(
    const OverlapGemmOptions& o, const std::function<void(const OverlapGemmRow&)>& on_row) {
  const std::size_t element = core::dtype_size(o.dtype);
  const int sms = overlap::current_device_sms();
  core::Stream stream;
  overlap::CublasGemm cublas;
  std::vector<OverlapGemmRow> rows;
  for (const overlap::GemmShape& shape : o.shapes) {
    OverlapGemmRow row;
    row.shape = shape;
    const std::size_t a_count = static_cast<std::size_t>(shape.m) * shape.k;
    const std::size_t b_count = static_cast<std::size_t>(shape.n) * shape.k;
    const std::size_t c_count = static_cast<std::size_t>(shape.m) * shape.n;
    core::DeviceBuffer a(a_count * element), b(b_count * element), c(c_count * element),
        restored(c_count * element), weight(shape.n * element), norm_a(c_count * element),
        norm_b(c_count * element);
    core::fill_uniform(a.data(), o.dtype, a_count, 11, stream);
    core::fill_uniform(b.data(), o.dtype, b_count, 12, stream);
    core::fill_uniform(weight.data(), o.dtype, shape.n, 13, stream);
    const auto run_cublas = [&](int) {
      cublas.run(shape.m, shape.n, shape.k, o.dtype, o.layout, a.data(), b.data(), c.data(),
                 stream);
    };
    run_cublas(0);  // the baseline picks its algorithm for the shape here, before any timing
    row.cublas_algorithm = cublas.chosen(shape.m, shape.n, shape.k, o.dtype, o.layout);

    // 1. Search: every compiled configuration under every scheduler order, with its signal,
    // every SM, and stage 3's candidates also on their balanced CTA cap (`cap=N` in the schedule's
    // name; tune/gemm_config_search.hpp).
    tune::GemmSearchOptions search;
    search.configs = o.configs;
    const std::vector<tune::GemmCandidate> ranked =
        tune::search_gemm_configs(shape, o.dtype, o.layout, a.data(), b.data(), search, stream);
    for (const tune::GemmCandidate& c : ranked) {
      row.schedules.push_back({tune::candidate_name(c), c.us.median, c.finalist, c.stage});
    }
    const overlap::GemmConfig best_config = ranked.front().config;
    const overlap::ScheduleOptions best_schedule = ranked.front().schedule;
    row.best_schedule = tune::candidate_name(ranked.front());

    // 2. Final figures for the best schedule, interleaved: cuBLAS, no signal, eager and deferred
    // signal, and the GEMM under CTA caps.
    auto gemm = overlap::make_signaling_gemm(o.dtype, o.layout, best_config);
    tune::StandaloneTargets best_targets(*gemm, shape, best_schedule, sms, element);
    const overlap::EpilogueTargets eager = best_targets.signalling(false);
    const overlap::EpilogueTargets deferred = best_targets.signalling(true);
    std::vector<Variant> variants = {
        {run_cublas, &row.cublas_us},
        {[&](int) {
           gemm->run(shape, a.data(), b.data(), best_targets.targets, best_schedule, sms, stream);
         },
         &row.kiln_us},
        {[&](int) { gemm->run(shape, a.data(), b.data(), eager, best_schedule, sms, stream); },
         &row.kiln_signal_us},
        {[&](int) { gemm->run(shape, a.data(), b.data(), deferred, best_schedule, sms, stream); },
         &row.kiln_deferred_us}};
    // CUTLASS's own epilogue on the same kernel (plain_gemm.hpp), where it is built (bf16 nk, not
    // coop-n or pingpong-swap, and with CUTLASS's static scheduler only; "-" in the table
    // otherwise): the part of a gap to cuBLAS that is CUTLASS's, not kiln's epilogue's.
    std::unique_ptr<overlap::PlainCutlassGemm> plain_cutlass;
    if (overlap::has_plain_cutlass_twin(o.dtype, o.layout, best_config) &&
        !best_schedule.claimed_tiles) {
      plain_cutlass = overlap::make_plain_cutlass_gemm(o.dtype, o.layout, best_config);
      variants.push_back({[&](int) {
                            plain_cutlass->run(shape, a.data(), b.data(), restored.data(),
                                               best_schedule, sms, stream);
                          },
                          &row.cutlass_plain_us});
    }
    std::vector<std::unique_ptr<tune::StandaloneTargets>> capped;
    // Caps that are not whole clusters of the chosen kernel are left out of the row.
    row.caps.reserve(o.caps.size());  // the variants below keep pointers into it
    for (const int cap : o.caps) {
      if (cap % best_config.cluster.size() != 0) continue;
      overlap::ScheduleOptions schedule = best_schedule;
      schedule.cta_cap = cap;
      capped.push_back(
          std::make_unique<tune::StandaloneTargets>(*gemm, shape, schedule, sms, element));
      tune::StandaloneTargets* t = capped.back().get();
      row.caps.push_back({cap, t->launch.waves(), {}});
      variants.push_back({[&, t, schedule](int) {
                            gemm->run(shape, a.data(), b.data(), t->targets, schedule, sms, stream);
                          },
                          &row.caps.back().us});
    }
    time_interleaved(stream, o.warmup, o.iterations, o.rounds, variants);

    if (plain_cutlass) {
      core::poison(restored.data(), restored.bytes(), stream);
      plain_cutlass->run(shape, a.data(), b.data(), restored.data(), best_schedule, sms, stream);
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
      row.cutlass_plain_relative_error = relative_error(restored, c, c_count, o.dtype);
    }

    // 3. Correctness of both signal modes: restore to row-major, compare with cuBLAS.
    overlap::ReorderSource source{best_targets.targets.slots, best_targets.slot_of_tile.as<int>(),
                                  best_targets.geometry, 0};
    run_cublas(0);
    row.gemm_relative_error = 0.0;
    for (const overlap::EpilogueTargets* targets : {&eager, &deferred}) {
      core::poison(best_targets.own_slots.data(), best_targets.own_slots.bytes(), stream);
      core::poison(restored.data(), restored.bytes(), stream);
      gemm->run(shape, a.data(), b.data(), *targets, best_schedule, sms, stream);
      overlap::restore_row_major(source, o.dtype, shape.m, shape.n, restored.data(), stream);
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
      row.gemm_relative_error =
          std::max(row.gemm_relative_error, relative_error(restored, c, c_count, o.dtype));
    }

    // 4. Reorder overhead: the same kernels on slot-ordered vs row-major input, interleaved.
    const overlap::ReorderSource plain{c.data(), nullptr, best_targets.geometry, 0};
    std::vector<Variant> reorder = {
        {[&](int) {
           overlap::restore_row_major(source, o.dtype, shape.m, shape.n, restored.data(), stream);
         },
         &row.restore_reordered_us},
        {[&](int) {
           overlap::restore_row_major(plain, o.dtype, shape.m, shape.n, restored.data(), stream);
         },
         &row.restore_row_major_us}};
    if (shape.n <= 16384) {
      reorder.push_back({[&](int) {
                           overlap::rmsnorm_rows(source, o.dtype, shape.m, shape.n, weight.data(),
                                                 1e-6f, norm_a.data(), stream);
                         },
                         &row.rmsnorm_reordered_us});
      reorder.push_back({[&](int) {
                           overlap::rmsnorm_rows(plain, o.dtype, shape.m, shape.n, weight.data(),
                                                 1e-6f, norm_b.data(), stream);
                         },
                         &row.rmsnorm_row_major_us});
    }
    time_interleaved(stream, o.warmup, o.iterations, o.rounds, reorder);
    if (shape.n <= 16384) {
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
      row.rmsnorm_relative_error = relative_error(norm_a, norm_b, c_count, o.dtype);
    }
    row.cublas_over_kiln = row.cublas_us.median / row.kiln_us.median;
    rows.push_back(row);
    on_row(row);
  }
  return rows;
}

namespace {

const core::Table& overlap_gemm_table() {
  static const core::Table table({{"shape MxNxK", 18},
                                  {"cublas", 9},
                                  {"kiln", 9},
                                  {"kiln+sig", 9},
                                  {"kiln+def", 9},
                                  {"cutlass", 9},
                                  {"TFLOP/s", 8},
                                  {"cub/kiln", 8},
                                  {"rst-rm", 9},
                                  {"rst-reo", 9},
                                  {"rms-rm", 9},
                                  {"rms-reo", 9},
                                  {"rms ovh", 8},
                                  {"gemm err", 8},
                                  {"best schedule"},
                                  {"| caps"}});
  return table;
}

std::string us(double value) {
  return fmt::format("{:.1f}", value);
}

}  // namespace

std::string format_overlap_gemm_header() {
  return overlap_gemm_table().header();
}

std::string format_overlap_gemm_row(const OverlapGemmRow& r) {
  const double flops = 2.0 * r.shape.m * r.shape.n * static_cast<double>(r.shape.k);
  const double overhead = r.rmsnorm_row_major_us.median > 0
                              ? r.rmsnorm_reordered_us.median / r.rmsnorm_row_major_us.median - 1.0
                              : 0.0;
  std::string caps;
  for (const CapTime& c : r.caps)
    caps += fmt::format(" {}:{:.1f}({}w)", c.cap, c.us.median, c.waves);
  return overlap_gemm_table().row(
      {shape_name(r.shape), us(r.cublas_us.median), us(r.kiln_us.median),
       us(r.kiln_signal_us.median), us(r.kiln_deferred_us.median),
       r.cutlass_plain_us.count > 0 ? us(r.cutlass_plain_us.median) : std::string("-"),
       us(flops / (r.kiln_us.median * 1e-6) / 1e12), fmt::format("{:.3f}", r.cublas_over_kiln),
       us(r.restore_row_major_us.median), us(r.restore_reordered_us.median),
       us(r.rmsnorm_row_major_us.median), us(r.rmsnorm_reordered_us.median),
       fmt::format("{:.1f}%", 100.0 * overhead), fmt::format("{:.1e}", r.gemm_relative_error),
       r.best_schedule, "|" + caps});
}

nlohmann::json overlap_gemm_row_to_json(const OverlapGemmRow& r) {
  nlohmann::json j{{"shape", shape_name(r.shape)},
                   {"cublas_us", core::to_json(r.cublas_us)},
                   {"kiln_us", core::to_json(r.kiln_us)},
                   {"kiln_with_signal_us", core::to_json(r.kiln_signal_us)},
                   {"kiln_with_deferred_signal_us", core::to_json(r.kiln_deferred_us)},
                   {"cutlass_plain_us", core::to_json(r.cutlass_plain_us)},
                   {"cutlass_plain_relative_error", r.cutlass_plain_relative_error},
                   {"cublas_over_kiln", r.cublas_over_kiln},
                   {"cublas_algorithm", r.cublas_algorithm},
                   {"best_schedule", r.best_schedule},
                   {"gemm_relative_error", r.gemm_relative_error},
                   {"restore_row_major_us", core::to_json(r.restore_row_major_us)},
                   {"restore_reordered_us", core::to_json(r.restore_reordered_us)},
                   {"rmsnorm_row_major_us", core::to_json(r.rmsnorm_row_major_us)},
                   {"rmsnorm_reordered_us", core::to_json(r.rmsnorm_reordered_us)},
                   {"rmsnorm_relative_error", r.rmsnorm_relative_error}};
  j["caps"] = nlohmann::json::array();
  for (const CapTime& c : r.caps)
    j["caps"].push_back({{"cap", c.cap}, {"waves", c.waves}, {"us", core::to_json(c.us)}});
  j["schedules"] = nlohmann::json::array();
  for (const ScheduleTime& s : r.schedules)
    j["schedules"].push_back(
        {{"schedule", s.schedule}, {"us", s.us}, {"finalist", s.finalist}, {"stage", s.stage}});
  return j;
}

}  // namespace kiln::benchmarks

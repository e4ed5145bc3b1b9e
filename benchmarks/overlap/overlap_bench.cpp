// The per-rank run of `kiln overlap bench` (see overlap_bench.hpp).
#include "benchmarks/overlap/overlap_bench.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>

#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "comm/rank_timing.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/stream.hpp"
#include "core/table.hpp"
#include "core/wall_clock.hpp"
#include "overlap/chunked_reduce_scatter.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/signaling_gemm.hpp"
#include "tune/automatic_plan.hpp"

namespace kiln::benchmarks {
namespace {

using overlap::GemmShape;
using overlap::OverlapOp;

core::TimingStats time_over_ranks(comm::Communicator& comm, cudaStream_t stream, int warmup,
                                  int iterations, const std::function<void(int)>& body,
                                  const std::string& what) {
  const std::vector<float> us = samples_over_ranks(comm, stream, warmup, iterations, body, what);
  return core::summarize(std::span<const float>(us));
}

struct Variant {
  std::string name;
  std::function<void(int)> body;
  core::TimingStats* result;
};

// The final figures: `variants` interleaved over rounds (comm::time_rounds_over_ranks), each
// sample the per-iteration maximum over ranks.
void time_interleaved(comm::Communicator& comm, cudaStream_t stream, int warmup, int iterations,
                      int rounds, const std::vector<Variant>& variants) {
  const auto pooled = comm::time_rounds_over_ranks(
      comm, stream, static_cast<int>(variants.size()), [&](int v, int i) { variants[v].body(i); },
      {warmup, core::per_round(iterations, rounds), rounds}, "overlap bench: interleaved rounds");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    *variants[v].result = core::summarize(std::span<const float>(pooled[v]));
  }
}

// `enqueue` back to back on `stream` for `seconds` (this rank alone: no collective, so the ranks
// need not agree on a count), synchronising every few calls to keep the queue short.
void settle(double seconds, const std::function<void()>& enqueue, cudaStream_t stream) {
  const core::WallTime start = core::wall_now();
  while (core::seconds_since(start) < seconds) {
    for (int i = 0; i < 8; ++i) enqueue();
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

// One collective of the op on `count` output elements (AllReduce in place; ReduceScatter from
// `send` into `recv`, count = elements per rank).
void enqueue_op(comm::Communicator& comm, OverlapOp op, core::DType dtype, void* send, void* recv,
                std::size_t elements, cudaStream_t stream) {
  if (op == OverlapOp::kAllReduce) {
    comm.call("allreduce", [&] {
      return ncclAllReduce(send, send, elements, comm::nccl_type(dtype), ncclSum, comm.get(),
                           stream);
    });
  } else {
    comm.call("reducescatter", [&] {
      return ncclReduceScatter(send, recv, elements / comm.size(), comm::nccl_type(dtype), ncclSum,
                               comm.get(), stream);
    });
  }
}

}  // namespace

void validate(const OverlapBenchOptions& o, int visible_gpus) {
  if (o.world_size < 1 || (visible_gpus >= 0 && o.world_size > visible_gpus)) {
    throw UsageError(fmt::format("-g {}: this host has {} visible GPU(s); accepted range 1..{}",
                                 o.world_size, visible_gpus, std::max(visible_gpus, 1)));
  }
  if (o.dtype != core::DType::kBf16 && o.dtype != core::DType::kFp16) {
    throw UsageError("-d " + core::dtype_name(o.dtype) + ": accepted bf16, fp16");
  }
  if (o.warmup < 0 || o.iterations < 1 || o.sweep_iterations < 1) {
    throw UsageError("-w must be >= 0 and -n, --sweep-iters >= 1");
  }
  for (const GemmShape& s : o.shapes) {
    if (o.op == OverlapOp::kReduceScatter && (s.m % o.world_size) != 0) {
      throw UsageError(
          fmt::format("--shape {}: the serial ReduceScatter baseline needs M "
                      "divisible by the world size {}",
                      shape_name(s), o.world_size));
    }
  }
}

std::vector<std::vector<int>> candidate_partitions(int waves) {
  std::set<std::vector<int>> seen;
  std::vector<std::vector<int>> out;
  const auto add = [&](std::vector<int> p) {
    if (!p.empty() && seen.insert(p).second) out.push_back(std::move(p));
  };
  const auto fill = [&](std::vector<int> p, int step) {
    int used = 0;
    for (int v : p) used += v;
    if (used > waves) return std::vector<int>{};
    while (used < waves) {
      const int size = std::min(step, waves - used);
      p.push_back(size);
      used += size;
    }
    return p;
  };
  add(fill({}, 1));
  add(fill({}, 2));
  add(fill({}, 3));
  add(fill({}, 4));
  add(fill({1}, 2));
  add(fill({1}, 3));
  add(fill({2}, 4));
  std::vector<int> increasing;
  for (int used = 0, size = 1; used < waves; used += increasing.back(), ++size)
    increasing.push_back(std::min(size, waves - used));
  add(increasing);
  add({waves});
  return out;
}

std::size_t fastest_candidate(const std::vector<PlanTime>& probe) {
  if (probe.empty()) throw std::invalid_argument("fastest_candidate: no candidate");
  std::size_t best = 0;
  for (std::size_t i = 1; i < probe.size(); ++i) {
    if (probe[i].us < probe[best].us) best = i;
  }
  return best;
}

std::vector<OverlapRow> run_overlap_bench(comm::Communicator& comm, const OverlapBenchOptions& o,
                                          const std::function<void(const OverlapRow&)>& on_row) {
  const std::size_t element = core::dtype_size(o.dtype);
  const int world = comm.size();
  core::Stream stream, side_stream;
  overlap::CublasGemm cublas;
  std::vector<OverlapRow> rows;
  const std::uint64_t seed_base = 0x6b696c6eull;  // "kiln"; ranks differ through their rank

  for (const GemmShape& shape : o.shapes) {
    OverlapRow row;
    row.shape = shape;
    const std::string name = shape_name(shape);
    const std::size_t a_count = static_cast<std::size_t>(shape.m) * shape.k;
    const std::size_t b_count = static_cast<std::size_t>(shape.n) * shape.k;
    const std::size_t c_count = static_cast<std::size_t>(shape.m) * shape.n;
    core::DeviceBuffer a(a_count * element), b(b_count * element), c(c_count * element),
        reference(c_count * element), recv(c_count / world * element + 16);
    core::fill_random(a.data(), o.dtype, a_count, seed_base + 17 * comm.rank() + 1, o.inputs,
                      stream);
    core::fill_random(b.data(), o.dtype, b_count, seed_base + 17 * comm.rank() + 2, o.inputs,
                      stream);
    const bool nk = o.layout == overlap::WeightLayout::kNK;
    const overlap::MatrixRef a_ref{a.data(), o.dtype, shape.m, shape.k};
    const overlap::MatrixRef b_ref{b.data(), o.dtype, nk ? shape.n : shape.k,
                                   nk ? shape.k : shape.n};

    // --- Baselines: the collective alone and decomposition (cuBLAS alone and serial are timed
    // with kiln in the interleaved final figures below).
    const auto gemm = [&](int rows, const void* a_rows, void* c_rows, cudaStream_t s) {
      cublas.run(rows, shape.n, shape.k, o.dtype, o.layout, a_rows, b.data(), c_rows, s);
    };
    // The baseline picks its cuBLAS algorithm per shape on first use: here, before any timing,
    // for the full shape and for every decomposition chunk.
    gemm(shape.m, a.data(), c.data(), stream);
    for (int chunks : {2, 4, 8}) gemm(shape.m / chunks, a.data(), c.data(), stream);
    row.cublas_algorithm = cublas.chosen(shape.m, shape.n, shape.k, o.dtype, o.layout);
    row.comm_us = time_over_ranks(
        comm, stream, o.warmup, o.iterations,
        [&](int) { enqueue_op(comm, o.op, o.dtype, c.data(), recv.data(), c_count, stream); },
        "collective " + name);

    // Reference for correctness: the full sum, cuBLAS then AllReduce.
    gemm(shape.m, a.data(), reference.data(), stream);
    enqueue_op(comm, OverlapOp::kAllReduce, o.dtype, reference.data(), nullptr, c_count, stream);
    comm.wait(stream, "reference " + name);

    core::Event chunk_done[8];
    core::Event side_done;
    // M in `chunks` row blocks: the GEMM of block i+1 runs beside the collective of block i.
    const auto decomposition = [&](int chunks) {
      return [&, chunks](int) {
        const int rows_per_chunk = shape.m / chunks;
        const std::size_t chunk_count = static_cast<std::size_t>(rows_per_chunk) * shape.n;
        core::Event start(cudaEventDisableTiming);
        start.record(stream);
        KILN_CUDA_CHECK(cudaStreamWaitEvent(side_stream, start.get(), 0));
        for (int i = 0; i < chunks; ++i) {
          char* a_rows = static_cast<char*>(a.data()) +
                         static_cast<std::size_t>(i) * rows_per_chunk * shape.k * element;
          char* c_rows = static_cast<char*>(c.data()) + i * chunk_count * element;
          char* r_rows = static_cast<char*>(recv.data()) + i * chunk_count / world * element;
          gemm(rows_per_chunk, a_rows, c_rows, stream);
          chunk_done[i].record(stream);
          KILN_CUDA_CHECK(cudaStreamWaitEvent(side_stream, chunk_done[i].get(), 0));
          enqueue_op(comm, o.op, o.dtype, c_rows, r_rows, chunk_count, side_stream);
        }
        side_done.record(side_stream);
        KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, side_done.get(), 0));
      };
    };
    double best_decomposition = 1e30;
    for (int chunks : {2, 4, 8}) {
      if (shape.m % (chunks * world) != 0) continue;
      const core::TimingStats t = time_over_ranks(comm, stream, o.warmup, o.iterations,
                                                  decomposition(chunks), "decomposition " + name);
      if (t.median < best_decomposition) {
        best_decomposition = t.median;
        row.decomposition_us = t;
        row.decomposition_chunks = chunks;
      }
    }

    // --- kiln: the given plan, or the best of a sweep (times are max over ranks, so every rank
    // picks the same plan).
    const int device_sms = overlap::current_device_sms();
    const std::size_t out_rows_max = static_cast<std::size_t>(shape.m);
    core::DeviceBuffer out(out_rows_max * shape.n * element);
    overlap::LimitedCommunicatorPool limited(comm);
    const auto options_for = [&](const overlap::Plan& plan, bool trace, bool contiguous = false) {
      overlap::OverlapOptions options;
      options.force_spin_wait = o.spin_wait;
      options.trace = trace;
      options.contiguous_rows = contiguous;
      const overlap::LaunchGeometry launch =
          overlap::host_launch_geometry(shape, plan.gemm, plan.schedule, device_sms);
      options.collective_comm = limited.get(overlap::collective_ctas_for(plan, launch, device_sms));
      return options;
    };
    const auto run_plan = [&](const overlap::Plan& plan, int warmup, int iterations) {
      overlap::GemmCollective op(o.op, shape, o.dtype, o.layout, comm, plan,
                                 options_for(plan, false));
      const overlap::MutableMatrixRef out_ref{out.data(), o.dtype, op.output_rows(), shape.n};
      return time_over_ranks(
          comm, stream, warmup, iterations, [&](int) { op.run(a_ref, b_ref, out_ref, stream); },
          "kiln " + name);
    };
    overlap::Plan chosen;
    if (o.plan) {
      chosen = *o.plan;
      row.plan_source = "given";
    } else if (o.automatic_plan) {
      const tune::PlanLookup found = tune::automatic_plan(comm, o.op, shape, o.dtype);
      chosen = found.plan;
      row.plan_source = found.source;
      row.predicted_us = found.predicted_us;
    } else {
      double best = 1e30;
      const auto try_plan = [&](const overlap::Plan& plan) {
        // A transport the shape or world cannot take (comm=ce2 at a world that is not a power of
        // two, or a tile its subtiles do not divide) is left out of the sweep, not an error.
        if (!overlap::GemmCollective::can_implement(o.op, shape, o.dtype, plan, world).empty())
          return;
        const core::TimingStats t = run_plan(plan, 2, o.sweep_iterations);
        row.sweep.push_back({overlap::to_string(plan), t.median});
        if (t.median < best) {
          best = t.median;
          chosen = plan;
        }
      };
      for (const overlap::GemmConfig& config : o.gemm_configs) {
        auto kernel = overlap::make_signaling_gemm(o.dtype, o.layout, config);
        for (const std::string& transport : o.transports) {
          const bool copy_engine = transport != "nccl";
          if (transport == "ce2" && o.op != overlap::OverlapOp::kAllReduce) continue;
          // Copy engines hold no SM: their caps only shape the waves (and, with ce2, leave SMs
          // to the owners' reductions).
          const std::vector<int>& caps = copy_engine ? o.ce_caps : o.caps;
          for (int cap : caps) {
            if (cap % config.cluster.size() != 0) continue;  // whole clusters only
            for (int swizzle : o.swizzles) {
              overlap::Plan plan;
              plan.gemm = config;
              plan.schedule.cta_cap = cap;
              plan.schedule.swizzle = swizzle;
              plan.copy_engine = copy_engine;
              plan.two_phase = transport == "ce2";
              const overlap::LaunchGeometry launch = kernel->geometry(
                  shape, {cap, plan.schedule.raster_along_n, plan.schedule.swizzle}, device_sms);
              for (const bool deferred : o.deferred_signals) {
                plan.deferred_signal = deferred;
                for (const std::vector<int>& partition : candidate_partitions(launch.waves())) {
                  plan.partition = partition;
                  try_plan(plan);
                }
              }
            }
          }
        }
      }
      if (row.sweep.empty()) {
        throw UsageError(fmt::format(
            "overlap bench {}: no plan of the sweep can run here (--comms, --caps, --ce-caps and "
            "the world size {} leave none; comm=ce2 is an AllReduce of a power-of-two world)",
            name, world));
      }
    }
    row.plan = overlap::to_string(chosen);
    {
      overlap::GemmCollective op(o.op, shape, o.dtype, o.layout, comm, chosen,
                                 options_for(chosen, false));
      row.describe = op.describe();
      row.reorder_bytes = static_cast<double>(op.reorder_bytes());
      row.waves = op.launch().waves();
      const overlap::MutableMatrixRef out_ref{out.data(), o.dtype, op.output_rows(), shape.n};
      // Final figures: every contender of this shape interleaved (see time_interleaved).
      const auto serial = [&](int) {
        gemm(shape.m, a.data(), c.data(), stream);
        enqueue_op(comm, o.op, o.dtype, c.data(), recv.data(), c_count, stream);
      };
      // A serial AllReduce plan's run() is cuBLAS + one NCCL call (no reorder, no signaling GEMM):
      // its "no reorder" figure is run() itself and its GEMM is cuBLAS's, not the signaling path's.
      const bool serial_run = op.runs_serial_baseline();
      std::vector<Variant> final_variants = {
          {"serial " + name, serial, &row.serial_us},
          {"cublas " + name, [&](int) { gemm(shape.m, a.data(), c.data(), stream); },
           &row.cublas_us},
          {"kiln " + name, [&](int) { op.run(a_ref, b_ref, out_ref, stream); }, &row.kiln_us},
          {"kiln (no reorder) " + name,
           [&](int) {
             if (serial_run)
               op.run(a_ref, b_ref, out_ref, stream);
             else
               op.run_without_reorder(a_ref, b_ref, stream);
           },
           &row.kiln_no_reorder_us},
          {"kiln gemm " + name,
           [&](int) {
             if (serial_run)
               gemm(shape.m, a.data(), c.data(), stream);
             else
               op.run_gemm_only(a_ref, b_ref, stream);
           },
           &row.kiln_gemm_us}};
      if (row.decomposition_chunks > 0) {
        final_variants.push_back({"decomposition " + name, decomposition(row.decomposition_chunks),
                                  &row.decomposition_us});
      }
      // The same plan with contiguous row blocks, where it applies, rastered along M
      // (overlap::contiguous_rows_plan).
      std::unique_ptr<overlap::GemmCollective> contiguous;
      const overlap::Plan contiguous_plan = overlap::contiguous_rows_plan(chosen);
      row.has_contiguous = o.op == OverlapOp::kReduceScatter &&
                           overlap::GemmCollective::can_implement(
                               o.op, shape, o.dtype, contiguous_plan, world, device_sms, true)
                               .empty();
      if (row.has_contiguous) {
        row.contiguous_plan = overlap::to_string(contiguous_plan);
        contiguous = std::make_unique<overlap::GemmCollective>(
            o.op, shape, o.dtype, o.layout, comm, contiguous_plan,
            options_for(contiguous_plan, false, true));
      }
      core::DeviceBuffer contiguous_out(row.has_contiguous ? out.bytes() : 0);
      const overlap::MutableMatrixRef contiguous_ref{
          contiguous_out.data(), o.dtype, row.has_contiguous ? contiguous->output_rows() : 0,
          shape.n};
      if (row.has_contiguous) {
        final_variants.push_back(
            {"kiln contiguous " + name,
             [&](int) { contiguous->run(a_ref, b_ref, contiguous_ref, stream); },
             &row.kiln_contiguous_us});
        final_variants.push_back({"kiln gemm contiguous " + name,
                                  [&](int) { contiguous->run_gemm_only(a_ref, b_ref, stream); },
                                  &row.kiln_contiguous_gemm_us});
      }
      // The same plan with a copy stream per peer, where that differs from one stream.
      row.has_peer_streams =
          o.ab_copy_streams && chosen.copy_engine && !chosen.two_phase && world >= 3;
      row.ab_copy_streams_skipped = o.ab_copy_streams && !row.has_peer_streams;
      std::unique_ptr<overlap::GemmCollective> peer_streams;
      core::DeviceBuffer peer_streams_out(row.has_peer_streams ? out.bytes() : 0);
      if (row.has_peer_streams) {
        overlap::OverlapOptions options = options_for(chosen, false);
        options.copy_stream_per_peer = true;
        peer_streams = std::make_unique<overlap::GemmCollective>(o.op, shape, o.dtype, o.layout,
                                                                 comm, chosen, options);
      }
      const overlap::MutableMatrixRef peer_streams_ref{
          peer_streams_out.data(), o.dtype, row.has_peer_streams ? peer_streams->output_rows() : 0,
          shape.n};
      if (row.has_peer_streams) {
        final_variants.push_back(
            {"kiln, a copy stream per peer " + name,
             [&](int) { peer_streams->run(a_ref, b_ref, peer_streams_ref, stream); },
             &row.kiln_peer_streams_us});
      }
      // PyTorch async-TP's algorithm from kiln's parts (overlap/chunked_reduce_scatter.hpp): the
      // best cuBLAS per destination chunk, copy engines, a sum; interleaved with the rest.
      row.has_chunked = o.op == OverlapOp::kReduceScatter &&
                        overlap::ChunkedReduceScatter::can_implement(shape, o.dtype, world).empty();
      std::unique_ptr<overlap::ChunkedReduceScatter> chunked;
      core::DeviceBuffer chunked_out(row.has_chunked ? c_count / world * element : 0);
      if (row.has_chunked) {
        chunked = std::make_unique<overlap::ChunkedReduceScatter>(comm, shape, o.dtype, o.layout,
                                                                  device_sms, o.spin_wait);
        chunked->run(a.data(), b.data(), chunked_out.data(), stream);  // picks cuBLAS's algorithm
        comm.wait(stream, "chunked " + name);
        final_variants.push_back(
            {"chunked cuBLAS + copy engines " + name,
             [&](int) { chunked->run(a.data(), b.data(), chunked_out.data(), stream); },
             &row.chunked_us});
      }
      row.has_chunked_two_streams = row.has_chunked && o.ab_chunked_streams;
      std::unique_ptr<overlap::ChunkedReduceScatter> chunked_two;
      core::DeviceBuffer chunked_two_out(row.has_chunked_two_streams ? chunked_out.bytes() : 0);
      if (row.has_chunked_two_streams) {
        chunked_two = std::make_unique<overlap::ChunkedReduceScatter>(
            comm, shape, o.dtype, o.layout, device_sms, o.spin_wait, 2);
        chunked_two->run(a.data(), b.data(), chunked_two_out.data(), stream);
        comm.wait(stream, "chunked, two streams " + name);
        final_variants.push_back(
            {"chunked, two compute streams " + name,
             [&](int) { chunked_two->run(a.data(), b.data(), chunked_two_out.data(), stream); },
             &row.chunked_two_streams_us});
      }
      // kiln's choice of ReduceScatter algorithm (OverlapRow::choice): a short interleaved probe
      // of the candidates, before the final rounds and apart from them.
      std::vector<Variant> candidates;
      if (o.automatic_plan && o.op == OverlapOp::kReduceScatter) {
        for (const Variant& v : final_variants) {
          if (v.result == &row.kiln_us || v.result == &row.kiln_contiguous_us ||
              v.result == &row.chunked_us)
            candidates.push_back(v);
        }
      }
      if (candidates.size() > 1) {
        std::vector<core::TimingStats> probe(candidates.size());
        std::vector<Variant> probed = candidates;
        for (std::size_t i = 0; i < probed.size(); ++i) probed[i].result = &probe[i];
        time_interleaved(comm, stream, 2, 10, 2, probed);
        for (std::size_t i = 0; i < probed.size(); ++i) {
          const core::TimingStats* final_stats = candidates[i].result;
          row.choice_probe.push_back({final_stats == &row.chunked_us           ? kChoiceChunked
                                      : final_stats == &row.kiln_contiguous_us ? kChoiceContiguous
                                                                               : kChoicePlan,
                                      probe[i].median});
        }
        row.choice = row.choice_probe[fastest_candidate(row.choice_probe)].plan;
      }
      settle(
          o.settle_seconds, [&] { gemm(shape.m, a.data(), c.data(), stream); }, stream);
      time_interleaved(comm, stream, o.warmup, o.iterations, o.rounds, final_variants);
      if (!row.choice.empty()) {
        row.choice_us = row.choice == kChoiceChunked      ? row.chunked_us
                        : row.choice == kChoiceContiguous ? row.kiln_contiguous_us
                                                          : row.kiln_us;
      }

      // The last wave's data through the collective alone (for the bound).
      const int last_wave_slots =
          op.launch().slots - (op.launch().waves() - 1) * op.launch().grid_ctas;
      const std::size_t last_count =
          static_cast<std::size_t>(last_wave_slots) * op.geometry().tile_elements();
      const std::size_t last_elements = std::min(last_count / world * world, c_count);
      row.last_wave_comm_us = time_over_ranks(
          comm, stream, o.warmup, o.iterations,
          [&](int) {
            enqueue_op(comm, o.op, o.dtype, c.data(), recv.data(), last_elements, stream);
          },
          "last-wave collective " + name);

      // The relative error of an output against the serial reference, max over ranks: `run_into`
      // writes `rows` rows into `into`, local row lr being global row `global_row(lr)`.
      const auto error_of_rows = [&](const std::function<void()>& run_into, void* into, int rows,
                                     const std::function<int(int)>& global_row) {
        core::poison(into, static_cast<std::size_t>(rows) * shape.n * element, stream);
        run_into();
        comm.wait(stream, "kiln check " + name);
        std::vector<std::uint16_t> got(static_cast<std::size_t>(rows) * shape.n);
        std::vector<std::uint16_t> want(c_count);
        KILN_CUDA_CHECK(cudaMemcpy(got.data(), into, got.size() * 2, cudaMemcpyDeviceToHost));
        KILN_CUDA_CHECK(
            cudaMemcpy(want.data(), reference.data(), want.size() * 2, cudaMemcpyDeviceToHost));
        double diff = 0.0, norm = 0.0;
        bool finite = true;
        for (int lr = 0; lr < rows; ++lr) {
          const std::size_t g = static_cast<std::size_t>(global_row(lr)) * shape.n;
          for (int col = 0; col < shape.n; ++col) {
            const double x = core::half_bits_to_float(
                got[static_cast<std::size_t>(lr) * shape.n + col], o.dtype);
            const double y = core::half_bits_to_float(want[g + col], o.dtype);
            finite = finite && std::isfinite(x);
            diff += (x - y) * (x - y);
            norm += y * y;
          }
        }
        const double error = finite ? std::sqrt(diff / std::max(norm, 1e-30)) : 1e30;
        return max_over_ranks(comm, error, stream);
      };
      const auto error_of = [&](overlap::GemmCollective& checked,
                                const overlap::MutableMatrixRef& into) {
        return error_of_rows([&] { checked.run(a_ref, b_ref, into, stream); }, into.data,
                             checked.output_rows(), [&](int lr) { return checked.global_row(lr); });
      };
      if (o.check) {
        row.relative_error = error_of(op, out_ref);
        if (row.has_contiguous)
          row.contiguous_relative_error = error_of(*contiguous, contiguous_ref);
        if (row.has_peer_streams)
          row.peer_streams_relative_error = error_of(*peer_streams, peer_streams_ref);
        if (row.has_chunked) {
          row.chunked_relative_error =
              error_of_rows([&] { chunked->run(a.data(), b.data(), chunked_out.data(), stream); },
                            chunked_out.data(), chunked->output_rows(),
                            [&](int lr) { return chunked->global_row(lr); });
        }
        if (row.has_chunked_two_streams) {
          row.chunked_two_streams_relative_error = error_of_rows(
              [&] { chunked_two->run(a.data(), b.data(), chunked_two_out.data(), stream); },
              chunked_two_out.data(), chunked_two->output_rows(),
              [&](int lr) { return chunked_two->global_row(lr); });
        }
        row.correct =
            row.relative_error <= 1e-2 &&
            (!row.has_contiguous || row.contiguous_relative_error <= 1e-2) &&
            (!row.has_peer_streams || row.peer_streams_relative_error <= 1e-2) &&
            (!row.has_chunked || row.chunked_relative_error <= 1e-2) &&
            (!row.has_chunked_two_streams || row.chunked_two_streams_relative_error <= 1e-2);
      }
    }
    {
      overlap::GemmCollective traced(o.op, shape, o.dtype, o.layout, comm, chosen,
                                     options_for(chosen, true));
      traced.run_without_reorder(a_ref, b_ref, stream);
      comm.wait(stream, "kiln timeline " + name);
      // The second, warm run is reported. A collective on the same stream first lines the ranks
      // up (host waits leave them tens to hundreds of µs apart, and group 0's collective would
      // then show the other rank's lateness instead of its own duration).
      enqueue_op(comm, OverlapOp::kAllReduce, o.dtype, c.data(), nullptr, 8, stream);
      traced.run_without_reorder(a_ref, b_ref, stream);
      comm.wait(stream, "kiln timeline " + name);
      row.timeline = traced.timeline();
    }

    // Theoretical bound (FlashOverlap's): the fastest GEMM measured plus the last wave's
    // communication when the GEMM dominates; else one wave of GEMM plus all the communication.
    const double gemm_us = std::min(row.cublas_us.median, row.kiln_gemm_us.median);
    row.bound_us = gemm_us >= row.comm_us.median ? gemm_us + row.last_wave_comm_us.median
                                                 : gemm_us / row.waves + row.comm_us.median;
    row.speedup_vs_serial = row.serial_us.median / row.kiln_us.median;
    row.speedup_vs_decomposition =
        row.decomposition_chunks ? row.decomposition_us.median / row.kiln_us.median : 0.0;
    row.fraction_of_bound = row.bound_us / row.kiln_us.median;
    if (!row.choice.empty()) {
      row.speedup_choice_vs_serial = row.serial_us.median / row.choice_us.median;
      row.fraction_of_bound_choice = row.bound_us / row.choice_us.median;
    }
    rows.push_back(row);
    on_row(row);
  }
  return rows;
}

namespace {

const core::Table& overlap_table() {
  static const core::Table table({{"shape MxNxK", 18},
                                  {"gemm", 9},
                                  {"comm", 9},
                                  {"serial", 9},
                                  {"decomp", 9},
                                  {"kiln", 9},
                                  {"kiln-nr", 9},
                                  {"kiln-cr", 9},
                                  {"bound", 9},
                                  {"x serial", 8},
                                  {"x decomp", 8},
                                  {"%bound", 7},
                                  {"rel.err", 9},
                                  {"plan"}});
  return table;
}

std::string us(double value) {
  return fmt::format("{:.1f}", value);
}

// The sweep's fastest plan of each transport (comm=nccl, ce, ce2), in the order they first
// appear: how the transports compare in the same rounds.
std::vector<std::pair<std::string, PlanTime>> best_per_transport(
    const std::vector<PlanTime>& sweep) {
  std::vector<std::pair<std::string, PlanTime>> best;
  for (const PlanTime& p : sweep) {
    const std::string transport = overlap::transport_name(overlap::parse_plan(p.plan, "sweep"));
    auto it = std::find_if(best.begin(), best.end(),
                           [&](const auto& entry) { return entry.first == transport; });
    if (it == best.end()) {
      best.emplace_back(transport, p);
    } else if (p.us < it->second.us) {
      it->second = p;
    }
  }
  return best;
}

}  // namespace

std::string format_overlap_header() {
  return overlap_table().header();
}

std::string format_overlap_row(const OverlapRow& r) {
  return overlap_table().row({shape_name(r.shape), us(r.cublas_us.median), us(r.comm_us.median),
                              us(r.serial_us.median), us(r.decomposition_us.median),
                              us(r.kiln_us.median), us(r.kiln_no_reorder_us.median),
                              r.has_contiguous ? us(r.kiln_contiguous_us.median) : "-",
                              us(r.bound_us), fmt::format("{:.3f}", r.speedup_vs_serial),
                              fmt::format("{:.3f}", r.speedup_vs_decomposition),
                              fmt::format("{:.1f}%", 100.0 * r.fraction_of_bound),
                              fmt::format("{:.2e}", r.relative_error), r.plan});
}

nlohmann::json overlap_row_to_json(const OverlapRow& r) {
  nlohmann::json j;
  j["shape"] = shape_name(r.shape);
  j["m"] = r.shape.m;
  j["n"] = r.shape.n;
  j["k"] = r.shape.k;
  j["cublas_gemm_us"] = core::to_json(r.cublas_us);
  j["kiln_gemm_us"] = core::to_json(r.kiln_gemm_us);
  j["collective_us"] = core::to_json(r.comm_us);
  j["last_wave_collective_us"] = core::to_json(r.last_wave_comm_us);
  j["serial_us"] = core::to_json(r.serial_us);
  j["decomposition_us"] = core::to_json(r.decomposition_us);
  j["decomposition_chunks"] = r.decomposition_chunks;
  j["kiln_us"] = core::to_json(r.kiln_us);
  j["kiln_without_reorder_us"] = core::to_json(r.kiln_no_reorder_us);
  if (r.has_contiguous) {
    j["kiln_contiguous_rows_us"] = core::to_json(r.kiln_contiguous_us);
    j["contiguous_rows_plan"] = r.contiguous_plan;
    j["kiln_contiguous_rows_gemm_us"] = core::to_json(r.kiln_contiguous_gemm_us);
    j["contiguous_rows_relative_error"] = r.contiguous_relative_error;
  }
  if (r.has_chunked) {
    j["chunked_us"] = core::to_json(r.chunked_us);
    j["chunked_relative_error"] = r.chunked_relative_error;
  }
  if (!r.choice.empty()) {
    j["choice"] = r.choice;
    j["choice_us"] = core::to_json(r.choice_us);
    j["speedup_choice_vs_serial"] = r.speedup_choice_vs_serial;
    j["fraction_of_bound_choice"] = r.fraction_of_bound_choice;
    nlohmann::json probe = nlohmann::json::object();
    for (const PlanTime& p : r.choice_probe) probe[p.plan] = p.us;
    j["choice_probe_us"] = probe;
  }
  if (r.has_chunked_two_streams) {
    j["chunked_two_streams_us"] = core::to_json(r.chunked_two_streams_us);
    j["chunked_two_streams_relative_error"] = r.chunked_two_streams_relative_error;
  }
  if (r.has_peer_streams) {
    j["kiln_peer_streams_us"] = core::to_json(r.kiln_peer_streams_us);
    j["peer_streams_relative_error"] = r.peer_streams_relative_error;
  }
  j["reorder_bytes"] = r.reorder_bytes;
  j["bound_us"] = r.bound_us;
  j["speedup_vs_serial"] = r.speedup_vs_serial;
  j["speedup_vs_decomposition"] = r.speedup_vs_decomposition;
  j["fraction_of_bound"] = r.fraction_of_bound;
  j["relative_error"] = r.relative_error;
  j["correct"] = r.correct;
  j["plan"] = r.plan;
  j["plan_source"] = r.plan_source;
  j["cublas_algorithm"] = r.cublas_algorithm;
  j["predicted_us"] = r.predicted_us;
  j["describe"] = r.describe;
  j["waves"] = r.waves;
  j["sweep"] = nlohmann::json::array();
  for (const PlanTime& p : r.sweep) j["sweep"].push_back({{"plan", p.plan}, {"us", p.us}});
  j["sweep_fastest_per_transport"] = nlohmann::json::object();
  for (const auto& [transport, p] : best_per_transport(r.sweep)) {
    j["sweep_fastest_per_transport"][transport] = {{"plan", p.plan}, {"us", p.us}};
  }
  j["timeline"] = nlohmann::json::array();
  for (const overlap::GroupTimeline& t : r.timeline) {
    j["timeline"].push_back({{"group", t.group},
                             {"waves", t.waves},
                             {"bytes", t.bytes},
                             {"compute_done_us", t.compute_done_us},
                             {"comm_start_us", t.comm_start_us},
                             {"comm_done_us", t.comm_done_us}});
  }
  return j;
}

std::string format_overlap_row_details(const OverlapRow& row, bool automatic_plan) {
  std::string out = fmt::format("#   {}\n", row.describe);
  if (automatic_plan) {
    out += fmt::format(
        "#   plan from {}; predicted {}\n", row.plan_source,
        row.predicted_us >= 0 ? fmt::format("{:.1f} us", row.predicted_us) : std::string("-"));
  }
  // The reorder's time as the difference of two medians (kiln with and without it), and the HBM
  // rate that makes: how far the fused reduction is from the memory ceiling.
  const double reorder_us = row.kiln_us.median - row.kiln_no_reorder_us.median;
  if (row.reorder_bytes > 0 && reorder_us > 0) {
    out += fmt::format(
        "#   reorder: {:.1f} us (kiln - kiln-nr) for {:.1f} MiB read and written, "
        "{:.0f} GB/s\n",
        reorder_us, row.reorder_bytes / (1 << 20), row.reorder_bytes / reorder_us / 1e3);
  }
  if (const auto best = best_per_transport(row.sweep); best.size() > 1) {
    out += "#   sweep, fastest of each transport:";
    for (const auto& [transport, p] : best) {
      out += fmt::format(" {} {:.1f} us ({});", transport, p.us, p.plan);
    }
    out += "\n";
  }
  if (row.ab_copy_streams_skipped) {
    out += "#   --ab-copy-streams: not timed (the plan is not comm=ce, or fewer than 3 ranks)\n";
  }
  if (row.has_chunked) {
    out += fmt::format(
        "#   chunked cuBLAS + copy engines (async-TP's algorithm from kiln's parts): {:.1f} us, "
        "x{:.3f} vs serial, kiln x{:.3f} vs it\n",
        row.chunked_us.median, row.serial_us.median / row.chunked_us.median,
        row.chunked_us.median / row.kiln_us.median);
  }
  if (!row.choice.empty()) {
    out += fmt::format(
        "#   kiln's choice: {}, {:.1f} us, x{:.3f} vs serial, {:.1f}% of the bound (probe:",
        row.choice, row.choice_us.median, row.speedup_choice_vs_serial,
        100.0 * row.fraction_of_bound_choice);
    for (const PlanTime& p : row.choice_probe) out += fmt::format(" {} {:.1f} us;", p.plan, p.us);
    out += " slowest rank, before the final rounds)\n";
  }
  if (row.has_chunked_two_streams) {
    out += fmt::format(
        "#   chunked on two compute streams: {:.1f} us against {:.1f} us on one (x{:.3f})\n",
        row.chunked_two_streams_us.median, row.chunked_us.median,
        row.chunked_two_streams_us.median / row.chunked_us.median);
  }
  if (row.has_peer_streams) {
    out += fmt::format("#   a copy stream per peer: {:.1f} us against {:.1f} us on one (x{:.3f})\n",
                       row.kiln_peer_streams_us.median, row.kiln_us.median,
                       row.kiln_us.median / row.kiln_peer_streams_us.median);
  }
  for (const overlap::GroupTimeline& t : row.timeline) {
    out += fmt::format(
        "#   group {:2}: {} wave(s) {:8.1f} MiB  compute done {:8.1f}  comm {:8.1f} -> {:8.1f} "
        "us\n",
        t.group, t.waves, static_cast<double>(t.bytes) / (1 << 20), t.compute_done_us,
        t.comm_start_us, t.comm_done_us);
  }
  return out;
}

nlohmann::json overlap_bench_json(const OverlapBenchOptions& o, const std::vector<OverlapRow>& rows,
                                  int world) {
  nlohmann::json result;
  result["op"] = overlap::overlap_op_name(o.op);
  result["dtype"] = core::dtype_name(o.dtype);
  result["layout"] = overlap::weight_layout_name(o.layout);
  result["world_size"] = world;
  result["warmup"] = o.warmup;
  result["iterations"] = o.iterations;
  result["settle_seconds"] = o.settle_seconds;
  result["inputs"] = core::value_distribution_name(o.inputs);
  result["ab_copy_streams"] = o.ab_copy_streams;
  result["ab_chunked_streams"] = o.ab_chunked_streams;
  result["rows"] = nlohmann::json::array();
  for (const OverlapRow& row : rows) result["rows"].push_back(overlap_row_to_json(row));
  return result;
}

}  // namespace kiln::benchmarks

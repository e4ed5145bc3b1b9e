// Text forms of the GEMM values (see gemm_shape.hpp).
#include "overlap/gemm_shape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/error.hpp"

namespace kiln::overlap {

std::string weight_layout_name(WeightLayout layout) {
  return layout == WeightLayout::kNK ? "nk" : "kn";
}

WeightLayout parse_weight_layout(const std::string& text, const std::string& argument) {
  if (text == "nk") return WeightLayout::kNK;
  if (text == "kn") return WeightLayout::kKN;
  throw UsageError(argument + " " + text +
                   ": unknown weight layout; accepted: nk (B stored N×K, C = A·Bᵀ), kn (K×N)");
}

std::string shape_name(const GemmShape& s) {
  return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

GemmShape parse_shape(const std::string& text, const std::string& argument) {
  GemmShape shape;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%dx%dx%d%c", &shape.m, &shape.n, &shape.k, &extra) != 3) {
    throw UsageError(fmt::format("{} {}: expected MxNxK, e.g. 4096x8192x8192", argument, text));
  }
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.n % 8 || shape.k % 8) {
    throw UsageError(
        fmt::format("{} {}: M, N, K must be positive, N and K multiples of 8", argument, text));
  }
  return shape;
}

std::vector<GemmShape> default_overlap_shapes() {
  return {{4096, 8192, 8192},  {8192, 8192, 8192}, {16384, 8192, 4096},
          {8192, 4096, 14336}, {4096, 8192, 2048}, {16384, 16384, 2048}};
}

std::string overlap_op_name(OverlapOp op) {
  return op == OverlapOp::kReduceScatter ? "rs" : "ar";
}

OverlapOp parse_overlap_op(const std::string& text, const std::string& argument) {
  if (text == "rs" || text == "reducescatter") return OverlapOp::kReduceScatter;
  if (text == "ar" || text == "allreduce") return OverlapOp::kAllReduce;
  throw UsageError(argument + " " + text +
                   ": unknown; accepted: rs (ReduceScatter), ar (AllReduce)");
}

std::string tile_name(TileShape tile) {
  return std::to_string(tile.m) + "x" + std::to_string(tile.n);
}

std::string kernel_schedule_name(KernelSchedule schedule) {
  switch (schedule) {
    case KernelSchedule::kPingpong:
      return "pingpong";
    case KernelSchedule::kCooperativeSplitN:
      return "coop-n";
    case KernelSchedule::kPingpongSwapAB:
      return "pingpong-swap";
    default:
      return "coop";
  }
}

KernelSchedule parse_kernel_schedule(const std::string& text, const std::string& argument) {
  for (const KernelSchedule k : {KernelSchedule::kCooperative, KernelSchedule::kCooperativeSplitN,
                                 KernelSchedule::kPingpong, KernelSchedule::kPingpongSwapAB}) {
    if (text == kernel_schedule_name(k)) return k;
  }
  throw UsageError(
      fmt::format("{} kernel={}: accepted coop, coop-n, pingpong, pingpong-swap", argument, text));
}

std::string gemm_config_name(const GemmConfig& config) {
  return fmt::format("tile={} cluster={}x{} kernel={}", tile_name(config.tile), config.cluster.m,
                     config.cluster.n, kernel_schedule_name(config.kernel));
}

SchedulerFrame scheduler_frame(const GemmShape& shape, const GemmConfig& config) {
  if (config.kernel != KernelSchedule::kPingpongSwapAB)
    return {shape, config.tile, config.cluster, false};
  return {{shape.n, shape.m, shape.k},
          {config.tile.n, config.tile.m},
          {config.cluster.n, config.cluster.m},
          true};
}

const std::vector<GemmConfig>& built_gemm_configs() {
  using enum KernelSchedule;
  // Must match the dispatch in sm90_gemm_parts.cuh (tests/cpu: GemmConfigs). Cooperative 256x192
  // (192 accumulators per thread, the nearest to cuBLAS's 192x192 and 256x152 tiles) spilled in
  // run 4 because of the epilogue's alignment trap in the per-tile path; with the check in the
  // tail (and the tests' signal delay taken by every consumer thread) it compiles without spills
  // (scripts/probe_gemm_registers.sh). cuBLAS's 192x192 tile (split along N) compiles without
  // spills too but is not built: the slot layout took only power-of-two tile heights until
  // 2026-12-01 (slot_geometry now splits other heights by division; no such kernel is built yet).
  // Ping-pong 128x192 (192 accumulators per thread in each warp group, near cuBLAS's 5-stage
  // 128x176 kernel at K = 2048) spilled 408 B until the epilogue stopped reading per-element
  // coordinates from a CuTe tensor; 116 B remain. Ping-pong 128x160 and 128x176 are cuBLAS's
  // ping-pong-style widths (160 and 176 accumulators per thread; their GMMA instructions named
  // in sm90_gemm_parts.cuh), stored in 32- and 16-column boxes. Ping-pong 128x144 (16-column
  // boxes) fits N = 8192 at M = 4096 into waves as evenly as cuBLAS's 128x168
  // (sm90_gemm_parts.cuh); the search picked it on 3 of 60 rows of issue 17's table
  // (docs/results/2026-11-30j-wave-fit/). Ping-pong 192x128 (three 64-row atoms per warp group, 192
  // accumulators per thread, 0 spills) fills 16384x4096 in 21 waves at 98.5% where every 128-row
  // tile reaches 97% (docs/research/gemm-tile-heights-for-the-last-wave.md); its rows are split by
  // division in the slot layout. Ping-pong-swap 144x128 and 160x128 (the kernel's 128x144 and
  // 128x160 ping-pong main loops on Cᵀ) are the tile heights of cuBLAS's swapped kernels: M = 5000
  // in 35 row tiles of 144 fills 17 waves at 99% where every 128-row tile reaches 95%, and
  // 16384x4096 in 160-row tiles 99.3% (the research note). Clusters 1x2 only: both shapes have an
  // odd number of row tiles, which a 2x1 cluster would pad.
  static const std::vector<GemmConfig> configs = {
      {{128, 256}, {2, 1}, kCooperative},       {{128, 128}, {2, 1}, kCooperative},
      {{256, 128}, {2, 1}, kCooperative},       {{256, 128}, {1, 2}, kCooperative},
      {{128, 256}, {1, 2}, kCooperative},       {{128, 256}, {1, 1}, kCooperative},
      {{256, 128}, {1, 1}, kCooperative},       {{128, 128}, {2, 1}, kPingpong},
      {{128, 128}, {1, 2}, kPingpong},          {{64, 256}, {1, 1}, kPingpong},
      {{256, 192}, {2, 1}, kCooperative},       {{256, 192}, {1, 2}, kCooperative},
      {{128, 320}, {2, 1}, kCooperativeSplitN}, {{128, 192}, {1, 2}, kPingpong},
      {{128, 192}, {2, 1}, kPingpong},          {{128, 160}, {2, 1}, kPingpong},
      {{128, 160}, {1, 2}, kPingpong},          {{128, 176}, {2, 1}, kPingpong},
      {{128, 176}, {1, 2}, kPingpong},          {{128, 144}, {2, 1}, kPingpong},
      {{128, 144}, {1, 2}, kPingpong},          {{192, 128}, {2, 1}, kPingpong},
      {{192, 128}, {1, 2}, kPingpong},          {{144, 128}, {1, 2}, kPingpongSwapAB},
      {{160, 128}, {1, 2}, kPingpongSwapAB},
  };
  return configs;
}

bool awaits_gpu_check(const GemmConfig&) {
  // None now. Ping-pong 192x128 and ping-pong-swap 144x128 / 160x128 waited here until their
  // checks passed on an H200 (docs/results/2026-12-01b-tile-192/, calls 1-5): against cuBLAS, the
  // host launch geometry, the overlap runtime at 1, 2 and 4 ranks, memcheck and racecheck. A new
  // kernel is listed here until it has done the same.
  return false;
}

void check_gemm_config_built(const GemmConfig& config, const std::string& argument) {
  const auto& built = built_gemm_configs();
  if (std::find(built.begin(), built.end(), config) != built.end()) return;
  std::string list;
  for (const GemmConfig& c : built) list += "\n  " + gemm_config_name(c);
  throw UsageError(
      fmt::format("{} {}: not built; kiln builds:{}", argument, gemm_config_name(config), list));
}

}  // namespace kiln::overlap

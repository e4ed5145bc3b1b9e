// Parsing, printing and checking overlap plans, and the wave-group tables they imply.
#include "overlap/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <sstream>

#include "core/error.hpp"

namespace kiln::overlap {
namespace {

int parse_int(const std::string& text, const std::string& what) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(fmt::format("{}: '{}' is not an integer", what, text));
  }
  return value;
}

}  // namespace

std::string partition_string(const std::vector<int>& partition) {
  return partition.empty() ? std::string("each") : fmt::format("{}", fmt::join(partition, ","));
}

std::string transport_name(const Plan& plan) {
  return !plan.copy_engine ? "nccl" : plan.two_phase ? "ce2" : "ce";
}

std::string scheduler_words(const ScheduleOptions& schedule) {
  if (!schedule.claimed_tiles) return "";
  return schedule.serpentine ? " scheduler=serpentine" : " scheduler=claimed";
}

std::string to_string(const Plan& plan) {
  const GemmConfig& g = plan.gemm;
  std::string kernel;
  if (!(g.cluster == ClusterShape{}) || g.kernel != KernelSchedule::kCooperative) {
    kernel = fmt::format(" cluster={}x{} kernel={}", g.cluster.m, g.cluster.n,
                         kernel_schedule_name(g.kernel));
  }
  return fmt::format("tile={}{} cap={} raster={} swizzle={}{} signal={} comm={} groups={}",
                     tile_name(g.tile), kernel, plan.schedule.cta_cap,
                     plan.schedule.raster_along_n ? "n" : "m", plan.schedule.swizzle,
                     scheduler_words(plan.schedule), plan.deferred_signal ? "deferred" : "eager",
                     transport_name(plan), partition_string(plan.partition));
}

std::vector<int> parse_partition(const std::string& text, const std::string& argument) {
  if (text == "each") return {};
  std::vector<int> partition;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const int waves = parse_int(item, argument + " groups");
    if (waves < 1) {
      throw UsageError(
          fmt::format("{} groups: {} waves in a group; each group needs >= 1", argument, waves));
    }
    partition.push_back(waves);
  }
  if (partition.empty()) {
    throw UsageError(argument + " groups: empty; give waves per group, e.g. 1,2,2,3, or 'each'");
  }
  return partition;
}

void validate_plan(const Plan& plan, const std::string& argument) {
  check_gemm_config_built(plan.gemm, argument);
  if (plan.schedule.cta_cap < 0 || plan.schedule.cta_cap > 1024) {
    throw UsageError(fmt::format("{} cap={}: accepted range 0 (every SM) .. 1024", argument,
                                 plan.schedule.cta_cap));
  }
  const int cluster = plan.gemm.cluster.size();
  if (plan.schedule.cta_cap % cluster != 0) {
    throw UsageError(
        fmt::format("{} cap={}: must be a multiple of {} (the GEMM launches clusters of {} CTAs)",
                    argument, plan.schedule.cta_cap, cluster, cluster));
  }
  if (plan.two_phase && !plan.copy_engine) {
    throw UsageError(argument + ": a two-phase plan moves its data by copy engine (comm=ce2)");
  }
  const int swizzle = plan.schedule.swizzle;
  if (swizzle < 1 || swizzle > kMaxSwizzle || (swizzle & (swizzle - 1)) != 0) {
    throw UsageError(fmt::format("{} swizzle={}: accepted 1, 2, 4, 8, 16, 32", argument, swizzle));
  }
  if (plan.schedule.claimed_tiles && !is_pingpong(plan.gemm.kernel)) {
    throw UsageError(fmt::format(
        "{} scheduler=claimed: built for kernel=pingpong and kernel=pingpong-swap, not kernel={}",
        argument, kernel_schedule_name(plan.gemm.kernel)));
  }
}

Plan parse_plan(const std::string& text, const std::string& argument) {
  Plan plan;
  std::stringstream stream(text);
  std::string field;
  while (stream >> field) {
    const std::size_t eq = field.find('=');
    if (eq == std::string::npos) {
      throw UsageError(
          fmt::format("{}: '{}' is not key=value; keys: tile, cluster, kernel, cap, "
                      "raster, swizzle, scheduler, signal, comm, groups",
                      argument, field));
    }
    const std::string key = field.substr(0, eq);
    const std::string value = field.substr(eq + 1);
    if (key == "tile") {
      const std::size_t x = value.find('x');
      if (x == std::string::npos) {
        throw UsageError(fmt::format("{} tile={}: expected MxN, e.g. 128x256", argument, value));
      }
      plan.gemm.tile = {parse_int(value.substr(0, x), argument + " tile"),
                        parse_int(value.substr(x + 1), argument + " tile")};
    } else if (key == "cluster") {
      const std::size_t x = value.find('x');
      if (x == std::string::npos) {
        throw UsageError(fmt::format("{} cluster={}: expected MxN, e.g. 2x1", argument, value));
      }
      plan.gemm.cluster = {parse_int(value.substr(0, x), argument + " cluster"),
                           parse_int(value.substr(x + 1), argument + " cluster")};
    } else if (key == "kernel") {
      plan.gemm.kernel = parse_kernel_schedule(value, argument);
    } else if (key == "cap") {
      plan.schedule.cta_cap = parse_int(value, argument + " cap");
    } else if (key == "raster") {
      if (value != "n" && value != "m") {
        throw UsageError(fmt::format("{} raster={}: accepted n, m", argument, value));
      }
      plan.schedule.raster_along_n = value == "n";
    } else if (key == "swizzle") {
      plan.schedule.swizzle = parse_int(value, argument + " swizzle");
    } else if (key == "scheduler") {
      if (value != "static" && value != "claimed" && value != "serpentine") {
        throw UsageError(
            fmt::format("{} scheduler={}: accepted static, claimed, serpentine", argument, value));
      }
      plan.schedule.claimed_tiles = value != "static";
      plan.schedule.serpentine = value == "serpentine";
    } else if (key == "signal") {
      if (value != "eager" && value != "deferred") {
        throw UsageError(fmt::format("{} signal={}: accepted eager, deferred", argument, value));
      }
      plan.deferred_signal = value == "deferred";
    } else if (key == "comm") {
      if (value != "nccl" && value != "ce" && value != "ce2") {
        throw UsageError(
            fmt::format("{} comm={}: accepted nccl, ce, ce2 (two-phase copy-engine AllReduce)",
                        argument, value));
      }
      plan.copy_engine = value != "nccl";
      plan.two_phase = value == "ce2";
    } else if (key == "groups") {
      plan.partition = parse_partition(value, argument);
    } else {
      throw UsageError(
          fmt::format("{}: unknown key '{}'; keys: tile, cluster, kernel, cap, "
                      "raster, swizzle, scheduler, signal, comm, groups",
                      argument, key));
    }
  }
  validate_plan(plan, argument);
  return plan;
}

std::vector<int> WaveGroups::concatenated() const {
  std::vector<int> tables = wave_group;
  tables.insert(tables.end(), group_first_slot.begin(), group_first_slot.end());
  tables.insert(tables.end(), group_slot_count.begin(), group_slot_count.end());
  return tables;
}

SlotGeometry slot_geometry(const GemmShape& shape, TileShape tile, const LaunchGeometry& launch,
                           int subtiles, bool contiguous_rows) {
  if (contiguous_rows) {
    // Any tile height: a tile is one subtile of BM rows, split by shift and mask where BM is a
    // power of two and by division otherwise (subtile_of_row, row_in_subtile).
    if (subtiles < 1 || tile.m < 1 || shape.m % (subtiles * tile.m) != 0) {
      throw UsageError(fmt::format(
          "contiguous row blocks: M = {} must be a multiple of {} ranks x the {}-row tile, so "
          "that every rank owns whole tiles",
          shape.m, subtiles, tile.m));
    }
    SlotGeometry g = slot_geometry(shape, tile, launch, 1);
    g.subtiles = subtiles;
    g.contiguous_rows = 1;
    g.tiles_per_rank = g.tiles_m / subtiles;
    g.slots = g.tiles_m * g.tiles_n;  // real tiles only: padding is not stored
    return g;
  }
  SlotGeometry g;
  g.m = shape.m;
  g.n = shape.n;
  g.tile_m = tile.m;
  g.tile_n = tile.n;
  g.tiles_m = launch.tiles_m;
  g.tiles_n = launch.tiles_n;
  g.slots = launch.slots;
  g.subtiles = subtiles;
  // Whole rows per subtile. A power of two is addressed by shift and mask, any other height by
  // division (slot_layout.hpp: subtile_of_row). Before 2026-12 only the shift existed, and a
  // 192-row tile was stored to the wrong rows (on an H100) until this check refused it.
  const int rows = subtiles >= 1 ? tile.m / subtiles : 0;
  if (subtiles < 1 || rows < 1 || rows * subtiles != tile.m) {
    throw UsageError(fmt::format(
        "tile height {} over {} subtiles: the slot layout needs a whole number of rows per subtile",
        tile.m, subtiles));
  }
  g.subtile_rows = rows;
  g.log2_rows_per_subtile = -1;
  if ((rows & (rows - 1)) == 0) {
    g.log2_rows_per_subtile = 0;
    while ((1 << g.log2_rows_per_subtile) < rows) ++g.log2_rows_per_subtile;
  }
  return g;
}

WaveGroups make_wave_groups(const std::vector<int>& partition, const LaunchGeometry& launch) {
  const int waves = launch.waves();
  std::vector<int> sizes = partition;
  if (sizes.empty()) sizes.assign(waves, 1);
  const int total = std::accumulate(sizes.begin(), sizes.end(), 0);
  if (total != waves) {
    throw UsageError(fmt::format(
        "partition {} sums to {} waves, but the GEMM runs {} waves ({} tiles over {} CTAs)",
        partition_string(partition), total, waves, launch.slots, launch.grid_ctas));
  }
  WaveGroups groups;
  int wave = 0;
  for (int g = 0; g < static_cast<int>(sizes.size()); ++g) {
    const int first = wave * launch.grid_ctas;
    const int end = std::min(launch.slots, (wave + sizes[g]) * launch.grid_ctas);
    groups.group_first_slot.push_back(first);
    groups.group_slot_count.push_back(end - first);
    for (int i = 0; i < sizes[g]; ++i) groups.wave_group.push_back(g);
    wave += sizes[g];
  }
  return groups;
}

WaveGroups make_column_groups(const std::vector<int>& partition, const LaunchGeometry& launch) {
  // Validates the partition against the launch's waves (the same message as the wave layout).
  const WaveGroups waves = make_wave_groups(partition, launch);
  const int columns = launch.tiles_n;
  // Column boundaries where the wave boundaries split the scheduler's sequence (rounded).
  std::vector<int> ends;
  for (int g = 0; g < waves.groups(); ++g) {
    const long long end_slot = waves.group_first_slot[g] + waves.group_slot_count[g];
    int end = static_cast<int>((end_slot * columns + launch.slots / 2) / launch.slots);
    end = std::clamp(end, 1, columns);
    if (g + 1 == waves.groups()) end = columns;
    if (ends.empty() || end > ends.back()) ends.push_back(end);
  }
  if (ends.back() != columns) ends.back() = columns;
  // At most kMaxColumnGroups: keep every k-th boundary.
  if (static_cast<int>(ends.size()) > kMaxColumnGroups) {
    std::vector<int> kept;
    const int n = static_cast<int>(ends.size());
    for (int i = 1; i <= kMaxColumnGroups; ++i)
      kept.push_back(ends[(i * n) / kMaxColumnGroups - 1]);
    ends = kept;
  }
  WaveGroups groups;
  int first = 0;
  for (int g = 0; g < static_cast<int>(ends.size()); ++g) {
    groups.group_first_slot.push_back(first * launch.tiles_m);
    groups.group_slot_count.push_back((ends[g] - first) * launch.tiles_m);
    for (int c = first; c < ends[g]; ++c) groups.wave_group.push_back(g);
    first = ends[g];
  }
  return groups;
}

ColumnGroups column_groups_of(const WaveGroups& groups, const LaunchGeometry& launch) {
  if (groups.groups() > kMaxColumnGroups || launch.tiles_m < 1) {
    throw Error(fmt::format("{} column groups: at most {}", groups.groups(), kMaxColumnGroups));
  }
  ColumnGroups columns;
  columns.count = groups.groups();
  for (int g = 0; g < columns.count; ++g) {
    columns.end[g] = (groups.group_first_slot[g] + groups.group_slot_count[g]) / launch.tiles_m;
  }
  return columns;
}

Plan contiguous_rows_plan(Plan plan) {
  // Along C's M: the scheduler's M, or its N for a kernel run on Cᵀ.
  plan.schedule.raster_along_n = plan.gemm.kernel == KernelSchedule::kPingpongSwapAB;
  return plan;
}

bool is_serial_plan(const Plan& plan) {
  return !plan.copy_engine && plan.schedule.cta_cap == 0 && plan.partition.size() == 1;
}

}  // namespace kiln::overlap

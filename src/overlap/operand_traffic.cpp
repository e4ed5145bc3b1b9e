#include "overlap/operand_traffic.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"

namespace kiln::overlap {

namespace {

// Bytes of the rows [index * tile, (index + 1) * tile) of an operand with `extent` rows, K long.
double panel_bytes(int index, int tile, int extent, int k, std::size_t element_bytes) {
  const int rows = std::min(tile, extent - index * tile);
  return rows <= 0 ? 0.0 : static_cast<double>(rows) * k * static_cast<double>(element_bytes);
}

}  // namespace

double modeled_operand_bytes(const GemmShape& shape, const GemmConfig& config,
                             const ScheduleOptions& schedule, int device_sms,
                             std::size_t element_bytes, std::size_t l2_bytes) {
  if (element_bytes == 0 || l2_bytes == 0) {
    throw UsageError(
        fmt::format("modeled_operand_bytes: element_bytes {} and l2_bytes {} must be "
                    "positive",
                    element_bytes, l2_bytes));
  }
  // Throws for a bad shape or SM count.
  const LaunchGeometry g = host_launch_geometry(shape, config, schedule, device_sms);
  const int tiles_m = g.tiles_m, tiles_n = g.tiles_n;
  // The wave each panel was last read in (-1: never), and whether the previous wave's panels fit
  // in half the L2 (then a panel it read is still there).
  std::vector<int> a_wave(static_cast<std::size_t>(tiles_m), -1);
  std::vector<int> b_wave(static_cast<std::size_t>(tiles_n), -1);
  double total = 0.0;
  bool previous_fits = false;
  const double half_l2 = 0.5 * static_cast<double>(l2_bytes);
  for (int wave = 0; wave * g.grid_ctas < g.slots; ++wave) {
    double working_set = 0.0, read = 0.0;
    const int end = std::min(g.slots, (wave + 1) * g.grid_ctas);
    for (int slot = wave * g.grid_ctas; slot < end; ++slot) {
      const TileCoord t = c_tile_at(shape, config, schedule, slot);
      if (t.m >= tiles_m || t.n >= tiles_n) continue;  // padding: no loads
      int& am = a_wave[static_cast<std::size_t>(t.m)];
      if (am != wave) {
        const double bytes = panel_bytes(t.m, config.tile.m, shape.m, shape.k, element_bytes);
        working_set += bytes;
        if (!(am == wave - 1 && previous_fits)) read += bytes;
        am = wave;
      }
      int& bn = b_wave[static_cast<std::size_t>(t.n)];
      if (bn != wave) {
        const double bytes = panel_bytes(t.n, config.tile.n, shape.n, shape.k, element_bytes);
        working_set += bytes;
        if (!(bn == wave - 1 && previous_fits)) read += bytes;
        bn = wave;
      }
    }
    total += read;
    previous_fits = working_set <= half_l2;
  }
  return total;
}

LeastTrafficOrder least_traffic_band_order(const GemmShape& shape, const GemmConfig& config,
                                           const ScheduleOptions& schedule, int device_sms,
                                           std::size_t element_bytes, std::size_t l2_bytes) {
  LeastTrafficOrder best;
  bool found = false;
  for (const bool serpentine : {false, true}) {
    for (const bool along_n : {true, false}) {
      for (int band = 1; band <= kMaxSwizzle; band *= 2) {
        ScheduleOptions s = schedule;
        s.claimed_tiles = true;
        s.serpentine = serpentine;
        s.raster_along_n = along_n;
        s.swizzle = band;
        const double bytes =
            modeled_operand_bytes(shape, config, s, device_sms, element_bytes, l2_bytes);
        if (!found || bytes < best.bytes) {
          best = {s, bytes};
          found = true;
        }
      }
    }
  }
  return best;
}

}  // namespace kiln::overlap

// Host model of the persistent scheduler's tile order (see tile_order.hpp).
#include "overlap/tile_order.hpp"

#include <algorithm>

#include "overlap/band_order.hpp"

namespace kiln::overlap {
namespace {

int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

struct Padded {
  int blocks_m, blocks_n, log_swizzle;
};

BandOrder band_order(const SchedulerModel& model) {
  BandOrder o;
  o.tiles_m = round_up(model.tiles_m, model.cluster_m);
  o.tiles_n = round_up(model.tiles_n, model.cluster_n);
  o.cluster_m = model.cluster_m;
  o.cluster_n = model.cluster_n;
  o.raster_along_n = model.raster_along_n ? 1 : 0;
  o.band = model.swizzle;
  o.serpentine = model.serpentine ? 1 : 0;
  return o;
}

Padded pad(const SchedulerModel& model) {
  const int m = round_up(model.tiles_m, model.cluster_m);
  const int n = round_up(model.tiles_n, model.cluster_n);
  if (model.claimed) return {m, n, 0};
  const int s = scheduler_log_swizzle(m, n, model.swizzle);
  if (s > 3) {
    // kiln's wide swizzles pad only the mode the swizzle groups walk (wide_swizzle.hpp).
    return model.raster_along_n ? Padded{round_up(m, (1 << s) * model.cluster_m), n, s}
                                : Padded{m, round_up(n, (1 << s) * model.cluster_n), s};
  }
  return {round_up(m, (1 << s) * model.cluster_m), round_up(n, (1 << s) * model.cluster_n), s};
}

}  // namespace

int scheduler_blocks(int extent, int tile, int cluster) {
  return round_up((extent + tile - 1) / tile, cluster);
}

int scheduler_log_swizzle(int blocks_m, int blocks_n, int swizzle) {
  const int smallest = std::min(blocks_m, blocks_n);
  if (swizzle >= 32 && smallest >= 24) return 5;
  if (swizzle >= 16 && smallest >= 12) return 4;
  if (swizzle >= 8 && smallest >= 6) return 3;
  if (swizzle >= 4 && smallest >= 3) return 2;
  if (swizzle >= 2 && smallest >= 2) return 1;
  return 0;
}

int scheduler_slots(const SchedulerModel& model) {
  const Padded p = pad(model);
  return p.blocks_m * p.blocks_n;
}

TileCoord scheduler_tile(const SchedulerModel& model, int slot) {
  if (model.claimed) {
    const BandTile t = band_tile(band_order(model), slot);
    return {t.m, t.n};
  }
  const Padded p = pad(model);
  const bool along_n = model.raster_along_n;
  const int major_cluster = along_n ? model.cluster_n : model.cluster_m;
  const int minor_cluster = along_n ? model.cluster_m : model.cluster_n;
  const int blocks_major = (along_n ? p.blocks_n : p.blocks_m) / major_cluster;
  // The CTA's place inside its cluster along the minor mode is the low part of its index.
  const int minor_in_cluster = slot % minor_cluster;
  const int block = slot / minor_cluster;
  const int cluster_id = block / major_cluster;
  const int major_in_cluster = block % major_cluster;
  const int swizzle_offset = cluster_id & ((1 << p.log_swizzle) - 1);
  const int extra = cluster_id >> p.log_swizzle;
  const int minor_group = extra / blocks_major;
  const int cluster_major = extra % blocks_major;
  const int cluster_minor = (minor_group << p.log_swizzle) + swizzle_offset;
  const int minor = cluster_minor * minor_cluster + minor_in_cluster;
  const int major = cluster_major * major_cluster + major_in_cluster;
  return along_n ? TileCoord{minor, major} : TileCoord{major, minor};
}

}  // namespace kiln::overlap

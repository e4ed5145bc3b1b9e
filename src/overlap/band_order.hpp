// The tile order of claimed tiles (scheduler=claimed, sm90_claimed_tile_scheduler.cuh): plain
// arithmetic shared by the kernel's scheduler, its epilogue (a tile's slot) and the host model of
// the order (tile_order.hpp), so that the CPU tests check exactly what the GPU runs.
//
// Work items are cluster tiles, numbered in the order clusters claim them. They walk bands of
// `band` cluster tiles along the raster's minor mode: within a band the minor mode first, then
// the major mode; band after band. This is CUTLASS's static swizzle order (raster and swizzle
// read the same way) with one difference: CUTLASS rounds the minor mode up to whole bands and
// computes the padding tiles (57 column tiles of 144 become 64 at swizzle 8, 12% more work,
// docs/results/2026-12-03b-claim-ahead/); here the last band is narrower and there is no padding.
// With `serpentine`, odd bands walk the major mode backwards, so that a band starts on the
// operand panels the previous one finished with (cuBLAS's nvjet kernels map their claimed items
// this way, read off their SASS in 2026-12-03b).
//
// A CTA's slot (its place in the slot buffer, slot_layout.hpp) is the linear index CUTLASS's
// static scheduler gives the CTA of its cluster for the same work item: item * cluster size plus
// the CTA's rank, in the raster's own CTA numbering. With band 1 and no serpentine this is the
// static order exactly.
#pragma once

#if defined(__CUDACC__)
#define KILN_BAND_FN __host__ __device__ __forceinline__
#else
#define KILN_BAND_FN inline
#endif

namespace kiln::overlap {

struct BandOrder {
  int tiles_m = 0, tiles_n = 0;      // CTA tiles of the scheduler's problem, whole clusters
  int cluster_m = 1, cluster_n = 1;  // CTAs per cluster along M and N
  int raster_along_n = 0;            // 1: the major mode is N (CUTLASS's RasterOrder::AlongN)
  int band = 1;                      // cluster tiles per band along the minor mode, >= 1
  int serpentine = 0;                // 1: odd bands walk the major mode backwards

  KILN_BAND_FN int clusters_major() const {
    return raster_along_n ? tiles_n / cluster_n : tiles_m / cluster_m;
  }
  KILN_BAND_FN int clusters_minor() const {
    return raster_along_n ? tiles_m / cluster_m : tiles_n / cluster_n;
  }
  KILN_BAND_FN int cluster_size() const { return cluster_m * cluster_n; }
  KILN_BAND_FN int items() const { return clusters_major() * clusters_minor(); }
  KILN_BAND_FN int slots() const { return tiles_m * tiles_n; }
  // The band width actually walked: never wider than the minor mode.
  KILN_BAND_FN int band_width() const {
    const int minor = clusters_minor();
    return band < minor ? (band < 1 ? 1 : band) : minor;
  }
};

struct BandTile {
  int m = 0, n = 0;  // CTA tile indices in the scheduler's problem
};

// The cluster tile of work item `item` (0 <= item < order.items()): cluster indices along M, N.
KILN_BAND_FN BandTile band_cluster_tile(const BandOrder& o, int item) {
  const int major_count = o.clusters_major();
  const int minor_count = o.clusters_minor();
  const int width = o.band_width();
  const int full_bands = minor_count / width;
  const int per_band = width * major_count;
  int band, within, band_cols;
  if (item < full_bands * per_band) {
    band = item / per_band;
    within = item % per_band;
    band_cols = width;
  } else {
    band = full_bands;
    within = item - full_bands * per_band;
    band_cols = minor_count - full_bands * width;
  }
  int major = within / band_cols;
  const int minor = band * width + within % band_cols;
  if (o.serpentine && (band & 1)) major = major_count - 1 - major;
  return o.raster_along_n ? BandTile{minor, major} : BandTile{major, minor};
}

// The CTA tile of slot `slot` (0 <= slot < order.slots()).
KILN_BAND_FN BandTile band_tile(const BandOrder& o, int slot) {
  const int size = o.cluster_size();
  const int rank = slot % size;
  // The CTA's coordinates inside its cluster, as CUTLASS numbers the CTAs of one cluster id:
  // along M, (item * cluster_m + x) * cluster_n + y; along N, x + (item * cluster_n + y) *
  // cluster_m.
  const int x = o.raster_along_n ? rank % o.cluster_m : rank / o.cluster_n;
  const int y = o.raster_along_n ? rank / o.cluster_m : rank % o.cluster_n;
  const BandTile c = band_cluster_tile(o, slot / size);
  return {c.m * o.cluster_m + x, c.n * o.cluster_n + y};
}

// The slot of CTA tile (m, n): the inverse of band_tile.
KILN_BAND_FN int band_slot(const BandOrder& o, int m, int n) {
  const int cluster_mi = m / o.cluster_m, x = m % o.cluster_m;
  const int cluster_ni = n / o.cluster_n, y = n % o.cluster_n;
  int major = o.raster_along_n ? cluster_ni : cluster_mi;
  const int minor = o.raster_along_n ? cluster_mi : cluster_ni;
  const int major_count = o.clusters_major();
  const int minor_count = o.clusters_minor();
  const int width = o.band_width();
  const int full_bands = minor_count / width;
  const int band = minor / width;
  const int band_cols = band < full_bands ? width : minor_count - full_bands * width;
  if (o.serpentine && (band & 1)) major = major_count - 1 - major;
  const int item = band * width * major_count + major * band_cols + (minor - band * width);
  return o.raster_along_n ? x + (item * o.cluster_n + y) * o.cluster_m
                          : (item * o.cluster_m + x) * o.cluster_n + y;
}

}  // namespace kiln::overlap

// The row reordering that gives a ReduceScatter contiguous row blocks (contiguous_scatter.hpp).
#include "overlap/contiguous_scatter.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kiln::overlap {

ContiguousScatterRows contiguous_scatter_rows(int m, int world, int tile_m) {
  if (world < 1) throw UsageError(fmt::format("world size {}: must be at least 1", world));
  if (m < 1 || m % world != 0) {
    throw UsageError(fmt::format(
        "M = {} rows: a reduce-scatter into contiguous row blocks needs M a positive multiple of "
        "the world size {}",
        m, world));
  }
  if (tile_m < 1 || tile_m % world != 0) {
    throw UsageError(fmt::format("tile height {}: must be a positive multiple of the world size {}",
                                 tile_m, world));
  }
  ContiguousScatterRows c;
  c.m = m;
  c.world = world;
  c.tile_m = tile_m;
  c.rows_per_rank = m / world;
  c.rows_per_subtile = tile_m / world;
  c.tile_rows = (c.rows_per_rank + c.rows_per_subtile - 1) / c.rows_per_subtile;
  c.padded_m = c.tile_rows * tile_m;
  return c;
}

}  // namespace kiln::overlap

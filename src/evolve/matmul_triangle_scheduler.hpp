// The ranged form of exploit-structure for triangular products (issue 20): one sm90 GEMM (the
// register-split unit, matmul_sm90_register_split.hpp) whose tile scheduler gives each output
// tile only the K range where both operands are non-zero. With A and B upper triangular, output
// element (i, j) sums the terms k from i to j; in tiles of P x P, tile (I, J) needs the k-tiles
// from I's first to J's last (none when I > J: the tile is zeros). The grouped form
// (matmul_triangle_generator.hpp) gets the same work from CUTLASS's grouped GEMM, which has no
// register split, so its operands are split into three copies in memory first; here the plain
// unit's main loop is kept, and only the scheduler (CUTLASS's persistent one, subclassed: the
// order of the tiles and each tile's K range) changes. Tiles go longest range first, diagonal
// by diagonal, so that the persistent grid's last round is short tiles (longest-processing-time
// order; the same idea as the grouped form's slices, without the slices' extra sums).
#pragma once

#include <string>

#include "evolve/matmul_sm90_generator.hpp"

namespace kiln::evolve {

// The scheduler's text for a unit (inside namespace kiln_unit, after `Cluster` is declared, then
// the selector's specialisation outside it): TriangleScheduler<kKFromM, kTile>, its tag
// TriangleSchedulerTag, and between `// kiln-triangle-tiles: begin` and `end` the order and K
// ranges as plain functions (tests/emulation/triangle_tiles_harness.cpp runs them on the CPU).
std::string sm90_triangle_scheduler_text();

// The entry point's statements before the GEMM's launch for `c`: for a triangle, the table of
// the tiles' assignment to the launch's grid (set_triangle_table); "" for a plain product.
std::string sm90_triangle_before_run(const Sm90MatmulConfig& c);

// The scheduler tag GemmUniversal takes for `c`: CUTLASS's persistent scheduler for a plain
// product, the triangle's for c.triangle 1 or 2 (square tiles of c.tile_m).
std::string sm90_scheduler_tag(const Sm90MatmulConfig& c);

}  // namespace kiln::evolve

// Where every output element of a signaling GEMM lives: in the slot buffer the epilogue writes
// (tiles in execution order, each group's range contiguous), in the buffer a ReduceScatter
// delivers to one rank, and in the row-major result. Plain arithmetic shared by the CUDA kernels
// and the host (tests, reference reorders), so the CPU tests check exactly what the GPU runs.
//
// Slots. A persistent GEMM hands its CTAs tile indices 0, 1, 2, ... in waves of `grid_ctas`; a
// tile's slot is its scheduler index, so wave w holds slots [w*G, (w+1)*G) and a group of
// consecutive waves is a contiguous slot range (FlashOverlap's pre-communication reordering,
// Hong et al., EuroSys'26).
//
// Subtiles (ReduceScatter). Each BMxBN tile is cut along its rows into `subtiles` (= world size)
// row blocks of rps = BM/subtiles rows. Within a group of n slots starting at s0, subtile j of the
// tile in slot s sits at
//     s0*BM*BN + j*(n*rps*BN) + (s-s0)*rps*BN + row_in_subtile*BN + col,
// so the group's range is [rank 0's rows | rank 1's rows | ...] and one ReduceScatter of the
// group hands rank j the subtile j of every tile in it, at recv offset s*rps*BN. For AllReduce
// `subtiles` is 1 and a tile is simply BMxBN row-major at s*BM*BN.
//
// The row permutation of ReduceScatter: rank j owns the global rows r with (r % BM) / rps == j
// (a block-cyclic distribution with period BM), in increasing order; its local row
// lr = mb*rps + rr holds global row mb*BM + j*rps + rr.
//
// Contiguous row blocks (`contiguous_rows`, ReduceScatter only): rank j owns the rows
// [j*q, (j+1)*q), q = M / world = tpr*BM (PyTorch's reduce_scatter_tensor layout), and a tile goes
// whole to the rank that owns its rows (tile row tm belongs to rank tm / tpr). Groups are then
// ranges of tile columns [c0, c0 + cols), not of waves: such a group holds cols*tpr tiles of every
// rank, which one ReduceScatter can split. A tile's slot is not its scheduler index but its place
// in its group's range, by owning rank first:
//     slot(tm, tn) = c0*tiles_m + (tm / tpr)*(cols*tpr) + (tn - c0)*tpr + tm % tpr,
// and it reaches rank tm / tpr at tile index tn*tpr + tm % tpr of the received buffer, whatever
// the grouping. Rows per subtile are BM (a subtile is the whole tile), so slot_offset is unchanged;
// every slot is a real tile (padding tiles of the scheduler are neither stored nor counted).
// With raster along M the scheduler finishes the columns roughly in order, so the groups complete
// in order (the choice of groups only times the collectives; placement never depends on it). This
// avoids reordering A's rows before the GEMM (contiguous_scatter.hpp), a copy of A per call.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KILN_LAYOUT_FN __host__ __device__ __forceinline__
#else
#define KILN_LAYOUT_FN inline
#endif

namespace kiln::overlap {

// The geometry the kernels need; plain data, passed by value to kernels.
struct SlotGeometry {
  int m = 0, n = 0;              // problem rows and columns (the real output)
  int tile_m = 0, tile_n = 0;    // BM, BN
  int tiles_m = 0, tiles_n = 0;  // ceil(m / BM), ceil(n / BN)
  int slots = 0;                 // scheduler tiles, >= tiles_m * tiles_n (cluster/swizzle padding)
  int subtiles = 1;              // world size for ReduceScatter, 1 for AllReduce
  // log2(rps) where rps is a power of two (every tile height built before 2026-12), else -1:
  // the rows then split by division (subtile_of_row, row_in_subtile).
  int log2_rows_per_subtile = 0;
  int contiguous_rows = 0;  // 1: rank j owns rows [j*q, (j+1)*q) (see above)
  int tiles_per_rank = 0;   // contiguous_rows: tpr = tiles_m / subtiles
  int subtile_rows = 1;     // rps = BM / subtiles, or BM with contiguous_rows (last: the layout
                            // of the fields before it is the one the kernels were tuned with)

  KILN_LAYOUT_FN int rows_per_subtile() const { return subtile_rows; }
  KILN_LAYOUT_FN std::int64_t tile_elements() const {
    return static_cast<std::int64_t>(tile_m) * tile_n;
  }
  KILN_LAYOUT_FN std::int64_t subtile_elements() const {
    return static_cast<std::int64_t>(rows_per_subtile()) * tile_n;
  }
  // Elements of the slot buffer (every slot, padding included).
  KILN_LAYOUT_FN std::int64_t slot_buffer_elements() const {
    return static_cast<std::int64_t>(slots) * tile_elements();
  }
  // Elements one rank receives from a ReduceScatter over every slot.
  KILN_LAYOUT_FN std::int64_t recv_buffer_elements() const { return recv_elements(slots); }
  // What one rank receives of `slot_count` slots (a group's ReduceScatter count; also the offset
  // in the received buffer of a group that starts at slot `slot_count`).
  KILN_LAYOUT_FN std::int64_t recv_elements(int slot_count) const {
    return contiguous_rows ? static_cast<std::int64_t>(slot_count / subtiles) * tile_elements()
                           : static_cast<std::int64_t>(slot_count) * subtile_elements();
  }
};

// Which subtile of its tile a row within the tile (or a rank's local row: which tile row) falls
// in, and its row within that subtile: shift and mask for power-of-two subtiles, else division
// (a 32-bit one, inlined; 192-row tiles need it, and the planned 144/160-row ones would).
KILN_LAYOUT_FN int subtile_of_row(const SlotGeometry& g, int row) {
  return g.log2_rows_per_subtile >= 0 ? row >> g.log2_rows_per_subtile : row / g.subtile_rows;
}
KILN_LAYOUT_FN int row_in_subtile(const SlotGeometry& g, int row) {
  return g.log2_rows_per_subtile >= 0 ? row & (g.subtile_rows - 1) : row % g.subtile_rows;
}

// Offset in the slot buffer of (row, col) of the tile in `slot`, whose group starts at
// `group_first_slot` and has `group_slots` slots.
KILN_LAYOUT_FN std::int64_t slot_offset(const SlotGeometry& g, int slot, int group_first_slot,
                                        int group_slots, int row, int col) {
  const int subtile = subtile_of_row(g, row);
  const int row_within = row_in_subtile(g, row);
  return static_cast<std::int64_t>(group_first_slot) * g.tile_elements() +
         static_cast<std::int64_t>(subtile) * group_slots * g.subtile_elements() +
         static_cast<std::int64_t>(slot - group_first_slot) * g.subtile_elements() +
         static_cast<std::int64_t>(row_within) * g.tile_n + col;
}

// Offset, in what a ReduceScatter delivers to a rank (or, for AllReduce, in the slot buffer
// itself), of (row_in_subtile, col) of the tile in `slot`.
KILN_LAYOUT_FN std::int64_t received_offset(const SlotGeometry& g, int slot, int row_in_subtile,
                                            int col) {
  return static_cast<std::int64_t>(slot) * g.subtile_elements() +
         static_cast<std::int64_t>(row_in_subtile) * g.tile_n + col;
}

// Rows of the output that `rank` owns after the collective: all m for AllReduce (subtiles 1).
KILN_LAYOUT_FN int owned_rows(const SlotGeometry& g, int rank) {
  if (g.contiguous_rows) return g.tiles_per_rank * g.tile_m;
  const int rps = g.rows_per_subtile();
  const int last_tile_rows = g.m - (g.tiles_m - 1) * g.tile_m;
  int last = last_tile_rows - rank * rps;
  last = last < 0 ? 0 : (last > rps ? rps : last);
  return (g.tiles_m - 1) * rps + last;
}

// Global row of local row `local_row` on `rank` (see the permutation above).
KILN_LAYOUT_FN int global_row(const SlotGeometry& g, int rank, int local_row) {
  if (g.contiguous_rows) return rank * g.tiles_per_rank * g.tile_m + local_row;
  return subtile_of_row(g, local_row) * g.tile_m + rank * g.rows_per_subtile() +
         row_in_subtile(g, local_row);
}

// Offset in the received buffer of element (local_row, col) of `rank`'s row-major result, given
// the slot that holds tile (local_row's tile row, col / BN).
KILN_LAYOUT_FN std::int64_t received_offset_of(const SlotGeometry& g, int slot, int local_row,
                                               int col) {
  return received_offset(g, slot, row_in_subtile(g, local_row), col % g.tile_n);
}

// contiguous_rows: the groups as tile-column ranges, for the epilogue. Kept in the kernel's
// parameters (constant cache) rather than a global table: a tile's group is known only once the
// scheduler hands the tile out, and two dependent global loads there would delay its stores
// (the wave layout prefetches its next group instead, which needs the scheduler's next index).
inline constexpr int kMaxColumnGroups = 32;
struct ColumnGroups {
  int count = 0;
  int end[kMaxColumnGroups] = {};  // group g holds tile columns [end[g-1], end[g]), end[-1] = 0

  // The group of tile column `tn` (< end[count - 1]).
  KILN_LAYOUT_FN int group_of(int tn) const {
    int g = 0;
    while (g + 1 < count && tn >= end[g]) ++g;
    return g;
  }
  KILN_LAYOUT_FN int first_column(int g) const { return g == 0 ? 0 : end[g - 1]; }
};

// contiguous_rows: the slot of real tile (tm, tn) in a group of tile columns [c0, c0 + cols).
KILN_LAYOUT_FN int contiguous_slot(const SlotGeometry& g, int tm, int tn, int c0, int cols) {
  const int tpr = g.tiles_per_rank;
  return c0 * g.tiles_m + (tm / tpr) * (cols * tpr) + (tn - c0) * tpr + tm % tpr;
}

// contiguous_rows: where real tile (tm, tn) lies in what its rank receives, in tiles.
KILN_LAYOUT_FN int contiguous_received_tile(const SlotGeometry& g, int tm, int tn) {
  return tn * g.tiles_per_rank + tm % g.tiles_per_rank;
}

}  // namespace kiln::overlap

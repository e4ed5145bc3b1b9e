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
  int m = 0, n = 0;               // problem rows and columns (the real output)
  int tile_m = 0, tile_n = 0;     // BM, BN
  int tiles_m = 0, tiles_n = 0;   // ceil(m / BM), ceil(n / BN)
  int slots = 0;                  // scheduler tiles, >= tiles_m * tiles_n (cluster/swizzle padding)
  int subtiles = 1;               // world size for ReduceScatter, 1 for AllReduce
  int log2_rows_per_subtile = 0;  // log2(BM / subtiles); BM and subtiles are powers of two

  KILN_LAYOUT_FN int rows_per_subtile() const { return 1 << log2_rows_per_subtile; }
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
  KILN_LAYOUT_FN std::int64_t recv_buffer_elements() const {
    return static_cast<std::int64_t>(slots) * subtile_elements();
  }
};

// Offset in the slot buffer of (row, col) of the tile in `slot`, whose group starts at
// `group_first_slot` and has `group_slots` slots.
KILN_LAYOUT_FN std::int64_t slot_offset(const SlotGeometry& g, int slot, int group_first_slot,
                                        int group_slots, int row, int col) {
  const int subtile = row >> g.log2_rows_per_subtile;
  const int row_in_subtile = row & (g.rows_per_subtile() - 1);
  return static_cast<std::int64_t>(group_first_slot) * g.tile_elements() +
         static_cast<std::int64_t>(subtile) * group_slots * g.subtile_elements() +
         static_cast<std::int64_t>(slot - group_first_slot) * g.subtile_elements() +
         static_cast<std::int64_t>(row_in_subtile) * g.tile_n + col;
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
  const int rps = g.rows_per_subtile();
  const int last_tile_rows = g.m - (g.tiles_m - 1) * g.tile_m;
  int last = last_tile_rows - rank * rps;
  last = last < 0 ? 0 : (last > rps ? rps : last);
  return (g.tiles_m - 1) * rps + last;
}

// Global row of local row `local_row` on `rank` (see the permutation above).
KILN_LAYOUT_FN int global_row(const SlotGeometry& g, int rank, int local_row) {
  const int tile_row = local_row >> g.log2_rows_per_subtile;
  const int row_in_subtile = local_row & (g.rows_per_subtile() - 1);
  return tile_row * g.tile_m + rank * g.rows_per_subtile() + row_in_subtile;
}

// Offset in the received buffer of element (local_row, col) of `rank`'s row-major result, given
// the slot that holds tile (local_row's tile row, col / BN).
KILN_LAYOUT_FN std::int64_t received_offset_of(const SlotGeometry& g, int slot, int local_row,
                                               int col) {
  const int row_in_subtile = local_row & (g.rows_per_subtile() - 1);
  return received_offset(g, slot, row_in_subtile, col % g.tile_n);
}

}  // namespace kiln::overlap

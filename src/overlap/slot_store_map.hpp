// The TMA descriptor through which the signaling epilogue stores its tiles. The slot buffer is
// seen as a 2-D matrix of BN columns and slots*BM rows: by slot_layout.hpp every subtile's rows
// are consecutive rows of it, so a box of rows that stays inside one subtile is one TMA store.
// Boxes are kStoreBoxRows x kStoreBoxCols (one warp's 16 accumulator rows, 128 bytes of columns)
// with 128-byte swizzle, the widest box a swizzled store takes.
#pragma once

#include <cuda.h>

#include "core/dtype.hpp"
#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

inline constexpr int kStoreBoxRows = 16;
inline constexpr int kStoreBoxCols = 64;  // 128 bytes of a 2-byte type

// The 2-D row of the slot-buffer matrix that holds (row, column 0) of the tile in `slot`:
// slot_offset(..., row, 0) / BN, term by term (each term but the column's is a multiple of BN).
// No division: a 64-bit one is a called subroutine on the GPU, and that call in the signaling
// epilogue made ptxas keep the main loop's pipeline state in vector registers and move every
// GMMA descriptor to uniform ones (R2UR) in the k-loop: 1.5x the twin's instructions, 2-3% of
// the cycles (docs/results/2026-11-30h-pingpong-widths/, calls 6-7).
// kPowerOfTwoRows: the tile height is a power of two, so every subtile's is too (the world sizes
// are powers of two): shift and mask, the form every power-of-two kernel was tuned with. Otherwise
// (144, 160, 192 rows) subtile_of_row's 32-bit division.
template <bool kPowerOfTwoRows>
KILN_LAYOUT_FN int slot_matrix_row(const SlotGeometry& g, int slot, int group_first_slot,
                                   int group_slots, int row) {
  const int rows_per_subtile = g.rows_per_subtile();
  int subtile, within;
  if constexpr (kPowerOfTwoRows) {
    subtile = row >> g.log2_rows_per_subtile;
    within = row & (rows_per_subtile - 1);
  } else {
    subtile = row / rows_per_subtile;
    within = row - subtile * rows_per_subtile;
  }
  return group_first_slot * g.tile_m + subtile * group_slots * rows_per_subtile +
         (slot - group_first_slot) * rows_per_subtile + within;
}

// The narrower box of the epilogues whose warp groups hold a width that is not a multiple of 64
// columns (a 128x320 tile split along N: 160 columns each): 64 bytes wide, 64-byte swizzle.
inline constexpr int kNarrowStoreBoxCols = 32;
// The narrowest, for warp groups 176 columns wide (ping-pong 128x176): 32 bytes, 32-byte swizzle.
inline constexpr int kNarrowestStoreBoxCols = 16;

// The TMA swizzle of a store box `box_cols` wide, as the bytes of one swizzled row: 128, 64 and
// 32 for the three swizzled widths (the box's row is the swizzle span), 0 for any other width
// (stored unswizzled). The one rule both sides follow: make_slot_store_map encodes the descriptor
// with it and the signaling epilogue stages its shared-memory box with it, so that the two cannot
// disagree about where a column lands (a box staged unswizzled under a swizzled descriptor, or the
// reverse, stores a permuted tile without any error).
constexpr int store_box_swizzle_bytes(int box_cols) {
  return box_cols == kStoreBoxCols || box_cols == kNarrowStoreBoxCols ||
                 box_cols == kNarrowestStoreBoxCols
             ? box_cols * 2
             : 0;
}

// The box the signaling epilogue stores a warp group's band in: 64
// columns (128-byte swizzle) where they divide the group's width, else the whole width in one
// unswizzled box (144, 160, 176 columns: one TMA store per 16-row band instead of 9, 5 or 11);
// swapped kernels keep 16x16 boxes. At most 256 columns (a TMA box dimension), and whole 16-column
// blocks (the epilogue writes 16x16 blocks with stmatrix); 0 where no box fits.
constexpr int epilogue_box_cols(int group_cols, bool swap_ab) {
  if (swap_ab) return kNarrowestStoreBoxCols;
  if (group_cols % kStoreBoxCols == 0) return kStoreBoxCols;
  return group_cols % 16 == 0 && group_cols <= 256 ? group_cols : 0;
}

// Encodes the descriptor for `slots` (2-byte elements of `dtype`) with boxes of kStoreBoxRows x
// `box_cols` (kStoreBoxCols: 128-byte swizzle; kNarrowStoreBoxCols: 64-byte swizzle;
// kNarrowestStoreBoxCols: 32-byte swizzle: the box's row width in every case; any other multiple of
// 8 up to 256: no swizzle, the epilogue_box_cols of a width none of those divides). Throws
// kiln::UsageError when the geometry cannot be stored in such boxes (BN not a multiple of the box
// width, subtiles of fewer than 16 rows) and kiln::Error when the buffer is misaligned or the
// driver refuses the encoding.
CUtensorMap make_slot_store_map(void* slots, core::DType dtype, const SlotGeometry& geometry,
                                int box_cols = kStoreBoxCols);

}  // namespace kiln::overlap

// Runs the ranged triangle scheduler's tile order and K ranges (KERNEL: the generated unit's
// text between its kiln-triangle-tiles markers) on the CPU, against a brute-force count: for
// T x T tiles of P x P over a square product of n (the last tile partial where n is not a
// multiple of P) the order must hand out every tile exactly once, the tiles with a K range
// first, longest first; and each tile's k-tiles must be exactly those holding a term that is
// non-zero for some element of the tile: for the element pair (a on the range's start side,
// b on its end side) the terms k from a to b, none where a > b. Prints "<name>: N bad of M runs";
// exits 1 when any run is wrong. Built and run by tests/cpu/evolve_matmul_split_emulation_test.cpp.
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#define CUTE_HOST_DEVICE inline
using std::sqrt;

#include KERNEL

int main() {
  int bad = 0, runs = 0;
  for (const int p : {32, 64, 128})
    for (int n = 1; n <= 40 * 32; n += n < 300 ? 1 : 37) {
      ++runs;
      const int t = (n + p - 1) / p, k_tiles = (n + 31) / 32, block_k = p / 32;
      bool wrong = false;
      std::set<std::pair<int, int>> seen;
      int previous = 1 << 30;  // the last range's length: non-increasing inside the triangle
      for (unsigned long long w = 0; w < static_cast<unsigned long long>(t) * t; ++w) {
        int lo = -1, hi = -1;
        triangle_tile(w, t, lo, hi);
        if (lo < 0 || hi < 0 || lo >= t || hi >= t || !seen.insert({lo, hi}).second) {
          wrong = true;
          break;
        }
        const bool inside = w < static_cast<unsigned long long>(t) * (t + 1) / 2;
        if (inside != (lo <= hi)) wrong = true;
        // Brute force: the k-tiles with a term k in [a, b] for some a in lo's block, b in hi's.
        int first = -1, count = 0;
        for (int kt = 0; kt < k_tiles; ++kt) {
          bool needed = false;
          for (int k = kt * 32; k < kt * 32 + 32 && k < n && !needed; ++k)
            needed = k >= lo * p && k < n && k <= hi * p + p - 1;
          if (needed) {
            if (first < 0) first = kt;
            if (kt != first + count) wrong = true;  // one run of k-tiles
            ++count;
          }
        }
        const int got = triangle_k_count(lo, hi, block_k, k_tiles);
        if (got != count || (count > 0 && triangle_k_start(lo, block_k) != first)) wrong = true;
        if (inside) {
          if (got > previous) wrong = true;
          previous = got;
        }
      }
      if (static_cast<int>(seen.size()) != t * t) wrong = true;
      if (wrong)
        std::printf("%s: n %d tile %d: the tiles or their K ranges are wrong\n", KNAME, n, p);
      bad += wrong;
    }
  // The host's assignment to a persistent grid: a valid table, every tile once, each block's
  // tiles in the order's sequence, and the busiest block within one tile's work of the mean
  // (longest processing time first is within the largest tile of the mean).
  for (const int t : {1, 2, 3, 7, 32, 33})
    for (const int grid : {1, 5, 132, 2000}) {
      ++runs;
      const int block_k = 4, k_tiles = t * block_k - 1, overhead = 4;
      const std::vector<int> table = triangle_assignment(t, block_k, k_tiles, grid, overhead);
      bool wrong = static_cast<int>(table.size()) != grid + 1 + t * t || table[0] != grid + 1 ||
                   table[grid] != grid + 1 + t * t;
      std::vector<int> count(t * t, 0);
      long long most = 0, total = 0, largest = 0;
      for (int b = 0; b < grid && !wrong; ++b) {
        if (table[b + 1] < table[b]) wrong = true;
        long long load = 0;
        for (int at = table[b]; at < table[b + 1] && !wrong; ++at) {
          const int w = table[at];
          if (w < 0 || w >= t * t || (at > table[b] && w <= table[at - 1])) wrong = true;
          if (wrong) break;
          ++count[w];
          int lo, hi;
          triangle_tile(w, t, lo, hi);
          const long long cost = triangle_k_count(lo, hi, block_k, k_tiles) + overhead;
          load += cost;
          largest = cost > largest ? cost : largest;
        }
        most = load > most ? load : most;
        total += load;
      }
      for (const int c : count) wrong = wrong || c != 1;
      if (!wrong && most > (total + grid - 1) / grid + largest) wrong = true;
      if (wrong)
        std::printf("%s: assignment of %d x %d tiles to %d blocks is wrong\n", KNAME, t, t, grid);
      bad += wrong;
    }
  // The square root's correction on large indices (a grid of 4096 tiles a side).
  for (unsigned long long w : {0ull, 1ull, 2ull, 3ull, 8386560ull, 8386561ull, 8390655ull}) {
    ++runs;
    const unsigned long long s = triangle_root(w);
    if (s * (s + 1) / 2 > w || (s + 1) * (s + 2) / 2 <= w) {
      std::printf("%s: triangle_root(%llu) = %llu\n", KNAME, w, s);
      ++bad;
    }
  }
  std::printf("%s: %d bad of %d runs\n", KNAME, bad, runs);
  return bad == 0 ? 0 : 1;
}

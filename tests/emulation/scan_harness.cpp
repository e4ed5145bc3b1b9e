// Runs one generated scan kernel (its device code, KERNEL: the source without its host sections)
// on the CPU through tests/emulation/cuda_fibers.h: 3 rows of 27 widths from 1 to 4097 columns, the
// input 16-byte aligned and one float off (the kernel's element-by-element path), a poisoned
// guard after the output. Inputs keep every partial result exact in fp32 whatever the order
// (small integers; for cumprod factors of 1, 1/2 and 2), so the comparison with the host's scan is
// exact. Prints "<name>: N bad of M runs"; exits 1 when any run is wrong. Built and run by
// tests/cpu/evolve_scan_emulation_test.cpp (g++ with AddressSanitizer and UBSan).
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_fibers.h"
#include KERNEL

int main() {
  const bool prod = kIdentity == 1.0f;
  const long long widths[] = {1,   2,   3,   4,    5,    7,    8,    31,   32,
                              33,  64,  100, 127,  128,  129,  255,  256,  257,
                              511, 512, 513, 1024, 1028, 1500, 2052, 3001, 4097};
  const std::uint32_t poison_bits = 0x7fc00001u;
  float poison;
  std::memcpy(&poison, &poison_bits, sizeof poison);
  int bad = 0, runs = 0;
  unsigned seed = 1;
  for (const long long cols : widths)
    for (int offset = 0; offset < 2; ++offset) {
      const long long rows = 3, n = rows * cols;
      std::mt19937 random(seed++);
      std::vector<float> x_store(n + 8), y_store(n + 40);
      std::vector<unsigned char> m_store(n + 16);
      const auto align16 = [](auto* p) {
        return reinterpret_cast<decltype(p)>((reinterpret_cast<std::uintptr_t>(p) + 15) &
                                             ~std::uintptr_t(15));
      };
      float* x = align16(x_store.data()) + offset;
      float* y = align16(y_store.data());
      unsigned char* m = align16(m_store.data());
      for (long long i = 0; i < n; ++i) {
        if (prod) {
          const unsigned c = random() % 20;
          x[i] = c == 0 ? 0.5f : c == 1 ? 2.0f : 1.0f;
        } else {
          x[i] = static_cast<float>(static_cast<int>(random() % 17) - 8);
        }
        m[i] = static_cast<unsigned char>(random() & 1u);
      }
      for (long long i = 0; i < n + 32; ++i) y[i] = poison;
      // As the kernel's host code decides it.
      const bool aligned = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                           reinterpret_cast<std::uintptr_t>(y) % 16 == 0 &&
                           (!kMasked || reinterpret_cast<std::uintptr_t>(m) % 4 == 0);
      const long long blocks = (rows + kTeamsPerBlock - 1) / kTeamsPerBlock;
      for (long long b = 0; b < blocks; ++b) {
        emu::block_index = {static_cast<unsigned>(b), 0, 0};
        emu::run_block(kTeam * kTeamsPerBlock, [&] { scan_kernel(x, m, y, rows, cols, aligned); });
      }
      ++runs;
      bool wrong = false;
      for (long long r = 0; r < rows && !wrong; ++r) {
        double run = prod ? 1.0 : 0.0;
        for (long long k = 0; k < cols; ++k) {
          const long long j = r * cols + (kReverse ? cols - 1 - k : k);
          const double v = kMasked ? x[j] * static_cast<double>(m[j]) : x[j];
          const double next = prod ? run * v : run + v;
          const double want = kExclusive ? run : next;
          run = next;
          if (!(static_cast<double>(y[j]) == want)) {
            if (bad < 5)
              std::printf("%lld columns, offset %d, row %lld, column %lld: %g, want %g\n", cols,
                          offset, r, j % cols, y[j], want);
            wrong = true;
            break;
          }
        }
      }
      for (long long i = n; i < n + 32 && !wrong; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &y[i], sizeof bits);
        if (bits != poison_bits) {
          std::printf("%lld columns, offset %d: a write past the output's end\n", cols, offset);
          wrong = true;
        }
      }
      bad += wrong;
    }
  std::printf("%s: %d bad of %d runs\n", KNAME, bad, runs);
  return bad != 0;
}

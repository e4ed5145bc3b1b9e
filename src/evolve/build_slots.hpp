// How many CUTLASS builds (nvcc over CUTLASS's headers: 20-120 s of one core and a few GB of host
// memory each) run at once across every search of the process. While a light search runs (its
// builds take under 2 s and its candidates keep the judge busy), heavy builds take at most half
// the cores, so that the light builds do not queue behind them while the GPU waits (H200,
// 2026-11-29: with every core on CUTLASS, 2.71 evaluations per second over the set). With no
// light search left, as at the end of a `kiln evolve set` run where only matmul and attention
// searches remain, they take every core: held to half, the last 390 s of a set run kept 8 of 16
// cores busy and the GPU idle in 68 of 97 samples (H200, 2026-11-29).
#pragma once

#include <condition_variable>
#include <mutex>

namespace kiln::evolve {

class HeavyBuildSlots {
 public:
  explicit HeavyBuildSlots(int cores);
  // The process's slots: one per core of this host, at most one per 4 GiB of its memory. In
  // `kiln evolve run` (no light searches counted) a matmul search's builds take them all.
  static HeavyBuildSlots& process();

  void acquire();  // waits for a slot
  void release();
  // Light searches running now (`kiln evolve set` says as its workers take and finish problems).
  void set_light_searches(int running);
  int limit();  // heavy builds allowed at once now
  int in_use();

  // One slot for the holder's lifetime, when `heavy`.
  class Held {
   public:
    Held(HeavyBuildSlots& slots, bool heavy);
    ~Held();
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    HeavyBuildSlots& slots_;
    bool heavy_;
  };

 private:
  int limit_locked() const;

  std::mutex mutex_;
  std::condition_variable changed_;
  int cores_, in_use_ = 0, light_ = 0;
};

}  // namespace kiln::evolve

// Slots for CUTLASS builds (see build_slots.hpp).
#include "evolve/build_slots.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

namespace kiln::evolve {

HeavyBuildSlots::HeavyBuildSlots(int cores) : cores_(std::max(1, cores)) {}

namespace {

// One build per core, and at most one per 4 GiB of host memory (a CUTLASS build takes 1-3 GB;
// the 8-GPU host has 128 cores).
int host_build_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double gib = pages > 0 && page > 0 ? static_cast<double>(pages) * page / (1 << 30) : 0.0;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (gib > 0) cores = std::min(cores, std::max(1, static_cast<int>(gib / 4)));
  return cores;
}

}  // namespace

HeavyBuildSlots& HeavyBuildSlots::process() {
  static HeavyBuildSlots slots(host_build_limit());
  return slots;
}

int HeavyBuildSlots::limit_locked() const {
  return light_ > 0 ? std::max(1, cores_ / 2) : cores_;
}

void HeavyBuildSlots::acquire() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return in_use_ < limit_locked(); });
  ++in_use_;
}

void HeavyBuildSlots::release() {
  {
    const std::lock_guard lock(mutex_);
    --in_use_;
  }
  changed_.notify_all();
}

void HeavyBuildSlots::set_light_searches(int running) {
  {
    const std::lock_guard lock(mutex_);
    light_ = std::max(0, running);
  }
  changed_.notify_all();  // a raised limit lets waiting builds start
}

int HeavyBuildSlots::limit() {
  const std::lock_guard lock(mutex_);
  return limit_locked();
}

int HeavyBuildSlots::in_use() {
  const std::lock_guard lock(mutex_);
  return in_use_;
}

HeavyBuildSlots::Held::Held(HeavyBuildSlots& slots, bool heavy) : slots_(slots), heavy_(heavy) {
  if (heavy_) slots_.acquire();
}

HeavyBuildSlots::Held::~Held() {
  if (heavy_) slots_.release();
}

}  // namespace kiln::evolve

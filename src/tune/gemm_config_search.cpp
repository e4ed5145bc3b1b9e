// The per-shape search over the signaling GEMM's configurations (see gemm_config_search.hpp).
#include "tune/gemm_config_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <memory>
#include <span>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/operand_traffic.hpp"
#include "overlap/tile_order.hpp"

namespace kiln::tune {

StandaloneTargets::StandaloneTargets(overlap::SignalingGemm& gemm, const overlap::GemmShape& shape,
                                     const overlap::ScheduleOptions& schedule, int device_sms,
                                     std::size_t element_bytes, void* shared_slots) {
  launch = gemm.geometry(shape, schedule, device_sms);
  geometry = overlap::slot_geometry(shape, gemm.tile(), launch, 1);
  const overlap::WaveGroups groups = overlap::make_wave_groups({}, launch);
  const std::vector<int> host = groups.concatenated();
  tables = core::DeviceBuffer(host.size() * sizeof(int));
  if (shared_slots == nullptr) {
    own_slots = core::DeviceBuffer(geometry.slot_buffer_elements() * element_bytes);
    shared_slots = own_slots.data();
  }
  slot_of_tile = core::DeviceBuffer(sizeof(int) * launch.tiles_m * launch.tiles_n);
  counters = core::DeviceBuffer(sizeof(unsigned) * groups.groups());
  KILN_CUDA_CHECK(cudaMemcpy(tables.data(), host.data(), tables.bytes(), cudaMemcpyHostToDevice));
  // A pageable cudaMemcpy may return before its DMA lands; the GEMMs that read the tables run on
  // non-blocking streams, which do not wait for it.
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  KILN_CUDA_CHECK(cudaMemset(counters.data(), 0, counters.bytes()));
  targets.slots = shared_slots;
  targets.slot_of_tile = slot_of_tile.as<int>();
  targets.wave_group = tables.as<int>();
  targets.group_first_slot = targets.wave_group + groups.wave_group.size();
  targets.group_slot_count = targets.group_first_slot + groups.groups();
  targets.geometry = geometry;
}

overlap::EpilogueTargets StandaloneTargets::signalling(bool deferred) const {
  overlap::EpilogueTargets t = targets;
  t.group_counters = counters.as<unsigned>();
  t.deferred_signal = deferred;
  return t;
}

std::string candidate_name(const GemmCandidate& c) {
  std::string name = fmt::format("{} raster={} swizzle={}", overlap::gemm_config_name(c.config),
                                 c.schedule.raster_along_n ? "n" : "m", c.schedule.swizzle);
  if (c.schedule.cta_cap > 0) name += fmt::format(" cap={}", c.schedule.cta_cap);
  name += overlap::scheduler_words(c.schedule);
  return name;
}

std::vector<std::size_t> diverse_finalists(const std::vector<overlap::GemmConfig>& screened,
                                           std::size_t count) {
  count = std::min(count, screened.size());
  std::vector<std::size_t> chosen;
  std::vector<bool> taken(screened.size(), false);
  for (std::size_t i = 0; i < screened.size() && chosen.size() < count; ++i) {
    const bool config_seen = std::any_of(chosen.begin(), chosen.end(),
                                         [&](std::size_t j) { return screened[j] == screened[i]; });
    if (config_seen) continue;
    chosen.push_back(i);
    taken[i] = true;
  }
  for (std::size_t i = 0; i < screened.size() && chosen.size() < count; ++i) {
    if (!taken[i]) chosen.push_back(i);
  }
  return chosen;
}

std::size_t least_traffic_near_tie(const std::vector<double>& us, const std::vector<double>& bytes,
                                   double tolerance) {
  if (us.empty() || us.size() != bytes.size()) {
    throw UsageError(
        fmt::format("least_traffic_near_tie: {} times and {} traffics (must be equal "
                    "and at least one)",
                    us.size(), bytes.size()));
  }
  const std::size_t fastest =
      static_cast<std::size_t>(std::min_element(us.begin(), us.end()) - us.begin());
  std::size_t chosen = fastest;
  for (std::size_t i = 0; i < us.size(); ++i) {
    if (us[i] <= us[fastest] * (1.0 + tolerance) && bytes[i] <= 0.9 * bytes[fastest] &&
        bytes[i] < bytes[chosen]) {
      chosen = i;
    }
  }
  return chosen;
}

std::vector<std::size_t> sustained_finalists(const std::vector<overlap::KernelSchedule>& kernels,
                                             std::size_t kept) {
  kept = std::min(kept, kernels.size());
  if (kept < 2) return {};
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < kept; ++i) chosen.push_back(i);
  for (std::size_t i = kept; i < kernels.size(); ++i) {
    const bool schedule_seen = std::any_of(chosen.begin(), chosen.end(),
                                           [&](std::size_t j) { return kernels[j] == kernels[i]; });
    if (!schedule_seen) chosen.push_back(i);
  }
  return chosen;
}

int rotated_input_sets(std::size_t operand_bytes, std::size_t l2_bytes) {
  if (operand_bytes == 0) return 1;
  return static_cast<int>(std::clamp<std::size_t>(2 * l2_bytes / operand_bytes + 1, 1, 8));
}

namespace {

// A candidate ready to launch: its kernel and targets (slots shared with the others).
struct Contender {
  GemmCandidate candidate;
  overlap::SignalingGemm* gemm = nullptr;
  std::unique_ptr<StandaloneTargets> targets;
  overlap::EpilogueTargets signalled;
};

// The operand pairs the candidates rotate over: the caller's first, then copies of it.
struct OperandSets {
  std::vector<const void*> a, b;
  std::vector<core::DeviceBuffer> copies;
};

// The current device's L2 size in bytes (0 if it reports none).
std::size_t current_device_l2_bytes() {
  int device = 0, l2 = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return l2 > 0 ? static_cast<std::size_t>(l2) : 0;
}

OperandSets make_operand_sets(const overlap::GemmShape& shape, std::size_t element, const void* a,
                              const void* b, bool rotate, cudaStream_t stream) {
  OperandSets sets;
  sets.a.push_back(a);
  sets.b.push_back(b);
  if (!rotate) return sets;
  const std::size_t l2 = current_device_l2_bytes();
  const std::size_t a_bytes = static_cast<std::size_t>(shape.m) * shape.k * element;
  const std::size_t b_bytes = static_cast<std::size_t>(shape.n) * shape.k * element;
  const int count = rotated_input_sets(a_bytes + b_bytes, l2);
  for (int s = 1; s < count; ++s) {
    sets.copies.emplace_back(a_bytes);
    KILN_CUDA_CHECK(
        cudaMemcpyAsync(sets.copies.back().data(), a, a_bytes, cudaMemcpyDeviceToDevice, stream));
    sets.a.push_back(sets.copies.back().data());
    sets.copies.emplace_back(b_bytes);
    KILN_CUDA_CHECK(
        cudaMemcpyAsync(sets.copies.back().data(), b, b_bytes, cudaMemcpyDeviceToDevice, stream));
    sets.b.push_back(sets.copies.back().data());
  }
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  return sets;
}

// Times `contenders` interleaved over rounds, each launch on the next operand set; returns each
// one's statistics.
std::vector<core::TimingStats> time_contenders(const std::vector<Contender*>& contenders,
                                               const overlap::GemmShape& shape,
                                               const OperandSets& sets, int device_sms, int warmup,
                                               int per_round, int rounds, cudaStream_t stream) {
  const std::size_t count = sets.a.size();
  std::size_t next = 0;
  const auto pooled = core::time_rounds(stream, static_cast<int>(contenders.size()),
                                        [&](int v, int) {
                                          Contender& c = *contenders[v];
                                          const std::size_t s = next++ % count;
                                          c.gemm->run(shape, sets.a[s], sets.b[s], c.signalled,
                                                      c.candidate.schedule, device_sms, stream);
                                        },
                                        {warmup, per_round, rounds});
  std::vector<core::TimingStats> stats;
  for (const std::vector<float>& us : pooled)
    stats.push_back(core::summarize(std::span<const float>(us)));
  return stats;
}

}  // namespace

GemmSearchOptions parse_gemm_search_options(const std::string& spec) {
  GemmSearchOptions o;
  struct Key {
    const char* name;
    int* field;
    int low;
    int high = 1000;
  };
  int max_swizzle = overlap::kMaxSwizzle;
  int warmup_ms = static_cast<int>(o.sustained_warmup_ms);
  int without_tile_n = 0;  // the last value read; each is collected into `without` below
  std::vector<int> without;
  const Key keys[] = {{"max-swizzle", &max_swizzle, 1},
                      {"finalists", &o.finalists, 1},
                      {"screen-rounds", &o.screen_rounds, 1},
                      {"final-rounds", &o.final_rounds, 1},
                      {"sustained", &o.sustained, 0},
                      {"sustained-rounds", &o.sustained_rounds, 1},
                      {"without-tile-n", &without_tile_n, 8},
                      {"balanced-cap", &o.balanced_cap, 0, 1},
                      {"unchecked", &o.unchecked, 0, 1},
                      {"sustained-warmup-ms", &warmup_ms, 0, 5000},
                      {"claimed", &o.claimed, 0, 1},
                      {"least-traffic", &o.least_traffic, 0, 1},
                      {"sustained-per-round", &o.sustained_per_round, 1, 5000}};
  std::size_t at = 0;
  while (at < spec.size()) {
    const std::size_t end = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, end - at);
    at = end + 1;
    const std::size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const Key* key = nullptr;
    for (const Key& k : keys) {
      if (name == k.name) key = &k;
    }
    if (key == nullptr) {
      throw UsageError(fmt::format(
          "search option '{}': accepted max-swizzle, finalists, "
          "screen-rounds, final-rounds, sustained, sustained-rounds, sustained-warmup-ms, "
          "without-tile-n, balanced-cap, unchecked, claimed, least-traffic, sustained-per-round",
          name));
    }
    int value = -1;
    const char* first = eq == std::string::npos ? item.data() + item.size() : item.data() + eq + 1;
    const char* last = item.data() + item.size();
    const auto [ptr, error] = std::from_chars(first, last, value);
    if (eq == std::string::npos || error != std::errc{} || ptr != last || value < key->low ||
        value > key->high) {
      throw UsageError(fmt::format("search option '{}': expected {}=N with {} <= N <= {}", item,
                                   key->name, key->low, key->high));
    }
    *key->field = value;
    if (key->field == &without_tile_n) without.push_back(value);
  }
  o.sustained_warmup_ms = warmup_ms;
  std::erase_if(o.swizzles, [&](int s) { return s > max_swizzle; });
  if (o.swizzles.empty()) throw UsageError("search option max-swizzle: no swizzle left");
  if (!without.empty()) {  // the A/B of a set of tile widths (e.g. the ping-pong 160/176 ones)
    o.configs = overlap::built_gemm_configs();
    if (o.unchecked == 0) std::erase_if(o.configs, overlap::awaits_gpu_check);
    std::erase_if(o.configs, [&](const overlap::GemmConfig& c) {
      return std::find(without.begin(), without.end(), c.tile.n) != without.end();
    });
    if (o.configs.empty()) throw UsageError("search option without-tile-n: no configuration left");
  }
  return o;
}

std::vector<overlap::GemmConfig> searched_gemm_configs(const GemmSearchOptions& o) {
  if (!o.configs.empty()) return o.configs;  // named by the caller: run as asked
  std::vector<overlap::GemmConfig> configs = overlap::built_gemm_configs();
  if (o.unchecked == 0) std::erase_if(configs, overlap::awaits_gpu_check);
  return configs;
}

std::vector<GemmCandidate> search_gemm_configs(const overlap::GemmShape& shape, core::DType dtype,
                                               overlap::WeightLayout layout, const void* a,
                                               const void* b, const GemmSearchOptions& o,
                                               cudaStream_t stream) {
  const int sms = overlap::current_device_sms();
  const std::size_t element = core::dtype_size(dtype);
  const std::vector<overlap::GemmConfig> configs = searched_gemm_configs(o);
  std::vector<std::unique_ptr<overlap::SignalingGemm>> kernels;
  std::vector<GemmCandidate> plans;
  std::string reasons;
  std::int64_t slot_elements = 0;
  for (const overlap::GemmConfig& config : configs) {
    if (o.cta_cap % config.cluster.size() != 0) continue;
    kernels.push_back(overlap::make_signaling_gemm(dtype, layout, config));
    // The swizzles that differ on this shape, counted in the scheduler's own problem.
    const overlap::SchedulerFrame frame = overlap::scheduler_frame(shape, config);
    const int blocks_m = overlap::scheduler_blocks(frame.problem.m, frame.tile.m, frame.cluster.m);
    const int blocks_n = overlap::scheduler_blocks(frame.problem.n, frame.tile.n, frame.cluster.n);
    for (const bool along_n : o.rasters_along_n) {
      std::vector<int> applied;  // log2 of the swizzles this shape really gets
      for (const int swizzle : o.swizzles) {
        const int log_swizzle = overlap::scheduler_log_swizzle(blocks_m, blocks_n, swizzle);
        if (std::find(applied.begin(), applied.end(), log_swizzle) != applied.end()) continue;
        applied.push_back(log_swizzle);
        GemmCandidate c{config, {o.cta_cap, along_n, swizzle}, {}, false};
        try {
          const overlap::LaunchGeometry launch = kernels.back()->geometry(shape, c.schedule, sms);
          const overlap::SlotGeometry g = overlap::slot_geometry(shape, config.tile, launch, 1);
          slot_elements = std::max(slot_elements, g.slot_buffer_elements());
          plans.push_back(c);
        } catch (const UsageError& e) {
          reasons += fmt::format("\n  {}: {}", candidate_name(c), e.what());
        }
      }
    }
  }
  if (plans.empty()) {
    throw UsageError(fmt::format("GEMM search for {}: no candidate can run it:{}",
                                 overlap::shape_name(shape), reasons));
  }
  core::DeviceBuffer slots(static_cast<std::size_t>(slot_elements) * element);
  std::vector<Contender> contenders(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    Contender& c = contenders[i];
    c.candidate = plans[i];
    for (const auto& k : kernels) {
      if (k->config() == plans[i].config) c.gemm = k.get();
    }
    c.targets = std::make_unique<StandaloneTargets>(*c.gemm, shape, c.candidate.schedule, sms,
                                                    element, slots.data());
    c.signalled = c.targets->signalling(false);
  }

  const OperandSets sets = make_operand_sets(shape, element, a, b, o.rotate_inputs, stream);

  // Stage 1: every candidate, briefly.
  std::vector<Contender*> all;
  for (Contender& c : contenders) all.push_back(&c);
  const auto screened =
      time_contenders(all, shape, sets, sms, 1, o.screen_per_round, o.screen_rounds, stream);
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i]->candidate.us = screened[i];
    all[i]->candidate.stage = 1;
  }
  const auto faster = [](const Contender* x, const Contender* y) {
    return x->candidate.us.median < y->candidate.us.median;
  };
  std::sort(all.begin(), all.end(), faster);

  // Stage 2: the fastest of each configuration (diverse_finalists), longer, again interleaved;
  // they move to the front, the rest keep stage 1's order.
  std::vector<overlap::GemmConfig> screened_configs;
  for (const Contender* c : all) screened_configs.push_back(c->candidate.config);
  const std::vector<std::size_t> picked =
      diverse_finalists(screened_configs, static_cast<std::size_t>(std::max(1, o.finalists)));
  const std::size_t count = picked.size();
  {
    std::vector<Contender*> reordered;
    std::vector<bool> moved(all.size(), false);
    for (const std::size_t i : picked) {
      reordered.push_back(all[i]);
      moved[i] = true;
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!moved[i]) reordered.push_back(all[i]);
    }
    all = std::move(reordered);
  }
  std::vector<Contender*> leaders(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count));
  const auto finals =
      time_contenders(leaders, shape, sets, sms, 2, o.final_per_round, o.final_rounds, stream);
  for (std::size_t i = 0; i < leaders.size(); ++i) {
    leaders[i]->candidate.us = finals[i];
    leaders[i]->candidate.finalist = true;
    leaders[i]->candidate.stage = 2;
  }
  std::sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count), faster);

  // Stage 3: the best few, back to back at the sustained-load clock (a round of each is about
  // per_round launches with no idle gap; the rotation order keeps any one from owning the coolest
  // moment). Ties within a few percent in stage 2 are common; stage 3's long warm-up puts each
  // candidate at the clock its own draw allows, and adds the balanced-cap variants.
  // sustained_finalists adds the fastest finalist of each kernel schedule the best `sustained`
  // lack.
  std::vector<overlap::KernelSchedule> finalist_kernels;
  for (std::size_t i = 0; i < count; ++i)
    finalist_kernels.push_back(all[i]->candidate.config.kernel);
  const std::vector<std::size_t> chosen =
      sustained_finalists(finalist_kernels, static_cast<std::size_t>(std::max(0, o.sustained)));
  std::deque<Contender> capped;  // stage 3's balanced-cap and claimed variants (stable addresses)
  if (!chosen.empty()) {
    std::vector<Contender*> best;
    std::vector<bool> in_stage3(all.size(), false);
    for (const std::size_t i : chosen) {
      best.push_back(all[i]);
      in_stage3[i] = true;
    }
    const double launch_us = std::max(1.0, best.front()->candidate.us.median);
    if (o.balanced_cap != 0 && o.cta_cap == 0) {
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        const Contender& from = *best[i];
        const int cap =
            overlap::balanced_cta_cap(shape, from.candidate.config, from.candidate.schedule, sms);
        if (cap == 0) continue;
        Contender& c = capped.emplace_back();
        c.candidate = from.candidate;
        c.candidate.schedule.cta_cap = cap;
        c.gemm = from.gemm;
        // Its own slot buffer: the shared one is sized for the uncapped geometries.
        c.targets = std::make_unique<StandaloneTargets>(*c.gemm, shape, c.candidate.schedule, sms,
                                                        element, nullptr);
        c.signalled = c.targets->signalling(false);
        best.push_back(&c);
      }
    }
    // Each ping-pong candidate (capped or not) also with its tiles claimed at run time.
    if (o.claimed != 0) {
      const std::size_t timed = best.size();
      for (std::size_t i = 0; i < timed; ++i) {
        const Contender& from = *best[i];
        if (!overlap::is_pingpong(from.candidate.config.kernel)) continue;
        Contender& c = capped.emplace_back();
        c.candidate = from.candidate;
        c.candidate.schedule.claimed_tiles = true;
        c.gemm = from.gemm;
        // The static twin's grid and at most its slots (the band order pads nothing): the shared
        // slot buffer fits unless capped.
        c.targets = std::make_unique<StandaloneTargets>(
            *c.gemm, shape, c.candidate.schedule, sms, element,
            c.candidate.schedule.cta_cap == o.cta_cap ? slots.data() : nullptr);
        c.signalled = c.targets->signalling(false);
        best.push_back(&c);
      }
    }
    // Each ping-pong candidate also in the claimed band order whose modelled DRAM traffic is
    // least (overlap/operand_traffic.hpp), where that reads at least 10% less than its own order:
    // at long K the order's DRAM traffic sets the clock under the power cap, which the short
    // blocks of stages 1 and 2 do not show (on one H200 at 4096x8192x8192 the same 128x144 tile
    // and cycles ran 2-5% slower at sustained load in its static order than in a serpentine one,
    // docs/results/2026-12-03e-kblock-trace/).
    const std::size_t l2_bytes = o.least_traffic != 0 ? current_device_l2_bytes() : 0;
    if (l2_bytes > 0) {
      const std::size_t timed = best.size();
      for (std::size_t i = 0; i < timed; ++i) {
        const Contender& from = *best[i];
        if (!overlap::is_pingpong(from.candidate.config.kernel)) continue;
        const double own = overlap::modeled_operand_bytes(
            shape, from.candidate.config, from.candidate.schedule, sms, element, l2_bytes);
        const overlap::LeastTrafficOrder least = overlap::least_traffic_band_order(
            shape, from.candidate.config, from.candidate.schedule, sms, element, l2_bytes);
        if (least.bytes > 0.9 * own) continue;
        const bool timed_already = std::any_of(best.begin(), best.end(), [&](const Contender* x) {
          return x->candidate.config == from.candidate.config &&
                 candidate_name(x->candidate) ==
                     candidate_name(GemmCandidate{from.candidate.config, least.schedule, {}});
        });
        if (timed_already) continue;
        Contender& c = capped.emplace_back();
        c.candidate = from.candidate;
        c.candidate.schedule = least.schedule;
        c.gemm = from.gemm;
        c.targets = std::make_unique<StandaloneTargets>(
            *c.gemm, shape, c.candidate.schedule, sms, element,
            c.candidate.schedule.cta_cap == o.cta_cap ? slots.data() : nullptr);
        c.signalled = c.targets->signalling(false);
        best.push_back(&c);
      }
    }
    const int warmup =
        std::max(2 * o.sustained_per_round,
                 static_cast<int>(std::min(5000.0, 1000.0 * o.sustained_warmup_ms / launch_us)));
    const auto sustained = time_contenders(best, shape, sets, sms, warmup, o.sustained_per_round,
                                           o.sustained_rounds, stream);
    for (std::size_t i = 0; i < best.size(); ++i) {
      best[i]->candidate.us = sustained[i];
      best[i]->candidate.stage = 3;
      best[i]->candidate.finalist = true;
    }
    std::sort(best.begin(), best.end(), faster);
    // Among stage 3's near-ties, the order with clearly less DRAM traffic goes first: stage 3's
    // interleaved blocks share one clock, so they show only part of what a kernel's own DRAM
    // traffic costs it at sustained load (least_traffic_near_tie).
    if (l2_bytes > 0) {
      std::vector<double> us, bytes;
      for (const Contender* c : best) {
        us.push_back(c->candidate.us.median);
        bytes.push_back(overlap::modeled_operand_bytes(
            shape, c->candidate.config, c->candidate.schedule, sms, element, l2_bytes));
      }
      const std::size_t first = least_traffic_near_tie(us, bytes, kTrafficTieTolerance);
      std::rotate(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(first),
                  best.begin() + static_cast<std::ptrdiff_t>(first) + 1);
    }
    // Stage 3's candidates (the capped variants among them) first, then the rest as ranked.
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!in_stage3[i]) best.push_back(all[i]);
    }
    all = std::move(best);
  }
  std::vector<GemmCandidate> ranked;
  for (const Contender* c : all) ranked.push_back(c->candidate);
  return ranked;
}

}  // namespace kiln::tune

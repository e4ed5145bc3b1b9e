// The tuner's profiles, their JSON, and the plan choice (see tuner_profile.hpp).
#include "tune/tuner_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"
#include "tune/plan_cache.hpp"

namespace kiln::tune {
namespace {

template <typename T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw UsageError(fmt::format("{}: missing field '{}'", where, key));
  }
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UsageError(fmt::format("{}: field '{}' has the wrong type", where, key));
  }
}

nlohmann::json shape_json(const GemmShape& s) {
  return {s.m, s.n, s.k};
}

GemmShape shape_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 3 || !j[0].is_number_integer() || !j[1].is_number_integer() ||
      !j[2].is_number_integer()) {
    throw UsageError(fmt::format("{}: 'shape' must be [M, N, K]", where));
  }
  GemmShape s{j[0].get<int>(), j[1].get<int>(), j[2].get<int>()};
  if (s.m < 1 || s.n < 1 || s.k < 1) {
    throw UsageError(fmt::format("{}: shape {}x{}x{} has a dimension < 1", where, s.m, s.n, s.k));
  }
  return s;
}

bool same_shape(const GemmShape& a, const GemmShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}

std::vector<int> equal_groups(int waves, int groups) {
  std::vector<int> sizes(groups, waves / groups);
  for (int i = 0; i < waves % groups; ++i) ++sizes[groups - 1 - i];  // larger groups last
  return sizes;
}

std::size_t element_size(const TunerProfile& profile) {
  return core::dtype_size(core::parse_dtype(profile.dtype, "profile dtype"));
}

}  // namespace

LatencyCurve TransportCurve::curve() const {
  std::vector<double> seconds(us.size());
  std::transform(us.begin(), us.end(), seconds.begin(), [](double u) { return u * 1e-6; });
  return LatencyCurve(bytes, seconds);
}

std::string base_plan_string(const Plan& plan) {
  Plan base = plan;
  base.partition.clear();
  return to_string(base);
}

std::string strategy_name(PartitionStrategy strategy) {
  switch (strategy) {
    case PartitionStrategy::kPredictive:
      return "predictive";
    case PartitionStrategy::kEqualSize:
      return "equal";
    case PartitionStrategy::kOneWavePerGroup:
      return "per-wave";
  }
  return "?";
}

const TransportCurve* TunerProfile::curve_for(const Plan& plan,
                                              const LaunchGeometry& launch) const {
  const int free_sms = sms - launch.grid_ctas;
  for (const TransportCurve& c : curves) {
    if (plan.copy_engine && c.transport == overlap::transport_name(plan)) return &c;
    if (!plan.copy_engine && c.transport == "nccl" &&
        c.nccl_ctas == (free_sms >= 1 && plan.schedule.cta_cap > 0 ? free_sms : 0)) {
      return &c;
    }
  }
  return nullptr;
}

const TransportCurve* TunerProfile::unlimited_nccl_curve() const {
  for (const TransportCurve& c : curves) {
    if (c.transport == "nccl" && c.nccl_ctas == 0) return &c;
  }
  return nullptr;
}

std::vector<std::string> TunerProfile::base_plans() const {
  std::vector<std::string> out;
  for (const GemmProfile& g : gemms) {
    if (std::find(out.begin(), out.end(), g.base_plan) == out.end()) out.push_back(g.base_plan);
  }
  return out;
}

std::vector<std::string> TunerProfile::base_plans_for(const overlap::GemmShape& shape) const {
  std::vector<std::string> out;
  for (const GemmProfile& g : gemms) {
    if (same_shape(g.shape, shape) && std::find(out.begin(), out.end(), g.base_plan) == out.end()) {
      out.push_back(g.base_plan);
    }
  }
  return out.empty() ? base_plans() : out;
}

nlohmann::json gemm_profile_to_json(const GemmProfile& g) {
  return {{"shape", shape_json(g.shape)},          {"base_plan", g.base_plan},
          {"grid_ctas", g.launch.grid_ctas},       {"slots", g.launch.slots},
          {"tiles_m", g.launch.tiles_m},           {"tiles_n", g.launch.tiles_n},
          {"gemm_alone_us", g.gemm_alone_us},      {"gemm_with_comm_us", g.gemm_with_comm_us},
          {"overhead_us", g.overhead_us},          {"reorder_us", g.reorder_us},
          {"comm_slowdown", g.comm_slowdown},      {"traced_comm_end_us", g.traced_comm_end_us},
          {"group_cost_us", g.group_cost_us},      {"anchor_per_wave_us", g.anchor_per_wave_us},
          {"anchor_coarse_us", g.anchor_coarse_us}};
}

GemmProfile gemm_profile_from_json(const nlohmann::json& e, const std::string& where) {
  GemmProfile g;
  g.shape = shape_from(field<nlohmann::json>(e, "shape", where), where);
  g.base_plan = field<std::string>(e, "base_plan", where);
  overlap::parse_plan(g.base_plan, where + " base_plan");
  g.launch.grid_ctas = field<int>(e, "grid_ctas", where);
  g.launch.slots = field<int>(e, "slots", where);
  g.launch.tiles_m = field<int>(e, "tiles_m", where);
  g.launch.tiles_n = field<int>(e, "tiles_n", where);
  g.gemm_alone_us = field<double>(e, "gemm_alone_us", where);
  g.gemm_with_comm_us = field<double>(e, "gemm_with_comm_us", where);
  g.overhead_us = field<double>(e, "overhead_us", where);
  g.reorder_us = field<double>(e, "reorder_us", where);
  g.comm_slowdown = e.value("comm_slowdown", 1.0);
  g.traced_comm_end_us = e.value("traced_comm_end_us", -1.0);
  g.group_cost_us = e.value("group_cost_us", 0.0);             // profiles before 2026-11-27: none
  g.anchor_per_wave_us = e.value("anchor_per_wave_us", -1.0);  // before 2026-11-28: none
  g.anchor_coarse_us = e.value("anchor_coarse_us", -1.0);
  if (!(g.comm_slowdown > 0.0)) throw UsageError(where + ": comm_slowdown must be positive");
  if (!(g.group_cost_us >= 0.0)) throw UsageError(where + ": group_cost_us must be >= 0");
  if (g.launch.grid_ctas < 1 || g.launch.slots < 1 || !(g.gemm_with_comm_us > 0.0)) {
    throw UsageError(where + ": grid_ctas, slots and gemm_with_comm_us must be positive");
  }
  return g;
}

nlohmann::json TunerProfile::to_json() const {
  nlohmann::json j;
  j["kind"] = "kiln-tuner-profile";
  j["version"] = kVersion;
  j["device"] = device;
  j["device_name"] = device_name;
  j["world"] = world;
  j["op"] = op;
  j["dtype"] = dtype;
  j["layout"] = layout;
  j["sms"] = sms;
  j["curves"] = nlohmann::json::array();
  for (const TransportCurve& c : curves) {
    j["curves"].push_back(
        {{"transport", c.transport}, {"nccl_ctas", c.nccl_ctas}, {"bytes", c.bytes}, {"us", c.us}});
  }
  j["gemms"] = nlohmann::json::array();
  for (const GemmProfile& g : gemms) j["gemms"].push_back(gemm_profile_to_json(g));
  j["nccl_sms"] = nlohmann::json::array();
  for (const NcclSmMeasurement& m : nccl_sms) {
    j["nccl_sms"].push_back(
        {{"ctas_limit", m.ctas_limit}, {"sms_held", m.sms_held}, {"overlapped", m.overlapped}});
  }
  j["provenance"] = provenance;
  return j;
}

TunerProfile TunerProfile::from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object() || j.value("kind", std::string()) != "kiln-tuner-profile") {
    throw UsageError(source + ": not a kiln tuner profile (no \"kind\": \"kiln-tuner-profile\")");
  }
  const int version = field<int>(j, "version", source);
  if (version != kVersion) {
    throw UsageError(fmt::format("{}: profile version {}, this kiln reads version {}", source,
                                 version, kVersion));
  }
  TunerProfile p;
  p.device = field<std::string>(j, "device", source);
  p.device_name = j.value("device_name", std::string());
  p.world = field<int>(j, "world", source);
  p.op = field<std::string>(j, "op", source);
  p.dtype = field<std::string>(j, "dtype", source);
  p.layout = j.value("layout", std::string("nk"));
  p.sms = field<int>(j, "sms", source);
  if (p.world < 1 || p.sms < 2) throw UsageError(source + ": world must be >= 1 and sms >= 2");
  if (p.op != "rs" && p.op != "ar") throw UsageError(source + ": op must be rs or ar");
  core::parse_dtype(p.dtype, source + " dtype");
  const auto curves = field<nlohmann::json>(j, "curves", source);
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const std::string where = fmt::format("{} curves[{}]", source, i);
    TransportCurve c;
    c.transport = field<std::string>(curves[i], "transport", where);
    if (c.transport != "ce" && c.transport != "ce2" && c.transport != "nccl") {
      throw UsageError(where + ": transport must be ce, ce2 or nccl");
    }
    c.nccl_ctas = field<int>(curves[i], "nccl_ctas", where);
    c.bytes = field<std::vector<double>>(curves[i], "bytes", where);
    c.us = field<std::vector<double>>(curves[i], "us", where);
    if (c.bytes.size() != c.us.size() || c.bytes.empty()) {
      throw UsageError(where + ": 'bytes' and 'us' must be non-empty and of one length");
    }
    try {
      c.curve();  // checks the samples
    } catch (const UsageError& e) {
      throw UsageError(where + ": " + e.what());
    }
    p.curves.push_back(std::move(c));
  }
  const auto gemms = field<nlohmann::json>(j, "gemms", source);
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const std::string where = fmt::format("{} gemms[{}]", source, i);
    p.gemms.push_back(gemm_profile_from_json(gemms[i], where));
  }
  if (j.contains("nccl_sms")) {
    for (const nlohmann::json& e : j.at("nccl_sms")) {
      p.nccl_sms.push_back({field<int>(e, "ctas_limit", source + " nccl_sms"),
                            field<int>(e, "sms_held", source + " nccl_sms"),
                            field<bool>(e, "overlapped", source + " nccl_sms")});
    }
  }
  p.provenance = j.value("provenance", nlohmann::json::object());
  return p;
}

WaveProfile wave_profile_for(const TunerProfile& profile, const GemmShape& shape, const Plan& base,
                             GemmProfile* gemm_out, std::string* source) {
  const std::string key = base_plan_string(base);
  const GemmProfile* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const GemmProfile& g : profile.gemms) {
    if (g.base_plan != key) continue;
    const double d = shape_distance(g.shape, shape);
    if (d < best) {
      best = d;
      nearest = &g;
    }
  }
  if (nearest == nullptr) {
    throw UsageError(fmt::format("profile has no GEMM measurement with base plan \"{}\"", key));
  }
  GemmProfile g = *nearest;
  if (source != nullptr) {
    *source = same_shape(nearest->shape, shape)
                  ? std::string("profiled")
                  : fmt::format("scaled from {}x{}x{}", nearest->shape.m, nearest->shape.n,
                                nearest->shape.k);
  }
  if (!same_shape(nearest->shape, shape)) {
    g.shape = shape;
    g.launch = overlap::host_launch_geometry(shape, base.gemm, base.schedule, profile.sms);
    const double per_wave = nearest->gemm_with_comm_us / nearest->launch.waves() *
                            static_cast<double>(shape.k) / nearest->shape.k;
    const double per_wave_alone = nearest->gemm_alone_us / nearest->launch.waves() *
                                  static_cast<double>(shape.k) / nearest->shape.k;
    g.gemm_with_comm_us = per_wave * g.launch.waves();
    g.gemm_alone_us = per_wave_alone * g.launch.waves();
    g.reorder_us = nearest->reorder_us * (static_cast<double>(shape.m) * shape.n) /
                   (static_cast<double>(nearest->shape.m) * nearest->shape.n);
    // The overhead is mostly what the model misses for the measured run (it was -910 us on a
    // 16384x16384x2048 AllReduce at 4 ranks), which grows with the run: scaled by the GEMM's
    // time like the rest. Carried over unscaled, it made a 4096x8192x2048 prediction negative
    // (4xH200, 2026-11-27).
    g.overhead_us =
        nearest->overhead_us * g.gemm_with_comm_us / std::max(nearest->gemm_with_comm_us, 1e-9);
  }
  if (gemm_out != nullptr) *gemm_out = g;
  return wave_profile_of(profile, g, base);
}

WaveProfile wave_profile_of(const TunerProfile& profile, const GemmProfile& gemm,
                            const Plan& base) {
  WaveProfile wave;
  wave.gemm_seconds = gemm.gemm_with_comm_us * 1e-6;
  wave.comm_scale = gemm.comm_slowdown;
  wave.group_seconds = gemm.group_cost_us * 1e-6;
  wave.wave_bytes =
      wave_bytes(gemm.launch, static_cast<std::int64_t>(base.gemm.tile.m) * base.gemm.tile.n,
                 element_size(profile));
  return wave;
}

namespace {

PlanCandidate candidate_from(const TunerProfile& profile, const GemmShape& shape, const Plan& base,
                             PartitionStrategy strategy, const PartitionLimits& limits,
                             const std::vector<int>* fixed_partition) {
  GemmProfile gemm;
  std::string source;
  const WaveProfile wave = wave_profile_for(profile, shape, base, &gemm, &source);
  const TransportCurve* transport = profile.curve_for(base, gemm.launch);
  if (transport == nullptr) {
    throw UsageError(fmt::format("profile has no {} latency curve for plan \"{}\"",
                                 overlap::transport_name(base), base_plan_string(base)));
  }
  const LatencyCurve curve = transport->curve();
  const int waves = wave.waves();
  Prediction prediction;
  if (fixed_partition != nullptr) {
    prediction = predict(wave, curve,
                         fixed_partition->empty() ? std::vector<int>(waves, 1) : *fixed_partition);
  } else if (strategy == PartitionStrategy::kPredictive) {
    PartitionLimits l = limits;
    l.first = std::min(l.first, waves);
    l.last = std::min(l.last, waves);
    prediction = best_partition(wave, curve, l);
  } else if (strategy == PartitionStrategy::kOneWavePerGroup || waves < 3) {
    prediction = predict(wave, curve, std::vector<int>(waves, 1));
  } else {
    prediction.seconds = std::numeric_limits<double>::infinity();
    for (int k = 2; k < waves; ++k) {
      Prediction p = predict(wave, curve, equal_groups(waves, k));
      if (p.seconds < prediction.seconds) prediction = std::move(p);
    }
  }
  PlanCandidate c;
  c.plan = base;
  c.plan.partition = prediction.partition;
  c.prediction = prediction;
  c.overhead_us = gemm.overhead_us;
  c.reorder_us = gemm.reorder_us;
  // Never below what no partition avoids: the GEMM alone, its last group's communication on the
  // curve, the reorder. A negative overhead (the model over-predicting the anchor run) could
  // otherwise carry a partition's prediction below that.
  double last_group_bytes = 0.0;
  if (!prediction.partition.empty()) {
    const int last = prediction.partition.back();
    for (int w = std::max(0, waves - last); w < waves; ++w)
      last_group_bytes += wave.wave_bytes[static_cast<std::size_t>(w)];
  }
  const double last_group_us = last_group_bytes > 0 ? 1e6 * curve.seconds_at(last_group_bytes) : 0;
  c.predicted_us =
      std::max(gemm.overhead_us + prediction.seconds * 1e6, gemm.gemm_alone_us + last_group_us) +
      gemm.reorder_us;
  c.gemm_source = source;
  c.model_fits = model_describes_run(gemm);
  return c;
}

}  // namespace

bool model_describes_run(const GemmProfile& gemm) {
  return std::abs(gemm.overhead_us) <= gemm.gemm_alone_us;
}

GroupCostFit fit_group_cost(const WaveProfile& wave, const LatencyCurve& curve, double per_wave_us,
                            const std::vector<int>& coarse, double coarse_us) {
  const std::vector<int> per_wave(static_cast<std::size_t>(wave.waves()), 1);
  if (coarse.empty() || coarse.size() >= per_wave.size()) {
    throw UsageError(fmt::format("fit_group_cost: a coarse partition of {} groups for {} waves",
                                 coarse.size(), per_wave.size()));
  }
  const auto with_cost = [&](double cost_us) {
    WaveProfile w = wave;
    w.group_seconds = cost_us * 1e-6;
    return w;
  };
  // Per-wave minus coarse, as the model predicts it at a given cost per group.
  const auto gap = [&](double cost_us) {
    const WaveProfile w = with_cost(cost_us);
    return 1e6 * (predict(w, curve, per_wave).seconds - predict(w, curve, coarse).seconds);
  };
  constexpr double kMostUs = 2000.0;
  const double measured_gap = per_wave_us - coarse_us;
  double cost = 0.0;
  if (gap(kMostUs) <= measured_gap) {
    cost = kMostUs;
  } else if (gap(0.0) < measured_gap) {
    double lo = 0.0, hi = kMostUs;  // gap(lo) < measured <= gap(hi): a crossing lies between
    for (int i = 0; i < 60; ++i) {
      const double mid = 0.5 * (lo + hi);
      (gap(mid) < measured_gap ? lo : hi) = mid;
    }
    cost = 0.5 * (lo + hi);
  }
  return {cost, per_wave_us - 1e6 * predict(with_cost(cost), curve, per_wave).seconds};
}

std::vector<int> coarse_partition(int waves) {
  if (waves < 2) return {};
  const int groups = std::max(1, std::min(waves - 1, (waves + 3) / 4));
  std::vector<int> out(static_cast<std::size_t>(groups), waves / groups);
  for (int g = 0; g < waves % groups; ++g) ++out[static_cast<std::size_t>(g)];
  return out;
}

std::optional<PlanCandidate> serial_candidate(const TunerProfile& profile, const GemmShape& shape,
                                              const overlap::GemmConfig* config) {
  const TransportCurve* unlimited = profile.unlimited_nccl_curve();
  if (unlimited == nullptr) return std::nullopt;
  const LatencyCurve curve = unlimited->curve();
  std::optional<PlanCandidate> best;
  // The shape's own measurements first; where none is a cap-0 base plan (of `config`), any.
  const std::vector<std::string> measured_here = profile.base_plans_for(shape);
  const auto serial_bases = [&](const std::vector<std::string>& bases) {
    std::vector<std::string> out;
    for (const std::string& text : bases) {
      const Plan base = overlap::parse_plan(text, "profile base plan");
      // The GEMM alone on every SM: only a cap-0 base plan measured it so.
      if (base.schedule.cta_cap == 0 && (config == nullptr || base.gemm == *config))
        out.push_back(text);
    }
    return out;
  };
  std::vector<std::string> bases = serial_bases(measured_here);
  if (bases.empty()) bases = serial_bases(profile.base_plans());
  for (const std::string& text : bases) {
    const Plan base = overlap::parse_plan(text, "profile base plan");
    GemmProfile gemm;
    std::string source;
    const WaveProfile wave = wave_profile_for(profile, shape, base, &gemm, &source);
    double bytes = 0.0;
    for (const double b : wave.wave_bytes) bytes += b;
    const double comm_us = 1e6 * curve.seconds_at(bytes);
    // An AllReduce of the serial form runs as cuBLAS + one NCCL call on the row-major output,
    // with no reorder (GemmCollective::run_serial_baseline); the profiled GEMM stands in for
    // cuBLAS's. A ReduceScatter's still reorders its slot layout.
    const double reorder_us = profile.op == "ar" ? 0.0 : gemm.reorder_us;
    const double total = gemm.gemm_alone_us + comm_us + reorder_us;
    if (best && best->predicted_us <= total) continue;
    PlanCandidate c;
    c.plan = base;
    c.plan.copy_engine = false;
    c.plan.two_phase = false;
    c.plan.partition = {wave.waves()};
    GroupPrediction group;
    group.waves = wave.waves();
    group.bytes = bytes;
    group.compute_done = group.comm_start = gemm.gemm_alone_us * 1e-6;
    group.comm_done = (gemm.gemm_alone_us + comm_us) * 1e-6;
    c.prediction.partition = c.plan.partition;
    c.prediction.seconds = group.comm_done;
    c.prediction.groups = {group};
    c.reorder_us = reorder_us;
    c.predicted_us = total;
    c.gemm_source = "serial: GEMM alone (" + source + ") + one unlimited NCCL call";
    best = std::move(c);
  }
  return best;
}

TunedPlan tune_plan(const TunerProfile& profile, const GemmShape& shape,
                    const PartitionLimits& limits, PartitionStrategy strategy, bool with_serial) {
  if (profile.base_plans().empty()) throw UsageError("the tuner profile holds no GEMM measurement");
  TunedPlan tuned;
  std::string reasons;
  const auto consider = [&](const std::vector<std::string>& bases) {
    for (const std::string& text : bases) {
      const Plan base = overlap::parse_plan(text, "profile base plan");
      if (base.two_phase && profile.world < 3) {
        // At 2 ranks the two-phase AllReduce moves as many bytes as comm=ce and adds a sum and a
        // second exchange; its curve misprices that (2xH200, 2026-11-28: chosen on 4 of 6 shapes,
        // 0.91-0.94x the serial baseline where comm=ce plans gave 1.16-1.56x).
        tuned.excluded.push_back(text + ": comm=ce2 needs 3 or more ranks to move fewer bytes");
        reasons += "\n  " + tuned.excluded.back();
        continue;
      }
      try {
        PlanCandidate c = candidate_from(profile, shape, base, strategy, limits, nullptr);
        if (!c.model_fits) {
          tuned.excluded.push_back(fmt::format(
              "{}: the model does not describe its profiled run (correction {:.0f} us, more "
              "than the GEMM alone)",
              text, c.overhead_us));
          reasons += "\n  " + tuned.excluded.back();
          continue;
        }
        tuned.considered.push_back(std::move(c));
      } catch (const UsageError& e) {
        reasons += std::string("\n  ") + e.what();
      }
    }
  };
  consider(profile.base_plans_for(shape));
  // None of the shape's own base plans could be predicted (no curve for its transport): the rest.
  if (tuned.considered.empty()) {
    tuned.excluded.clear();  // the pass over every base plan names each again
    reasons.clear();
    consider(profile.base_plans());
  }
  // The serial plan needs no wave model: it stands even where the model describes no base plan.
  if (strategy == PartitionStrategy::kPredictive && with_serial) {
    if (auto serial = serial_candidate(profile, shape)) tuned.considered.push_back(*serial);
  }
  if (tuned.considered.empty()) {
    throw UsageError("no base plan of the profile can be predicted:" + reasons);
  }
  tuned.chosen = *std::min_element(tuned.considered.begin(), tuned.considered.end(),
                                   [](const PlanCandidate& a, const PlanCandidate& b) {
                                     return a.predicted_us < b.predicted_us;
                                   });
  return tuned;
}

PlanCandidate predict_plan(const TunerProfile& profile, const GemmShape& shape, const Plan& plan) {
  // A serial plan whose base the profile never measured (the usual case: the tuner makes it).
  const auto unmeasured = [&] {
    const std::string key = base_plan_string(plan);
    return std::none_of(profile.gemms.begin(), profile.gemms.end(),
                        [&](const GemmProfile& g) { return g.base_plan == key; });
  };
  // An AllReduce of the serial form runs as cuBLAS + NCCL with no reorder, measured base or not
  // (serial_candidate predicts it so; candidate_from would add the reorder).
  if (is_serial_plan(plan) && (profile.op == "ar" || unmeasured())) {
    if (auto serial = serial_candidate(profile, shape, &plan.gemm)) {
      serial->plan = plan;  // its raster and swizzle as given
      return *serial;
    }
  }
  return candidate_from(profile, shape, plan, PartitionStrategy::kPredictive, {}, &plan.partition);
}

std::string describe_profile(const TunerProfile& profile) {
  std::string out;
  out += fmt::format("# curves (us per group call):\n");
  for (const tune::TransportCurve& c : profile.curves) {
    out += fmt::format("#   {}{}: ", c.transport,
                       c.nccl_ctas > 0         ? fmt::format(" ({} CTAs)", c.nccl_ctas)
                       : c.transport == "nccl" ? std::string(" (unlimited: the serial plan's)")
                                               : std::string());
    for (std::size_t i = 0; i < c.bytes.size(); i += std::max<std::size_t>(1, c.bytes.size() / 8))
      out += fmt::format("{:.0f} KiB {:.1f}  ", c.bytes[i] / 1024, c.us[i]);
    out += fmt::format("{:.0f} KiB {:.1f}\n", c.bytes.back() / 1024, c.us.back());
  }
  for (const tune::NcclSmMeasurement& m : profile.nccl_sms) {
    out += fmt::format("#   NCCL kernel (CTA limit {}): held {} SMs{}\n", m.ctas_limit, m.sms_held,
                       m.overlapped ? "" : " (probe did not overlap the kernel: not measured)");
  }
  out += fmt::format("{:>18} {:>62} {:>5} {:>9} {:>11} {:>9} {:>9} {:>9}\n", "shape", "base plan",
                     "waves", "gemm us", "w/ comm us", "ovh us", "reord us", "group us");
  for (const tune::GemmProfile& g : profile.gemms) {
    out += fmt::format("{:>18} {:>62} {:>5} {:9.1f} {:11.1f} {:9.1f} {:9.1f} {:9.1f}\n",
                       overlap::shape_name(g.shape), g.base_plan, g.launch.waves(), g.gemm_alone_us,
                       g.gemm_with_comm_us, g.overhead_us, g.reorder_us, g.group_cost_us);
  }
  return out;
}

}  // namespace kiln::tune

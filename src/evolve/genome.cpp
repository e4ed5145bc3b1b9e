// Genomes: constraints, repair, random genomes, crossover and mutation (see genome.hpp).
#include "evolve/genome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/test_values.hpp"

namespace kiln::evolve {
namespace {

std::string knob_key(const std::string& strategy, const std::string& knob) {
  return strategy + "." + knob;
}

const Strategy* lookup(const std::string& name) {
  for (const Strategy& s : strategy_catalog())
    if (s.name == name) return &s;
  return nullptr;
}

bool incompatible(const Strategy& a, const Strategy& b) {
  const auto lists = [](const Strategy& s, const std::string& other) {
    return std::find(s.incompatible.begin(), s.incompatible.end(), other) != s.incompatible.end();
  };
  return lists(a, b.name) || lists(b, a.name);
}

// The catalog's groups that have a member for `family`, in catalog order.
std::vector<std::string> groups_of(Family family) {
  std::vector<std::string> groups;
  for (const Strategy& s : strategy_catalog())
    if (s.applies_to(family) && std::find(groups.begin(), groups.end(), s.group) == groups.end())
      groups.push_back(s.group);
  return groups;
}

bool required(Family family, const std::string& group) {
  const std::vector<std::string> r = required_groups(family);
  return std::find(r.begin(), r.end(), group) != r.end();
}

// A member of `group` for `family` that clashes with nothing in `genome`, at random; null when
// there is none.
bool permitted(const StrategySet* allowed, const std::string& name) {
  return allowed == nullptr || allowed->empty() || allowed->count(name) > 0;
}

const Strategy* compatible_member(const Genome& genome, const std::string& group, Family family,
                                  Rng& rng, const StrategySet* allowed) {
  std::vector<const Strategy*> options;
  for (const Strategy* s : group_members(group, family)) {
    bool ok = permitted(allowed, s->name);
    for (const std::string& present : genome.strategies) {
      const Strategy* p = lookup(present);
      ok = ok && p != nullptr && !incompatible(*s, *p);
    }
    if (ok) options.push_back(s);
  }
  return options.empty() ? nullptr : options[rng.below(static_cast<int>(options.size()))];
}

}  // namespace

std::uint64_t Rng::next() {
  // splitmix64 (Steele, Lea, Flood 2014): core::mix64 adds the increment before mixing.
  const std::uint64_t current = state_;
  state_ += 0x9E3779B97F4A7C15ull;
  return core::mix64(current);
}

int Rng::below(int n) {
  KILN_REQUIRE(n >= 1, "Rng::below: n must be >= 1");
  return static_cast<int>(next() % static_cast<std::uint64_t>(n));
}

double Rng::unit() {
  return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
}

int Genome::knob(const std::string& strategy, const std::string& knob_name) const {
  const auto it = knobs.find(knob_key(strategy, knob_name));
  if (it != knobs.end()) return it->second;
  const Knob* k = find_strategy(strategy).knob(knob_name);
  KILN_REQUIRE(k != nullptr, fmt::format("strategy {} has no knob {}", strategy, knob_name));
  return k->values.front();
}

std::uint64_t Genome::hash() const {
  // FNV-1a over a canonical text (sets and maps are ordered).
  std::string text = family_name(family) + "|";
  for (const std::string& s : strategies) text += s + ",";
  text += "|";
  for (const auto& [k, v] : knobs) text += fmt::format("{}={},", k, v);
  text += "|" + source;
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string Genome::describe() const {
  std::string out = family_name(family) + ":";
  bool first = true;
  for (const std::string& s : strategies) {
    out += (first ? " " : " + ") + s;
    first = false;
    std::string args;
    if (const Strategy* st = lookup(s)) {
      for (const Knob& k : st->knobs)
        args += fmt::format("{}{}={}", args.empty() ? "" : ",", k.name, knob(s, k.name));
    }
    if (!args.empty()) out += "(" + args + ")";
  }
  if (!source.empty()) out += " [source]";
  return out;
}

nlohmann::json Genome::to_json() const {
  nlohmann::json j;
  j["family"] = family_name(family);
  j["strategies"] = std::vector<std::string>(strategies.begin(), strategies.end());
  j["knobs"] = knobs;
  if (!source.empty()) j["source"] = source;
  j["hash"] = fmt::format("{:016x}", hash());
  return j;
}

Genome Genome::from_json(const nlohmann::json& j, const std::string& where) {
  try {
    Genome g;
    g.family = parse_family(j.at("family").get<std::string>());
    for (const auto& s : j.at("strategies")) g.strategies.insert(s.get<std::string>());
    g.knobs = j.at("knobs").get<std::map<std::string, int>>();
    if (j.contains("source")) g.source = j.at("source").get<std::string>();
    return g;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not a genome ({})", where, e.what()));
  }
}

std::vector<std::string> violations(const Genome& g) {
  std::vector<std::string> out;
  std::map<std::string, std::string> by_group;
  for (const std::string& name : g.strategies) {
    const Strategy* s = lookup(name);
    if (s == nullptr) {
      out.push_back(fmt::format("unknown strategy {}", name));
      continue;
    }
    if (!s->applies_to(g.family))
      out.push_back(fmt::format("{} does not apply to {} kernels", name, family_name(g.family)));
    const auto [it, fresh] = by_group.emplace(s->group, name);
    if (!fresh) out.push_back(fmt::format("{} and {} are both {}", it->second, name, s->group));
    for (const std::string& other : g.strategies) {
      const Strategy* o = lookup(other);
      if (o != nullptr && name < other && incompatible(*s, *o))
        out.push_back(fmt::format("{} and {} are incompatible", name, other));
    }
  }
  for (const std::string& group : required_groups(g.family))
    if (!by_group.count(group)) out.push_back(fmt::format("no {} strategy", group));
  for (const auto& [key, value] : g.knobs) {
    const std::string::size_type dot = key.find('.');
    const std::string strategy = key.substr(0, dot);
    const Strategy* s = dot == std::string::npos ? nullptr : lookup(strategy);
    const Knob* k = s == nullptr ? nullptr : s->knob(key.substr(dot + 1));
    if (k == nullptr || !g.has(strategy)) {
      out.push_back(fmt::format("knob {} belongs to no strategy of the genome", key));
    } else if (std::find(k->values.begin(), k->values.end(), value) == k->values.end()) {
      out.push_back(fmt::format("knob {} = {} is not an allowed value", key, value));
    }
  }
  return out;
}

Genome repair(Genome g, Rng& rng, const StrategySet* allowed) {
  // Drop what does not exist, apply or is not allowed.
  for (auto it = g.strategies.begin(); it != g.strategies.end();) {
    const Strategy* s = lookup(*it);
    it = (s == nullptr || !s->applies_to(g.family) || !permitted(allowed, *it))
             ? g.strategies.erase(it)
             : std::next(it);
  }
  // Group and incompatibility clashes: drop one side at random until none is left.
  for (bool clash = true; clash;) {
    clash = false;
    for (const std::string& a : g.strategies) {
      for (const std::string& b : g.strategies) {
        if (a >= b) continue;
        const Strategy &sa = *lookup(a), &sb = *lookup(b);
        if (sa.group == sb.group || incompatible(sa, sb)) {
          g.strategies.erase(rng.below(2) == 0 ? a : b);
          clash = true;
          break;
        }
      }
      if (clash) break;
    }
  }
  // Missing required groups.
  for (const std::string& group : required_groups(g.family)) {
    const bool present =
        std::any_of(g.strategies.begin(), g.strategies.end(),
                    [&](const std::string& s) { return lookup(s)->group == group; });
    if (present) continue;
    const Strategy* pick = compatible_member(g, group, g.family, rng, allowed);
    KILN_REQUIRE(pick != nullptr,
                 fmt::format("repair: no {} strategy fits the rest of the genome", group));
    g.strategies.insert(pick->name);
  }
  // Knobs: orphans removed, values stepped to the nearest allowed one.
  for (auto it = g.knobs.begin(); it != g.knobs.end();) {
    const std::string::size_type dot = it->first.find('.');
    const std::string strategy = it->first.substr(0, dot);
    const Knob* k = dot == std::string::npos || !g.has(strategy)
                        ? nullptr
                        : lookup(strategy)->knob(it->first.substr(dot + 1));
    if (k == nullptr) {
      it = g.knobs.erase(it);
      continue;
    }
    int best = k->values.front();
    for (const int v : k->values)
      if (std::abs(v - it->second) < std::abs(best - it->second)) best = v;
    it->second = best;
    ++it;
  }
  return g;
}

Genome default_genome(Family family, const std::string& strategy, Rng& rng,
                      const StrategySet* allowed) {
  Genome g;
  g.family = family;
  g.strategies.insert(strategy);
  return repair(g, rng, allowed);  // knobs absent: each reads as its default
}

Genome random_genome(Family family, Rng& rng, double optional_share, const StrategySet* allowed) {
  Genome g;
  g.family = family;
  for (const std::string& group : groups_of(family)) {
    if (!required(family, group) && rng.unit() >= optional_share) continue;
    if (const Strategy* s = compatible_member(g, group, family, rng, allowed))
      g.strategies.insert(s->name);
  }
  for (const std::string& name : g.strategies)
    for (const Knob& k : lookup(name)->knobs)
      g.knobs[knob_key(name, k.name)] = k.values[rng.below(static_cast<int>(k.values.size()))];
  return repair(g, rng, allowed);
}

Genome crossover(const Genome& a, const Genome& b, Crossover kind, Rng& rng,
                 const StrategySet* allowed) {
  KILN_REQUIRE(a.family == b.family, "crossover: parents of different families");
  Genome child;
  child.family = a.family;
  for (const std::string& s : a.strategies)
    if (kind == Crossover::kUnion || b.has(s)) child.strategies.insert(s);
  if (kind == Crossover::kUnion) child.strategies.insert(b.strategies.begin(), b.strategies.end());
  for (const std::string& s : child.strategies) {
    for (const Knob& k : lookup(s)->knobs) {
      const std::string key = knob_key(s, k.name);
      const bool from_a = a.has(s) && (!b.has(s) || rng.below(2) == 0);
      const Genome& parent = from_a ? a : b;
      if (const auto it = parent.knobs.find(key); it != parent.knobs.end())
        child.knobs[key] = it->second;
    }
  }
  // A source text only survives when both parents carry the same one.
  if (a.source == b.source) child.source = a.source;
  return repair(child, rng, allowed);
}

int next_knob_value(const std::vector<int>& values, int current, Rng& rng) {
  // Steps go in numeric order: the catalog lists the default first, so the listed order is not
  // the numbers' (threads 256|128|512|1024: a listed neighbour of 256 is 128 or, wrapped around,
  // 1024, never 512, which left 512 to the jumps alone).
  std::vector<int> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const int n = static_cast<int>(sorted.size());
  if (n < 2) return current;
  const auto at = std::lower_bound(sorted.begin(), sorted.end(), current);
  // A value not in the list (a genome from an older catalog) steps from where it would stand.
  const int index = static_cast<int>(std::min<std::ptrdiff_t>(at - sorted.begin(), n - 1));
  const bool listed = at != sorted.end() && *at == current;
  if (rng.unit() < 0.7) {  // mostly a neighbour; at an end the only one, no wrap-around
    int step = rng.below(2) == 0 ? -1 : 1;
    if (index + step < 0 || index + step >= n) step = -step;
    return sorted[static_cast<std::size_t>(listed ? index + step : index)];
  }
  // Sometimes a jump: any other value, uniformly.
  int pick = rng.below(listed ? n - 1 : n);
  if (listed && pick >= index) ++pick;
  return sorted[static_cast<std::size_t>(pick)];
}

Genome mutate_knob(const Genome& genome, Rng& rng, const StrategySet* allowed,
                   const std::map<std::string, double>* knob_weights) {
  std::vector<std::pair<std::string, const Knob*>> knobs;
  for (const std::string& s : genome.strategies)
    for (const Knob& k : lookup(s)->knobs)
      if (k.values.size() > 1) knobs.push_back({s, &k});
  if (knobs.empty()) return genome;
  std::size_t chosen = 0;
  std::vector<double> w;
  double total = 0.0;
  if (knob_weights != nullptr) {
    for (const auto& [s, k] : knobs) {
      const auto it = knob_weights->find(knob_key(s, k->name));
      w.push_back(it == knob_weights->end() ? 1.0 : std::max(it->second, 0.0));
      total += w.back();
    }
  }
  if (knob_weights == nullptr || knob_weights->empty() || !(total > 0.0)) {
    chosen = static_cast<std::size_t>(rng.below(static_cast<int>(knobs.size())));
  } else {
    double pick = rng.unit() * total;
    chosen = knobs.size() - 1;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (pick < w[i]) {
        chosen = i;
        break;
      }
      pick -= w[i];
    }
  }
  const auto& [strategy, k] = knobs[chosen];
  Genome g = genome;
  g.knobs[knob_key(strategy, k->name)] = next_knob_value(k->values, g.knob(strategy, k->name), rng);
  return repair(g, rng, allowed);
}

Genome mutate_strategy(const Genome& genome, Rng& rng, const std::map<Resource, double>& weights,
                       const StrategySet* allowed) {
  // Candidates: every applicable strategy not in the genome (it replaces its group's member,
  // or joins), and every present strategy of an optional group (removal).
  struct Move {
    const Strategy* add;
    std::string remove;
    double weight;
  };
  std::vector<Move> moves;
  const auto weight_of = [&](const Strategy& s) {
    const auto it = weights.find(s.addresses);
    return weights.empty() ? 1.0 : (it == weights.end() ? 0.2 : std::max(it->second, 0.01));
  };
  for (const Strategy& s : strategy_catalog()) {
    if (!s.applies_to(genome.family) || genome.has(s.name) || !permitted(allowed, s.name)) continue;
    std::string replaced;
    for (const std::string& p : genome.strategies)
      if (lookup(p)->group == s.group) replaced = p;
    moves.push_back({&s, replaced, weight_of(s)});
  }
  for (const std::string& p : genome.strategies)
    if (!required(genome.family, lookup(p)->group)) moves.push_back({nullptr, p, 0.5});
  if (moves.empty()) return genome;
  double total = 0.0;
  for (const Move& m : moves) total += m.weight;
  double pick = rng.unit() * total;
  const Move* chosen = &moves.back();
  for (const Move& m : moves) {
    if (pick < m.weight) {
      chosen = &m;
      break;
    }
    pick -= m.weight;
  }
  Genome g = genome;
  if (!chosen->remove.empty()) g.strategies.erase(chosen->remove);
  if (chosen->add != nullptr) {
    g.strategies.insert(chosen->add->name);
    for (const Knob& k : chosen->add->knobs)
      g.knobs[knob_key(chosen->add->name, k.name)] =
          k.values[rng.below(static_cast<int>(k.values.size()))];
  }
  return repair(g, rng, allowed);
}

void require_translatable(const Genome& genome, Family family, const StrategySet& implemented,
                          const std::string& generator) {
  if (genome.family != family || !violations(genome).empty())
    throw UsageError(fmt::format("{} generator: {} is not a valid {} genome", generator,
                                 genome.describe(), family_name(family)));
  for (const std::string& s : genome.strategies)
    if (!implemented.count(s))
      throw UsageError(fmt::format("strategy {} has no {} generator yet", s, generator));
}

}  // namespace kiln::evolve

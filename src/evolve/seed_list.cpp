// Seed lists (see seed_list.hpp).
#include "evolve/seed_list.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace kiln::evolve {

std::vector<SeedLine> read_seed_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--seeds {}: cannot be read", path));
  std::vector<SeedLine> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos || text[first] == '#') continue;
    std::istringstream fields(text);
    SeedLine s;
    s.line = number;
    std::string json;
    fields >> s.problem >> s.name;
    std::getline(fields, json);  // the rest of the line: the JSON may hold spaces
    const std::string where = fmt::format("--seeds {}:{}", path, number);
    if (s.name.empty() || json.find_first_not_of(" \t\r") == std::string::npos)
      throw UsageError(fmt::format("{}: expected '<problem> <name> <genome JSON>'", where));
    nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
    if (parsed.is_discarded())
      throw UsageError(fmt::format("{}: the genome is not valid JSON", where));
    // Knobs left out take their defaults (as `kiln evolve generate --genome` allows).
    if (parsed.is_object() && !parsed.contains("knobs")) parsed["knobs"] = nlohmann::json::object();
    s.genome = Genome::from_json(parsed, where);
    lines.push_back(std::move(s));
  }
  return lines;
}

std::vector<Genome> seeds_for(const std::vector<SeedLine>& lines, const std::string& path,
                              const std::string& problem, Family family,
                              const StrategySet& allowed) {
  std::vector<Genome> seeds;
  for (const SeedLine& s : lines) {
    if (s.problem != problem) continue;
    const std::string where = fmt::format("--seeds {}:{} ({} {})", path, s.line, s.problem, s.name);
    if (s.genome.family != family)
      throw UsageError(fmt::format("{}: a {} genome, but {} is a {} problem", where,
                                   family_name(s.genome.family), problem, family_name(family)));
    if (const std::vector<std::string> wrong = violations(s.genome); !wrong.empty())
      throw UsageError(fmt::format("{}: not a valid genome: {}", where, wrong.front()));
    for (const std::string& strategy : s.genome.strategies)
      if (!allowed.empty() && !allowed.count(strategy))
        throw UsageError(
            fmt::format("{}: {} has no code for {} in its generator", where, strategy, problem));
    if (std::none_of(seeds.begin(), seeds.end(), [&](const Genome& g) { return g == s.genome; }))
      seeds.push_back(s.genome);
  }
  return seeds;
}

}  // namespace kiln::evolve

// Hand-picked genomes to start a search from (`kiln evolve run|set --seeds FILE`): the format of
// scripts/probes/*.txt, one genome a line,
//   <problem> <name> <genome as JSON, as in a run's log.json or `kiln evolve generate --genome`>
// with blank lines and # comments skipped. A probe that found a better configuration than a
// search (scripts/device_probe_genomes.sh) can so seed the next search, which then judges it and
// explores around it.
#pragma once

#include <string>
#include <vector>

#include "evolve/genome.hpp"

namespace kiln::evolve {

struct SeedLine {
  std::string problem, name;
  Genome genome;
  int line = 0;  // 1-based, for messages
};

// Every genome line of `path`. Throws kiln::UsageError naming the file and line for a missing
// file, a line without three fields or a genome that does not parse.
std::vector<SeedLine> read_seed_list(const std::string& path);

// The genomes of `lines` for `problem`, each checked against the problem's family and allowed
// strategies (`allowed`; empty: any); throws kiln::UsageError naming the file, the line and the
// reason for one that is not a valid genome there. Duplicates are dropped.
std::vector<Genome> seeds_for(const std::vector<SeedLine>& lines, const std::string& path,
                              const std::string& problem, Family family,
                              const StrategySet& allowed);

}  // namespace kiln::evolve

// Filling in generated CUDA sources (see source_text.hpp).
#include "evolve/source_text.hpp"

namespace kiln::evolve {

void replace_all(std::string& text, const std::string& key, const std::string& value) {
  if (key.empty()) return;
  for (std::size_t at = text.find(key); at != std::string::npos;
       at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
}

}  // namespace kiln::evolve

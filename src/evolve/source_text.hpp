// Filling in generated CUDA sources (issue 20): the generators write their templates as plain
// raw strings with $NAME placeholders (C++ braces stay single, unlike fmt's) and substitute them.
#pragma once

#include <string>

namespace kiln::evolve {

// Every occurrence of `key` in `text` replaced by `value` (left to right, not rescanning the
// inserted text). Substitute longer keys first where one key is a prefix of another.
void replace_all(std::string& text, const std::string& key, const std::string& value);

}  // namespace kiln::evolve

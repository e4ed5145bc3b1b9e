// The table printer (see table.hpp).
#include "core/table.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kiln::core {
namespace {

// Rows end at their last character: no trailing blanks from padded or empty last cells.
std::string trim_right(std::string text) {
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

}  // namespace

Table::Table(std::vector<TableColumn> columns, std::string header_prefix, std::string row_prefix)
    : columns_(std::move(columns)),
      header_prefix_(std::move(header_prefix)),
      row_prefix_(std::move(row_prefix)) {}

std::string Table::line(const std::vector<std::string>& given, const std::string& prefix) const {
  if (given.size() > columns_.size()) {
    throw Error(fmt::format("table row of {} cells for {} columns", given.size(), columns_.size()));
  }
  const std::vector<std::string>& cells = given;
  std::string out = prefix;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const TableColumn& c = columns_[i];
    const bool last = i + 1 == cells.size();
    if (i > 0) out += ' ';
    if (c.width == 0 || (last && cells.size() < columns_.size())) {
      out += cells[i];
    } else if (c.left) {
      out += fmt::format("{:<{}}", cells[i], c.width);
    } else {
      out += fmt::format("{:>{}}", cells[i], c.width);
    }
  }
  return trim_right(out);
}

std::string Table::header() const {
  std::vector<std::string> names, units;
  bool any_unit = false;
  for (const TableColumn& c : columns_) {
    names.push_back(c.name);
    units.push_back(c.unit);
    any_unit = any_unit || !c.unit.empty();
  }
  std::string out = line(names, header_prefix_);
  if (any_unit) {
    // Every unit cell is padded (an empty one too), so the units row keeps the names' width.
    out += '\n' + header_prefix_;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const TableColumn& c = columns_[i];
      if (i > 0) out += ' ';
      out += c.left ? fmt::format("{:<{}}", units[i], c.width)
                    : fmt::format("{:>{}}", units[i], c.width);
    }
    out = trim_right(out);
  }
  return out;
}

std::string Table::row(const std::vector<std::string>& cells) const {
  return line(cells, row_prefix_);
}

}  // namespace kiln::core

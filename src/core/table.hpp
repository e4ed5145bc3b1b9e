// The one table printer of kiln's benchmarks: fixed-width columns, right-aligned (numbers) or
// left-aligned (names), one space between them, an optional units row under the names. Cells
// arrive as text, each benchmark formatting its own numbers, so a table's look is data (its
// column list) and every benchmark prints through the same code.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln::core {

struct TableColumn {
  TableColumn(std::string name, int width = 0, bool left = false, std::string unit = "")
      : name(std::move(name)), width(width), left(left), unit(std::move(unit)) {}
  std::string name;
  int width;         // 0: as wide as the cell (free-text columns: plan, note)
  bool left;         // left-aligned, else right-aligned
  std::string unit;  // printed in a second header row when any column has one
};

class Table {
 public:
  // `header_prefix` starts each header row (e.g. "# "), `row_prefix` each row (e.g. "  ").
  explicit Table(std::vector<TableColumn> columns, std::string header_prefix = "",
                 std::string row_prefix = "");
  // The names (and the units row, if any), aligned as the cells are.
  std::string header() const;
  // One row. A row may stop early (fewer cells than columns): its last cell is then printed as it
  // is, as is any cell whose column has no width. Rows end at their last character (no trailing
  // blanks). Throws kiln::Error for more cells than columns.
  std::string row(const std::vector<std::string>& cells) const;

 private:
  std::string line(const std::vector<std::string>& cells, const std::string& prefix) const;
  std::vector<TableColumn> columns_;
  std::string header_prefix_, row_prefix_;
};

}  // namespace kiln::core

// Nsight Compute CSV parse (see ncu_csv.hpp).
#include "core/ncu_csv.hpp"

#include <algorithm>
#include <sstream>

namespace kiln::core {
namespace {

// The fields of one CSV line ("a","b,c","d"): quotes removed, commas inside quotes kept.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

}  // namespace

std::vector<NcuValue> parse_ncu_csv(const std::string& csv) {
  std::vector<NcuValue> values;
  std::stringstream lines(csv);
  std::string line;
  int id_column = -1, kernel_column = -1, name_column = -1, unit_column = -1, value_column = -1;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> fields = csv_fields(line);
    if (value_column < 0) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const int column = static_cast<int>(i);
        if (fields[i] == "ID") id_column = column;
        if (fields[i] == "Kernel Name") kernel_column = column;
        if (fields[i] == "Metric Name") name_column = column;
        if (fields[i] == "Metric Unit") unit_column = column;
        if (fields[i] == "Metric Value") value_column = column;
      }
      if (name_column < 0 || value_column < 0) {  // not the header yet
        id_column = kernel_column = name_column = unit_column = value_column = -1;
      }
      continue;
    }
    const int widest = std::max({id_column, kernel_column, name_column, unit_column, value_column});
    if (static_cast<int>(fields.size()) <= widest) continue;
    std::string number;
    for (char c : fields[value_column])
      if (c != ',') number += c;
    try {
      std::size_t used = 0;
      const double value = std::stod(number, &used);
      if (used != number.size()) continue;
      NcuValue v;
      v.metric = fields[name_column];
      v.unit = unit_column >= 0 ? fields[unit_column] : "";
      v.value = value;
      if (id_column >= 0) {
        try {
          v.launch = std::stoi(fields[id_column]);
        } catch (const std::exception&) {
        }
      }
      if (kernel_column >= 0) v.kernel = fields[kernel_column];
      values.push_back(v);
    } catch (const std::exception&) {
    }
  }
  return values;
}

double ncu_microseconds(double value, const std::string& unit) {
  if (unit == "nsecond" || unit == "ns") return value * 1e-3;
  if (unit == "usecond" || unit == "us") return value;
  if (unit == "msecond" || unit == "ms") return value * 1e3;
  if (unit == "second" || unit == "s") return value * 1e6;
  return -1.0;
}

std::string ncu_error_line(const std::string& output) {
  const auto at = output.find("==ERROR==");
  if (at == std::string::npos) return "";
  return output.substr(at, output.find('\n', at) - at);
}

}  // namespace kiln::core

// XML escaping for the SVG plots (suite_plot, error_cdf_plot): titles and labels come from users
// and file names.
#pragma once

#include <string>

namespace kiln::core {

std::string xml_escape(const std::string& text);

}  // namespace kiln::core

// XML escaping for the SVG plots (suite_plot, error_cdf_plot): titles and labels come from users
// and file names.
#pragma once

#include <string>

namespace kiln::core {

std::string xml_escape(const std::string& text);

// The opening of every kiln plot: an SVG of `width` x `height` on white, 11-point sans-serif, with
// `title` (escaped) at (`title_x`, 20). The caller closes it with "</svg>".
std::string svg_start(int width, int height, int title_x, const std::string& title);

}  // namespace kiln::core

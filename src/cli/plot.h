// Line plots as PNG (OpenCV drawing), shared by `advbo bench` and `advbo game`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace advbo::cli {

/// One curve: y values at x = 0, 1, ..., ys.size() - 1 (x scaled by x_step).
struct PlotSeries {
  std::string name;
  std::vector<double> ys;
};

/// Draws the series on common axes x in [0, x_max], y in [y_min, y_max] with 4 ticks per
/// axis and a legend, and writes `path` atomically (a .partial file renamed into place).
/// x of ys[i] is i * x_step. Throws std::runtime_error naming the file if it cannot be
/// written.
void WriteLinePlot(const std::filesystem::path& path, const std::vector<PlotSeries>& series,
                   double x_step, double x_max, double y_min, double y_max,
                   const std::string& x_label, const std::string& y_label);

}  // namespace advbo::cli

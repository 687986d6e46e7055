#include "cli/plot.h"

#include <algorithm>
#include <cstdio>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>

#include "text/numbers.h"

namespace advbo::cli {

void WriteLinePlot(const std::filesystem::path& path, const std::vector<PlotSeries>& series,
                   double x_step, double x_max, double y_min, double y_max,
                   const std::string& x_label, const std::string& y_label) {
  const int W = 900, H = 560, L = 70, R = 190, T = 30, B = 60;
  if (!(y_max > y_min)) y_max = y_min + 1.0;
  if (!(x_max > 0)) x_max = 1.0;
  cv::Mat img(H, W, CV_8UC3, cv::Scalar(255, 255, 255));
  auto px = [&](double x) { return L + static_cast<int>((W - L - R) * x / x_max); };
  auto py = [&](double y) {
    return H - B - static_cast<int>((H - T - B) * (y - y_min) / (y_max - y_min));
  };
  const cv::Scalar black(0, 0, 0);
  cv::rectangle(img, {L, T}, {W - R, H - B}, black, 1);
  for (int k = 0; k <= 4; ++k) {
    const double y = y_min + (y_max - y_min) * k / 4.0, x = x_max * k / 4.0;
    cv::line(img, {L - 4, py(y)}, {L, py(y)}, black);
    cv::putText(img, text::FormatG(y, 3), {L - 55, py(y) + 5}, cv::FONT_HERSHEY_SIMPLEX, 0.45,
                black);
    cv::line(img, {px(x), H - B}, {px(x), H - B + 4}, black);
    cv::putText(img, text::FormatG(x, 4), {px(x) - 12, H - B + 20}, cv::FONT_HERSHEY_SIMPLEX, 0.45,
                black);
  }
  cv::putText(img, x_label, {(L + W - R) / 2 - 30, H - 15}, cv::FONT_HERSHEY_SIMPLEX, 0.55, black);
  cv::putText(img, y_label, {5, 20}, cv::FONT_HERSHEY_SIMPLEX, 0.55, black);
  static const cv::Scalar kColors[] = {{180, 60, 20}, {40, 140, 240}, {60, 170, 60},
                                       {40, 40, 200}, {160, 80, 160}, {20, 160, 180},
                                       {90, 90, 90},  {200, 150, 40}};
  for (size_t i = 0; i < series.size(); ++i) {
    const cv::Scalar col = kColors[i % 8];
    std::vector<cv::Point> pts;
    for (size_t k = 0; k < series[i].ys.size(); ++k)
      pts.emplace_back(px(k * x_step), py(std::clamp(series[i].ys[k], y_min, y_max)));
    cv::polylines(img, pts, false, col, 2, cv::LINE_AA);
    const int ly = T + 20 + 22 * static_cast<int>(i);
    cv::line(img, {W - R + 15, ly - 5}, {W - R + 40, ly - 5}, col, 2);
    cv::putText(img, series[i].name, {W - R + 48, ly}, cv::FONT_HERSHEY_SIMPLEX, 0.5, black);
  }
  const std::filesystem::path tmp = path.string() + ".partial.png";
  if (!cv::imwrite(tmp.string(), img)) throw std::runtime_error(path.string() + ": cannot write");
  std::filesystem::rename(tmp, path);
}

}  // namespace advbo::cli

#include "attacks/common/latent.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>
#include <stdexcept>

namespace advbo::attacks {
namespace {

std::vector<float> ResizePlanes(const float* src, int channels, int sh, int sw, int dh, int dw) {
  std::vector<float> out(static_cast<size_t>(channels) * dh * dw);
  for (int c = 0; c < channels; ++c) {
    cv::Mat in(sh, sw, CV_32F, const_cast<float*>(src + static_cast<size_t>(c) * sh * sw));
    cv::Mat dst(dh, dw, CV_32F, out.data() + static_cast<size_t>(c) * dh * dw);
    cv::resize(in, dst, cv::Size(dw, dh), 0, 0, cv::INTER_LINEAR);
  }
  return out;
}

}  // namespace

std::vector<float> UpsampleLatent(const Eigen::VectorXd& latent, int channels, int side, int height,
                                  int width) {
  if (latent.size() != static_cast<Eigen::Index>(side) * side * channels)
    throw std::invalid_argument("UpsampleLatent: latent size does not match side^2 * channels");
  std::vector<float> src(latent.data(), latent.data() + latent.size());
  return ResizePlanes(src.data(), channels, side, side, height, width);
}

Eigen::VectorXd ResizeLatent(const Eigen::VectorXd& latent, int channels, int side_from,
                             int side_to) {
  if (latent.size() != static_cast<Eigen::Index>(side_from) * side_from * channels)
    throw std::invalid_argument("ResizeLatent: latent size does not match side^2 * channels");
  if (side_from == side_to) return latent;
  std::vector<float> src(latent.data(), latent.data() + latent.size());
  std::vector<float> out =
      ResizePlanes(src.data(), channels, side_from, side_from, side_to, side_to);
  Eigen::VectorXd r(out.size());
  for (size_t i = 0; i < out.size(); ++i) r(i) = out[i];
  return r;
}

LatentQuerier::LatentQuerier(oracle::QueryOracle& o, double gain) : o_(o), gain_(gain) {
  const auto& m = o.model();
  c_ = m.channels();
  h_ = m.height();
  w_ = m.width();
}

Eigen::VectorXd LatentQuerier::Query(const std::vector<Eigen::VectorXd>& us, int side) {
  const size_t d = static_cast<size_t>(c_) * h_ * w_;
  std::vector<float> batch(us.size() * d);
  for (size_t b = 0; b < us.size(); ++b) {
    const std::vector<float> delta =
        UpsampleLatent(gain_ * o_.query_radius() * us[b], c_, side, h_, w_);
    for (size_t i = 0; i < d; ++i) batch[b * d + i] = o_.clean()[i] + delta[i];
  }
  return o_.Query(batch.data(), static_cast<int>(us.size())).objective;
}

Eigen::VectorXd LatentQuerier::QueryRows(const Eigen::MatrixXd& us, int side) {
  const long n = std::min<long>(us.rows(), o_.remaining());
  std::vector<Eigen::VectorXd> rows;
  rows.reserve(n);
  for (long i = 0; i < n; ++i) rows.push_back(us.row(i).transpose());
  return Query(rows, side);
}

}  // namespace advbo::attacks

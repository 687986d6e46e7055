#include "attacks/common/dct.h"

#include <cmath>

namespace advbo::attacks {

void DctBasis(int channels, int height, int width, int c, int u, int v, std::vector<float>* out) {
  out->assign(static_cast<size_t>(channels) * height * width, 0.0f);
  const double au = std::sqrt((u == 0 ? 1.0 : 2.0) / height),
               av = std::sqrt((v == 0 ? 1.0 : 2.0) / width);
  for (int i = 0; i < height; ++i) {
    const double ci = au * std::cos(M_PI * (2 * i + 1) * u / (2.0 * height));
    for (int j = 0; j < width; ++j)
      (*out)[(static_cast<size_t>(c) * height + i) * width + j] =
          static_cast<float>(ci * av * std::cos(M_PI * (2 * j + 1) * v / (2.0 * width)));
  }
}

Eigen::MatrixXd DctRows(int n, int m) {
  Eigen::MatrixXd rows(m, n);
  for (int u = 0; u < m; ++u)
    for (int i = 0; i < n; ++i)
      rows(u, i) =
          std::sqrt((u == 0 ? 1.0 : 2.0) / n) * std::cos(M_PI * (2 * i + 1) * u / (2.0 * n));
  return rows;
}

void InverseDctLowFrequency(const std::vector<Eigen::MatrixXd>& coef, const Eigen::MatrixXd& rows_h,
                            const Eigen::MatrixXd& rows_w, std::vector<double>* out) {
  const Eigen::Index h = rows_h.cols(), w = rows_w.cols();
  out->resize(coef.size() * h * w);
  for (size_t c = 0; c < coef.size(); ++c) {
    // Row-major [h, w] view of channel c.
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> image(
        out->data() + c * h * w, h, w);
    image.noalias() = rows_h.transpose() * coef[c] * rows_w;
  }
}

}  // namespace advbo::attacks

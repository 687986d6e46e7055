// The orthonormal 2-D DCT-II on [channels, height, width] images (pixels row-major per
// channel), shared by the attacks that search in low frequencies: SimBA-DCT (Guo et al.,
// ICML 2019, section 3) and GeoDA (Rahmati et al., CVPR 2020, section 4, its DCT subspace).
#pragma once

#include <Eigen/Core>
#include <vector>

namespace advbo::attacks {

/// The orthonormal 2-D DCT-II basis image of coefficient (u, v) in channel c, written into
/// `out` [channels * height * width] (zero in the other channels); unit L2 norm.
/// u in [0, height), v in [0, width), c in [0, channels) (unchecked).
void DctBasis(int channels, int height, int width, int c, int u, int v, std::vector<float>* out);

/// The first m rows of the 1-D orthonormal DCT-II matrix of length n: [m, n], row u =
/// sqrt((u == 0 ? 1 : 2) / n) cos(pi (2 i + 1) u / (2 n)). 1 <= m <= n (unchecked).
Eigen::MatrixXd DctRows(int n, int m);

/// Inverse 2-D DCT of a low-frequency block, per channel: image = sum over u, v < m of
/// coef[c](u, v) times the basis image (u, v) of channel c, i.e. rows_h^T coef[c] rows_w with
/// rows_h = DctRows(height, m) [m, height] and rows_w = DctRows(width, m) [m, width].
/// coef: `channels` blocks [m, m]; writes `out` [channels * height * width]. O(c m h w), not
/// O(c m^2 h w) as a sum of basis images.
void InverseDctLowFrequency(const std::vector<Eigen::MatrixXd>& coef, const Eigen::MatrixXd& rows_h,
                            const Eigen::MatrixXd& rows_w, std::vector<double>* out);

}  // namespace advbo::attacks

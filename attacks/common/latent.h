// Latent perturbation spaces of BOS^2 (Kharkovskii 2020 thesis Sec. 5.2, eq. 5.3): a
// perturbation lives on a coarse s x s grid per channel (latent dimension d = s*s*c) and
// g(delta) bilinearly upsamples it, channel by channel (NCHW), to the image size.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "oracle/oracle.h"

namespace advbo::attacks {

/// g: bilinear upsampling of a latent perturbation [c, s, s] (flattened, length s*s*c,
/// channel-major) to [c, height, width] (length c*height*width), OpenCV INTER_LINEAR
/// (half-pixel centres). Values stay within the latent's range (convex combinations).
std::vector<float> UpsampleLatent(const Eigen::VectorXd& latent, int channels, int side, int height,
                                  int width);

/// Projects a latent perturbation from side s_from to side s_to by bilinear resizing
/// (Algorithm 7 line 2). Input length s_from^2*c, output length s_to^2*c.
Eigen::VectorXd ResizeLatent(const Eigen::VectorXd& latent, int channels, int side_from,
                             int side_to);

/// Queries an oracle at latent perturbations in unit scale u in [-1, 1]^(s*s*c): the image
/// clean + g(gain * eps * u) (g = UpsampleLatent), which the oracle clips into the eps-ball
/// (so gain > 1 saturates pixels onto the ball's faces; BOS^2's `saturation`). Shared by
/// BOS^2 (Kharkovskii 2020 eq. 5.3), BayesOpt (Ru et al. 2020) and their variants.
class LatentQuerier {
 public:
  /// Queries `oracle` with latent perturbations upsampled to the image and scaled by `gain`
  /// (saturated into the eps-ball).
  LatentQuerier(oracle::QueryOracle& oracle, double gain);
  /// Channels of the attacked image.
  int channels() const { return c_; }
  /// Objectives [n] of the n latents `us` (each length side*side*c) in one batch;
  /// n <= the oracle's remaining budget (the oracle throws otherwise).
  Eigen::VectorXd Query(const std::vector<Eigen::VectorXd>& us, int side);
  /// Objectives of the first min(rows, remaining budget) rows of `us` [n, side*side*c].
  Eigen::VectorXd QueryRows(const Eigen::MatrixXd& us, int side);

 private:
  oracle::QueryOracle& o_;
  double gain_;
  int c_, h_, w_;
};

}  // namespace advbo::attacks

// Latent perturbation spaces of BOS^2 (Kharkovskii 2020 thesis Sec. 5.2, eq. 5.3): a
// perturbation lives on a coarse s x s grid per channel (latent dimension d = s*s*c) and
// g(delta) bilinearly upsamples it, channel by channel (NCHW), to the image size.
#pragma once

#include <Eigen/Dense>
#include <vector>

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

}  // namespace advbo::attacks

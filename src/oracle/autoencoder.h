// A variational autoencoder loaded from TorchScript, for latent-space actions in the R2-B2
// adversarial-ML game (Dai 2021 thesis Sec. 8.4.2, App. E.6.2.1a). The module must export
//   encode(x [N,C,H,W] float32 in [0,1]) -> latent mean [N, z]
//   decode(z [N, z] float32)              -> images [N,C,H,W] in [0,1]
// (tools/train/train_vae.py writes such modules: models/mnist_vae.pt, models/cifar10_vae.pt).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "oracle/classifier.h"

namespace advbo::oracle {

/// A loaded, validated autoencoder.
class Autoencoder {
 public:
  /// Loads `path` and probes encode/decode with a zero image of shape [c, h, w]. Throws
  /// ModelError naming the file if it is missing, not TorchScript, lacks encode or decode,
  /// or returns tensors of the wrong shape or non-finite values.
  static std::unique_ptr<Autoencoder> Load(const std::string& path, int c, int h, int w);
  ~Autoencoder();

  /// Latent means [n, z] of n images (n * C*H*W floats in [0, 1]).
  Eigen::MatrixXd Encode(const float* images, int n) const;
  /// Decoded images (n * C*H*W floats, clamped to [0, 1]) of latents [n, z].
  std::vector<float> Decode(const Eigen::MatrixXd& z) const;

  /// Latent dimension z.
  int latent_dim() const { return z_; }
  /// Pixels per image, C*H*W.
  int input_size() const { return c_ * h_ * w_; }
  /// The module's file.
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  Autoencoder();
  std::unique_ptr<Impl> impl_;
  std::string path_;
  int c_ = 0, h_ = 0, w_ = 0, z_ = 0;
};

}  // namespace advbo::oracle

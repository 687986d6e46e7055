// Internal to src/whitebox (LibTorch): the differentiable model and one batch's state,
// shared by APGD (apgd.cc) and FAB-T (fab.cc). Not installed; callers use apgd.h.
#pragma once

#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

#include "oracle/classifier.h"

namespace advbo::whitebox {

/// A TorchScript classifier with its normalisation, differentiable in its input.
class Model {
 public:
  /// Loads `path`; throws oracle::ModelError naming the file when it is missing or not a
  /// TorchScript module. `normalize` (mean/std, 1 or `channels` values) is applied first.
  Model(const std::string& path, const std::optional<oracle::Normalization>& normalize,
        bool outputs_logits, int channels);

  /// Log-scores [n, classes] of images x [n, C, H, W] in [0, 1]: the logits, or
  /// log-probabilities for a probability output. Throws oracle::ModelError on failure.
  torch::Tensor Scores(const torch::Tensor& x);

  /// The model file (for messages).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool logits_;
  torch::jit::Module module_;
  torch::Tensor mean_, std_;
};

/// Margin z_y - max_{j != y} z_j per row of z [n, classes]; < 0 means misclassified.
torch::Tensor Margin(const torch::Tensor& z, const torch::Tensor& y);

/// One batch's state: the clean images, labels, targets and the ball.
struct Batch {
  torch::Tensor x0;          ///< clean images [m, C, H, W] in [0, 1]
  torch::Tensor y;           ///< labels [m]
  torch::Tensor t;           ///< targets [m] of a targeted run (undefined otherwise)
  torch::Tensor lo;          ///< lower end [m, C, H, W] of the eps-ball intersected with [0, 1]
  torch::Tensor hi;          ///< upper end [m, C, H, W] of the eps-ball intersected with [0, 1]
  torch::Tensor grid_lo;     ///< with the grid: the 8-bit ball's lower end as k in 0..255
  torch::Tensor grid_hi;     ///< with the grid: the 8-bit ball's upper end as k in 0..255
  std::vector<size_t> rows;  ///< positions in the caller's arrays
};

/// What the runs of one batch found, [m] per image (m = rows of the batch): the first
/// misclassified checked image of each image, its margin and class, and the lowest margin.
struct Findings {
  torch::Tensor found;          ///< bool: a break was recorded
  torch::Tensor adv;            ///< [m, C, H, W] the recorded break (else the clean image)
  torch::Tensor adv_margin;     ///< margin of the recorded break
  torch::Tensor adv_class;      ///< class of the recorded break, else -1
  torch::Tensor low_margin;     ///< lowest margin of any checked image
  torch::Tensor zero_gradient;  ///< bool: the run's first gradient was zero at every pixel
  /// Empty findings for batch `b`.
  explicit Findings(const Batch& b);
  /// Records the checked images xc [m, ...] with log-scores zc for the rows in `mask`
  /// (bool [m], or undefined = all): the first misclassified one of each image counts, or
  /// with `keep_closest` the one closest to the clean image in L_inf (FAB's minimal break).
  void Record(const Batch& b, const torch::Tensor& xc, const torch::Tensor& zc,
              const torch::Tensor& mask = {}, bool keep_closest = false);
};

/// The image whose verdict counts, [m, C, H, W]: x itself, or with `grid` x rounded onto the
/// 1/255 grid and clamped into the 8-bit ball's box.
torch::Tensor Checked(const Batch& b, const torch::Tensor& x, bool grid);

/// x clamped into the float ball's box (the eps-ball intersected with [0, 1]).
torch::Tensor ProjectToBall(const Batch& b, const torch::Tensor& x);

}  // namespace advbo::whitebox

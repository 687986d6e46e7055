// The white-box reference of `advbo evaluate`: AutoAttack's standard white-box attacks,
// APGD-CE, APGD-T and (when asked for) FAB-T, on a TorchScript classifier through LibTorch
// autograd. FAB-T's source is in whitebox/fab.h.
//
// Source: F. Croce and M. Hein, "Reliable evaluation of adversarial robustness with an
// ensemble of diverse parameter-free attacks", ICML 2020 -- Algorithm 1 (APGD: step size
// 2 eps, momentum alpha = 0.75, checkpoints w_j = ceil(p_j N_iter) with p_0 = 0, p_1 = 0.22,
// p_{j+1} = p_j + max(p_j - p_{j-1} - 0.03, 0.06); at a checkpoint the step size halves and
// the iterate restarts from the best point when Condition 1 (fewer than rho = 0.75 of the
// steps since the last checkpoint increased the loss) or Condition 2 (neither the step size
// nor the best loss changed since the last checkpoint) holds), Sec. 3.2 (the DLR loss and
// its targeted form, Eq. (6)), Sec. 4 (AutoAttack: APGD-CE, then APGD-T on the top 9
// classes, 100 iterations each). The attack is written from the paper, not ported.
//
// What "broken" means here: an iterate the model misclassifies. With `grid` on (8-bit
// queries), every iterate is also rounded onto the 1/255 grid inside the eps-ball and only a
// misclassified rounded image counts -- the image a user would save, as the black-box
// attacks' verdicts count.
//
// LibTorch stays in apgd.cc; this header is std only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/classifier.h"

namespace advbo::whitebox {

/// Settings of the reference; the defaults are AutoAttack's "standard" version.
struct ApgdOptions {
  int iterations = 100;     ///< N_iter, gradient steps per APGD run, >= 1 (paper: 100)
  int restarts = 1;         ///< APGD-CE runs from independent random starts, >= 0
  int target_classes = 9;   ///< APGD-T targets: the top classes other than the label by the
                            ///< clean logits (min with classes - 1), >= 0 (paper: 9)
  int target_restarts = 1;  ///< APGD-T runs per target, >= 1
  /// FAB-T targets (the top classes other than the label, as APGD-T's), >= 0; 0 = no FAB-T
  /// (AutoAttack's standard version: 9; `advbo evaluate --reference standard`).
  int fab_target_classes = 0;
  int fab_iterations = 100;    ///< FAB-T iterations per run, >= 1 (paper: 100)
  int fab_restarts = 1;        ///< FAB-T runs per target, >= 1; the first from the clean image
  double fab_alpha_max = 0.1;  ///< FAB's bias towards the clean image, in [0, 1) (paper: 0.1)
  double fab_eta = 1.05;       ///< FAB's overshoot past the boundary, >= 1 (paper: 1.05)
  double fab_beta = 0.9;       ///< FAB's backward step after a break, in (0, 1] (paper: 0.9)
  double rho = 0.75;           ///< Condition 1's fraction of increasing steps, in (0, 1]
  double alpha = 0.75;         ///< momentum weight of the new step, in (0, 1]
  bool grid = false;  ///< 8-bit: check every iterate rounded onto the 1/255 grid in the ball
  int batch = 128;    ///< images per forward/backward pass, >= 1
  uint64_t seed = 0;  ///< random starts: image k's stream is DeriveSeed(seed, index k)
  int threads = 0;    ///< LibTorch intra-op threads (0 = its default)
  /// Throws std::invalid_argument naming the field when out of range.
  void Validate() const;
};

/// The reference's verdict on one image.
struct ApgdImageResult {
  int image_index = 0;  ///< the caller's index of the image (records, seeds)
  int label = 0;        ///< true class
  /// No iterate of any run was (on the grid: once rounded) misclassified.
  bool robust = true;
  /// "apgd-ce" | "apgd-t" | "fab-t" | "" (robust).
  std::string broken_by;
  /// APGD-T's or FAB-T's target class of the break, else -1.
  int target = -1;
  /// The model's class of the adversarial image, else -1.
  int adversarial_class = -1;
  /// The first run's first gradient (APGD's at its random start, FAB's at the clean image)
  /// was zero at every pixel: a sign of gradient masking (AutoAttack's zero-gradient check).
  bool zero_gradient = false;
  /// Forward + backward passes spent on this image.
  long gradient_steps = 0;
  /// Logit margin z_y - max_{j != y} z_j of the reported image: the adversarial one (< 0)
  /// when broken, else the lowest seen; in the model's output units (log-probabilities for a
  /// probability output).
  double margin = 0;
  /// L_inf distance of the adversarial image from the clean one (0 when robust), <= eps
  /// (<= GridRadius(eps) on the grid).
  double linf = 0;
  /// Of a break: the fraction of pixels on a face of the ball (at an end of the box
  /// oracle::Ball gives each pixel: |delta| = radius, or clipped at 0 or 1; on the grid, the
  /// grid box's ends), in [0, 1]; 0 when robust.
  double saturated_fraction = 0;
  /// Of a break: whether its nearest vertex of the ball (every moved pixel pushed to
  /// +-radius, clipped to [0, 1]; on the grid when `grid` is on) is misclassified too -- the
  /// points vertex-searching black-box attacks (Square, Parsimonious, SignHunter) can reach.
  bool vertex_adversarial = false;
  /// The adversarial image [C*H*W] in [0, 1], empty when robust; on the 1/255 grid when
  /// `grid` is on.
  std::vector<float> adversarial;
};

/// Progress: (images finished, images in all, "apgd-ce" / "apgd-t target k" status).
using ApgdProgress = std::function<void(long done, long total, const std::string& status)>;

/// Runs APGD-CE (`restarts` runs), then APGD-T (`target_restarts` runs on each of the top
/// `target_classes` classes), then FAB-T (`fab_restarts` runs on each of the top
/// `fab_target_classes` classes; whitebox/fab.h) under the L_inf ball of radius `eps` around each
/// image, every run only on the images no earlier run broke (AutoAttack's order). `images` holds n
/// images [n, C, H, W] in [0, 1] (clean, correctly classified ones; for `grid`, on the 1/255 grid),
/// `labels` their classes and `image_indices` their indices (records and seeds; the same
/// image gets the same random starts whatever else runs). The model (TorchScript at
/// `model_path`, normalised first with `normalize`) must return logits or, when
/// `outputs_logits` is false, probabilities [n, classes] (their logs are used: CE and DLR
/// are unchanged by that shift). eps in pixel units, > 0. The ball is oracle::Ball's, the one
/// the black-box attacks are held to: the iterates move in the float ball of radius eps (with
/// `grid`, the largest multiple of 1/255 <= eps, oracle::GridRadius) and, with `grid`, every
/// checked image lies in the 8-bit ball's grid box.
/// `stage_seconds` (optional) gets the wall seconds of each attack ("apgd-ce", "apgd-t",
/// "fab-t"; only those that ran).
/// Throws oracle::ModelError naming the file when the model cannot be loaded, is not
/// differentiable or fails; std::invalid_argument on bad options or sizes.
std::vector<ApgdImageResult> RunApgdReference(
    const std::string& model_path, const std::optional<oracle::Normalization>& normalize,
    bool outputs_logits, const std::vector<float>& images, const std::vector<int>& labels,
    const std::vector<int>& image_indices, int channels, int height, int width, double eps,
    const ApgdOptions& options, const ApgdProgress& progress = {},
    std::map<std::string, double>* stage_seconds = nullptr);

/// The APGD checkpoints w_0 = 0 < w_1 < ... <= iterations of Croce & Hein (2020), Sec. 3.1:
/// w_j = ceil(p_j * iterations), p_0 = 0, p_1 = 0.22, p_{j+1} = p_j + max(p_j - p_{j-1} -
/// 0.03, 0.06), distinct values only. E.g. 100 iterations: 0, 22, 41, 57, 70, 80, 87, 93, 99.
std::vector<int> ApgdCheckpoints(int iterations);

}  // namespace advbo::whitebox

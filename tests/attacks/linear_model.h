// A two-class linear classifier for known-answer tests of the attacks: logits
// z = (0, a . (x - x0) + m0) on images of d values, so the untargeted objective of an image of
// class 0 (thesis eq. 5.3) is exactly a . (x - x0) + m0 -- its gradient is a, and the
// decision boundary a hyperplane whose distance from x0 has a closed form (L2: -m0 / |a|_2;
// L_inf, ignoring [0, 1]: -m0 / |a|_1). Every image the model scores is kept.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "oracle/classifier.h"

namespace advbo::testing {

class LinearBackend : public oracle::ScoreBackend {
 public:
  /// a [d], x0 [d], m0 the margin at x0 (< 0: x0 is of class 0).
  LinearBackend(Eigen::VectorXd a, std::vector<float> x0, double m0,
                std::vector<std::vector<float>>* seen)
      : a_(std::move(a)), x0_(std::move(x0)), m0_(m0), seen_(seen) {}
  Eigen::MatrixXd Scores(const float* x, int n, int c, int h, int w,
                         const oracle::QueryContext*) const override {
    const int d = c * h * w;
    Eigen::MatrixXd out(n, 2);
    for (int b = 0; b < n; ++b) {
      double z = m0_;
      for (int i = 0; i < d; ++i) z += a_(i) * (x[b * d + i] - x0_[i]);
      out.row(b) << 0.0, z;
      if (seen_) seen_->emplace_back(x + b * d, x + (b + 1) * d);
    }
    return out;
  }
  std::string name() const override { return "linear"; }

 private:
  Eigen::VectorXd a_;
  std::vector<float> x0_;
  double m0_;
  std::vector<std::vector<float>>* seen_;
};

/// Weights a [d] for the tests: |a_i| uniform in [0.5, 1.5] (std::mt19937 seeded `seed`), the
/// sign negative on every third pixel, so no pixel is flat and the gradient has both signs.
inline Eigen::VectorXd MixedSignWeights(int d, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> mag(0.5, 1.5);
  Eigen::VectorXd a(d);
  for (int i = 0; i < d; ++i) a(i) = (i % 3 == 0 ? -1 : 1) * mag(gen);
  return a;
}

/// The linear model on 1 x side x side images (logits out, no probe queries).
inline std::unique_ptr<oracle::Classifier> LinearModel(const Eigen::VectorXd& a,
                                                       const std::vector<float>& x0, double m0,
                                                       int side,
                                                       std::vector<std::vector<float>>* seen) {
  oracle::ClassifierOptions o;
  o.channels = 1;
  o.height = o.width = side;
  o.output = oracle::OutputKind::kLogits;
  o.probe = false;
  o.classes = 2;
  return oracle::Classifier::FromBackend(std::make_unique<LinearBackend>(a, x0, m0, seen), o);
}

}  // namespace advbo::testing

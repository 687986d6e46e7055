#include "defenses/output_defense.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace advbo::defenses {
namespace {

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Row i of log_probs <- log(p / sum p) for positive probabilities p [classes].
void SetProbabilities(Eigen::MatrixXd* log_probs, Eigen::Index i, const Eigen::RowVectorXd& p) {
  const double s = p.sum();
  for (Eigen::Index c = 0; c < p.size(); ++c) (*log_probs)(i, c) = std::log(p(c) / s);
}

class RoundProbabilities final : public OutputDefense {
 public:
  explicit RoundProbabilities(int d) : d_(d), step_(std::pow(10.0, -d)) {}
  std::string Spec() const override { return "round:decimals=" + std::to_string(d_); }
  void Apply(Eigen::MatrixXd* lp, bo::Rng&) const override {
    for (Eigen::Index i = 0; i < lp->rows(); ++i) {
      Eigen::RowVectorXd p = lp->row(i).array().exp();
      for (Eigen::Index c = 0; c < p.size(); ++c)
        p(c) = std::max(std::round(p(c) / step_) * step_, 0.5 * step_);
      SetProbabilities(lp, i, p);
    }
  }

 private:
  int d_;
  double step_;
};

class TopK final : public OutputDefense {
 public:
  explicit TopK(int k) : k_(k) {}
  std::string Spec() const override { return "topk:k=" + std::to_string(k_); }
  void Apply(Eigen::MatrixXd* lp, bo::Rng&) const override {
    const Eigen::Index classes = lp->cols();
    if (k_ >= classes) return;
    std::vector<Eigen::Index> order(classes);
    for (Eigen::Index i = 0; i < lp->rows(); ++i) {
      for (Eigen::Index c = 0; c < classes; ++c) order[c] = c;
      std::stable_sort(order.begin(), order.end(),
                       [&](Eigen::Index a, Eigen::Index b) { return (*lp)(i, a) > (*lp)(i, b); });
      Eigen::RowVectorXd p = lp->row(i).array().exp();
      double top = 0;
      for (int r = 0; r < k_; ++r) top += p(order[r]);
      // The rest share what the top K leave, equally (never more than the K-th class, so
      // the reported top K stay the top K).
      const double kth = p(order[k_ - 1]);
      const double share = std::min(std::max(1.0 - top, 1e-300) / (classes - k_), kth);
      for (Eigen::Index r = k_; r < classes; ++r) p(order[r]) = share;
      SetProbabilities(lp, i, p);
    }
  }

 private:
  int k_;
};

class Aaa final : public OutputDefense {
 public:
  Aaa(double interval, double reverse, double temperature)
      : tau_(interval), alpha_(reverse), temp_(temperature) {}
  std::string Spec() const override {
    return "aaa:interval=" + Num(tau_) + ",reverse=" + Num(alpha_) + ",temperature=" + Num(temp_);
  }
  // The attacker needs T and A; with A = 0 the reported margin is the attractor itself, flat
  // inside each interval, and there is no trend to invert.
  std::string AdaptiveWrapper() const override {
    return alpha_ > 0 ? "aaa-adaptive:interval=" + Num(tau_) + ",reverse=" + Num(alpha_) : "";
  }
  void Apply(Eigen::MatrixXd* lp, bo::Rng&) const override {
    const Eigen::Index classes = lp->cols();
    if (classes < 2) return;
    for (Eigen::Index i = 0; i < lp->rows(); ++i) {
      const Eigen::RowVectorXd z = lp->row(i);
      Eigen::Index i1 = 0;
      z.maxCoeff(&i1);
      Eigen::Index i2 = i1 == 0 ? 1 : 0;
      for (Eigen::Index c = 0; c < classes; ++c)
        if (c != i1 && z(c) > z(i2)) i2 = c;
      const double m = z(i1) - z(i2);
      const double t = AaaTargetMargin(m, tau_, alpha_);
      if (!std::isfinite(t) || !std::isfinite(m))
        continue;  // keeps the row (cannot happen
                   // for finite log-probabilities)
      // Calibrated top-1 probability p* = softmax(z / S)_max (the paper's calibration target).
      double denom = 0;
      for (Eigen::Index c = 0; c < classes; ++c) denom += std::exp((z(c) - z(i1)) / temp_);
      const double p_star = 1.0 / denom;
      // New logits: z'_i1 = t, z'_j = c (z_j - z_i2) for j != i1 (z'_i2 = 0, order kept).
      // p'_i1 = e^t / (e^t + f(c)), f(c) = sum_{j != i1} exp(c d_j), d_j <= 0: f falls
      // from classes - 1 (c = 0) to the number of ties with the runner-up (c -> inf).
      // p'_i1 = p* <=> f(c) = e^t (1 - p*) / p*.
      const double want = std::exp(std::min(t, 700.0)) * (1.0 - p_star) / std::max(p_star, 1e-300);
      auto f = [&](double c) {
        double s = 0;
        for (Eigen::Index j = 0; j < classes; ++j)
          if (j != i1) s += std::exp(c * (z(j) - z(i2)));
        return s;
      };
      constexpr double kMaxScale = 1e3;
      double c = 0;
      if (want < f(0)) {
        if (want <= f(kMaxScale)) {
          c = kMaxScale;
        } else {
          double lo = 0, hi = kMaxScale;
          for (int it = 0; it < 100; ++it) {
            const double mid = 0.5 * (lo + hi);
            (f(mid) > want ? lo : hi) = mid;
          }
          c = 0.5 * (lo + hi);
        }
      }
      Eigen::RowVectorXd zn(classes);
      for (Eigen::Index j = 0; j < classes; ++j) zn(j) = j == i1 ? t : c * (z(j) - z(i2));
      const double mx = zn.maxCoeff();
      const double lse = mx + std::log((zn.array() - mx).exp().sum());
      lp->row(i) = zn.array() - lse;
    }
  }

 private:
  double tau_, alpha_, temp_;
};

double NumberOf(const std::string& part, const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used != value.size() || !std::isfinite(v)) throw std::invalid_argument("x");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("defense '" + part + "': " + key + " must be a number");
  }
}

}  // namespace

double AaaTargetMargin(double m, double interval, double reverse) {
  const double a = (std::floor(m / interval) + 0.5) * interval;
  return a - reverse * (m - a);
}

bool IsOutputDefenseName(const std::string& name) {
  return name == "round" || name == "topk" || name == "aaa";
}

std::shared_ptr<const OutputDefense> MakeOutputDefense(
    const std::string& name, const std::string& part,
    const std::vector<std::pair<std::string, std::string>>& params) {
  auto unknown = [&](const std::string& key, const char* expected) {
    throw std::invalid_argument("defense '" + part + "': unknown parameter '" + key +
                                "' (expected " + expected + ")");
  };
  if (name == "round") {
    int d = 2;
    for (const auto& [k, v] : params) {
      if (k != "decimals") unknown(k, "decimals");
      const double x = NumberOf(part, k, v);
      if (x != std::floor(x) || x < 1 || x > 8)
        throw std::invalid_argument("defense '" + part +
                                    "': decimals must be an integer in [1, 8]");
      d = static_cast<int>(x);
    }
    return std::make_shared<RoundProbabilities>(d);
  }
  if (name == "topk") {
    int kk = 1;
    for (const auto& [k, v] : params) {
      if (k != "k") unknown(k, "k");
      const double x = NumberOf(part, k, v);
      if (x != std::floor(x) || x < 1 || x > 100000)
        throw std::invalid_argument("defense '" + part + "': k must be an integer in [1, 100000]");
      kk = static_cast<int>(x);
    }
    return std::make_shared<TopK>(kk);
  }
  if (name == "aaa") {
    double tau = 4, alpha = 1, temp = 1;
    for (const auto& [k, v] : params) {
      const double x = NumberOf(part, k, v);
      if (k == "interval") {
        if (!(x >= 1e-3 && x <= 1000))
          throw std::invalid_argument("defense '" + part + "': interval must be in [0.001, 1000]");
        tau = x;
      } else if (k == "reverse") {
        if (!(x >= 0 && x <= 1))
          throw std::invalid_argument("defense '" + part + "': reverse must be in [0, 1]");
        alpha = x;
      } else if (k == "temperature") {
        if (!(x >= 1e-3 && x <= 1000))
          throw std::invalid_argument("defense '" + part +
                                      "': temperature must be in [0.001, 1000]");
        temp = x;
      } else {
        unknown(k, "interval, reverse or temperature");
      }
    }
    return std::make_shared<Aaa>(tau, alpha, temp);
  }
  throw std::invalid_argument("unknown output defense '" + name + "'");
}

}  // namespace advbo::defenses

#include "algorithms/hyperband/hyperband.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "bo/clock.h"

namespace advbo::algorithms {

int HyperbandSMax(int max_epochs, double eta) {
  return static_cast<int>(std::floor(std::log(max_epochs) / std::log(eta) + 1e-9));
}

std::vector<std::pair<int, int>> HyperbandRungs(int max_epochs, double eta, int s) {
  const int s_max = HyperbandSMax(max_epochs, eta);
  if (s < 0 || s > s_max) throw std::invalid_argument("Hyperband: bracket s outside [0, s_max]");
  const int n = static_cast<int>(
      std::ceil(static_cast<double>(s_max + 1) / (s + 1) * std::pow(eta, s) - 1e-9));
  const double r = max_epochs * std::pow(eta, -s);
  std::vector<std::pair<int, int>> rungs;
  for (int i = 0; i <= s; ++i) {
    const int n_i = static_cast<int>(std::floor(n * std::pow(eta, -i) + 1e-9));
    const int r_i = std::max(1, static_cast<int>(std::lround(r * std::pow(eta, i))));
    rungs.emplace_back(std::max(1, n_i), r_i);
  }
  return rungs;
}

void HyperbandOptions::Validate() const {
  if (max_epochs < 1) throw std::invalid_argument("Hyperband: max_epochs R must be >= 1");
  if (!(eta > 1) || !std::isfinite(eta))
    throw std::invalid_argument("Hyperband: eta must be a finite value > 1");
  if (epoch_budget < 1) throw std::invalid_argument("Hyperband: epoch_budget must be >= 1");
}

HyperbandResult RunHyperband(const CurveObjective& objective, const Eigen::VectorXd& lb,
                             const Eigen::VectorXd& ub, const HyperbandOptions& opt, bo::Rng& rng,
                             const HyperbandCallback& callback) {
  if (lb.size() < 1 || lb.size() != ub.size() || !lb.allFinite() || !ub.allFinite() ||
      !(lb.array() < ub.array()).all())
    throw std::invalid_argument("Hyperband: the box needs lb < ub, finite, same size >= 1");
  opt.Validate();
  const int d = static_cast<int>(lb.size());
  const int s_max = HyperbandSMax(opt.max_epochs, opt.eta);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  HyperbandResult res;
  for (int round = 0;; ++round) {
    for (int s = s_max; s >= 0; --s) {
      const auto rungs = HyperbandRungs(opt.max_epochs, opt.eta, s);
      std::vector<Eigen::VectorXd> configs(rungs[0].first);
      for (auto& x : configs) {
        x.resize(d);
        for (int k = 0; k < d; ++k) x(k) = lb(k) + unif(rng) * (ub(k) - lb(k));
      }
      std::vector<int> alive(configs.size()), trained(configs.size(), 0);
      std::iota(alive.begin(), alive.end(), 0);
      for (int i = 0; i <= s; ++i) {
        const int r_i = rungs[i].second;
        std::vector<std::pair<double, int>> scores;
        for (int c : alive) {
          HyperbandRecord rec;
          const int charge = opt.resume ? r_i - trained[c] : r_i;
          if (res.epochs_used + charge > opt.epoch_budget) {
            res.stop_reason = "budget";
            return res;
          }
          rec.evaluation = static_cast<int>(res.records.size()) + 1;
          rec.round = round;
          rec.bracket = s;
          rec.rung = i;
          rec.config = c;
          rec.x = configs[c];
          std::vector<double> curve;
          const auto t0 = bo::Clock::now();
          objective(rec.x, r_i, [&](int epoch, double err) {
            if (!std::isfinite(err) || err < 0 || err > 1)
              throw std::runtime_error("Hyperband: epoch " + std::to_string(epoch) +
                                       " reported a validation error outside [0, 1]");
            curve.push_back(err);
            return static_cast<int>(curve.size()) < r_i;
          });
          rec.seconds_train = bo::SecondsSince(t0);
          if (curve.empty()) throw std::runtime_error("Hyperband: the objective reported no epoch");
          rec.epochs = static_cast<int>(curve.size());
          rec.epochs_charged = opt.resume ? rec.epochs - trained[c] : rec.epochs;
          trained[c] = rec.epochs;
          rec.error = curve.back();
          res.epochs_used += rec.epochs_charged;
          rec.epochs_total = res.epochs_used;
          if (!(rec.error >= res.best_error)) {
            res.best_error = rec.error;
            res.best_x = rec.x;
          }
          rec.best_error = res.best_error;
          scores.emplace_back(rec.error, c);
          res.records.push_back(rec);
          if (callback && !callback(res.records.back())) {
            res.stop_reason = "callback";
            return res;
          }
        }
        if (i == s) break;
        const int keep = std::max(1, static_cast<int>(std::floor(rungs[i].first / opt.eta + 1e-9)));
        std::stable_sort(scores.begin(), scores.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        alive.clear();
        for (int j = 0; j < keep && j < static_cast<int>(scores.size()); ++j)
          alive.push_back(scores[j].second);
      }
    }
  }
}

}  // namespace advbo::algorithms

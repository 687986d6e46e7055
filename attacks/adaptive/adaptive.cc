#include "attacks/adaptive/adaptive.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace advbo::attacks {
namespace {

class EotAttack final : public Attack {
 public:
  EotAttack(int k, std::unique_ptr<Attack> inner, std::string spec)
      : k_(k), inner_(std::move(inner)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  bool supports_untargeted() const override { return inner_->supports_untargeted(); }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    oracle.set_samples_per_query(k_ * oracle.samples_per_query());
    const long k = oracle.samples_per_query();
    AttackProgress scaled;
    if (progress) scaled = [progress, k](long q, double best) { progress(q * k, best); };
    AttackResult r = inner_->Run(oracle, rng, scaled);
    r.details["eot_samples"] = k;
    return r;
  }

 private:
  int k_;
  std::unique_ptr<Attack> inner_;
  std::string spec_;
};

class AaaAdaptiveAttack final : public Attack {
 public:
  AaaAdaptiveAttack(double interval, double reverse, std::unique_ptr<Attack> inner,
                    std::string spec)
      : tau_(interval), alpha_(reverse), inner_(std::move(inner)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  bool supports_untargeted() const override { return inner_->supports_untargeted(); }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    const double tau = tau_, alpha = alpha_;
    oracle.set_score_correction([tau, alpha](Eigen::MatrixXd* lp) {
      for (Eigen::Index i = 0; i < lp->rows(); ++i) {
        Eigen::Index i1 = 0;
        lp->row(i).maxCoeff(&i1);
        Eigen::Index i2 = i1 == 0 ? 1 : 0;
        for (Eigen::Index c = 0; c < lp->cols(); ++c)
          if (c != i1 && (*lp)(i, c) > (*lp)(i, i2)) i2 = c;
        const double t = (*lp)(i, i1) - (*lp)(i, i2);
        (*lp)(i, i1) = (*lp)(i, i2) + AaaTrueMargin(t, tau, alpha);
        const double mx = lp->row(i).maxCoeff();
        lp->row(i).array() -= mx + std::log((lp->row(i).array() - mx).exp().sum());
      }
    });
    return inner_->Run(oracle, rng, progress);
  }

 private:
  double tau_, alpha_;
  std::unique_ptr<Attack> inner_;
  std::string spec_;
};

class OarsAttack final : public Attack {
 public:
  OarsAttack(double scale, int tries, int quantization, std::unique_ptr<Attack> inner,
             std::string spec)
      : scale_(scale),
        tries_(tries),
        quant_(quantization),
        inner_(std::move(inner)),
        spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  bool supports_untargeted() const override { return inner_->supports_untargeted(); }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    oracle.set_resampling(scale_, tries_, rng(), quant_);
    AttackResult r = inner_->Run(oracle, rng, progress);
    r.details["resampled_queries"] = oracle.resampled();
    return r;
  }

 private:
  double scale_;
  int tries_, quant_;
  std::unique_ptr<Attack> inner_;
  std::string spec_;
};

class ConfirmAttack final : public Attack {
 public:
  ConfirmAttack(int n, std::unique_ptr<Attack> inner, std::string spec)
      : n_(n), inner_(std::move(inner)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  bool supports_untargeted() const override { return inner_->supports_untargeted(); }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    oracle.set_confirmations(n_);
    AttackResult r = inner_->Run(oracle, rng, progress);
    r.details["confirmation_queries"] = oracle.confirmation_queries();
    r.details["refuted_successes"] = oracle.refuted_successes();
    return r;
  }

 private:
  int n_;
  std::unique_ptr<Attack> inner_;
  std::string spec_;
};

}  // namespace

double AaaTrueMargin(double t, double interval, double reverse) {
  if (!(interval > 0) || !(reverse > 0 && reverse <= 1))
    throw std::invalid_argument("AaaTrueMargin: interval > 0 and reverse in (0, 1] needed");
  // t lies in (a - reverse T/2, a + reverse T/2] for a = (k + 1/2) T, so
  // t/T - 1/2 - reverse/2 lies in (k - reverse, k]: k is its ceiling (reverse <= 1).
  const double k = std::max(0.0, std::ceil(t / interval - 0.5 - 0.5 * reverse));
  const double a = (k + 0.5) * interval;
  return std::max(0.0, (a * (1 + reverse) - t) / reverse);
}

bool IsAdaptiveSpec(const std::string& spec) {
  for (const char* w : {"eot", "aaa-adaptive", "oars", "confirm"}) {
    const size_t n = std::char_traits<char>::length(w);
    if (spec.compare(0, n, w) == 0 && spec.size() > n && (spec[n] == ':' || spec[n] == '/'))
      return true;
  }
  return false;
}

namespace {

using Settings = std::vector<std::pair<std::string, double>>;

// "attack '<spec>': unknown setting '<key>' (<wrapper> takes <keys>)".
std::invalid_argument UnknownSetting(const std::string& spec, const std::string& key,
                                     const char* wrapper, const char* keys) {
  return std::invalid_argument("attack '" + spec + "': unknown setting '" + key + "' (" + wrapper +
                               " takes " + keys + ")");
}

std::unique_ptr<Attack> MakeOars(const std::string& spec, const Settings& settings,
                                 std::unique_ptr<Attack> inner) {
  double scale = 0.05;
  int tries = 10, quant = 0;
  for (const auto& [key, v] : settings) {
    if (key == "scale")
      scale = SettingInRange(spec, key, v, 0, 1, /*lo_open=*/true);
    else if (key == "tries")
      tries = SettingInteger(spec, key, v, 0, 1000);
    else if (key == "quantization")
      quant = SettingInteger(spec, key, v, 0, 255);
    else
      throw UnknownSetting(spec, key, "oars", "scale, tries, quantization");
  }
  return std::make_unique<OarsAttack>(scale, tries, quant, std::move(inner), spec);
}

// The value of a wrapper's one integer setting `key` (in 1..1000), `fallback` when absent;
// any other key is an error naming `wrapper`'s settings.
int OnlyIntegerSetting(const std::string& spec, const Settings& settings, const char* wrapper,
                       const std::string& key, int fallback) {
  int value = fallback;
  for (const auto& [k, v] : settings) {
    if (k != key) throw UnknownSetting(spec, k, wrapper, key.c_str());
    value = SettingInteger(spec, k, v, 1, 1000);
  }
  return value;
}

std::unique_ptr<Attack> MakeAaaAdaptive(const std::string& spec, const Settings& settings,
                                        std::unique_ptr<Attack> inner) {
  double tau = 4, alpha = 1;
  for (const auto& [key, v] : settings) {
    if (key == "interval")
      tau = SettingInRange(spec, key, v, 1e-3, 1000);
    else if (key == "reverse")
      alpha = SettingInRange(spec, key, v, 0, 1, /*lo_open=*/true);
    else
      throw UnknownSetting(spec, key, "aaa-adaptive", "interval, reverse");
  }
  return std::make_unique<AaaAdaptiveAttack>(tau, alpha, std::move(inner), spec);
}

}  // namespace

std::unique_ptr<Attack> MakeAdaptiveAttack(const std::string& spec, const AttackContext& ctx) {
  const auto slash = spec.find('/');
  const auto colon = spec.find(':');
  if (slash == std::string::npos || slash + 1 == spec.size())
    throw std::invalid_argument("attack '" + spec +
                                "': an adaptive wrapper is WRAPPER[:SETTINGS]/ATTACK, e.g. "
                                "eot:k=10/square, aaa-adaptive:interval=4,reverse=1/square, "
                                "oars/square or confirm:n=2/square");
  const bool has_settings = colon != std::string::npos && colon < slash;
  const std::string base = spec.substr(0, has_settings ? colon : slash);
  const Settings settings =
      has_settings ? ParseAttackSettings(spec, spec.substr(colon + 1, slash - colon - 1))
                   : Settings{};
  std::unique_ptr<Attack> inner = MakeAttack(spec.substr(slash + 1), ctx);
  if (base == "oars") return MakeOars(spec, settings, std::move(inner));
  if (base == "confirm")
    return std::make_unique<ConfirmAttack>(OnlyIntegerSetting(spec, settings, "confirm", "n", 2),
                                           std::move(inner), spec);
  if (base == "eot")
    return std::make_unique<EotAttack>(OnlyIntegerSetting(spec, settings, "eot", "k", 10),
                                       std::move(inner), spec);
  if (base == "aaa-adaptive") return MakeAaaAdaptive(spec, settings, std::move(inner));
  throw std::invalid_argument("unknown adaptive wrapper '" + base +
                              "' (eot, aaa-adaptive, oars, confirm)");
}

}  // namespace advbo::attacks

#include "attacks/adaptive/adaptive.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace advbo::attacks {
namespace {

// Base of the four wrappers: the inner attack's threat model passes through unchanged (norms,
// feedback, targeted / untargeted support), under the wrapper's own spec.
class WrapperAttack : public Attack {
 public:
  WrapperAttack(std::unique_ptr<Attack> inner, std::string spec)
      : inner_(std::move(inner)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  bool supports_untargeted() const override { return inner_->supports_untargeted(); }
  bool supports_targeted() const override { return inner_->supports_targeted(); }
  std::vector<oracle::Norm> norms() const override { return inner_->norms(); }
  oracle::Feedback feedback() const override { return inner_->feedback(); }

 protected:
  const Attack& inner() const { return *inner_; }

 private:
  std::unique_ptr<Attack> inner_;
  std::string spec_;
};

class EotAttack final : public WrapperAttack {
 public:
  EotAttack(int k, std::unique_ptr<Attack> inner, std::string spec)
      : WrapperAttack(std::move(inner), std::move(spec)), k_(k) {}
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    EotOracle view(oracle, k_);
    const long k = k_;
    AttackProgress scaled;
    if (progress) scaled = [progress, k](long q, double best) { progress(q * k, best); };
    AttackResult r = inner().Run(view, rng, scaled);
    r.queries *= k;  // in the parent's units: every sample counts
    // The samples per query of the innermost EOT view (all nested EOTs multiplied).
    if (!r.details.contains("eot_samples")) r.details["eot_samples"] = view.stride();
    return r;
  }

 private:
  int k_;
};

class AaaAdaptiveAttack final : public WrapperAttack {
 public:
  AaaAdaptiveAttack(double interval, double reverse, std::unique_ptr<Attack> inner,
                    std::string spec)
      : WrapperAttack(std::move(inner), std::move(spec)), tau_(interval), alpha_(reverse) {}
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    const double tau = tau_, alpha = alpha_;
    CorrectedOracle view(oracle, [tau, alpha](Eigen::MatrixXd* lp) {
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
    return inner().Run(view, rng, progress);
  }

 private:
  double tau_, alpha_;
};

class OarsAttack final : public WrapperAttack {
 public:
  OarsAttack(double scale, int tries, int quantization, std::unique_ptr<Attack> inner,
             std::string spec)
      : WrapperAttack(std::move(inner), std::move(spec)),
        scale_(scale),
        tries_(tries),
        quant_(quantization) {}
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    ResamplingOracle view(oracle, scale_, tries_, rng(), quant_);
    AttackResult r = inner().Run(view, rng, progress);
    r.details["resampled_queries"] = view.resampled();
    return r;
  }

 private:
  double scale_;
  int tries_, quant_;
};

class ConfirmAttack final : public WrapperAttack {
 public:
  ConfirmAttack(int n, std::unique_ptr<Attack> inner, std::string spec)
      : WrapperAttack(std::move(inner), std::move(spec)), n_(n) {}
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override {
    ConfirmingOracle view(oracle, n_);
    AttackResult r = inner().Run(view, rng, progress);
    r.details["confirmation_queries"] = view.confirmation_queries();
    r.details["refuted_successes"] = view.refuted_successes();
    return r;
  }

 private:
  int n_;
};

// Each of the n images (d floats each) k times in a row: the EOT samples [n * k, d].
std::vector<float> EotCopies(const float* images, int n, int k, size_t d) {
  std::vector<float> out(static_cast<size_t>(n) * k * d);
  for (int b = 0; b < n; ++b)
    for (int s = 0; s < k; ++s)
      std::copy(images + b * d, images + (b + 1) * d, out.data() + (b * k + s) * d);
  return out;
}

// The EOT answer of n images from their k samples' log-probabilities lp [n * k, classes]:
// the log of each image's mean probability vector, renormalised [n, classes].
Eigen::MatrixXd EotMean(const Eigen::MatrixXd& lp, int n, int k) {
  Eigen::MatrixXd mean(n, lp.cols());
  for (int b = 0; b < n; ++b) {
    const double mx = lp.middleRows(b * k, k).maxCoeff();
    Eigen::RowVectorXd p = (lp.middleRows(b * k, k).array() - mx).exp().colwise().sum() / k;
    mean.row(b) = p.array().log() + mx;
    const double lse = mean.row(b).maxCoeff() +
                       std::log((mean.row(b).array() - mean.row(b).maxCoeff()).exp().sum());
    mean.row(b).array() -= lse;
  }
  return mean;
}

// The EOT answer of n images to a label-only attacker from their k samples' log-probabilities
// lp [n * k, classes]: each image's vote shares (count_c + 1e-3) / (k + classes * 1e-3) as
// log-probabilities [n, classes], whose argmax -- the only thing a label-feedback attack is
// told -- is the majority label of the k samples (ties to the lower class index).
Eigen::MatrixXd EotVote(const Eigen::MatrixXd& lp, int n, int k) {
  constexpr double kFloor = 1e-3;
  const Eigen::Index classes = lp.cols();
  Eigen::MatrixXd votes = Eigen::MatrixXd::Constant(n, classes, kFloor);
  for (int b = 0; b < n; ++b)
    for (int s = 0; s < k; ++s) {
      Eigen::Index c = 0;
      lp.row(b * k + s).maxCoeff(&c);
      votes(b, c) += 1;
    }
  return (votes.array() / (k + classes * kFloor)).log().matrix();
}

// An evaluation-level view may not wrap a query-level one (it would bypass it).
void RequireEvaluationLevel(const oracle::QueryOracle& parent, const char* view) {
  if (parent.query_level())
    throw std::invalid_argument(std::string(view) +
                                " acts on every model evaluation and cannot sit inside "
                                "confirm or oars, which act on whole queries");
}

}  // namespace

EotOracle::EotOracle(oracle::QueryOracle& parent, int k)
    : QueryOracle(&parent.referee()), parent_(parent), k_(k) {
  RequireEvaluationLevel(parent, "eot");
  if (k < 1 || k > parent.budget())
    throw std::invalid_argument("eot: k = " + std::to_string(k) +
                                " samples per query must be in [1, the budget " +
                                std::to_string(parent.budget()) + "]");
}

oracle::DefendedAnswer EotOracle::Evaluate(float* images, int n) {
  if (n <= 0) return {};
  if (n > remaining())
    throw oracle::BudgetExhausted("query budget of " + std::to_string(budget()) +
                                  " EOT queries exhausted (" + std::to_string(queries()) +
                                  " used, " + std::to_string(n) + " requested)");
  const size_t d = clean().size();
  std::vector<float> samples = EotCopies(images, n, k_, d);
  oracle::DefendedAnswer a = parent_.Evaluate(samples.data(), n * k_);
  // The attack's images become what was sent (each sample is projected the same way).
  for (int b = 0; b < n; ++b)
    std::copy(samples.begin() + b * k_ * d, samples.begin() + (b * k_ + 1) * d, images + b * d);
  oracle::DefendedAnswer out;
  out.log_probs = feedback_type() == oracle::Feedback::kLabel ? EotVote(a.log_probs, n, k_)
                                                              : EotMean(a.log_probs, n, k_);
  out.model_seconds = a.model_seconds;
  if (!a.refused.empty()) {
    // A refused answer (any of its samples refused) is never a success.
    out.refused.assign(n, false);
    for (int q = 0; q < n * k_; ++q)
      if (a.refused[q]) out.refused[q / k_] = true;
  }
  return out;
}

CorrectedOracle::CorrectedOracle(oracle::QueryOracle& parent,
                                 std::function<void(Eigen::MatrixXd*)> correct)
    : QueryOracle(&parent.referee()), parent_(parent), correct_(std::move(correct)) {
  RequireEvaluationLevel(parent, "aaa-adaptive");
  if (!correct_) throw std::invalid_argument("a score correction must be given");
}

oracle::DefendedAnswer CorrectedOracle::Evaluate(float* images, int n) {
  oracle::DefendedAnswer a = parent_.Evaluate(images, n);
  if (n > 0) correct_(&a.log_probs);
  return a;
}

ConfirmingOracle::ConfirmingOracle(oracle::QueryOracle& parent, int n)
    : QueryOracle(&parent.referee()), parent_(parent), n_(n) {
  if (n < 1 || n > 1000)
    throw std::invalid_argument("confirmations must be in [1, 1000], got " + std::to_string(n));
}

oracle::QueryResult ConfirmingOracle::Ask(float* images, int n, bool provisional) {
  oracle::QueryResult r = parent_.Ask(images, n, /*provisional=*/true);
  const size_t d = clean().size();
  for (int b = 0; b < n; ++b) {
    if (!r.success[b] || succeeded()) continue;
    // The image as evaluated (projected; with OARS inside, with its noise): asked again.
    const std::vector<float> x(images + b * d, images + (b + 1) * d);
    double sum = r.objective(b);
    int evals = 1;
    bool confirmed = true;
    oracle::QueryResult last;
    for (int c = 0; c < n_ && confirmed; ++c) {
      if (parent_.remaining() <= 0) {
        confirmed = false;
        break;
      }
      std::vector<float> again = x;
      last = parent_.Ask(again.data(), 1, /*provisional=*/true);
      ++confirm_queries_;
      sum += last.objective(0);
      ++evals;
      confirmed = last.success[0];
    }
    if (confirmed) {
      if (!provisional) ClaimSuccess(x.data(), last.log_probs.row(0));
    } else {
      ++refuted_;
      r.success[b] = false;
      r.adversarial[b] = false;  // the confirmed verdict (label feedback: what the attack sees)
      r.objective(b) = sum / evals;
    }
  }
  return r;
}

ResamplingOracle::ResamplingOracle(oracle::QueryOracle& parent, double scale, int max_tries,
                                   uint64_t seed, int quantization)
    : QueryOracle(&parent.referee()),
      parent_(parent),
      scale_(scale),
      tries_(max_tries),
      quant_(quantization),
      rng_(seed) {
  if (!(scale > 0 && scale <= 1) || max_tries < 0 || quantization < 0 || quantization > 255)
    throw std::invalid_argument(
        "resampling: scale in (0, 1], tries >= 0 and quantization in [0, 255] needed");
}

void ResamplingOracle::AddNoise(float* image) {
  const size_t d = clean().size();
  // In 8-bit mode noise below half a grid step would round away: at least one step.
  const double radius = query_radius();
  const double floor =
      pixel_space() == oracle::PixelSpace::k8bit && radius > 0 ? 1.0 / (255.0 * radius) : 0;
  const double amp = std::max(scale_, floor) * radius;
  if (quant_ == 0) {
    std::uniform_real_distribution<double> u(-amp, amp);
    for (size_t i = 0; i < d; ++i) image[i] = static_cast<float>(image[i] + u(rng_));
    return;
  }
  // The detector's quantisation is known: only pixels within amp of a bin boundary move,
  // each with probability 1/2, just across it (to the boundary level b or b - 1 on the
  // 0..255 scale) -- the smallest change that alters the fingerprint's windows.
  const double q = quant_, amp_levels = amp * 255.0;
  std::bernoulli_distribution coin(0.5);
  for (size_t i = 0; i < d; ++i) {
    const double level = static_cast<double>(image[i]) * 255.0;
    const double b = std::round(level / q) * q;
    if (b <= 0 || b > 255 || std::abs(level - b) > amp_levels || !coin(rng_)) continue;
    image[i] = static_cast<float>((level >= b ? b - 1 : b) / 255.0);
  }
}

oracle::QueryResult ResamplingOracle::Ask(float* images, int n, bool provisional) {
  if (n <= 0) return parent_.Ask(images, n, provisional);
  // Every query goes out with random noise at the current scale; a refused one is resampled
  // with doubled noise until it passes (each try a counted query); the scale decays while
  // queries pass.
  const size_t d = clean().size();
  const std::vector<float> proposals(images, images + static_cast<size_t>(n) * d);
  for (int b = 0; b < n; ++b) AddNoise(images + b * d);
  oracle::QueryResult r = parent_.Ask(images, n, provisional);
  bool any = false;
  for (int b = 0; b < n && !r.rejected.empty(); ++b) {
    for (int t = 0; r.rejected[b] && t < tries_ && parent_.remaining() > 0; ++t) {
      any = true;
      ++resampled_;
      scale_ = std::min(1.0, 2 * scale_);
      std::vector<float> x(proposals.begin() + b * d, proposals.begin() + (b + 1) * d);
      AddNoise(x.data());
      const oracle::QueryResult one = parent_.Ask(x.data(), 1, provisional);
      std::copy(x.begin(), x.end(), images + b * d);
      r.objective(b) = one.objective(0);
      r.predicted[b] = one.predicted[0];
      r.success[b] = one.success[0];
      r.adversarial[b] = one.adversarial[0];
      r.log_probs.row(b) = one.log_probs.row(0);
      r.rejected[b] = !one.rejected.empty() && one.rejected[0];
    }
    any = any || r.rejected[b];
  }
  if (!any) scale_ = std::max(1e-3, 0.9 * scale_);
  return r;
}

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

// The wrappers of a spec ("eot:k=10/oars/square" -> {"eot:k=10", "oars"}) and the attack.
std::pair<std::vector<std::string>, std::string> SplitWrappers(std::string spec) {
  std::vector<std::string> wrappers;
  while (IsAdaptiveSpec(spec) && spec.find('/') != std::string::npos) {
    const auto slash = spec.find('/');
    wrappers.push_back(spec.substr(0, slash));
    spec = spec.substr(slash + 1);
  }
  return {wrappers, spec};
}

bool IsEvaluationWrapper(const std::string& wrapper) {
  return wrapper.rfind("eot", 0) == 0 || wrapper.rfind("aaa-adaptive", 0) == 0;
}

bool HasEvaluationWrapper(const std::string& spec) {
  for (const std::string& w : SplitWrappers(spec).first)
    if (IsEvaluationWrapper(w)) return true;
  return false;
}

// The same wrappers with eot / aaa-adaptive first (in their order), then oars / confirm.
std::string EvaluationWrappersFirst(const std::string& spec) {
  const auto [wrappers, attack] = SplitWrappers(spec);
  std::string out;
  for (bool evaluation : {true, false})
    for (const std::string& w : wrappers)
      if (IsEvaluationWrapper(w) == evaluation) out += w + "/";
  return out + attack;
}

// The wrapper starting at `pos` of `spec` ("eot:k=10" of "eot:k=10/square"), or "" when the
// text there is the attack itself.
std::string WrapperAt(const std::string& spec, size_t pos) {
  for (const char* w : {"eot", "aaa-adaptive", "oars", "confirm"}) {
    const size_t n = std::char_traits<char>::length(w);
    if (spec.compare(pos, n, w) != 0 || pos + n >= spec.size()) continue;
    if (spec[pos + n] != ':' && spec[pos + n] != '/') continue;
    const size_t slash = spec.find('/', pos);
    if (slash != std::string::npos) return spec.substr(pos, slash - pos);
  }
  return "";
}

// Refuses a spec nested deeper than kMaxWrapperDepth wrappers or whose eot samples per query
// (the product of its eot k's) exceed kMaxEotSamples, before anything is built: the
// recursion of MakeAttack stays shallow and no count overflows. Reads at most
// kMaxWrapperDepth + 1 wrappers of the text. Returns the samples per query.
long CheckWrapperNesting(const std::string& spec) {
  int depth = 0;
  long samples = 1;
  for (size_t pos = 0;;) {
    const std::string w = WrapperAt(spec, pos);
    if (w.empty()) break;
    if (++depth > kMaxWrapperDepth)
      throw std::invalid_argument(
          "attack '" + spec.substr(0, 80) + (spec.size() > 80 ? "..." : "") + "': more than " +
          std::to_string(kMaxWrapperDepth) + " nested adaptive wrappers (the limit)");
    if (w.rfind("eot", 0) == 0) {
      const auto colon = w.find(':');
      const Settings s =
          colon == std::string::npos ? Settings{} : ParseAttackSettings(w, w.substr(colon + 1));
      samples *= OnlyIntegerSetting(w, s, "eot", "k", 10);
      if (samples > kMaxEotSamples)
        throw std::invalid_argument("attack '" + spec + "': nested eot wrappers take " +
                                    "more than " + std::to_string(kMaxEotSamples) +
                                    " samples per query (the product of their k), the limit");
    }
    pos += w.size() + 1;
  }
  return samples;
}

}  // namespace

long EotSamplesPerQuery(const std::string& spec) { return CheckWrapperNesting(spec); }

std::unique_ptr<Attack> MakeAdaptiveAttack(const std::string& spec, const AttackContext& ctx) {
  CheckWrapperNesting(spec);
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
  const std::string inner_spec = spec.substr(slash + 1);
  if ((base == "oars" || base == "confirm") && HasEvaluationWrapper(inner_spec))
    throw std::invalid_argument("attack '" + spec +
                                "': eot and aaa-adaptive act on every model evaluation and come "
                                "before oars and confirm, which act on whole queries: write '" +
                                EvaluationWrappersFirst(spec) + "'");
  std::unique_ptr<Attack> inner = MakeAttack(inner_spec, ctx);
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

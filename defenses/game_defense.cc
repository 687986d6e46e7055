#include "defenses/game_defense.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "bo/acquisition.h"
#include "bo/kernel.h"
#include "games/level0.h"
#include "text/numbers.h"
#include "text/settings.h"

namespace advbo::defenses {
namespace {

// The tunable parameter of each stage a parameterised defender may use.
const std::vector<TunableStage>& TunableStages() {
  static const std::vector<TunableStage> stages = {{"jpeg", "quality", 10, 95, true},
                                                   {"bits", "depth", 1, 8, true},
                                                   {"blur", "sigma", 0.3, 2.0, false},
                                                   {"noise", "sigma", 0.0, 0.1, false},
                                                   {"resize", "ratio", 0.05, 0.3, false}};
  return stages;
}

std::string TunableList() {
  std::string s;
  for (const auto& t : TunableStages()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s (%s %g..%g)", s.empty() ? "" : ", ", t.name.c_str(),
                  t.param.c_str(), t.lo, t.hi);
    s += buf;
  }
  return s;
}

// Clips x into [anchor - eps, anchor + eps] intersected with [0, 1].
void ClipAround(float* x, const float* anchor, size_t n, double eps) {
  for (size_t i = 0; i < n; ++i) {
    const float lo = std::max(0.0f, static_cast<float>(anchor[i] - eps));
    const float hi = std::min(1.0f, static_cast<float>(anchor[i] + eps));
    x[i] = std::clamp(x[i], lo, hi);
  }
}

}  // namespace

std::string GameDefenseSpec::Spec() const {
  std::string s = agent + ":";
  if (latent) s += "latent";
  for (size_t i = 0; i < stages.size(); ++i) s += (i ? "+" : "") + stages[i].name;
  std::string settings;
  if (window != kDefaultDefenderWindow) settings += "window=" + std::to_string(window);
  if (!beta.empty()) settings += (settings.empty() ? "" : ",") + ("beta=" + beta);
  return settings.empty() ? s : s + ":" + settings;
}

std::string WithDefaultWindow(const std::string& spec, int window) {
  if (window < 0 || window > 1000000)
    throw std::invalid_argument("game defense: window must be in 0..1000000");
  if (!IsGameDefense(spec)) return spec;
  GameDefenseSpec parsed = ParseGameDefense(spec);
  // The settings part is the text after the second ':' (ACTIONS holds none).
  const size_t first = spec.find(':');
  const size_t second = spec.find(':', first + 1);
  if (second != std::string::npos && spec.find("window=", second) != std::string::npos) return spec;
  parsed.window = window;
  return parsed.Spec();
}

bool IsGameDefense(const std::string& spec) {
  return spec.rfind("r2b2:", 0) == 0 || spec.rfind("random:", 0) == 0;
}

GameDefenseSpec ParseGameDefense(const std::string& spec) {
  const auto colon = spec.find(':');
  GameDefenseSpec out;
  out.agent = colon == std::string::npos ? spec : spec.substr(0, colon);
  if (out.agent != "r2b2" && out.agent != "random")
    throw std::invalid_argument("game defense '" + spec +
                                "': use r2b2:ACTIONS (R2-B2 level 1) or random:ACTIONS (level 0)");
  std::string actions = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const auto settings_colon = actions.find(':');
  if (settings_colon != std::string::npos) {
    const std::string settings = actions.substr(settings_colon + 1);
    actions.resize(settings_colon);
    const std::string what = "game defense '" + spec + "'";
    for (const auto& [key, value] : text::SplitSettings(settings, what)) {
      try {
        if (key == "window") {
          const long w = text::ParseInteger(value, "window");
          if (w < 0 || w > 1000000) throw std::invalid_argument("window must be in 0..1000000");
          out.window = static_cast<int>(w);
        } else if (key == "beta") {
          bo::ParseExplorationWeight(value);  // checked here, applied by GameDefense
          out.beta = value;
        } else {
          throw std::invalid_argument("unknown setting '" + key + "=" + value +
                                      "' (window=N, beta=POLICY)");
        }
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(what + ": " + e.what());
      }
    }
  }
  if (actions == "latent") {
    out.latent = true;
    return out;
  }
  std::stringstream ss(actions);
  std::string part;
  while (std::getline(ss, part, '+')) {
    const auto& all = TunableStages();
    auto it =
        std::find_if(all.begin(), all.end(), [&](const TunableStage& t) { return t.name == part; });
    if (it == all.end())
      throw std::invalid_argument("game defense '" + spec + "': unknown action set '" + part +
                                  "' (use latent, or stages joined by +: " + TunableList() + ")");
    for (const auto& s : out.stages)
      if (s.name == part)
        throw std::invalid_argument("game defense '" + spec + "': stage '" + part + "' twice");
    out.stages.push_back(*it);
  }
  if (out.stages.empty())
    throw std::invalid_argument("game defense '" + spec + "': no actions (use latent, or " +
                                TunableList() + ")");
  return out;
}

void GameDefenseOptions::Validate() const {
  if (level != 0 && level != 1)
    throw std::invalid_argument("game defense: level must be 0 (random) or 1 (R2-B2)");
  if (!(epsilon > 0) || !(action_bound > 0) || candidates < 1)
    throw std::invalid_argument("game defense: need eps > 0, a positive bound and >= 1 candidate");
  if (refit_every < 0 || refit_until < 0 || !(gp_noise > 0))
    throw std::invalid_argument(
        "game defense: refit_every and refit_until must be >= 0, gp_noise > 0");
}

GameDefense::GameDefense(GameDefenseSpec spec, const oracle::Autoencoder* vae, int c, int h, int w,
                         GameDefenseOptions options)
    : spec_(std::move(spec)),
      vae_(vae),
      c_(c),
      h_(h),
      w_(w),
      opt_(options),
      history_({1, 1}),
      rng_(bo::DeriveSeed(options.seed, 0x6A3EULL)) {
  if (spec_.latent && !vae_)
    throw std::invalid_argument("game defense " + spec_.Spec() + ": latent actions need a VAE");
  if (vae_ && vae_->input_size() != c * h * w)
    throw std::invalid_argument("game defense: the VAE " + vae_->path() +
                                " expects another image size");
  opt_.Validate();
  const int zc = vae_ ? vae_->latent_dim() : 1;
  // VAE codes are close to N(0, I): a box of +-4 holds them (only used for bookkeeping).
  context_space_ = games::ActionSpace::Box(zc, -4.0, 4.0);
  space_ = spec_.latent
               ? games::ActionSpace::Box(vae_->latent_dim(), -opt_.action_bound, opt_.action_bound)
               : games::ActionSpace::Box(static_cast<int>(spec_.stages.size()), 0.0, 1.0);
  history_ = games::GameHistory({zc, space_.dim()});
  if (opt_.level == 1) {
    const int joint = zc + space_.dim();
    bo::ExactGP prior(
        std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, joint, true),
        opt_.gp_noise);
    games::BeliefOptions b;
    b.refit_every = opt_.refit_every;
    b.refit_until = opt_.refit_until;
    b.fit_seed = bo::DeriveSeed(opt_.seed, 0xF17ULL);
    std::vector<games::PayoffBelief> beliefs;
    for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, joint, prior, b);
    std::vector<std::unique_ptr<games::Level0Strategy>> level0;
    level0.push_back(std::make_unique<games::RandomSearchStrategy>(context_space_));
    level0.push_back(std::make_unique<games::RandomSearchStrategy>(space_));
    games::R2b2Options o;
    o.level = 1;
    if (!spec_.beta.empty()) o.beta = bo::ParseExplorationWeight(spec_.beta);
    o.candidates = opt_.candidates;
    o.candidate_seed = bo::DeriveSeed(opt_.seed, 0xCA4DULL);
    agent_ = std::make_unique<games::R2b2Agent>(
        1, std::vector<games::ActionSpace>{context_space_, space_}, std::move(beliefs),
        std::move(level0), o,
        /*moves_second=*/true);
  }
}

Eigen::VectorXd GameDefense::NeutralAction() const {
  if (spec_.latent) return Eigen::VectorXd::Zero(space_.dim());
  Eigen::VectorXd a(space_.dim());
  for (int i = 0; i < space_.dim(); ++i) {
    const std::string& n = spec_.stages[i].name;
    a(i) = (n == "jpeg" || n == "bits") ? 1.0 : 0.0;  // the mildest end of each parameter
  }
  return a;
}

DefensePipeline GameDefense::PipelineFor(const Eigen::VectorXd& a) const {
  if (a.size() != static_cast<Eigen::Index>(spec_.stages.size()))
    throw std::invalid_argument("game defense: action size differs from the stage count");
  std::string spec;
  for (size_t i = 0; i < spec_.stages.size(); ++i) {
    const TunableStage& t = spec_.stages[i];
    double v = t.lo + std::clamp(a(i), 0.0, 1.0) * (t.hi - t.lo);
    if (t.integer) v = std::round(v);
    if (t.name == "noise" && v <= 1e-4) continue;  // sigma 0: no noise stage
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s:%s=%.6g", spec.empty() ? "" : "+", t.name.c_str(),
                  t.param.c_str(), v);
    spec += buf;
  }
  return ParseDefense(spec);
}

void GameDefense::Apply(float* image, const Eigen::VectorXd& context, const Eigen::VectorXd& a) {
  const size_t d = static_cast<size_t>(c_) * h_ * w_;
  if (spec_.latent) {
    const std::vector<float> attacker(image, image + d);
    const std::vector<float> out = vae_->Decode((context + a).transpose());
    std::copy(out.begin(), out.end(), image);
    ClipAround(image, attacker.data(), d, opt_.epsilon);
  } else {
    PipelineFor(a).Apply(image, 1, c_, h_, w_, rng_);
  }
}

void GameDefense::Transform(float* images, int n) {
  const size_t d = static_cast<size_t>(c_) * h_ * w_;
  pending_context_.clear();
  pending_action_.clear();
  Eigen::MatrixXd codes = vae_ ? vae_->Encode(images, n) : Eigen::MatrixXd::Zero(n, 1);
  for (int i = 0; i < n; ++i) {
    const Eigen::VectorXd ctx = codes.row(i).transpose();
    Eigen::VectorXd a;
    if (!agent_) {
      a = space_.SampleUniform(1, rng_).row(0).transpose();  // level 0
    } else if (history_.rounds() == 0) {
      a = NeutralAction();
    } else {
      a = agent_->Act(history_, {ctx, Eigen::VectorXd()}, rng_);
    }
    Apply(images + i * d, ctx, a);
    pending_context_.push_back(ctx);
    pending_action_.push_back(a);
  }
}

void GameDefense::Feedback(const oracle::QueryResult& r) {
  if (r.objective.size() != static_cast<Eigen::Index>(pending_action_.size()))
    throw std::invalid_argument("game defense: feedback for " + std::to_string(r.objective.size()) +
                                " queries, " + std::to_string(pending_action_.size()) +
                                " were transformed");
  for (size_t i = 0; i < pending_action_.size(); ++i) {
    Eigen::VectorXd joint(history_.joint_dim());
    joint << pending_context_[i], pending_action_[i];
    // A log-probability margin; bounded so one saturated score cannot dominate the GP.
    const double y = std::clamp(r.objective(static_cast<Eigen::Index>(i)), -50.0, 50.0);
    history_.Add(joint, Eigen::Vector2d(y, -y));
    actions_.push_back(pending_action_[i]);
    if (agent_) agent_->Observe(history_);
    // A bounded window: at 2W rounds keep the last W (the belief refactors them once, an
    // O(W^3) step every W rounds, so the cost per query stays O(W^2)).
    if (spec_.window > 0 && history_.rounds() >= 2 * spec_.window)
      history_.DropOldest(history_.rounds() - spec_.window);
  }
  pending_context_.clear();
  pending_action_.clear();
}

Eigen::MatrixXd GameDefense::Actions() const {
  Eigen::MatrixXd a(actions_.size(), space_.dim());
  for (size_t t = 0; t < actions_.size(); ++t) a.row(static_cast<Eigen::Index>(t)) = actions_[t];
  return a;
}

}  // namespace advbo::defenses

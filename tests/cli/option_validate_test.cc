// Every option struct's Validate() (Ceres' Options::IsValid habit): the defaults
// pass, and each value out of its documented range is refused with std::invalid_argument.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/bo_bos/bo_bos.h"
#include "algorithms/dp_fts_de/dp_fts_de.h"
#include "algorithms/fts/federated.h"
#include "algorithms/fts/federated_study.h"
#include "algorithms/fts/fts.h"
#include "algorithms/hpo/hpo_task.h"
#include "algorithms/hybrid_batch/hybrid_batch.h"
#include "algorithms/hyperband/hyperband.h"
#include "algorithms/macro_bo/macro_bo.h"
#include "algorithms/macro_bo/macro_study.h"
#include "algorithms/po_gp_ucb/po_gp_ucb.h"
#include "algorithms/rm_gp_ucb/rm_gp_ucb.h"
#include "algorithms/tuning/tuning.h"
#include "attacks/autozoom/autozoom.h"
#include "attacks/bayesopt/bayesopt.h"
#include "attacks/bos2/bos2.h"
#include "attacks/genattack/genattack.h"
#include "attacks/parsimonious/parsimonious.h"
#include "attacks/random/random_search.h"
#include "attacks/square/square.h"
#include "attacks/zoo/zoo.h"
#include "bo/acquisition_optimizer.h"
#include "bo/additive.h"
#include "bo/bo_loop.h"
#include "bo/hyperparameters.h"
#include "bo/online_learning.h"
#include "bo/optimal_stopping.h"
#include "defenses/game_defense.h"
#include "defenses/latent_game.h"
#include "defenses/stateful_detector.h"
#include "experiment/game_study.h"
#include "games/belief.h"
#include "games/game.h"
#include "games/level0.h"
#include "games/r2b2.h"
#include "oracle/classifier.h"
#include "serve/server.h"

namespace advbo {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// `base` (the defaults of T unless given) passes Validate(); each mutation in `bad` makes it
// throw invalid_argument.
template <class T>
void ExpectValidates(const char* name, const std::vector<std::function<void(T&)>>& bad,
                     const T& base = T{}) {
  EXPECT_NO_THROW(base.Validate()) << name << ": the defaults are refused";
  for (size_t i = 0; i < bad.size(); ++i) {
    T o = base;
    bad[i](o);
    EXPECT_THROW(o.Validate(), std::invalid_argument) << name << ": bad value #" << i;
  }
}

TEST(OptionValidate, BoCore) {
  ExpectValidates<bo::FitOptions>("FitOptions",
                                  {[](auto& o) { o.restarts = -1; },
                                   [](auto& o) { o.lengthscale_min = 2, o.lengthscale_max = 1; },
                                   [](auto& o) { o.noise_min = -1; }});
  ExpectValidates<bo::AcquisitionOptimizerOptions>(
      "AcquisitionOptimizerOptions",
      {[](auto& o) { o.num_candidates = 0; }, [](auto& o) { o.num_starts = -1; }});
  ExpectValidates<bo::AddGpUcbOptions>(
      "AddGpUcbOptions",
      {[](auto& o) { o.random_candidates = -1; }, [](auto& o) { o.vertex_fraction = 1.5; },
       [](auto& o) { o.local_scale = 0; }});
  ExpectValidates<bo::BosOptions>(
      "BosOptions", {[](auto& o) { o.num_paths = 0; }, [](auto& o) { o.cost = -1; },
                     [](auto& o) { o.k2 = 0; }, [](auto& o) { o.noise_variance = 0; }});
  ExpectValidates<bo::BoLoopOptions>(
      "BoLoopOptions", {[](auto& o) { o.budget = 0; }, [](auto& o) { o.refit_every = 0; },
                        [](auto& o) { o.fit.restarts = -1; },
                        [](auto& o) { o.acquisition_optimizer.num_candidates = 0; }});
  ExpectValidates<bo::GpMwOptions>(
      "GpMwOptions",
      {[](auto& o) { o.eta = 0; }, [](auto& o) { o.eta = kNan; }, [](auto& o) { o.eta = kInf; }});
}

TEST(OptionValidate, Attacks) {
  ExpectValidates<attacks::Bos2Options>(
      "Bos2Options", {[](auto& o) { o.i_0 = 1; }, [](auto& o) { o.init_sides.clear(); }});
  ExpectValidates<attacks::ParsimoniousOptions>("ParsimoniousOptions",
                                                {[](auto& o) { o.batch = 0; }});
  ExpectValidates<attacks::SquareOptions>("SquareOptions", {[](auto& o) { o.p_init = 0; }});
  ExpectValidates<attacks::RandomSearchOptions>("RandomSearchOptions",
                                                {[](auto& o) { o.batch = 0; }});
  ExpectValidates<attacks::AutoZoomOptions>("AutoZoomOptions", {[](auto& o) { o.directions = 0; }});
  ExpectValidates<attacks::GenAttackOptions>("GenAttackOptions",
                                             {[](auto& o) { o.population = 1; }});
  ExpectValidates<attacks::ZooOptions>("ZooOptions", {[](auto& o) { o.h = 0; }});
  ExpectValidates<attacks::BayesOptOptions>("BayesOptOptions", {[](auto& o) { o.groups = 0; }});
}

TEST(OptionValidate, DefensesAndGames) {
  ExpectValidates<defenses::BlacklightOptions>(
      "BlacklightOptions",
      {[](auto& o) { o.quantization = 0; }, [](auto& o) { o.threshold = o.hashes + 1; }});
  ExpectValidates<defenses::LatentGameOptions>("LatentGameOptions",
                                               {[](auto& o) { o.epsilon = -0.1; }});
  ExpectValidates<defenses::GameDefenseOptions>("GameDefenseOptions",
                                                {[](auto& o) { o.level = 2; }});
  ExpectValidates<games::GameOptions>(
      "GameOptions", {[](auto& o) { o.rounds = -1; }, [](auto& o) { o.payoff_noise = -1; }});
  ExpectValidates<games::BeliefOptions>(
      "BeliefOptions", {[](auto& o) { o.refit_every = -1; }, [](auto& o) { o.refit_until = -1; },
                        [](auto& o) { o.fit.restarts = -1; }});
  ExpectValidates<games::R2b2Options>(
      "R2b2Options", {[](auto& o) { o.level = -1; }, [](auto& o) { o.samples = 0; },
                      [](auto& o) { o.candidates = 0; },
                      [](auto& o) {
                        o.other_levels = {0, 2};
                      }});
  ExpectValidates<games::Level0Options>(
      "Level0Options",
      {[](auto& o) { o.rff_lengthscale = 0; }, [](auto& o) { o.candidates = 0; },
       [](auto& o) { o.gp_noise = kNan; }, [](auto& o) { o.belief.refit_every = -1; },
       [](auto& o) { o.gp_lengthscale = -1; }});
  experiment::GameStudyOptions study;
  EXPECT_THROW(study.Validate(), std::invalid_argument) << "unresolved: samples 0, level0 \"\"";
  study.ResolveDefaults();
  ExpectValidates<experiment::GameStudyOptions>(
      "GameStudyOptions",
      {[](auto& o) { o.game = "imagenet"; }, [](auto& o) { o.rounds = 0; },
       [](auto& o) { o.grid = 1; }, [](auto& o) { o.gp_noise = 0; }, [](auto& o) { o.eps = 1.5; },
       [](auto& o) { o.level0 = "oracle"; }, [](auto& o) { o.beta = "nonsense"; },
       [](auto& o) { o.type = "nonsense"; }, [](auto& o) { o.gp_lengthscale = 0; },
       [](auto& o) { o.gp_restarts = -1; }, [](auto& o) { o.gp_restarts = 101; },
       [](auto& o) { o.game = "synthetic", o.data = "x.bin"; },
       [](auto& o) { o.game = "synthetic", o.defender_strength = true; },
       [](auto& o) { o.game = "mnist", o.level0 = "gpmw", o.defender_strength = true; }},
      study);
  ExpectValidates<serve::ServeOptions>("ServeOptions", {[](auto& o) { o.max_batch = 0; }});
  ExpectValidates<oracle::HttpOptions>(
      "HttpOptions", {[](auto& o) { o.timeout_seconds = 0; }, [](auto& o) { o.retries = -1; },
                      [](auto& o) { o.retries = 101; }});
  ExpectValidates<oracle::ClassifierOptions>(
      "ClassifierOptions",
      {[](auto& o) { o.channels = -1; }, [](auto& o) { o.channels = 1, o.height = 28; },
       [](auto& o) { o.threads = -1; }, [](auto& o) { o.http.retries = -1; },
       [](auto& o) { o.probe = false; },
       [](auto& o) {  // no probe and output auto
         o.probe = false, o.channels = 1, o.height = 28, o.width = 28;
       },
       [](auto& o) {  // no probe and one class
         o.probe = false, o.channels = 1, o.height = 28, o.width = 28;
         o.output = oracle::OutputKind::kLogits, o.classes = 1;
       }});
  oracle::ClassifierOptions no_probe;
  no_probe.probe = false, no_probe.channels = 1, no_probe.height = 28, no_probe.width = 28;
  no_probe.output = oracle::OutputKind::kLogits;
  EXPECT_NO_THROW(no_probe.Validate()) << "no probe with shape and output kind is valid";
}

TEST(OptionValidate, Algorithms) {
  using namespace algorithms;
  ExpectValidates<HybridBatchOptions>("HybridBatchOptions", {[](auto& o) { o.batch_max = 0; }});
  ExpectValidates<RmGpUcbOptions>("RmGpUcbOptions", {[](auto& o) { o.delta = 1; }});
  ExpectValidates<FederatedOptions>("FederatedOptions", {[](auto& o) { o.features = 0; }});
  ExpectValidates<BoBosOptions>("BoBosOptions", {[](auto& o) { o.warmup_epochs = 50; }});
  ExpectValidates<MacroOptions>("MacroOptions", {[](auto& o) { o.horizon = 0; }});
  ExpectValidates<FtsOptions>("FtsOptions", {[](auto& o) { o.lengthscale = 0; }});
  ExpectValidates<HyperbandOptions>("HyperbandOptions", {[](auto& o) { o.eta = 1; }});
  ExpectValidates<ServerOptions>("ServerOptions", {[](auto& o) { o.q = 0; }});
  ExpectValidates<CuratorOptions>(
      "CuratorOptions",
      {[](auto& o) { o.epsilon = 0; }, [](auto& o) { o.delta = 1; }, [](auto& o) { o.r = 0; }});
  ExpectValidates<ModelerOptions>(
      "ModelerOptions", {[](auto& o) { o.delta_prime = 0; }, [](auto& o) { o.delta_prime = 1; }});
  ExpectValidates<FamilyOptions>("FamilyOptions",
                                 {[](auto& o) { o.agents = 0; }, [](auto& o) { o.domain = -1; },
                                  [](auto& o) { o.lengthscale = 0; }, [](auto& o) { o.gap = -0.1; },
                                  [](auto& o) { o.noise = kNan; }});
  ExpectValidates<MacroStudyOptions>("MacroStudyOptions", {[](auto& o) { o.realisations = 0; },
                                                           [](auto& o) { o.per_location = 0; },
                                                           [](auto& o) { o.planner.samples = 0; }});
  ExpectValidates<hpo::TaskOptions>(
      "TaskOptions", {[](auto& o) { o.offset = -1; }, [](auto& o) { o.examples = -1; },
                      [](auto& o) { o.transform = "blur"; }});
  ExpectValidates<TuneOptions>(
      "TuneOptions",
      {[](auto& o) { o.epoch_budget = 0; }, [](auto& o) { o.gamma = 0; },
       [](auto& o) { o.gamma = 1.5; }, [](auto& o) { o.kappa = 0.5; },
       [](auto& o) { o.bos_paths = 99; }, [](auto& o) { o.warmup = 1; }, [](auto& o) { o.eta = 1; },
       [](auto& o) { o.epochs = -1; }, [](auto& o) { o.task_offset = -1; }});
}

}  // namespace
}  // namespace advbo

#include "algorithms/macro_bo/macro_study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace advbo::algorithms {
namespace {

MeanSe MeanSeOf(const std::vector<double>& v) {
  MeanSe r;
  for (double x : v) r.mean += x;
  r.mean /= v.size();
  double s = 0;
  for (double x : v) s += (x - r.mean) * (x - r.mean);
  r.se = v.size() > 1 ? std::sqrt(s / (v.size() - 1) / v.size()) : 0.0;
  return r;
}

nlohmann::json StepRecord(int r, const MacroStep& s) {
  return {{"type", "step"},
          {"realisation", r},
          {"iteration", s.iteration},
          {"from", s.from},
          {"action", s.action},
          {"points", s.points},
          {"y", s.y},
          {"horizon", s.horizon},
          {"nodes", s.nodes},
          {"fallbacks", s.fallbacks},
          {"theta", s.theta},
          {"omega", s.omega},
          {"seconds", s.seconds}};
}

nlohmann::json EpisodeRecord(int r, uint64_t seed, const MacroField& field,
                             const MacroEpisode& ep) {
  return {{"type", "episode"},
          {"realisation", r},
          {"seed", seed},
          {"start", field.start},
          {"f_max", field.f.maxCoeff()},
          {"avg_normalized_output", ep.avg_normalized_output},
          {"simple_regret", ep.simple_regret},
          {"nodes", ep.nodes},
          {"seconds", ep.seconds},
          {"avg_output_curve", ep.avg_output_curve},
          {"regret_curve", ep.regret_curve}};
}

}  // namespace

void MacroStudyOptions::Validate() const {
  planner.Validate();
  if (per_location < 1) throw std::invalid_argument("macro-actions per location must be >= 1");
  if (realisations < 1) throw std::invalid_argument("--realisations must be >= 1");
}

PreparedMacroStudy PrepareMacroStudy(const MacroStudyOptions& o) {
  o.Validate();
  PreparedMacroStudy p{o, MakeField(o.field, o.seed, o.per_location), {}, ""};
  const MacroDomain& dom = p.first.domain;
  if (o.planner.algo == MacroAlgo::kEMacro) {
    size_t most = 0;
    for (const auto& acts : dom.actions) most = std::max(most, acts.size());
    const double nodes =
        MacroTreeNodes(static_cast<int>(most), o.planner.samples, o.planner.horizon);
    if (nodes > 1e10) {
      char b[320];
      std::snprintf(b, sizeof b,
                    "up to %.3g nodes per planning call (A = %zu, N = %d, H = %d; about 20 ns "
                    "each); consider --algo anytime, a smaller --horizon or fewer --samples",
                    nodes, most, o.planner.samples, o.planner.horizon);
      p.warning = b;
    }
  }
  const FieldPrior& prior = p.first.prior;
  p.config = {{"type", "config"},
              {"algo", o.algo},
              {"field", o.field},
              {"horizon", o.planner.horizon},
              {"samples", o.planner.samples},
              {"beta", o.planner.beta},
              {"epsilon", o.planner.epsilon},
              {"anytime_iterations", o.planner.anytime_iterations},
              {"actions_per_location", o.per_location},
              {"realisations", o.realisations},
              {"seed", o.seed},
              {"kappa", dom.kappa},
              {"locations", dom.locations.rows()},
              {"budget", p.first.budget},
              {"prior",
               {{"mean", prior.mean},
                {"lengthscale1", prior.lengthscale1},
                {"lengthscale2", prior.lengthscale2},
                {"signal_variance", prior.signal_variance},
                {"noise_variance", prior.noise_variance}}}};
  return p;
}

MacroStudyResult RunMacroStudy(const PreparedMacroStudy& p, bo::JsonlTrace* trace,
                               const std::function<void(int, double, double)>& progress) {
  const MacroStudyOptions& o = p.options;
  std::vector<double> outputs, regrets, nodes, seconds;
  MacroStudyResult res;
  for (int r = 0; r < o.realisations; ++r) {
    const uint64_t seed = o.seed + r;
    const MacroField field = r == 0 ? p.first : MakeField(o.field, seed, o.per_location);
    const MacroEpisode ep = RunMacroEpisode(field, o.planner, seed, [&](const MacroStep& s) {
      res.fallbacks += s.fallbacks;
      if (trace) trace->Write(StepRecord(r, s));
    });
    outputs.push_back(ep.avg_normalized_output);
    regrets.push_back(ep.simple_regret);
    nodes.push_back(static_cast<double>(ep.nodes));
    seconds.push_back(ep.seconds);
    if (trace) trace->Write(EpisodeRecord(r, seed, field, ep));
    if (progress) progress(r + 1, MeanSeOf(outputs).mean, MeanSeOf(regrets).mean);
  }
  res.output = MeanSeOf(outputs);
  res.regret = MeanSeOf(regrets);
  res.nodes = MeanSeOf(nodes).mean;
  res.seconds = MeanSeOf(seconds).mean;
  if (trace)
    trace->Write({{"type", "summary"},
                  {"realisations", o.realisations},
                  {"avg_normalized_output", {{"mean", res.output.mean}, {"se", res.output.se}}},
                  {"simple_regret", {{"mean", res.regret.mean}, {"se", res.regret.se}}},
                  {"nodes_per_episode", res.nodes},
                  {"seconds_per_episode", res.seconds},
                  {"fallbacks", res.fallbacks}});
  return res;
}

}  // namespace advbo::algorithms

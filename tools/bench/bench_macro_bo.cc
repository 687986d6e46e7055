// Reproduction driver of the epsilon-Macro-BO studies (Kharkovskii 2020 thesis, Sec. 4.4 and
// App. B.2) for tools/bench/bench_macro_bo.sh. Every method runs on the same realisations (field
// and observation-noise seeds are the realisation's), so differences are paired.
//
// A method is ALGO[:H=..][:beta=..][:N=..][:iters=..][:eps=..], e.g. emacro:H=4,
// emacro:H=2:beta=10, nonmyopic-ucb:H=4, gp-bucb, anytime:H=3:N=100:iters=300.
// One JSON line per (field, method, realisation): the episode's average normalized output,
// simple regret, explored nodes, planning seconds, fallbacks and both curves.
//
// Usage: bench_macro_bo --fields plankton --methods a,b --runs 200 --seed 0 --out runs.jsonl
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/macro_bo/field.h"
#include "algorithms/macro_bo/macro_bo.h"
#include "bench_util.h"

namespace {
namespace alg = advbo::algorithms;

alg::MacroOptions ParseMethod(const std::string& spec) {
  const auto parts = advbo::tools::SplitList([&] {
    std::string s = spec;
    for (char& c : s)
      if (c == ':') c = ',';
    return s;
  }());
  if (parts.empty()) throw std::invalid_argument("empty method");
  alg::MacroOptions o;
  o.algo = alg::ParseMacroAlgo(parts[0]);
  o.horizon = 1;
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos) throw std::invalid_argument("bad method setting " + parts[i]);
    const std::string k = parts[i].substr(0, eq);
    const double v = std::stod(parts[i].substr(eq + 1));
    if (k == "H")
      o.horizon = static_cast<int>(v);
    else if (k == "beta")
      o.beta = v;
    else if (k == "N")
      o.samples = static_cast<int>(v);
    else if (k == "iters")
      o.anytime_iterations = static_cast<int>(v);
    else if (k == "eps")
      o.epsilon = v;
    else
      throw std::invalid_argument("unknown method setting " + k);
  }
  alg::ValidateMacroOptions(o);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("epsilon-Macro-BO studies (Kharkovskii 2020 thesis, Sec. 4.4)");
  int runs = 100;
  uint64_t seed = 0;
  std::string out, fields = "plankton", methods = "emacro:H=1,emacro:H=2";
  app.add_option("--runs", runs, "realisations per field and method")->check(CLI::Range(1, 100000));
  app.add_option("--seed", seed, "base seed (realisation r uses seed + r)");
  app.add_option("--fields", fields, "comma-separated: plankton road corridor");
  app.add_option("--methods", methods, "comma-separated method specs (see the header)");
  app.add_option("--out", out, "JSONL output (OUT.partial until done)")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const auto method_list = advbo::tools::SplitList(methods);
    for (const auto& m : method_list) ParseMethod(m);  // fail before any work
    advbo::tools::RunGridToJsonl(
        advbo::tools::SplitList(fields), method_list, runs, out,
        [&](const std::string& field, const std::string& method, int r) {
          const alg::MacroOptions o = ParseMethod(method);
          const uint64_t s = seed + static_cast<uint64_t>(r);
          const alg::MacroField f = alg::MakeField(field, s);
          int fallbacks = 0;
          const alg::MacroEpisode ep = alg::RunMacroEpisode(
              f, o, s, [&](const alg::MacroStep& st) { fallbacks += st.fallbacks; });
          return nlohmann::json{{"field", field},
                                {"method", method},
                                {"algo", alg::MacroAlgoName(o.algo)},
                                {"horizon", o.horizon},
                                {"beta", o.beta},
                                {"samples", o.samples},
                                {"anytime_iterations", o.anytime_iterations},
                                {"run", r},
                                {"seed", s},
                                {"signal_variance", f.prior.signal_variance},
                                {"avg_normalized_output", ep.avg_normalized_output},
                                {"simple_regret", ep.simple_regret},
                                {"nodes", ep.nodes},
                                {"seconds", ep.seconds},
                                {"fallbacks", fallbacks},
                                {"avg_output_curve", ep.avg_output_curve},
                                {"regret_curve", ep.regret_curve}};
        });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_macro_bo: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

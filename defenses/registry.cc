#include "defenses/registry.h"

#include "defenses/defense.h"
#include "defenses/game_defense.h"

namespace advbo::defenses {

const std::vector<DefenseEntry>& DefenseRegistry() {
  using K = DefenseKind;
  static const std::vector<DefenseEntry> registry = {
      {"jpeg", K::kInput, "jpeg:quality=75",
       "JPEG compression, quality in [1, 100] (Dziugaite et al. 2016; Guo et al., ICLR 2018)",
       false},
      {"bits", K::kInput, "bits:depth=4",
       "bit-depth reduction to [1, 8] bits (feature squeezing, Xu et al., NDSS 2018)", false},
      {"median", K::kInput, "median:size=3", "3 x 3 or 5 x 5 median filter (Xu et al., NDSS 2018)",
       false},
      {"blur", K::kInput, "blur:sigma=1", "Gaussian blur, sigma > 0 pixels", false},
      {"noise", K::kInput, "noise:sigma=0.02",
       "Gaussian noise on every query (random noise defense, Qin et al., NeurIPS 2021)", true},
      {"resize", K::kInput, "resize:ratio=0.1", "random resize and pad (Xie et al., ICLR 2018)",
       true},
      {"round", K::kOutput, "round:decimals=2",
       "probabilities rounded to [1, 8] decimals (ART's output defense)", false},
      {"topk", K::kOutput, "topk:k=1", "only the k largest probabilities reported exactly", false},
      {"aaa", K::kOutput, "aaa:interval=4,reverse=1,temperature=1",
       "AAA-linear: the top-2 margin's trend reversed inside each interval (Chen et al., "
       "NeurIPS 2022)",
       false},
      {"blacklight", K::kDetector,
       "blacklight:quantization=50,window=20,hashes=50,threshold=25,action=reject",
       "stateful detector of near-duplicate queries, refuses or flags them (Li et al., USENIX "
       "Security 2022)",
       false},
      {"r2b2", K::kGame, "r2b2:jpeg+noise",
       "R2-B2 level-1 defender, one round per query: VAE-latent moves (r2b2:latent) or tuned "
       "input stages (Dai 2021 thesis, Sec. 8.4.2.2)",
       true},
      {"random", K::kGame, "random:jpeg+noise",
       "level-0 defender: uniformly random moves (Dai 2021 thesis, Table 8.1)", true},
  };
  return registry;
}

std::string AdaptiveAttackOf(const DefenseEntry& entry, const std::string& base) {
  return entry.kind == DefenseKind::kGame ? EotWrapped(base)
                                          : ParseDefense(entry.example).AdaptiveAttack(base);
}

namespace {

const char* KindText(DefenseKind k) {
  switch (k) {
    case DefenseKind::kInput:
      return "before the model";
    case DefenseKind::kOutput:
      return "after the model";
    case DefenseKind::kDetector:
      return "watches the queries";
    case DefenseKind::kGame:
      return "a repeated game, one round per query";
  }
  return "";
}

}  // namespace

std::string DefenseHelp() {
  std::string help =
      "defense in front of the model (default none); compose with +, e.g. "
      "jpeg:quality=75+aaa.\n";
  for (DefenseKind k :
       {DefenseKind::kInput, DefenseKind::kOutput, DefenseKind::kDetector, DefenseKind::kGame}) {
    std::string names;
    for (const auto& e : DefenseRegistry())
      if (e.kind == k) names += (names.empty() ? "" : ", ") + e.example;
    help += std::string(KindText(k)) + ": " + names + ";\n";
  }
  return help +
         "evaluate pairs each with the attack that knows it: eot:k=10/ for randomised ones "
         "(noise, resize, game defenders), aaa-adaptive for aaa, oars for blacklight";
}

std::string DefenseTable() {
  std::string t =
      "| defense | where | what (source) | adaptive attack around `square` |\n"
      "| --- | --- | --- | --- |\n";
  for (const auto& e : DefenseRegistry())
    t += "| `" + e.example + "` | " + KindText(e.kind) + " | " + e.summary + " | `" +
         AdaptiveAttackOf(e, "square") + "` |\n";
  return t;
}

}  // namespace advbo::defenses

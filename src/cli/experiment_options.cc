#include "cli/experiment_options.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "cli/option_table.h"
#include "cli/validators.h"
#include "data/datasets.h"
#include "defenses/registry.h"
#include "experiment/runner.h"

namespace advbo::cli {

// The options of the command, in --help order (cli/option_table.h).
const OptionRow<ExperimentArgs> kExperimentOptions[] = {
    Value("--dataset", &ExperimentArgs::spec, &experiment::ExperimentSpec::dataset,
          "shipped dataset: mnist | cifar10", CLI::IsMember({"mnist", "cifar10"}), "mnist"),
    Value("--data", &ExperimentArgs::spec, &experiment::ExperimentSpec::data,
          "your own data instead: MNIST IDX images file (labels found beside it), "
          "CIFAR-10 .bin batch, or an image file/folder (folder/<label>/*.png)"),
    Custom<ExperimentArgs>([](CLI::App* cmd, ExperimentArgs* a) {
      return cmd
          ->add_option("--classes", a->spec.classes,
                       "with --data naming its classes (folder/<class name>/*.png): the model's "
                       "class order by name, e.g. zero,one,two (default: the names sorted, as "
                       "torchvision's ImageFolder does; the run prints the mapping)")
          ->delimiter(',');
    }),
    Value("--format", &ExperimentArgs::spec, &experiment::ExperimentSpec::format,
          "format of --data: auto | mnist | cifar10 | images", std::nullopt, "auto"),
    Value("--model", &ExperimentArgs::spec, &experiment::ExperimentSpec::model,
          "TorchScript classifier (float32 NCHW in [0,1] -> [N, classes]) or a served "
          "model's URL (http://127.0.0.1:PORT/predict, see advbo serve); default: "
          "the shipped models/<dataset>_cw.pt"),
    Value("--normalize", &ExperimentArgs::spec, &experiment::ExperimentSpec::normalize,
          "the model expects normalised input: MEAN[,MEAN,MEAN]:STD[,STD,STD] "
          "(e.g. 0.1307:0.3081); applied inside the model, pixels stay in [0,1]"),
    Value("--http-timeout", &ExperimentArgs::spec, &experiment::ExperimentSpec::http_timeout,
          "served model: seconds per request before it is retried",
          NumberIn(0, experiment::kMaxHttpTimeout, true), 30),
    Value("--http-retries", &ExperimentArgs::spec, &experiment::ExperimentSpec::http_retries,
          "served model: retries after a transport error, 5xx or 429 (a failed "
          "request is never a query)",
          IntInRange(0, 100), 3),
    Value("--session", &ExperimentArgs::spec, &experiment::ExperimentSpec::session,
          "served model: name this run's defense sessions (default: a new random name "
          "per run, so no run meets another's detector memory or defender state; a "
          "named session is shared by every run that names it)"),
    Value("--output", &ExperimentArgs::spec, &experiment::ExperimentSpec::output,
          "model output: auto | logits | probs", std::nullopt, "auto"),
    Flag("--targeted", &ExperimentArgs::targeted,
         "targeted attack on every other class (the CLI's default, the BOS^2 thesis' protocol; "
         "the Python API's default is untargeted)"),
    Value("--target", &ExperimentArgs::spec, &experiment::ExperimentSpec::target,
          "targeted attack on this one class", IntAtLeast(0)),
    Flag("--untargeted", &ExperimentArgs::spec, &experiment::ExperimentSpec::untargeted,
         "untargeted attack (argmax != true class)"),
    Custom<ExperimentArgs>([](CLI::App* cmd, ExperimentArgs* a) {
      return cmd
          ->add_option(
              "--eps", a->spec.eps,
              "radius of the ball in pixel units, a number or a fraction (8/255): L_inf in "
              "(0,1] (default the field's standard: 0.3 MNIST, 8/255 CIFAR-10; with 8-bit queries "
              "the largest multiple of 1/255 <= eps is enforced, printed and recorded as "
              "epsilon_effective); with --norm l2 an L2 radius in (0, 886.81] (default 2 MNIST, "
              "0.5 CIFAR-10); a paper's protocol by its own value (the BOS^2 thesis' CIFAR-10: "
              "0.05)")
          ->transform(BallRadius(oracle::kMaxL2Radius));
    }),
    Value("--norm", &ExperimentArgs::spec, &experiment::ExperimentSpec::norm,
          "the ball's norm: linf (max pixel change) | l2 (Euclidean over all "
          "pixels); l2 attacks: square-l2, simba-dct",
          CLI::IsMember({"linf", "l2"}), "linf"),
    Value("--feedback", &ExperimentArgs::spec, &experiment::ExperimentSpec::feedback,
          "what the attack is told of each query: scores (the model's probabilities; "
          "score-based attacks) | label (only the top-1 class; the hard-label attacks "
          "rays, hsja, sign-opt, geoda, ta, gta, cgba, cgba-h, bo-hl, whose queries may "
          "leave the ball: a query "
          "succeeds when adversarial and inside it)",
          CLI::IsMember({"scores", "label"}), "scores"),
    Flag("!--no-bad-queries", &ExperimentArgs::spec, &experiment::ExperimentSpec::bad_queries,
         "do not count bad queries (by default a Blacklight detector at the paper's "
         "setting watches every query beside the model, changing nothing; records carry "
         "bad_queries, the queries it would flag)"),
    Value("--goal", &ExperimentArgs::spec, &experiment::ExperimentSpec::goal,
          "hard-label runs: success (stop at the first adversarial query inside the "
          "ball) | min-distance (spend the whole budget shrinking the closest "
          "adversarial query; records and summaries give its distance at 100, 250, 500, "
          "1000, 2500, 5000 and 10000 queries; needs --feedback label)",
          CLI::IsMember({"success", "min-distance"}), "success"),
    Value("--start-images", &ExperimentArgs::spec, &experiment::ExperimentSpec::start_images,
          "targeted hard-label runs: a folder of start images, one sub-folder per class "
          "named by its index (0/, 1/, ...); each target starts from the first image of "
          "its class there that the model classifies as that class (default: advbo "
          "picks one from the attacked data; records give start_image_index)"),
    // The default is the caller's spec's (experiment::DefaultBudget: 900 per instance, an
    // evaluation's 10,000 per image).
    Custom<ExperimentArgs>([](CLI::App* cmd, ExperimentArgs* a) {
      return cmd->add_option("--budget", a->spec.budget, "maximum queries per instance (T)")
          ->check(IntInRange(1, experiment::kMaxBudget))
          ->default_val(a->spec.budget);
    }),
    Value("--num-images,-n", &ExperimentArgs::spec, &experiment::ExperimentSpec::num_images,
          "attack the first N correctly classified images (default 10; with --data of an "
          "image folder or file: all of it)",
          IntInRange(1, 100000000)),
    Custom<ExperimentArgs>([](CLI::App* cmd, ExperimentArgs* a) {
      return cmd
          ->add_option("--indices", a->spec.indices,
                       "attack these image indices instead (comma list)")
          ->delimiter(',')
          ->check(IntAtLeast(0));
    }),
    Value("--seed", &ExperimentArgs::spec, &experiment::ExperimentSpec::seed,
          "run seed; instance k uses a seed derived from it", UnsignedInt(), 0),
    Value("--threads", &ExperimentArgs::spec, &experiment::ExperimentSpec::threads,
          "LibTorch intra-op threads per forward pass (0 = LibTorch's default with one "
          "worker group, 1 with several: see --workers; at most 256)",
          IntInRange(0, experiment::kMaxThreads), 0),
    Custom<ExperimentArgs>([](CLI::App* cmd, ExperimentArgs* a) {
      return cmd->add_option("--defense", a->spec.defense, defenses::DefenseHelp())
          ->default_val("none");
    }),
    Value("--defender-vae", &ExperimentArgs::spec, &experiment::ExperimentSpec::defender_vae,
          "VAE of a game defender (default models/<dataset>_vae.pt)"),
    Custom<ExperimentArgs>([](CLI::App* cmd, ExperimentArgs* a) {
      return cmd
          ->add_option(
              "--defender-eps", a->spec.defender_eps,
              "latent game defender: L_inf clip of its image around the attacker's (default "
              "the attack's eps)")
          ->transform(RadiusIn(1));
    }),
    Value("--clean-images", &ExperimentArgs::spec, &experiment::ExperimentSpec::clean_images,
          "images for the defended model's clean accuracy", IntInRange(0, 100000000), 1000),
    Value("--pixels", &ExperimentArgs::spec, &experiment::ExperimentSpec::pixels,
          "query space: 8bit = every query rounded onto the 1/255 grid inside the ball "
          "(a success is an image you can save as PNG; data not on the grid fall back to "
          "float with a note) | float = any float32 pixel (the papers' setting)",
          CLI::IsMember({"8bit", "float"}), "8bit"),
    Value("--model-graph", &ExperimentArgs::spec, &experiment::ExperimentSpec::model_graph,
          "TorchScript inference graph: frozen = torch.jit.freeze + "
          "optimize_for_inference (BN folded; logits within ~1e-6 of the plain module, "
          "1.6-1.8x faster per image on the shipped models; a module that cannot be "
          "frozen runs plain, with a note) | plain = the module as loaded (bit for bit "
          "what advbo scored before this option existed)",
          CLI::IsMember({"frozen", "plain"}), "frozen"),
    Value("--lockstep", &ExperimentArgs::spec, &experiment::ExperimentSpec::lockstep,
          "instances in lockstep: B jobs run at once and every round of their model "
          "calls is scored as one batch of B images (Square on the shipped CIFAR-10 "
          "model: 1.37x faster with both cores). 0 = auto: B = 8 (or the largest of 1, "
          "2, 4 <= instances x attacks) for a TorchScript model taking 3x32x32 values or "
          "more; 1 for MNIST-size models (batching does not pay there) and served "
          "ones; 1 = one job at a time. Scores depend on B in the last float bits only "
          "(records carry `lockstep`; resume keeps B), never on thread timing",
          IntInRange(0, 64), 0),
    Value("--workers", &ExperimentArgs::spec, &experiment::ExperimentSpec::workers,
          "worker groups: W groups of --lockstep lanes, group g taking jobs g, g+W, ... "
          "(as shards do), each scoring its own batches on its own core at one LibTorch "
          "thread (unless --threads is given), so one group's forward pass runs while "
          "another's lanes do their own work (2 groups vs 1 on 2 cores, same records: "
          "Square 1.33x on CIFAR-10, 1.10x on MNIST; BOS^2 1.45x on MNIST). 0 = auto: "
          "the machine's cores, at most the jobs (1 for a served model); 1 = one group "
          "using LibTorch's intra-op threads. Records carry `workers`; an image's "
          "scores depend on --lockstep, not on W",
          IntInRange(0, 64), 0),
    Flag("--no-setup-queries", &ExperimentArgs::no_setup_queries,
         "the model scores nothing but the attacks' counted queries: no shape/output "
         "probe (needs --output logits|probs), no check that images are correctly "
         "classified (labels are trusted), no clean accuracy behind a defense, no "
         "re-query of the saved image (its answer is the attack's own query of it). "
         "Default: these setup queries are made and listed in each record's "
         "setup_queries and quantized_queries"),
    Flag("--rescale-compat", &ExperimentArgs::spec, &experiment::ExperimentSpec::rescale_compat,
         "reproduce the BayesOpt reference code's (x+delta+eps)/(1+2eps) rescaling instead "
         "of clipping: a LOOSER threat model (L_inf up to 2eps/(1+2eps)); for comparisons"),
};

void AddExperimentOptions(CLI::App* cmd, ExperimentArgs* a) {
  AddOptionTable(cmd, a, kExperimentOptions);
}

experiment::ExperimentSpec SpecOf(const ExperimentArgs& a, std::vector<std::string> attacks) {
  if (int(a.targeted) + int(a.spec.untargeted) + int(a.spec.target.has_value()) > 1)
    throw std::invalid_argument("choose one of --targeted, --target K, --untargeted");
  // The shipped datasets' radii (0.3 MNIST, 8/255 CIFAR-10) are the field's settings for
  // those datasets, not a property of someone else's images: with --data it must be chosen.
  if (!a.spec.data.empty() && !a.spec.eps)
    throw std::invalid_argument(
        "--eps is required with --data (the L_inf radius in pixel units, (0, 1]; the shipped "
        "datasets' standard radii are 0.3 for MNIST and 8/255 = 0.031 for CIFAR-10)");
  experiment::ExperimentSpec s = a.spec;
  s.attacks = std::move(attacks);
  s.setup_queries = !a.no_setup_queries;
  return s;
}

void PrintDataNotes(const char* command, const experiment::Experiment& ex) {
  const auto& images = ex.images();
  if (!ex.spec().data.empty() && !images.class_names.empty())
    std::fprintf(stderr, "%s: classes %s: %s\n", command,
                 ex.spec().classes.empty() ? "(class names sorted, as torchvision's ImageFolder; "
                                             "--classes gives another order)"
                                           : "(--classes)",
                 data::ClassMapping(images).c_str());
  const auto& sel = ex.selection();
  const size_t looked = sel.chosen.size() + sel.skipped.size();
  if (!ex.spec().data.empty() && ex.spec().indices.empty() && looked < images.size())
    std::fprintf(stderr,
                 "%s: attacking the first %zu correctly classified of the %zu images "
                 "(-n %d; -n %zu for all)\n",
                 command, sel.chosen.size(), images.size(), ex.spec().num_images.value_or(0),
                 images.size());
}

void PrintQueryNotes(const char* command, const experiment::Experiment& ex) {
  for (const std::string& note : {ex.pixels_note(), ex.model().graph_note()})
    if (!note.empty()) std::fprintf(stderr, "%s: note: %s\n", command, note.c_str());
}

void PrintModelNotes(const char* command, const experiment::Experiment& ex) {
  if (const long zeros = ex.model().zero_probability_rows(); zeros > 0)
    std::fprintf(stderr,
                 "%s: note: %ld of the model's answers held an exact-zero probability; its log "
                 "is clipped at log(1e-300), so the attacks' losses saturate there (a model that "
                 "returns logits avoids this)\n",
                 command, zeros);
}

void PrintLockstepStats(const char* command, const experiment::Experiment& ex) {
  const oracle::LockstepStats st = ex.lockstep_stats();
  if ((ex.lockstep() <= 1 && ex.workers() <= 1) || st.forwards == 0) return;
  const double slots = static_cast<double>(st.forwards) * ex.lockstep();
  std::fprintf(stderr,
               "%s: lockstep %d x %d worker group(s): %ld rounds, %.1f images per forward pass "
               "of %d (%.0f %% padding), model forward %.1f s%s = %.3f ms per image\n",
               command, ex.lockstep(), ex.workers(), st.rounds,
               st.rows / static_cast<double>(st.forwards), ex.lockstep(),
               100.0 * st.padded_rows / slots, st.forward_seconds,
               // Groups' forward passes overlap: their seconds add up to more than the wall.
               ex.workers() > 1 ? " (summed over the groups, which run side by side)" : "",
               st.rows > 0 ? 1000.0 * st.forward_seconds / st.rows : 0.0);
}

}  // namespace advbo::cli

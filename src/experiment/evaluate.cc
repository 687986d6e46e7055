#include "experiment/evaluate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "experiment/runner.h"

namespace advbo::experiment {

bool RecordBreaksImage(const nlohmann::json& r) {
  if (!r.value("success", false)) return false;
  const auto q = r.find("quantized_success");
  if (q == r.end() || q->is_null()) return true;
  return q->get<bool>();
}

std::vector<ImageVerdict> WorstCaseVerdicts(const std::vector<int>& images,
                                            const std::vector<int>& misclassified,
                                            const std::vector<nlohmann::json>& records,
                                            const std::vector<std::string>& order) {
  const std::set<int> wrong(misclassified.begin(), misclassified.end());
  std::map<std::pair<int, std::string>, const nlohmann::json*> by_key;
  for (const auto& r : records)
    by_key[{r.at("image_index").get<int>(), r.at("attack").get<std::string>()}] = &r;
  std::vector<ImageVerdict> out;
  for (int i : images) {
    ImageVerdict v;
    v.image_index = i;
    v.clean_correct = !wrong.count(i);
    if (v.clean_correct) {
      v.robust = true;
      for (const auto& name : order) {
        const auto it = by_key.find({i, name});
        if (it == by_key.end() || !it->second->contains("success") ||
            !it->second->at("success").is_boolean()) {
          v.robust = false;
          v.evaluated = false;
          v.missing = name;
          break;
        }
        ++v.attacks_run;
        const long used = it->second->value("queries_used", it->second->value("queries", 0L));
        v.queries += used;
        if (RecordBreaksImage(*it->second)) {
          v.robust = false;
          v.broken_by = name;
          v.break_query = v.queries - used + it->second->value("queries", 0L);
          break;
        }
      }
    }
    out.push_back(v);
  }
  return out;
}

std::string AdaptiveWrapperName(const std::string& base,
                                const std::function<std::string(const std::string&)>& adaptive) {
  const std::string wrapped = adaptive(base);
  if (wrapped == base) return "";
  return wrapped.substr(0, wrapped.find_first_of(":/"));
}

std::vector<std::string> AdaptiveEnsemble(
    const std::vector<std::string>& members,
    const std::function<std::string(const std::string&)>& adaptive) {
  if (members.empty()) return members;
  const std::string wrapper = AdaptiveWrapperName(members.front(), adaptive);
  if (wrapper.empty()) return members;
  std::vector<std::string> out;
  for (const auto& m : members) {
    // Already wrapped: the wrapper's name as a spec component ("aaa-adaptive:..." or ".../")
    const bool wrapped = m.rfind(wrapper + ":", 0) == 0 || m.rfind(wrapper + "/", 0) == 0 ||
                         m.find("/" + wrapper + ":") != std::string::npos ||
                         m.find("/" + wrapper + "/") != std::string::npos;
    const std::string w = wrapped ? m : adaptive(m);
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

void AttachReference(std::vector<ImageVerdict>* verdicts,
                     const std::vector<nlohmann::json>& reference_records) {
  std::map<int, const nlohmann::json*> by_image;
  for (const auto& r : reference_records) by_image[r.at("image_index").get<int>()] = &r;
  for (auto& v : *verdicts) {
    if (!v.clean_correct) {
      v.reference_robust = false;
      continue;
    }
    const auto it = by_image.find(v.image_index);
    if (it == by_image.end()) continue;
    v.reference_robust = it->second->at("reference_robust").get<bool>();
    const auto& by = it->second->at("reference_broken_by");
    v.reference_broken_by = by.is_string() ? by.get<std::string>() : "";
  }
}

std::pair<double, double> WilsonInterval(long k, long n, double z) {
  if (n <= 0) return {0.0, 0.0};
  const double p = static_cast<double>(k) / n, z2 = z * z;
  const double centre = (p + z2 / (2.0 * n)) / (1 + z2 / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / (1 + z2 / n);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

nlohmann::json SummarizeVerdicts(const std::vector<ImageVerdict>& verdicts,
                                 const std::vector<std::string>& order) {
  const long n = static_cast<long>(verdicts.size());
  long correct = 0, robust = 0, not_evaluated = 0;
  long ref_seen = 0, ref_robust = 0, ref_missing = 0, combined = 0, bb_only = 0, ref_only = 0;
  nlohmann::json broken = nlohmann::json::object();
  for (const auto& name : order) broken[name] = 0;
  std::vector<double> queries;
  for (const auto& v : verdicts) {
    correct += v.clean_correct;
    robust += v.robust;
    not_evaluated += !v.evaluated;
    if (v.reference_robust) {
      ++ref_seen;
      ref_robust += *v.reference_robust;
      combined += v.robust && *v.reference_robust;
      bb_only += v.robust && !*v.reference_robust;
      ref_only += !v.robust && v.evaluated && *v.reference_robust;
    } else {
      ++ref_missing;
    }
    if (!v.broken_by.empty()) broken[v.broken_by] = broken[v.broken_by].get<long>() + 1;
    if (v.clean_correct) queries.push_back(static_cast<double>(v.queries));
  }
  const auto [lo, hi] = WilsonInterval(robust, n);
  double mean = NAN, median = NAN, max = NAN;
  if (!queries.empty()) {
    max = *std::max_element(queries.begin(), queries.end());
    mean = 0;
    for (double q : queries) mean += q;
    mean /= static_cast<double>(queries.size());
    std::sort(queries.begin(), queries.end());
    const size_t m = queries.size();
    median = m % 2 ? queries[m / 2] : 0.5 * (queries[m / 2 - 1] + queries[m / 2]);
  }
  nlohmann::json out = {{"images", n},
                        {"clean_correct", correct},
                        {"clean_accuracy", n ? static_cast<double>(correct) / n : NAN},
                        {"robust", robust},
                        {"robust_accuracy", n ? static_cast<double>(robust) / n : NAN},
                        {"robust_accuracy_ci95", {lo, hi}},
                        {"not_evaluated", not_evaluated},
                        {"broken_by", broken},
                        {"queries_mean", mean},
                        {"queries_median", median},
                        {"queries_max", max}};
  if (ref_seen > 0) {
    out["reference_robust"] = ref_robust;
    out["reference_robust_accuracy"] = static_cast<double>(ref_robust) / n;
    out["reference_not_evaluated"] = ref_missing;
    out["combined_robust"] = combined;
    out["combined_robust_accuracy"] = static_cast<double>(combined) / n;
    out["robust_blackbox_only"] = bb_only;
    out["robust_reference_only"] = ref_only;
  }
  return out;
}

long EnsembleShare(long budget, long used, const std::vector<double>& shares, size_t j) {
  double rest = 0;
  for (size_t k = j; k < shares.size(); ++k) rest += shares[k];
  const long left = std::max<long>(budget - used, 0);
  const long share =
      j + 1 == shares.size()
          ? left
          : static_cast<long>(std::floor(static_cast<double>(left) * shares[j] / rest));
  return std::max<long>(share, 1);
}

long RunEnsemble(const Experiment& ex, const std::set<int>& images,
                 const std::map<std::tuple<std::string, int, int>, EnsembleRun>& done,
                 long image_budget, const std::vector<double>& shares, const EnsembleHooks& hooks) {
  if (shares.size() != ex.num_attacks())
    throw std::invalid_argument("the budget split needs one share per ensemble attack");
  long finished = 0, robust = 0;
  std::mutex mu;  // lanes report progress from their own threads
  auto progress = [&](const std::string& status, bool image_finished) {  // caller holds mu
    if (hooks.progress) hooks.progress(finished, status, image_finished);
  };
  std::vector<size_t> todo;
  for (size_t i = 0; i < ex.instances().size(); ++i)
    if (images.count(ex.instances()[i].index)) todo.push_back(i);
  ex.RunJobs(todo.size(), [&](size_t k) -> oracle::Lockstep::Commit {
    const size_t i = todo[k];
    const Instance& inst = ex.instances()[i];
    bool broken = false;
    long used = 0;
    auto results = std::make_shared<std::vector<JobResult>>();
    for (size_t j = 0; j < ex.num_attacks() && !broken; ++j) {
      const std::string name = ex.attack(j).name();
      if (const auto it = done.find({name, inst.index, inst.target}); it != done.end()) {
        broken = it->second.broke;
        used += it->second.queries_used;
        continue;
      }
      JobHooks job;
      job.budget = EnsembleShare(image_budget, used, shares, j);
      JobResult r = ex.Run(
          i, j,
          [&](long q, double) {
            std::lock_guard<std::mutex> lock(mu);
            progress(name + " image " + std::to_string(inst.index) + " q=" + std::to_string(q),
                     false);
          },
          job);
      broken = RecordBreaksImage(r.record);
      used += r.record.value("queries_used", r.record.value("queries", 0L));
      results->push_back(std::move(r));
    }
    return [&, results, broken] {  // in image order
      for (const JobResult& r : *results) {
        if (hooks.on_record) hooks.on_record(r.record);
        if (hooks.on_job) hooks.on_job(r);
      }
      std::lock_guard<std::mutex> lock(mu);
      robust += !broken;
      ++finished;
      progress("robust " + std::to_string(robust) + "/" + std::to_string(finished) + " attacked",
               true);
    };
  });
  return robust;
}

}  // namespace advbo::experiment

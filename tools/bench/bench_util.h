// Shared by the paper-reproduction drivers (bench_hybrid_batch, bench_uhe_bo): the
// function x method x run grid, run in parallel (TBB) and written in a fixed order.
#pragma once

#include <tbb/parallel_for.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace advbo::tools {

/// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
inline std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

/// Runs run_one(function, method, run) for every function (in order), method and run
/// 0..runs-1 (in parallel within a function) and writes the records as JSON lines to
/// out.partial, flushed after each function (a finished function is never lost), renamed to
/// `out` at the end. Progress on stderr. Throws std::runtime_error if out cannot be written.
inline void RunGridToJsonl(
    const std::vector<std::string>& functions, const std::vector<std::string>& methods, int runs,
    const std::string& out,
    const std::function<nlohmann::json(const std::string&, const std::string&, int)>& run_one) {
  std::ofstream o(out + ".partial");
  if (!o) throw std::runtime_error(out + ".partial: cannot write");
  for (const std::string& fn : functions) {
    std::vector<nlohmann::json> recs(methods.size() * runs);
    std::mutex mu;
    size_t done = 0;
    tbb::parallel_for(size_t{0}, recs.size(), [&](size_t j) {
      recs[j] = run_one(fn, methods[j / runs], static_cast<int>(j % runs));
      std::lock_guard<std::mutex> lock(mu);
      std::fprintf(stderr, "\r%s %zu/%zu", fn.c_str(), ++done, recs.size());
    });
    for (const auto& r : recs) o << r.dump() << "\n";
    o.flush();
    std::fprintf(stderr, "\r%s done (%zu runs)\n", fn.c_str(), recs.size());
  }
  o.close();
  if (std::rename((out + ".partial").c_str(), out.c_str()) != 0)
    throw std::runtime_error(out + ": cannot rename the finished file into place");
}

}  // namespace advbo::tools

#include "bo/trace.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace advbo::bo {
namespace {

nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json JsonArray(const Eigen::VectorXd& v) {
  return nlohmann::json(std::vector<double>(v.data(), v.data() + v.size()));
}

nlohmann::json StepRecord(const BoStep& s) {
  nlohmann::json r = {{"type", "evaluation"},
                      {"evaluation", s.evaluation},
                      {"phase", s.phase},
                      {"x", JsonArray(s.x)},
                      {"y", Num(s.y)},
                      {"ok", s.ok},
                      {"error", s.ok ? nlohmann::json(nullptr) : nlohmann::json(s.error)},
                      {"best_y", Num(s.best_y)},
                      {"acquisition_value", Num(s.acquisition_value)},
                      {"beta", Num(s.beta)},
                      {"seconds_objective", s.seconds_objective},
                      {"seconds_bo", s.seconds_bo}};
  if (!s.extra.is_null()) r["extra"] = s.extra;
  return r;
}

JsonlTrace::JsonlTrace(std::string path) : path_(std::move(path)) {
  out_.open(path_ + ".partial");
  if (!out_) throw std::runtime_error(path_ + ".partial: cannot create the trace file");
}

void JsonlTrace::Fail(const std::string& what) {
  out_.close();
  std::remove((path_ + ".partial").c_str());  // cut mid-line: worthless, never left behind
  throw std::runtime_error(path_ + ".partial: " + what + " (disk full?); nothing was kept");
}

void JsonlTrace::Write(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
  if (!out_) Fail("write failed");
}

void JsonlTrace::Commit() {
  out_.close();
  if (!out_) Fail("closing the trace failed");
  if (std::rename((path_ + ".partial").c_str(), path_.c_str()) != 0)
    throw std::runtime_error(path_ + ": cannot rename the finished trace into place");
}

}  // namespace advbo::bo

// End-to-end: `advbo serve` as its own process, and attack / bench / game run against it with
// --model http://127.0.0.1:PORT/predict: the same records as against the local file (apart
// from timings and the model field), a defense served in front of the model gives the same
// records as a local --defense, and servers that misbehave give a clear error, exit 1 and
// no result file.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "cli/cli_test_util.h"
#include "serve/fake_server.h"

extern char** environ;

namespace advbo::testing {
namespace {
namespace fs = std::filesystem;

// `advbo serve ARGS --port 0` in the background; stopped with SIGTERM by the destructor.
class ServeProcess {
 public:
  ServeProcess(const std::string& args, const fs::path& dir) : port_file_(dir / "port") {
    const std::string cmd = "exec " + kBin + " serve --port 0 --port-file " + port_file_.string() +
                            " " + args + " > " + (dir / "serve.log").string() + " 2>&1";
    const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
    if (posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
      pid_ = -1;
    for (int i = 0; i < 600 && !fs::exists(port_file_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    port_ = std::atoi(Slurp(port_file_).c_str());
  }
  ~ServeProcess() { Stop(); }
  // SIGTERM; returns the exit status (0 = stopped cleanly).
  int Stop() {
    if (pid_ <= 0) return status_;
    kill(pid_, SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return status_;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/predict"; }
  int port() const { return port_; }

 private:
  fs::path port_file_;
  pid_t pid_ = -1;
  int port_ = 0, status_ = -1;
};

// Records equal apart from timings, the model (path vs URL), its graph (the local file's
// "frozen" vs "served": the server runs the same frozen graph, so every score is the same),
// the worker groups (a served model runs one; the local file one per core, which changes no
// score) and what only a local defense reports (its defender summary and clean accuracies).
void ExpectSameRecords(const std::vector<nlohmann::json>& a, const std::vector<nlohmann::json>& b,
                       const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  const std::vector<std::string> skip = {"seconds",
                                         "model_seconds",
                                         "wait_seconds",
                                         "bo_seconds",
                                         "bo_phase_seconds",
                                         "model",
                                         "model_graph",
                                         "workers",
                                         "defense",
                                         "defender",
                                         "defender_rounds",
                                         "defender_mean_action",
                                         "defender_mean_pipeline",
                                         "clean_accuracy",
                                         "defended_clean_accuracy",
                                         "clean_images"};
  for (size_t i = 0; i < a.size(); ++i) {
    nlohmann::json x = a[i], y = b[i];
    for (const auto& k : skip) {
      x.erase(k);
      y.erase(k);
    }
    EXPECT_EQ(x, y) << what << " record " << i;
  }
}

class ServeCli : public TempDirTest {};

TEST_F(ServeCli, AttackBenchAndGameGiveTheSameRecordsAsTheLocalFile) {
  // The server with LibTorch's default threads, the clients with one: scores do not depend
  // on the thread count. A served model scores one call at a time (its requests are one
  // instance's session each), so the local runs do too: --lockstep 1 (records carry it).
  ServeProcess srv("", dir_);
  ASSERT_GT(srv.port(), 0) << Slurp(dir_ / "serve.log");
  const std::string common =
      " --indices 0,1 --target 3 --budget 60 --seed 4 --threads 1 --lockstep 1 -q ";
  ASSERT_EQ(RunAdvbo("attack" + common + "-o " + (dir_ / "l.jsonl").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  ASSERT_EQ(
      RunAdvbo("attack" + common + "--model " + srv.url() + " -o " + (dir_ / "r.jsonl").string(),
               dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  const auto remote = ReadJsonl(dir_ / "r.jsonl");
  ExpectSameRecords(ReadJsonl(dir_ / "l.jsonl"), remote, "attack");
  EXPECT_EQ(remote.at(0)["model"], srv.url());
  // bench with two attacks
  const std::string bench = "bench --attacks square,parsimonious" + common;
  ASSERT_EQ(RunAdvbo(bench + "--out-dir " + (dir_ / "bl").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo(bench + "--model " + srv.url() + " --out-dir " + (dir_ / "br").string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  ExpectSameRecords(ReadJsonl(dir_ / "bl" / "records.jsonl"),
                    ReadJsonl(dir_ / "br" / "records.jsonl"), "bench");
  // the attack-vs-defender game (defender local, model served)
  const std::string game =
      "game --game mnist --attacker square --defender r2b2:jpeg --eps 0.2 --rounds 25 --games 1 "
      "-q --out-dir ";
  ASSERT_EQ(RunAdvbo(game + (dir_ / "gl").string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo(game + (dir_ / "gr").string() + " --model " + srv.url(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  auto gl = ReadJsonl(dir_ / "gl" / "rounds.jsonl"), gr = ReadJsonl(dir_ / "gr" / "rounds.jsonl");
  ExpectSameRecords(gl, gr, "game rounds");
  EXPECT_EQ(srv.Stop(), 0) << "SIGTERM stops the server cleanly: " << Slurp(dir_ / "serve.log");
  EXPECT_NE(Slurp(dir_ / "serve.log").find("stopped after"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "port"));  // no stale port file after a clean stop
}

TEST_F(ServeCli, ADefenseServedInFrontOfTheModelEqualsALocalDefense) {
  int n = 0;
  for (const std::string spec : {"jpeg:quality=75", "r2b2:jpeg+noise", "r2b2:latent"}) {
    const fs::path d = dir_ / std::to_string(n++);
    fs::create_directories(d);
    ServeProcess srv("--defense " + spec, d);
    ASSERT_GT(srv.port(), 0) << Slurp(d / "serve.log");
    const std::string common =
        " --indices 0 --untargeted --attacks square --budget 50 --seed 9 --clean-images 0 -q ";
    ASSERT_EQ(RunAdvbo("bench" + common + "--defense " + spec + " --out-dir " + (d / "l").string(),
                       d / "log"),
              0)
        << Slurp(d / "log");
    ASSERT_EQ(
        RunAdvbo("bench" + common + "--model " + srv.url() + " --out-dir " + (d / "r").string(),
                 d / "log"),
        0)
        << Slurp(d / "log");
    const auto local = ReadJsonl(d / "l" / "records.jsonl");
    EXPECT_EQ(local.at(0)["defense"], spec);
    ExpectSameRecords(local, ReadJsonl(d / "r" / "records.jsonl"), spec);
  }
}

// A stateful detector served in front of the model: its refusals reach the attack as
// refusals, exactly as a local --defense's do. Square's near-duplicate queries are refused
// (reject) or flagged (flag); OARS resamples the refused ones. Served and local runs give the
// same records: success, queries, detections and first_detection, resampled_queries, the
// saved image's class. Before refusals were handed on, the served run read the refusals'
// flat scores as answers (and OARS never saw one).
TEST_F(ServeCli, AServedDetectorsRefusalsEqualALocalDefenses) {
  int n = 0;
  for (const std::string spec : {"blacklight:action=reject", "blacklight:action=flag"}) {
    const fs::path d = dir_ / std::to_string(n++);
    fs::create_directories(d);
    ServeProcess srv("--model " + kRoot + "/models/cifar10_cw.pt --defense " + spec, d);
    ASSERT_GT(srv.port(), 0) << Slurp(d / "serve.log");
    const std::string common =
        " --dataset cifar10 --indices 0,1 --untargeted --attacks "
        "square,oars:quantization=50/square "
        "--budget 150 --eps 8/255 --seed 3 --clean-images 0 --lockstep 1 -q ";
    ASSERT_EQ(RunAdvbo("bench" + common + "--defense " + spec + " --out-dir " + (d / "l").string(),
                       d / "log"),
              0)
        << Slurp(d / "log");
    ASSERT_EQ(
        RunAdvbo("bench" + common + "--model " + srv.url() + " --out-dir " + (d / "r").string(),
                 d / "log"),
        0)
        << Slurp(d / "log");
    const auto local = ReadJsonl(d / "l" / "records.jsonl");
    const auto remote = ReadJsonl(d / "r" / "records.jsonl");
    ExpectSameRecords(local, remote, spec);
    long detections = 0, resampled = 0;
    for (const auto& r : remote) {
      ASSERT_TRUE(r.contains("detections")) << spec << ": " << r.dump();
      detections += r["detections"].get<long>();
      if (r.contains("resampled_queries")) resampled += r["resampled_queries"].get<long>();
      // A success is never a refused answer: the saved image's class differs from the label.
      if (r["success"].get<bool>()) EXPECT_NE(r["adversarial_class"], r["true_class"]) << spec;
    }
    EXPECT_GT(detections, 0) << spec << ": the test must see detections to compare them";
    if (spec.find("reject") != std::string::npos)
      EXPECT_GT(resampled, 0) << "OARS must see the served refusals";
    else
      EXPECT_EQ(resampled, 0) << "flag mode refuses nothing";
  }
}

// Each client run opens its own defense sessions: a second run against the same detector
// attacks the same images with the same records (the server does not carry the first run's
// queries over, and its selection is never refused as repeats). A named --session is shared
// on purpose: the second run with the same name meets a detector that remembers the first
// run's queries.
TEST_F(ServeCli, RunsDoNotShareDefenseSessionsUnlessTheyNameOne) {
  ServeProcess srv("--defense blacklight:action=reject", dir_);
  ASSERT_GT(srv.port(), 0) << Slurp(dir_ / "serve.log");
  const std::string common =
      "attack --untargeted -n 3 --attack square --budget 60 --eps 0.2 "
      "--seed 5 -q --model " +
      srv.url() + " ";
  std::vector<std::vector<nlohmann::json>> runs;
  for (int k = 0; k < 2; ++k) {
    const fs::path out = dir_ / ("run" + std::to_string(k) + ".jsonl");
    ASSERT_EQ(RunAdvbo(common + "-o " + out.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
    EXPECT_EQ(Slurp(dir_ / "log").find("misclassified"), std::string::npos) << Slurp(dir_ / "log");
    runs.push_back(ReadJsonl(out));
  }
  ASSERT_EQ(runs[0].size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(runs[0][i]["image_index"], i);
  ExpectSameRecords(runs[0], runs[1], "a second run");
  // Named: the first run with the name as any run; the second meets the first's memory.
  std::vector<std::vector<nlohmann::json>> named;
  for (int k = 0; k < 2; ++k) {
    const fs::path out = dir_ / ("named" + std::to_string(k) + ".jsonl");
    ASSERT_EQ(RunAdvbo(common + "--session shared-1 -o " + out.string(), dir_ / "log"), 0)
        << Slurp(dir_ / "log");
    named.push_back(ReadJsonl(out));
  }
  ExpectSameRecords(runs[0], named[0], "the first run of a named session");
  ASSERT_EQ(named[1].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(named[1][i]["image_index"], i) << "setup queries are never refused as repeats";
    EXPECT_EQ(named[1][i]["first_detection"], 1) << "the shared detector remembers query 1";
  }
  // --session is for served models only.
  EXPECT_EQ(
      RunAdvbo("attack --untargeted -n 1 --budget 5 --session x -o " + (dir_ / "x.jsonl").string(),
               dir_ / "log"),
      1);
  EXPECT_NE(Slurp(dir_ / "log").find("not a served model"), std::string::npos)
      << Slurp(dir_ / "log");
}

// A server that refuses selection queries (a stateful detector that took them for repeats):
// the run stops with a message that says so, not "skipped ... misclassified".
TEST_F(ServeCli, RefusedSelectionQueriesAreReportedAsRefusals) {
  FakeModelServer fake([](const httplib::Request& req, httplib::Response& res) {
    const int n = static_cast<int>(req.body.size() / (784 * 4));
    nlohmann::json rows = nlohmann::json::array(), refused = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      const bool refuse = req.get_header_value("X-Advbo-Purpose") == "selection";
      std::vector<double> r(10, 0.0);
      r[7] = 5;
      rows.push_back(refuse ? nlohmann::json(nullptr) : nlohmann::json(r));
      refused.push_back(refuse);
    }
    res.set_content(nlohmann::json{{"scores", rows}, {"classes", 10}, {"refused", refused}}.dump(),
                    "application/json");
  });
  const fs::path out = dir_ / "r.jsonl";
  EXPECT_EQ(RunAdvbo("attack --untargeted -n 2 --budget 10 -q --http-retries 0 --model " +
                         fake.url() + " -o " + out.string(),
                     dir_ / "log"),
            1);
  const std::string log = Slurp(dir_ / "log");
  EXPECT_NE(log.find("refused 2 of 2 selection queries"), std::string::npos) << log;
  EXPECT_EQ(log.find("misclassified"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out));
}

// A model server that answers the probe and the selection (everything is a 7, the first
// test image's class) and then misbehaves as `after_probe` says.
class BadServer {
 public:
  explicit BadServer(std::function<void(httplib::Response&, int n)> after_probe)
      : fake_([this, after_probe](const httplib::Request& req, httplib::Response& res) {
          const int n = static_cast<int>(req.body.size() / (784 * 4));
          if (calls_++ < 2) {
            nlohmann::json rows = nlohmann::json::array();
            for (int i = 0; i < n; ++i) {
              std::vector<double> r(10, 0.0);
              r[7] = 5;
              rows.push_back(r);
            }
            return res.set_content(nlohmann::json{{"scores", rows}}.dump(), "application/json");
          }
          after_probe(res, n);
        }) {}
  std::string url() const { return fake_.url(); }

 private:
  std::atomic<int> calls_{0};
  FakeModelServer fake_;
};

TEST_F(ServeCli, MisbehavingServersGiveAClearErrorAndNoResultFile) {
  struct Case {
    std::string name, says;
    std::function<void(httplib::Response&, int)> reply;
  } cases[] = {
      {"garbage", "not JSON",
       [](httplib::Response& r, int) { r.set_content("garbage", "text/plain"); }},
      {"shape", "score rows for",
       [](httplib::Response& r, int n) {
         nlohmann::json rows = nlohmann::json::array();
         for (int i = 0; i < n + 2; ++i) rows.push_back(std::vector<double>(10, 0.0));
         r.set_content(nlohmann::json{{"scores", rows}}.dump(), "application/json");
       }},
      {"500", "HTTP 500", [](httplib::Response& r, int) { r.status = 500; }},
      {"hang", "attempt(s)",
       [](httplib::Response& r, int) {
         std::this_thread::sleep_for(std::chrono::milliseconds(2500));
         r.status = 500;
       }},
  };
  for (const auto& k : cases) {
    BadServer srv(k.reply);
    const fs::path out = dir_ / (k.name + ".jsonl");
    const int rc = RunAdvbo(
        "attack --indices 0 --untargeted --budget 30 -q --http-timeout 0.5 "
        "--http-retries 1 --model " +
            srv.url() + " -o " + out.string(),
        dir_ / "log");
    EXPECT_EQ(rc, 1) << k.name << ": " << Slurp(dir_ / "log");
    const std::string log = Slurp(dir_ / "log");
    EXPECT_NE(log.find("advbo: error: " + srv.url()), std::string::npos) << k.name << ": " << log;
    EXPECT_NE(log.find(k.says), std::string::npos) << k.name << ": " << log;
    EXPECT_FALSE(fs::exists(out)) << k.name;
    EXPECT_FALSE(fs::exists(out.string() + ".partial")) << k.name;
  }
}

TEST_F(ServeCli, BadServeOptionsAreRefused) {
  struct Case {
    std::string args, says;
  } cases[] = {
      {"--model " + (dir_ / "missing.pt").string(), "model file not found"},
      {"--port 70000", "--port"},
      {"--max-batch 0", "--max-batch"},
      {"--max-body-mb 0", "--max-body-mb"},
      {"--defense jpeg:quality=500", "quality"},
      {"--normalize 0.5:0", "std must be > 0"},
      {"--model http://127.0.0.1:1/predict", "not a URL"},
      {"--host 203.0.113.1 --port 0", "cannot bind"},
      {"--input-shape 3,32,32", "rejects input [N, 3, 32, 32]"},
      {"--input-shape 1,28", "give C,H,W"},
      {"--input-shape 1,28,x", "give C,H,W"},
      {"--input-shape 0,28,28", "give C,H,W"},
  };
  for (const auto& k : cases) {
    const fs::path pf = dir_ / "port";
    EXPECT_EQ(RunAdvbo("serve " + k.args + " --port-file " + pf.string(), dir_ / "log"), 1)
        << k.args;
    EXPECT_NE(Slurp(dir_ / "log").find(k.says), std::string::npos)
        << k.args << ": " << Slurp(dir_ / "log");
    EXPECT_FALSE(fs::exists(pf)) << k.args;
  }
}

TEST_F(ServeCli, NormalizeWrapsTheModelOnEitherSide) {
  // A model served with --normalize is the same model as a client-side --normalize of the
  // local file: records agree.
  ServeProcess srv("--normalize 0.1307:0.3081", dir_);
  ASSERT_GT(srv.port(), 0) << Slurp(dir_ / "serve.log");
  const std::string common = " --indices 0 --untargeted --budget 40 --seed 2 -q ";
  ASSERT_EQ(
      RunAdvbo("attack" + common + "--normalize 0.1307:0.3081 -o " + (dir_ / "l.jsonl").string(),
               dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  ASSERT_EQ(
      RunAdvbo("attack" + common + "--model " + srv.url() + " -o " + (dir_ / "r.jsonl").string(),
               dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  auto l = ReadJsonl(dir_ / "l.jsonl"), r = ReadJsonl(dir_ / "r.jsonl");
  EXPECT_EQ(l.at(0)["normalize"], "0.1307:0.3081");
  for (auto& x : l) x.erase("normalize");
  ExpectSameRecords(l, r, "normalize");
  EXPECT_EQ(RunAdvbo("attack" + common + "--normalize 1:2:3 -o " + (dir_ / "x.jsonl").string(),
                     dir_ / "log"),
            1);
  EXPECT_NE(Slurp(dir_ / "log").find("--normalize '1:2:3'"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "x.jsonl"));
}

}  // namespace
}  // namespace advbo::testing

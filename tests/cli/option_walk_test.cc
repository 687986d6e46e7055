// The option walk: every value-taking option of every advbo subcommand, parsed
// in-process through the same cli::Cli the binary uses, with the values users and fuzzers
// try first. An empty or non-finite value must be refused by the parser with a message that
// names the option -- before any file is opened or any work starts.
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/app.h"

namespace {

struct OptionRef {
  std::vector<std::string> path;  ///< subcommand path, e.g. {"bench", "merge"}
  std::string name;               ///< long name with dashes, e.g. "--eps"
  std::string type;               ///< CLI11 type name, e.g. "FLOAT"
};

void Collect(CLI::App* app, std::vector<std::string> path, std::vector<OptionRef>* out) {
  for (CLI::Option* opt : app->get_options([](const CLI::Option*) { return true; })) {
    if (opt->get_expected_max() == 0 || opt->get_lnames().empty()) continue;  // flags
    out->push_back({path, "--" + opt->get_lnames().front(), opt->get_type_name()});
  }
  for (CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    auto p = path;
    p.push_back(sub->get_name());
    Collect(sub, p, out);
  }
}

std::vector<OptionRef> AllOptions() {
  advbo::cli::Cli cli;
  std::vector<OptionRef> v;
  Collect(&cli.app(), {}, &v);
  return v;
}

std::string Label(const OptionRef& o, const std::string& value) {
  std::string s = "advbo";
  for (const auto& p : o.path) s += " " + p;
  return s + " " + o.name + " '" + value + "'";
}

// "" when the parser accepts `value` for the option, else the parser's message.
std::string ParseError(const OptionRef& o, const std::string& value) {
  advbo::cli::Cli cli;
  std::vector<std::string> args = {"advbo"};
  args.insert(args.end(), o.path.begin(), o.path.end());
  args.push_back(o.name);
  args.push_back(value);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    cli.app().parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return std::string(e.what()).empty() ? "(empty message)" : e.what();
  }
  return "";
}

// Every flag of every subcommand (path, "--name"), recursively.
void CollectFlags(CLI::App* app, std::vector<std::string> path, std::vector<OptionRef>* out) {
  for (CLI::Option* opt : app->get_options([](const CLI::Option*) { return true; }))
    if (opt->get_expected_max() == 0 && !opt->get_lnames().empty())
      out->push_back({path, "--" + opt->get_lnames().front(), ""});
  for (CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    auto p = path;
    p.push_back(sub->get_name());
    CollectFlags(sub, p, out);
  }
}

// A flag takes no value: `--flag=2`, `--flag=0` and `--flag=no` are refused by name (CLI11
// would otherwise read a number as a repeat count or flip a negated flag).
TEST(OptionWalk, FlagsRefuseValuesByName) {
  advbo::cli::Cli walk;
  std::vector<OptionRef> flags;
  CollectFlags(&walk.app(), {}, &flags);
  ASSERT_GE(flags.size(), 20u);
  for (const auto& f : flags)
    for (const std::string v : {"2", "0", "no"}) {
      advbo::cli::Cli cli;
      std::vector<std::string> args = {"advbo"};
      args.insert(args.end(), f.path.begin(), f.path.end());
      args.push_back(f.name + "=" + v);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      std::string err;
      try {
        cli.app().parse(static_cast<int>(argv.size()), argv.data());
      } catch (const CLI::ParseError& e) {
        err = e.what();
      }
      ASSERT_FALSE(err.empty()) << Label(f, v) << " was accepted";
      EXPECT_NE(err.find(f.name.substr(2)), std::string::npos) << Label(f, v) << ": " << err;
    }
}

TEST(OptionWalk, FindsTheOptionsOfEverySubcommand) {
  const auto opts = AllOptions();
  std::set<std::string> subs;
  for (const auto& o : opts)
    if (!o.path.empty()) subs.insert(o.path.front());
  for (const char* s : {"attack", "bo", "bench", "game", "macro", "fbo", "serve"})
    EXPECT_TRUE(subs.count(s)) << s;
  EXPECT_GE(opts.size(), 150u);
}

TEST(OptionWalk, EmptyAndNonFiniteValuesAreRefusedByNameWhileParsing) {
  int probes = 0;
  for (const auto& o : AllOptions()) {
    for (const std::string v : {"", " ", "nan", "NaN", "-nan", "inf", "-inf", "+Infinity"}) {
      ++probes;
      const std::string err = ParseError(o, v);
      ASSERT_FALSE(err.empty()) << Label(o, v) << " was accepted";
      EXPECT_NE(err.find(o.name), std::string::npos) << Label(o, v) << ": " << err;
    }
  }
  EXPECT_GE(probes, 1200);
  std::printf("[ NOTE ] %d empty and non-finite probes, each refused by name\n", probes);
}

// Every numeric option has a range checked while parsing: a negative value and a value of
// 10^15 are refused by name, except where the option's meaning allows them (listed here with
// the reason). Limits sit before allocation, so 10^15 never reaches a resize().
TEST(OptionWalk, NumericOptionsRefuseNegativeAndHugeValuesByName) {
  const std::set<std::string> any_finite = {
      "bo --target",  // a stopping value of the objective: any finite number
  };
  int probes = 0, numeric = 0;
  for (const auto& o : AllOptions()) {
    const bool is_seed = o.type.find("UINT") != std::string::npos;  // any 64-bit seed
    const bool is_int = o.type.rfind("INT", 0) == 0 && !is_seed,
               is_float = o.type.rfind("FLOAT", 0) == 0;
    if (!is_int && !is_float && !is_seed) continue;
    ++numeric;
    std::string key;
    for (const auto& p : o.path) key += (key.empty() ? "" : " ") + p;
    key += " " + o.name;
    if (any_finite.count(key)) continue;
    std::vector<std::string> bad = {"-1", "-0.5"};
    if (!is_seed) bad.insert(bad.end(), {"1e15", "1000000000000000"});
    if (is_int || is_seed) bad.push_back("2.5");
    for (const auto& v : bad) {
      ++probes;
      const std::string err = ParseError(o, v);
      EXPECT_FALSE(err.empty()) << Label(o, v) << " [" << o.type << "] was accepted";
      if (!err.empty())
        EXPECT_NE(err.find(o.name), std::string::npos) << Label(o, v) << ": " << err;
    }
  }
  EXPECT_GE(numeric, 90);
  EXPECT_GE(probes, 350);
  std::printf("[ NOTE ] %d negative, fractional and huge probes of %d numeric options\n", probes,
              numeric);
}

// The messages say what is wanted: the range and the value given.
TEST(OptionWalk, RangeMessagesNameTheRangeAndTheValue) {
  auto err = [](std::vector<std::string> path, const std::string& name, const std::string& v) {
    return ParseError(OptionRef{std::move(path), name, ""}, v);
  };
  EXPECT_NE(err({"attack"}, "--defender-eps", "1.5")
                .find("--defender-eps: must be a radius in (0, 1] (a number or a fraction such as "
                      "8/255), got '1.5'"),
            std::string::npos);
  EXPECT_NE(err({"bench"}, "--budget", "1000000000000")
                .find("--budget: must be an integer in 1..100000000, got '1000000000000'"),
            std::string::npos);
  EXPECT_NE(err({"game"}, "--samples", "0").find("must be an integer in 1..1000000, got '0'"),
            std::string::npos);
  EXPECT_NE(err({"fbo"}, "--delta", "0").find("--delta: must be a number in (0, 1), got '0'"),
            std::string::npos);
  EXPECT_NE(err({"fbo"}, "--agents", "1000000000").find("--agents: must be an integer in 1..10000"),
            std::string::npos);
  EXPECT_NE(err({"game"}, "--payoff-noise", "-1").find("must be a number in [0, 1000000]"),
            std::string::npos);
  EXPECT_NE(err({"bo"}, "--ts-features", "1000000000").find("in 1..100000"), std::string::npos);
  EXPECT_EQ(err({"attack"}, "--eps", "0.05"), "");
  EXPECT_EQ(err({"bo"}, "--target", "-3.5"), "");
}

}  // namespace

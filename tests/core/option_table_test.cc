// The option table (core/common/option_table.h) against the README: its "Options" and
// "Plugin options" tables must be exactly what the table and the ops_cpu plugin's
// declarations render, so the README cannot drift from the flags, keywords and defaults.
// Also: setting options by name, and checking plugin options at load.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/common/option_ranges.h"
#include "core/common/option_table.h"
#include "core/executor/option_names.h"
#include "core/kernels/plugin_loader.h"
#include "core/kernels/plugin_options.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The Markdown table whose header line starts with `header`: that line and the
// following lines starting with '|'.
std::string tableAfter(const std::string& doc, const std::string& header) {
  const size_t start = doc.find("\n" + header);
  if (start == std::string::npos) return "";
  std::string out;
  std::istringstream in(doc.substr(start + 1));
  for (std::string line; std::getline(in, line) && !line.empty() && line[0] == '|';) out += line + "\n";
  return out;
}

std::string readme() { return readFile(testing::runfile("README.md")); }

std::string opsCpuOptionsMarkdown() {
  return renderPluginOptionsMarkdown(declaredPluginOptions({testing::runfile("ops_cpu/libbrisk_ops_cpu.so")}, {}));
}

TEST(OptionTable, ReadmeOptionsTableIsTheRenderedTable) {
  const std::string rendered = renderOptionsMarkdown(optionNameLists());
  EXPECT_EQ(tableAfter(readme(), "| option | flag |"), rendered)
      << "README.md's options table differs from core/common/option_table.cc; it should read:\n"
      << rendered;
}

TEST(OptionTable, ReadmePluginOptionsTableIsWhatOpsCpuDeclares) {
  const std::string rendered = opsCpuOptionsMarkdown();
  EXPECT_NE(rendered.find("`ops_cpu.small_gemm` | bool | true |"), std::string::npos) << rendered;
  EXPECT_EQ(tableAfter(readme(), "| plugin option |"), rendered)
      << "README.md's plugin options table differs from what the ops_cpu plugin declares; it should read:\n"
      << rendered;
}

// The comparison above notices a changed default, flag or range.
TEST(OptionTable, ReadmeCheckFailsOnADifference) {
  const std::string doc = readme();
  const std::string table = tableAfter(doc, "| option | flag |");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"| 30000 |", "| 30001 |"},
                                 {"`--no-native`", "`--no-natives`"},
                                 {"| 0-65536 |", "| 0-65535 |"}}) {
    std::string changed = doc;
    const size_t at = changed.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    changed.replace(at, from.size(), to);
    EXPECT_NE(tableAfter(changed, "| option | flag |"), table) << from;
  }
}

TEST(OptionTable, NamesAndFlagsAreUnique) {
  std::set<std::string> names, flags;
  for (const OptionSpec& s : optionTable()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    if (*s.flag) EXPECT_TRUE(flags.insert(s.flag).second) << s.flag;
    if (s.type() == OptionType::kInt) EXPECT_LT(s.min, s.max) << s.name;
  }
}

TEST(OptionTable, SetByName) {
  Options o;
  setOption(o, "max_runtimes", int64_t{8});
  setOption(o, "use_native", false);
  setOption(o, "planner", std::string("bump"));
  setOption(o, "plugin_options", PluginOptionMap{{"ops_cpu.small_gemm", false}});
  EXPECT_EQ(o.max_runtimes, 8u);
  EXPECT_FALSE(o.use_native);
  EXPECT_EQ(o.planner, "bump");
  EXPECT_EQ(std::get<int64_t>(getOption(o, *findOption("max_runtimes"))), 8);
  EXPECT_EQ(formatOption(getOption(o, *findOption("plugin_options"))), "{ops_cpu.small_gemm=false}");

  auto messageOf = [&](const std::string& name, OptionValue v) {
    try {
      setOption(o, name, std::move(v));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(messageOf("no_such", true).find("unknown option 'no_such' (options: plugins, "), std::string::npos);
  EXPECT_NE(messageOf("max_runtimes", int64_t{-1}).find("option 'max_runtimes' must be in [0, 65536], got -1"),
            std::string::npos);
  EXPECT_NE(messageOf("use_native", int64_t{1}).find("option 'use_native' expects a bool, got a int"),
            std::string::npos);
}

TEST(OptionTable, ValidateOptionsUsesTheTableRanges) {
  Options o;
  o.max_parallel_ops = 0;
  try {
    validateOptions(o, "m");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("option 'max_parallel_ops' must be in [1, 1024], got 0"), std::string::npos)
        << e.what();
  }
}

TEST(PluginOptions, ValidateNamesOptionAndPlugin) {
  PluginOptionRegistry reg;
  reg.add(PluginOptionSpec{"p", "fast", true, "help"});
  reg.add(PluginOptionSpec{"p", "rows", int64_t{8}, "help"});
  auto messageOf = [&](PluginOptionMap m) {
    Options o;
    o.plugin_options = std::move(m);
    try {
      reg.validate(o, "model");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(messageOf({{"p.fast", false}, {"p.rows", std::string("4")}, {"p.fast", std::string("false")}}), "");
  EXPECT_NE(messageOf({{"p.slow", true}}).find("unknown plugin option 'p.slow': is not declared by plugin p "
                                               "(it declares: fast, rows)"),
            std::string::npos);
  EXPECT_NE(messageOf({{"q.fast", true}}).find("names plugin q, which is not loaded"), std::string::npos);
  EXPECT_NE(messageOf({{"fast", true}}).find("names no plugin"), std::string::npos);
  EXPECT_NE(messageOf({{"p.rows", std::string("x")}}).find("plugin option 'p.rows' of plugin p expects a int, got 'x'"),
            std::string::npos);
  EXPECT_NE(messageOf({{"p.fast", int64_t{1}}}).find("expects a bool, got 1"), std::string::npos);

  Options o;
  o.plugin_options["p.rows"] = std::string("4");
  EXPECT_EQ(PluginOption<int64_t>(reg.all()[1]).get(o), 4);
  EXPECT_TRUE(PluginOption<bool>(reg.all()[0]).get(o));  // the default
}

}  // namespace
}  // namespace brisk

#include "tools/cli/options_flags.h"

#include <string_view>

#include "core/common/option_table.h"
#include "core/executor/option_names.h"
#include "core/kernels/plugin_loader.h"
#include "core/kernels/plugin_options.h"
#include "core/report/json.h"

namespace brisk::cli {

namespace json = report::json;

namespace {

constexpr int64_t kNotGiven = INT64_MIN;

// `brisk help` lists what the default plugins declare, so their knobs are documented
// where the flag that sets them is.
std::string pluginOptionsHelp(const OptionSpec& spec) {
  std::string out = optionHelp(spec, optionNameLists());
  for (const PluginOptionSpec& p : declaredPluginOptions(Options{}.plugins, {})) {
    out += "; " + p.key() + " (" + pluginOptionTypeName(p.default_value) + ", default " +
           formatOption(std::visit([](const auto& v) { return OptionValue(v); }, p.default_value)) + "): " + p.help;
  }
  return out;
}

}  // namespace

void CommonFlags::addTo(FlagParser& p) {
  for (const OptionSpec& spec : optionTable()) {
    if (!*spec.flag) continue;
    const std::string name = spec.name;
    const std::string flag = spec.flag;
    const std::string help = optionHelp(spec, optionNameLists());
    // Flags that do more (or less) than set their field.
    if (name == "plugins") {
      p.addList(flag, &plugins, spec.metavar, help);
    } else if (name == "default_plugins_optional") {
      p.addBool(flag, &no_default_plugins, std::string("do not load the default plugins (") + kDefaultPlugin + ")");
    } else if (name == "delegates") {
      p.addList(flag, &delegates, spec.metavar, help);
    } else if (name == "plugin_options") {
      p.addList(flag, &plugin_option_args, spec.metavar, pluginOptionsHelp(spec));
    } else if (name == "intra_op_threads") {
      // Applied by the command at start (bench's default is 1), not through Options.
      p.addInt(flag, &threads, spec.metavar, help + "; default: bench 1, others libtorch's",
               spec.min, spec.max);
    } else {
      switch (spec.type()) {
        case OptionType::kBool: {
          bool* target = &(parsed.*std::get<bool Options::*>(spec.field));
          if (*target) p.addSwitch(flag, target, false, "off: " + help);
          else p.addBool(flag, target, help);
          break;
        }
        case OptionType::kInt:
          ints[name] = kNotGiven;
          p.addInt(flag, &ints[name], spec.metavar, help, spec.min, spec.max);
          break;
        case OptionType::kString:
          // The option's own validation judges the value; "" is pt2_program's default.
          p.addString(flag, &(parsed.*std::get<std::string Options::*>(spec.field)), spec.metavar, help,
                      /*allow_empty=*/true);
          break;
        case OptionType::kStringList:
          p.addList(flag, &(parsed.*std::get<std::vector<std::string> Options::*>(spec.field)), spec.metavar,
                    help);
          break;
        case OptionType::kPluginOptions: break;  // handled above
      }
    }
  }
  p.addBool("verbose", &verbose, "show glog INFO messages (default: warnings and errors only)");
}

Options CommonFlags::options() const {
  Options o = parsed;
  if (no_default_plugins) o.plugins.clear();
  for (const std::string& p : plugins) {
    bool dup = false;
    for (const std::string& q : o.plugins) dup = dup || q == p;
    if (!dup) o.plugins.push_back(p);
  }
  // A plugin named explicitly must be found, even a default one.
  if (!plugins.empty()) o.default_plugins_optional = false;
  // Named backends replace the default list, in the order given.
  if (!delegates.empty()) o.delegates = delegates;
  for (const auto& [name, value] : ints)
    if (value != kNotGiven) setOption(o, name, value);
  // Values stay text: Module::load parses them as the type the plugin declares.
  for (const std::string& arg : plugin_option_args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--plugin-option expects PLUGIN.NAME=VALUE, got '" + arg + "'");
    o.plugin_options[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  return o;
}

std::string describeOptions(const Options& o) {
  std::string out;
  for (const OptionSpec& spec : optionTable())
    out += (out.empty() ? "" : " ") + std::string(spec.name) + "=" + formatOption(getOption(o, spec));
  return out;
}

namespace {

std::string jsonValue(const OptionValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return json::boolean(x);
        else if constexpr (std::is_same_v<T, int64_t>) return json::num(static_cast<long long>(x));
        else if constexpr (std::is_same_v<T, std::string>) return json::str(x);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::vector<std::string> items;
          for (const std::string& s : x) items.push_back(json::str(s));
          return json::array(items);
        } else {
          json::Object obj;
          for (const auto& [k, pv] : x) obj.add(k, std::visit([](const auto& p) { return jsonValue(p); }, pv));
          return obj.done();
        }
      },
      v);
}

}  // namespace

std::string optionsJson(const Options& o) {
  json::Object obj;
  for (const OptionSpec& spec : optionTable()) obj.add(spec.name, jsonValue(getOption(o, spec)));
  return obj.done();
}

}  // namespace brisk::cli

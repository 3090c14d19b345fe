#include "core/kernels/plugin_options.h"

#include <cerrno>
#include <cstdlib>

#include "core/common/error.h"

namespace brisk {

namespace {

std::string describe(const PluginOptionValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return "'" + std::get<std::string>(v) + "'";
}

// Text from the CLI as the type of `like`; false when it does not parse.
bool parseAs(const std::string& text, const PluginOptionValue& like, PluginOptionValue& out) {
  if (std::holds_alternative<std::string>(like)) {
    out = text;
    return true;
  }
  if (std::holds_alternative<bool>(like)) {
    if (text == "true" || text == "1") out = true;
    else if (text == "false" || text == "0") out = false;
    else return false;
    return true;
  }
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = static_cast<int64_t>(v);
  return true;
}

}  // namespace

const char* pluginOptionTypeName(const PluginOptionValue& v) {
  if (std::holds_alternative<bool>(v)) return "bool";
  if (std::holds_alternative<int64_t>(v)) return "int";
  return "str";
}

PluginOptionValue pluginOptionValue(const Options& o, const PluginOptionSpec& spec) {
  auto it = o.plugin_options.find(spec.key());
  if (it == o.plugin_options.end()) return spec.default_value;
  const PluginOptionValue& given = it->second;
  if (given.index() == spec.default_value.index()) return given;
  PluginOptionValue parsed;
  if (const std::string* text = std::get_if<std::string>(&given); text && parseAs(*text, spec.default_value, parsed))
    return parsed;
  throw Error("plugin option '" + spec.key() + "' of plugin " + spec.plugin + " expects a " +
              pluginOptionTypeName(spec.default_value) + ", got " + describe(given));
}

void PluginOptionRegistry::add(PluginOptionSpec spec) {
  std::lock_guard<std::mutex> lock(mu_);
  specs_[spec.key()] = std::move(spec);
}

std::vector<PluginOptionSpec> PluginOptionRegistry::all() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PluginOptionSpec> out;
  for (const auto& [key, spec] : specs_) out.push_back(spec);
  return out;
}

void PluginOptionRegistry::validate(const Options& o, const std::string& model) const {
  const std::vector<PluginOptionSpec> specs = all();
  for (const auto& [key, value] : o.plugin_options) {
    const PluginOptionSpec* found = nullptr;
    std::string declared;
    const std::string plugin = key.substr(0, key.find('.'));
    for (const PluginOptionSpec& s : specs) {
      if (s.key() == key) found = &s;
      if (s.plugin == plugin) declared += (declared.empty() ? "" : ", ") + s.name;
    }
    if (!found) {
      const std::string why = key.find('.') == std::string::npos ? "names no plugin (expected PLUGIN.NAME)"
                              : declared.empty() ? "names plugin " + plugin + ", which is not loaded or declares no options"
                                                 : "is not declared by plugin " + plugin + " (it declares: " + declared + ")";
      throw Error(Error::Where{model, "", ""}, "unknown plugin option '" + key + "': " + why);
    }
    try {
      (void)pluginOptionValue(o, *found);
    } catch (const Error& e) {
      throw Error(Error::Where{model, "", ""}, e.message());
    }
  }
}

std::string renderPluginOptionsMarkdown(const std::vector<PluginOptionSpec>& specs) {
  std::string out =
      "| plugin option | type | default | meaning |\n"
      "|---|---|---|---|\n";
  for (const PluginOptionSpec& s : specs) {
    std::string def = describe(s.default_value);
    if (std::holds_alternative<std::string>(s.default_value)) def = "`" + std::get<std::string>(s.default_value) + "`";
    out += "| `" + s.key() + "` | " + pluginOptionTypeName(s.default_value) + " | " + def + " | " + s.help + " |\n";
  }
  return out;
}

}  // namespace brisk

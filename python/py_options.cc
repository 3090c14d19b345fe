#include "python/py_options.h"

#include <cstdint>

#include "core/common/error.h"
#include "core/common/option_table.h"
#include "core/executor/option_names.h"
#include "core/kernels/plugin_loader.h"
#include "core/kernels/plugin_options.h"
#include "python/py_convert.h"

namespace brisk::python {
namespace {

bool asBool(const std::string& key, const py::handle& v) {
  if (!py::isinstance<py::bool_>(v)) throw Error("option '" + key + "' expects a bool, got " + typeName(v));
  return v.cast<bool>();
}

// An int within the option's range (core/common/option_table.cc); Python ints beyond
// int64 are out of range too, not a cast error.
int64_t asInt(const OptionSpec& spec, const py::handle& v) {
  const std::string key = spec.name;
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v))
    throw Error("option '" + key + "' expects an int, got " + typeName(v));
  const py::int_ lo(spec.min), hi(spec.max);
  if (v < lo || v > hi)
    throw Error(outOfRange(spec, py::str(v).cast<std::string>()));
  return v.cast<int64_t>();
}

std::string asString(const std::string& key, const py::handle& v) {
  if (!py::isinstance<py::str>(v)) throw Error("option '" + key + "' expects a str, got " + typeName(v));
  return v.cast<std::string>();
}

// A str (one entry) or a list/tuple of str.
std::vector<std::string> asStrings(const std::string& key, const py::handle& v) {
  if (py::isinstance<py::str>(v)) return {v.cast<std::string>()};
  if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v))
    throw Error("option '" + key + "' expects a str or a list of str");
  std::vector<std::string> out;
  for (const py::handle& item : v) out.push_back(asString(key, item));
  return out;
}

// {"plugin.name": bool | int | str}; Module::load checks names and types against what
// the plugins declare.
PluginOptionMap asPluginOptions(const std::string& key, const py::handle& v) {
  if (!py::isinstance<py::dict>(v)) throw Error("option '" + key + "' expects a dict, got " + typeName(v));
  PluginOptionMap out;
  for (const auto& [k, item] : py::reinterpret_borrow<py::dict>(v)) {
    const std::string name = asString(key + " key", k);
    if (py::isinstance<py::bool_>(item)) out[name] = item.cast<bool>();
    else if (py::isinstance<py::int_>(item)) {
      // Python ints are unbounded: one beyond int64 is out of range, not a cast error.
      if (item < py::int_(INT64_MIN) || item > py::int_(INT64_MAX))
        throw Error("plugin option '" + name + "' must fit in a 64-bit int, got " + py::str(item).cast<std::string>());
      out[name] = item.cast<int64_t>();
    } else if (py::isinstance<py::str>(item)) out[name] = item.cast<std::string>();
    else throw Error("plugin option '" + name + "' expects a bool, int or str, got " + typeName(item));
  }
  return out;
}

OptionValue toOptionValue(const OptionSpec& spec, const py::handle& v) {
  const std::string key = spec.name;
  switch (spec.type()) {
    case OptionType::kBool: return asBool(key, v);
    case OptionType::kInt: return asInt(spec, v);
    case OptionType::kString: return asString(key, v);
    case OptionType::kStringList: return asStrings(key, v);
    case OptionType::kPluginOptions: return asPluginOptions(key, v);
  }
  throw Error("option '" + key + "': unsupported type");
}

}  // namespace

Options toOptions(const py::dict& kwargs) {
  Options o;
  for (const auto& [k, v] : kwargs) {
    const std::string key = py::str(k);
    const OptionSpec* spec = findOption(key);
    if (!spec) throw Error("unknown option '" + key + "' (options: " + optionNames() + ")");
    setOption(o, *spec, toOptionValue(*spec, v));
  }
  return o;
}

std::string optionsDoc(const std::vector<std::string>& plugin_dirs) {
  std::string out = renderOptionsDoc(optionNameLists());
  for (const PluginOptionSpec& p : declaredPluginOptions(Options{}.plugins, plugin_dirs))
    out += "  plugin_options[\"" + p.key() + "\"] (" + pluginOptionTypeName(p.default_value) + "): " + p.help + "\n";
  return out;
}

}  // namespace brisk::python

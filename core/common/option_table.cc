#include "core/common/option_table.h"

#include <type_traits>

#include "core/common/error.h"
#include "core/common/option_ranges.h"

namespace brisk {

namespace {

std::vector<OptionSpec> makeTable() {
  using O = Options;
  return {
      {.name = "plugins", .field = &O::plugins, .flag = "plugin", .metavar = "NAME|PATH",
       .help = "plugins loaded before kernels are chosen (a name like ops_cpu, or a path to a .so); the flag adds "
               "to the defaults and is repeatable"},
      {.name = "default_plugins_optional", .field = &O::default_plugins_optional, .flag = "no-default-plugins",
       .help = "a missing default plugin is a warning, not an error (the flag: do not load the default plugins)"},
      {.name = "plugin_path", .field = &O::plugin_path, .flag = "plugin-path", .metavar = "DIR",
       .help = "searched before `$BRISK_PLUGIN_PATH`, the binary's dir, runfiles; repeatable"},
      {.name = "plugin_options", .field = &O::plugin_options, .flag = "plugin-option",
       .metavar = "PLUGIN.NAME=VALUE",
       .help = "options the loaded plugins declare (see \"Plugin options\"); unknown names and bad values are an "
               "error at load; the flag is repeatable"},
      {.name = "pt2_program", .field = &O::pt2_program, .flag = "pt2-program", .metavar = "NAME",
       .help = "program of a PT2 archive to run (\"\" = the only one, the AOTInductor delegate program of a "
               "NativeRT archive, or \"model\")",
       .details = "which program of a PT2 archive (torch.export) to run: \"\" = its only program; in a NativeRT "
                  "archive with AOTInductor-compiled files (`package_nativert_with_aoti_delegate`), its delegate "
                  "program `MODEL-BACKEND`, run by the `aoti` delegate (which joins the backend list), when delegates "
                  "are on and the plugin is found (else its original program); otherwise the one named `model` "
                  "(what `torch.export.save` writes); an unknown name is an error listing the names, and any name "
                  "but \"\" is an error for a TorchScript file",
       .default_note = "the only program, the AOTInductor delegate program, or `model`"},
      {.name = "optimize_numerics", .field = &O::optimize_numerics, .flag = "no-optimize-numerics",
       .help = "freeze's conv-bn and similar folds"},
      {.name = "disabled_passes", .field = &O::disabled_passes, .flag = "disable-pass", .metavar = "NAME",
       .help = "a load-time graph pass not to run ({passes}, or a plugin's PLUGIN.NAME; `brisk inspect` lists "
               "them; {required_passes} cannot be disabled); repeatable",
       .details = "load-time graph passes not to run, by name: core's {passes}, or a plugin's `PLUGIN.NAME` "
                  "(`brisk inspect` lists the passes and what each changed); an unknown name is an error at load, "
                  "and so is {required_passes}, which cannot be disabled (without it a run could return one of the "
                  "model's own tensors, and a caller's in-place write to it would change every later run)",
       .default_note = "none"},
      {.name = "delegates", .field = &O::delegates, .flag = "delegate", .metavar = "NAME",
       .help = "delegate backends tried on every block, in order (the flag replaces the default list and is "
               "repeatable)",
       .details = "delegate backends tried on every block, in order; a name no loaded plugin registers loads "
                  "`libbrisk_NAME.so` from the plugin path; a missing default backend is a warning, a named one "
                  "an error (the flag replaces the default list and is repeatable; see \"Delegates\")"},
      {.name = "use_delegates", .field = &O::use_delegates, .flag = "no-delegates",
       .help = "let delegate backends run the groups of nodes they claim (off: brisk's own kernels only)"},
      {.name = "precision", .field = &O::precision, .flag = "precision", .metavar = "MODE",
       .help = "reduced precision, opt-in: fp16_weights (linear layers on fp16 weights, fp32 activations), "
               "int8_dynamic (linear, LSTM and GRU layers on int8 weights, activations quantized per call) or bf16 (the onednn "
               "delegate's convolutions and linear layers, and brisk's attention kernel, in bf16, on CPUs with "
               "AVX512_BF16); repeatable, the first "
               "listed mode that runs a layer takes it",
       .details = "reduced-precision modes, applied by the `ops_quantized` plugin (loaded when a mode is asked "
                  "for) and the `onednn` delegate: `fp16_weights` (linear layers on weights rounded to fp16 and "
                  "packed at load, fp32 activations and accumulation), `int8_dynamic` (linear, LSTM and GRU layers on "
                  "per-channel int8 weights, activations quantized per call) or `bf16` (the onednn delegate's convolutions and "
                  "linear layers on bf16 weights and inputs, and brisk's attention kernel on bf16 products, with "
                  "fp32 accumulation, on CPUs with AVX512_BF16; "
                  "elsewhere fp32 with a warning); repeatable, the first listed mode that runs a layer takes it; "
                  "an unknown name is an error at load (see \"Reduced precision\")",
       .default_note = "none: fp32"},
      {.name = "use_out_variants", .field = &O::use_out_variants, .flag = "no-out-variants",
       .help = "use out-variant kernels"},
      {.name = "use_native", .field = &O::use_native, .flag = "no-native", .help = "use native kernels (prim ops too)"},
      {.name = "fallback_only", .field = &O::fallback_only, .flag = "fallback-only",
       .help = "run every node through the TorchScript operator"},
      {.name = "strict_inputs", .field = &O::strict_inputs, .flag = "no-strict-inputs",
       .help = "fix tensor inputs' dtype/rank on the first run; refuse others"},
      {.name = "memory_planning", .field = &O::memory_planning, .flag = "no-memory-planning",
       .help = "place intermediate tensors in one planned slab per block"},
      {.name = "planner", .field = &O::planner, .flag = "planner", .metavar = "NAME",
       .help = "memory layout algorithm: {planners}",
       .details = "layout algorithm: {planners}; the default is the smallest of best-fit layouts in several "
                  "placement orders, stopping at the lower bound (ResNet-18 at batch 8: 38.5 -> 32.3 MB)"},
      {.name = "inplace_reuse", .field = &O::inplace_reuse, .flag = "no-inplace-reuse",
       .help = "elementwise kernels may write their result into an input tensor that nothing else reads",
       .details = "elementwise kernels (relu, hardtanh, add, ...) may write their result into an input tensor "
                  "nothing else reads or aliases, as the model's `relu_`/`add_` did before freezing"},
      {.name = "plan_kernel_scratch", .field = &O::plan_kernel_scratch, .flag = "no-plan-scratch",
       .help = "kernels' temporaries (oneDNN's buffers in conv) come from the planned slab, not the heap",
       .details = "temporaries of kernels whose results are captured into the slab (oneDNN's reorder buffers in "
                  "conv) are served from the slab too, planned to live during that step only"},
      {.name = "manage_output_tensors", .field = &O::manage_output_tensors, .flag = "manage-output-tensors",
       .help = "write output tensors into an output arena, reused only once the caller released the previous "
               "run's outputs (never overwritten)"},
      {.name = "max_runtimes", .field = &O::max_runtimes, .flag = "max-runtimes", .metavar = "N", .min = 0,
       .max = 65536, .help = "runtimes a Module's pool may hold; callers beyond wait (0 = unbounded)",
       .default_note = "unbounded"},
      {.name = "runtime_idle_ms", .field = &O::runtime_idle_ms, .flag = "runtime-idle-ms", .metavar = "N",
       .min = 0, .max = 7LL * 24 * 3600 * 1000,  // a week
       .help = "idle runtimes older than this many ms are freed (0 = never)"},
      {.name = "max_parallel_ops", .field = &O::max_parallel_ops, .flag = "max-parallel-ops", .metavar = "N",
       .min = 1, .max = kMaxThreads,
       .help = "run up to N independent nodes at once on the inter-op arena (1: serial executor)"},
      // The CLI's --threads is applied by the command itself (bench defaults to 1 when the
      // flag is left out; --threads 0 is libtorch's choice there too).
      {.name = "intra_op_threads", .field = &O::intra_op_threads, .flag = "threads", .metavar = "N", .min = 0,
       .max = kMaxThreads,
       .help = "at::set_num_threads (also MKL's threads), once per process (0 = no preference)",
       .default_note = "libtorch's; `bench`: 1"},
      {.name = "inter_op_threads", .field = &O::inter_op_threads, .flag = "inter-op-threads", .metavar = "N",
       .min = 0, .max = kMaxThreads,
       .help = "size of the inter-op arena that runs forks and parallel nodes, once per process (0 = cores)",
       .default_note = "cores"},
  };
}

template <typename T>
constexpr OptionType typeOfMember() {
  if constexpr (std::is_same_v<T, bool>) return OptionType::kBool;
  else if constexpr (std::is_integral_v<T>) return OptionType::kInt;
  else if constexpr (std::is_same_v<T, std::string>) return OptionType::kString;
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return OptionType::kStringList;
  else return OptionType::kPluginOptions;
}

// The value type of a member pointer `T Options::*`.
template <typename M>
struct MemberType;
template <typename T>
struct MemberType<T Options::*> {
  using type = T;
};

[[noreturn]] void wrongType(const OptionSpec& spec, const OptionValue& value) {
  static const OptionType kTypes[] = {OptionType::kBool, OptionType::kInt, OptionType::kString,
                                      OptionType::kStringList, OptionType::kPluginOptions};
  throw Error(std::string("option '") + spec.name + "' expects a " + optionTypeName(spec.type()) + ", got a " +
              optionTypeName(kTypes[value.index()]));
}

std::string markdownCell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string readmeDefault(const OptionSpec& spec) {
  const OptionValue v = getOption(Options{}, spec);
  std::string out;
  switch (spec.type()) {
    case OptionType::kBool: out = std::get<bool>(v) ? "true" : "false"; break;
    case OptionType::kInt: out = std::to_string(std::get<int64_t>(v)); break;
    case OptionType::kString:  // "" reads as "—", not as an empty code span
      if (!std::get<std::string>(v).empty()) out = "`" + std::get<std::string>(v) + "`";
      break;
    case OptionType::kStringList:
      for (const std::string& s : std::get<std::vector<std::string>>(v)) out += (out.empty() ? "`" : ", `") + s + "`";
      break;
    case OptionType::kPluginOptions: break;
  }
  if (out.empty()) out = "—";
  if (*spec.default_note) out += std::string(" (") + spec.default_note + ")";
  return out;
}

}  // namespace

const char* optionTypeName(OptionType t) {
  switch (t) {
    case OptionType::kBool: return "bool";
    case OptionType::kInt: return "int";
    case OptionType::kString: return "str";
    case OptionType::kStringList: return "list of str";
    case OptionType::kPluginOptions: return "map of plugin options";
  }
  return "?";
}

OptionType OptionSpec::type() const {
  return std::visit([](auto member) { return typeOfMember<typename MemberType<decltype(member)>::type>(); }, field);
}

const std::vector<OptionSpec>& optionTable() {
  static const std::vector<OptionSpec> table = makeTable();
  return table;
}

const OptionSpec* findOption(std::string_view name) {
  for (const OptionSpec& s : optionTable())
    if (name == s.name) return &s;
  return nullptr;
}

std::string optionNames() {
  std::string out;
  for (const OptionSpec& s : optionTable()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

std::string describeRange(int64_t min, int64_t max) {
  return "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

OptionValue getOption(const Options& o, const OptionSpec& spec) {
  return std::visit(
      [&](auto member) -> OptionValue {
        using T = typename MemberType<decltype(member)>::type;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
          return static_cast<int64_t>(o.*member);  // size_t above INT64_MAX reads as negative: out of range
        else
          return o.*member;
      },
      spec.field);
}

void setOption(Options& o, const OptionSpec& spec, OptionValue value) {
  std::visit(
      [&](auto member) {
        using T = typename MemberType<decltype(member)>::type;
        using V = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int64_t, T>;
        if (!std::holds_alternative<V>(value)) wrongType(spec, value);
        if constexpr (std::is_same_v<V, int64_t>) {
          const int64_t v = std::get<int64_t>(value);
          if (v < spec.min || v > spec.max)
            throw Error(outOfRange(spec, std::to_string(v)));
          o.*member = static_cast<T>(v);
        } else {
          o.*member = std::move(std::get<V>(value));
        }
      },
      spec.field);
}

void setOption(Options& o, std::string_view name, OptionValue value) {
  const OptionSpec* spec = findOption(name);
  if (!spec) throw Error("unknown option '" + std::string(name) + "' (options: " + optionNames() + ")");
  setOption(o, *spec, std::move(value));
}

std::string formatOption(const OptionValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, std::string>) return x;
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string out;
          for (const std::string& s : x) out += (out.empty() ? "" : ",") + s;
          return "[" + out + "]";
        } else {
          std::string out;
          for (const auto& [k, pv] : x)
            out += (out.empty() ? "" : ",") + k + "=" + std::visit([](const auto& p) { return formatOption(p); }, pv);
          return "{" + out + "}";
        }
      },
      v);
}

namespace {

// `text` with every "{key}" of `names` replaced by its list: "a, b" or, quoted for
// Markdown, "`a`, `b`".
std::string fillNames(std::string text, const OptionNameLists& names, bool markdown) {
  for (const auto& [key, list] : names) {
    std::string joined;
    for (const std::string& n : list) joined += (joined.empty() ? "" : ", ") + (markdown ? "`" + n + "`" : n);
    const std::string placeholder = "{" + key + "}";
    for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + joined.size()))
      text.replace(at, placeholder.size(), joined);
  }
  return text;
}

}  // namespace

std::string optionHelp(const OptionSpec& spec, const OptionNameLists& names) {
  return fillNames(spec.help, names, false);
}

std::string optionDetails(const OptionSpec& spec, const OptionNameLists& names) {
  return *spec.details ? fillNames(spec.details, names, true) : optionHelp(spec, names);
}

std::string outOfRange(const OptionSpec& spec, const std::string& got) {
  return std::string("option '") + spec.name + "' must be in " + describeRange(spec.min, spec.max) + ", got " + got;
}

std::string renderOptionsMarkdown(const OptionNameLists& names) {
  std::string out =
      "| option | flag | default | range | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const OptionSpec& s : optionTable()) {
    std::string flag = *s.flag ? std::string("`--") + s.flag + (*s.metavar ? std::string(" ") + s.metavar : "") + "`"
                               : "—";
    std::string range = s.type() == OptionType::kInt ? std::to_string(s.min) + "-" + std::to_string(s.max) : "";
    out += "| `" + std::string(s.name) + "` | " + markdownCell(flag) + " | " + readmeDefault(s) + " | " + range +
           " | " + markdownCell(optionDetails(s, names)) + " |\n";
  }
  return out;
}

std::string renderOptionsDoc(const OptionNameLists& names) {
  std::string out;
  for (const OptionSpec& s : optionTable()) {
    out += std::string("  ") + s.name + " (" + optionTypeName(s.type()) + ", default " +
           formatOption(getOption(Options{}, s));
    if (s.type() == OptionType::kInt) out += ", " + describeRange(s.min, s.max);
    out += "): " + optionHelp(s, names) + "\n";
  }
  return out;
}

}  // namespace brisk

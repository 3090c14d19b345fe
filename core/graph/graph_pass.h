#pragma once
// Load-time graph passes: named rewrites of a brisk Graph that run after the frontend
// and before kernel choice, in a set order, once per load. Core registers its own
// (builtin_passes.h); a plugin adds one with PluginRegistrar::pass, named
// "<plugin>.<name>". Users turn any of them off by name (Options::disabled_passes), and
// `brisk inspect` shows what each one changed.
//
// A pass may rewrite the graph with the editing calls of graph.h (insertNodeBefore,
// eraseNode, replaceAllUses, addConstant); Module calls Graph::finalize() after the last
// pass. Part of the plugin API: no torch headers beyond graph.h's.
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace brisk {

class Graph;
struct Options;

struct PassContext {
  const std::string& model;  // for messages
  const Options& options;
};

// Returns how many nodes it changed (rewrote, removed, folded or annotated); 0 when it
// found nothing to do. Throws brisk::Error for a graph it cannot handle.
using GraphPassFn = std::function<size_t(Graph&, const PassContext&)>;

// Where passes run, lowest first; passes with the same order run in registration order.
enum PassOrder : int {
  kPassOrderSimplify = 100,  // dead code
  kPassOrderFold = 200,      // constant folding
  kPassOrderFuse = 500,      // pattern rewrites (plugins usually go here)
  kPassOrderPartition = 600, // delegate backends claim groups of nodes (core/kernels/partitioner.h)
  kPassOrderCleanUp = 800,   // dead code again, after the rewrites
  kPassOrderOutputs = 850,   // what the caller receives (no constant handed out)
  kPassOrderAnnotate = 900,  // marks kernels read (in-place reuse)
};

struct GraphPass {
  std::string name;      // unique: "fold_constants", "my_plugin.fuse_gelu"
  int order;             // PassOrder or any int between
  std::string provider;  // "core" or the plugin's name
  std::string help;      // one line, for inspect and the docs
  GraphPassFn run;
  // Non-empty for a pass the runtime's correctness rests on: why it cannot be disabled
  // (disabled_passes naming it is a load error with this reason).
  std::string required = {};
};

struct PassResult {
  std::string name;
  std::string provider;
  size_t changed = 0;
  double micros = 0;
  bool skipped = false;  // disabled by the user (or by the option it depends on)
};

class PassRegistry {
 public:
  // Throws brisk::Error when the name is empty or taken.
  void add(GraphPass pass);
  // In the order they run.
  std::vector<const GraphPass*> ordered() const;
  const GraphPass* find(const std::string& name) const;
  // Runs every pass not in Options::disabled_passes, in order. A pass's exception
  // becomes a brisk::Error naming the model and the pass.
  std::vector<PassResult> run(Graph& graph, const PassContext& ctx) const;
  // Throws brisk::Error naming `model` for a disabled_passes entry no pass has, or one
  // that names a required pass.
  void checkDisabled(const Options& options, const std::string& model) const;

 private:
  const GraphPass* findLocked(const std::string& name) const;
  // Plugins may register while another thread loads a model on the same registries.
  mutable std::mutex mu_;
  std::deque<GraphPass> passes_;  // stable addresses; never removed
};

}  // namespace brisk

#pragma once
// Per-node timing of runs (`brisk bench --profile`, the Python binding's profile()).
// Pass a Profiler in RunOptions; the executor then times every step with the steady
// clock and records (module, node, thread, begin, end). Recording takes a mutex: a
// profiled run is for looking, not for latency numbers (about 50 ns extra per node).
// Aggregates and a Chrome trace (chrome://tracing, Perfetto) are computed from events.
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

namespace brisk {

class Kernel;
class CompiledModule;
class Node;

class Profiler {
 public:
  struct Event {
    const CompiledModule* module;  // owner of `node` (fork children are their own modules)
    const Node* node;      // null: a whole run of `module`
    const Kernel* kernel;  // the node's kernel (null for a run)
    int64_t begin_ns;      // steady clock
    int64_t end_ns;
    uint32_t thread;       // small per-process thread number (0, 1, ...)
  };
  struct Stat {
    std::string model;  // owning module's name (per-node stats)
    std::string node;   // one-line node text (per-node stats)
    std::string op;     // registry key, e.g. "aten::add.Tensor"
    std::string kind;   // out_variant / native / delegate / fallback
    std::string provider;
    int64_t calls = 0;
    double total_us = 0;
  };

  static int64_t now();
  static uint32_t threadNumber();

  void record(const CompiledModule* module, const Node* node, const Kernel* kernel, int64_t begin_ns, int64_t end_ns);
  void clear();
  std::vector<Event> events() const;
  size_t runs() const;  // top-level and fork-child runs recorded

  // Sums, most expensive first. Modules must still be alive.
  std::vector<Stat> byNode() const;
  std::vector<Stat> byOp() const;
  // Whether a node's time is kernel time: leaf nodes, not If/Loop/fork/wait (whose time
  // is other nodes' or waiting). A delegate partition is one kernel (its own call or,
  // when it falls back, the nodes of its nested block, which are then not counted again).
  static bool isKernelNode(const Node& n);
  // Sum of the times of kernel nodes (isKernelNode), in microseconds. For a serial run without forks: time inside kernels,
  // so (run time - kernelMicros) / nodes is the executor's own cost per node.
  double kernelMicros() const;
  // Chrome trace-event JSON of everything recorded; one row per thread.
  void writeChromeTrace(std::ostream& os) const;

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

}  // namespace brisk

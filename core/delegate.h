#pragma once
// Delegate backends: a backend takes whole subgraphs (partitions) instead of single
// ops. A partitioning pass asks each available backend which nodes it can take
// (capability, as ONNX Runtime's GetCapability) and replaces each partition with one
// `brisk::call_delegate` node whose subgraph the backend compiles into one Kernel.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/kernel.h"

namespace brisk {

class Graph;
class Node;
struct Options;

class DelegateBackend {
 public:
  virtual ~DelegateBackend() = default;
  virtual std::string name() const = 0;
  // False when the backend's library/hardware is unusable on this machine.
  virtual bool isAvailable() const = 0;
  // Groups of nodes of `graph`'s top block (each group convex and in order) that the
  // backend wants to run as one partition.
  virtual std::vector<std::vector<const Node*>> partition(const Graph& graph) const = 0;
  // Compiles a partition (as its own Graph) into a kernel of kind kDelegate.
  virtual std::unique_ptr<Kernel> compile(const Graph& partition, const Options& options) const = 0;
};

class DelegateRegistry {
 public:
  void add(std::shared_ptr<DelegateBackend> backend, std::string provider);
  std::shared_ptr<DelegateBackend> lookup(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::shared_ptr<DelegateBackend>, std::string>> backends_;
};

}  // namespace brisk

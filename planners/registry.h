// Name -> layout algorithm, so the runtime (and plugins) can pick a planner by string.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "planners/layout.h"

namespace brisk::planners {

class PlannerRegistry {
 public:
  PlannerRegistry() = default;
  PlannerRegistry(const PlannerRegistry&) = delete;
  PlannerRegistry& operator=(const PlannerRegistry&) = delete;

  // The process-wide registry, pre-populated with the built-in algorithms (registry.cc
  // lists them; names() reads them back). They are registered inside global() itself
  // rather than by static initializers, which a static link could drop.
  static PlannerRegistry& global();

  // Throws std::invalid_argument if `name` is taken or `algorithm` is empty: entries are
  // never replaced or removed, so pointers from lookup() stay valid and safe to call
  // while other threads add.
  void add(std::string name, LayoutAlgorithm algorithm);
  // nullptr when unknown.
  const LayoutAlgorithm* lookup(std::string_view name) const;
  // Sorted names.
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, LayoutAlgorithm, std::less<>> algorithms_;  // node-based: stable
};

}  // namespace brisk::planners

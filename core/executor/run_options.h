#pragma once
// Per-call settings of Module::run / Runtime::run (load-time settings are in Options).
// Light: no torch headers.
#include "threading/task_launcher.h"

namespace brisk {

class Profiler;

struct RunOptions {
  // Where prim::fork tasks run. Empty: brisk's inter-op arena (threading/). A launcher
  // that runs tasks inline makes forks sequential.
  TaskLauncher launcher;
  // When set, every node of the run (and of its fork tasks) is timed into it.
  Profiler* profiler = nullptr;
};

}  // namespace brisk

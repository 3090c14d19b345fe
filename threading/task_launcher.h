#pragma once
// How brisk hands work to a thread pool. A launcher must run every task it is given
// exactly once, on any thread, eventually; it may also run it inline. Callers that have
// their own executor (a service's thread pool, folly, asio) pass one to
// Module::runAsync / RunOptions; the default is the process-wide inter-op arena.
#include <functional>

namespace brisk {

using Task = std::function<void()>;
using TaskLauncher = std::function<void(Task)>;

}  // namespace brisk

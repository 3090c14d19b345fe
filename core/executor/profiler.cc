#include "core/executor/profiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <ostream>
#include <set>

#include "core/graph/graph.h"
#include "core/kernels/kernel.h"
#include "core/executor/compiled_module.h"

namespace brisk {
namespace {

void jsonString(std::ostream& os, const std::string& s) {
  os << '"';
  for (char c : s) {
    switch (c) {
      case '"': os << "\\\""; break;
      case '\\': os << "\\\\"; break;
      case '\n': os << "\\n"; break;
      case '\t': os << "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          const char* hex = "0123456789abcdef";
          os << "\\u00" << hex[(c >> 4) & 0xf] << hex[c & 0xf];
        } else {
          os << c;
        }
    }
  }
  os << '"';
}

}  // namespace

int64_t Profiler::now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t Profiler::threadNumber() {
  static std::atomic<uint32_t> next{0};
  thread_local uint32_t mine = next.fetch_add(1);
  return mine;
}

void Profiler::record(const CompiledModule* module, const Node* node, const Kernel* kernel, int64_t begin_ns,
                      int64_t end_ns) {
  const uint32_t t = threadNumber();
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(Event{module, node, kernel, begin_ns, end_ns, t});
}

void Profiler::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
}

std::vector<Profiler::Event> Profiler::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

size_t Profiler::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(std::count_if(events_.begin(), events_.end(), [](const Event& e) { return !e.node; }));
}

std::vector<Profiler::Stat> Profiler::byNode() const {
  std::map<std::pair<const CompiledModule*, const Node*>, Stat> acc;
  for (const Event& e : events()) {
    if (!e.node) continue;
    Stat& s = acc[{e.module, e.node}];
    if (s.calls == 0) {
      s.model = e.module->name();
      s.node = e.node->str();
      s.op = e.node->key();
      s.kind = e.kernel ? kernelKindName(e.kernel->kind()) : "";
      s.provider = e.kernel ? e.kernel->provider() : "";
    }
    ++s.calls;
    s.total_us += static_cast<double>(e.end_ns - e.begin_ns) / 1e3;
  }
  std::vector<Stat> out;
  for (auto& [k, s] : acc) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const Stat& a, const Stat& b) { return a.total_us > b.total_us; });
  return out;
}

std::vector<Profiler::Stat> Profiler::byOp() const {
  std::map<std::pair<std::string, std::string>, Stat> acc;
  for (Stat& n : byNode()) {
    Stat& s = acc[{n.op, n.kind}];
    s.op = n.op;
    s.kind = n.kind;
    s.provider = n.provider;
    s.calls += n.calls;
    s.total_us += n.total_us;
  }
  std::vector<Stat> out;
  for (auto& [k, s] : acc) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const Stat& a, const Stat& b) { return a.total_us > b.total_us; });
  return out;
}

bool Profiler::isKernelNode(const Node& n) {
  for (const Block* b = n.owningBlock(); b && b->owningNode(); b = b->owningNode()->owningBlock())
    if (b->owningNode()->kind() == kDelegateKind) return false;
  if (n.kind() == kDelegateKind) return true;
  return n.blocks().empty() && n.kind() != "prim::fork" && n.kind() != "aten::wait";
}

double Profiler::kernelMicros() const {
  double us = 0;
  for (const Event& e : events())
    if (e.node && isKernelNode(*e.node)) us += static_cast<double>(e.end_ns - e.begin_ns) / 1e3;
  return us;
}

void Profiler::writeChromeTrace(std::ostream& os) const {
  const std::vector<Event> evs = events();
  int64_t t0 = evs.empty() ? 0 : evs.front().begin_ns;
  std::set<uint32_t> threads;
  for (const Event& e : evs) {
    t0 = std::min(t0, e.begin_ns);
    threads.insert(e.thread);
  }
  os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto sep = [&] {
    if (!first) os << ",\n";
    first = false;
  };
  for (uint32_t t : threads) {
    sep();
    os << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" << t << ",\"args\":{\"name\":\"brisk thread "
       << t << "\"}}";
  }
  for (const Event& e : evs) {
    sep();
    os << "{\"ph\":\"X\",\"pid\":1,\"tid\":" << e.thread << ",\"ts\":" << static_cast<double>(e.begin_ns - t0) / 1e3
       << ",\"dur\":" << static_cast<double>(e.end_ns - e.begin_ns) / 1e3 << ",\"name\":";
    if (e.node) {
      jsonString(os, e.node->key());
      os << ",\"cat\":";
      jsonString(os, e.kernel ? kernelKindName(e.kernel->kind()) : "node");
      os << ",\"args\":{\"model\":";
      jsonString(os, e.module->name());
      os << ",\"node\":";
      jsonString(os, e.node->str());
      os << "}}";
    } else {
      jsonString(os, "run " + e.module->name());
      os << ",\"cat\":\"run\"}";
    }
  }
  os << "]}\n";
}

}  // namespace brisk

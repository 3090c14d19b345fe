#pragma once
// The timed part of `brisk bench`: executors warmed up, then timed in rounds of
// rotating order, so that neither executor always runs first on a machine whose state
// (caches, frequency, other load) drifts; and the latency tables printed from them.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/report/stats.h"

namespace brisk::cli {

struct Executor {
  std::string name;
  std::function<void()> run;         // one inference; the output is dropped inside the timing
  std::vector<double> latencies_us;  // every timed iteration of every round
  std::vector<double> round_p50_us;  // one per round
  int64_t warmup_iters = 0;
};

// `warmup` iterations; warmup < 0: auto, at least 3 iterations and at least 100 ms.
void warmUp(Executor& e, int64_t warmup);

// `rounds` rounds; in each, every executor times a block of `iters` iterations (iters
// <= 0: about `seconds`), starting one executor further along each round. execs[0] is
// brisk; `interpreter` is one of `execs`, or null when the model has no interpreter
// reference (a PT2 archive without a TorchScript twin). The table printed to `os` shows
// brisk's p50 per round, and the interpreter's and their ratio when there is one.
// Returns the rounds as JSON objects.
std::vector<std::string> runRounds(const std::vector<Executor*>& execs, const Executor* interpreter, int64_t rounds,
                                   int64_t iters, double seconds, std::ostream& os);

// Per round, `slower`'s p50 over `faster`'s.
std::vector<double> roundRatios(const Executor& slower, const Executor& faster);

// The latency table: header, then one row per executor.
std::string summaryHeader();
std::string summaryRow(const std::string& name, const report::LatencySummary& s);
std::string summaryJson(const report::LatencySummary& s);

}  // namespace brisk::cli

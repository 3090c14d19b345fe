#pragma once
// A simulated pass over a pickle's opcodes that builds nothing: how deeply its values
// nest, whether it is damaged in ways torch's Unpickler acts on before noticing, and
// which storages its persistent ids name. torch::jit::load and torch::load trust their
// pickles; archive_check.h uses this scan to refuse what would crash them. No torch
// headers: the scan reads bytes only.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace brisk {

// What the pass learns.
struct PickleScan {
  // Deepest nesting of containers (lists, tuples, dicts, objects built through
  // REDUCE/BUILD). torch's Unpickler and IValue's destructors recurse once per level,
  // so a small file nesting a value a few hundred thousand levels deep
  // (`K\x01` + `\x85` * 200000 is 200 KB) overflows the stack.
  size_t depth = 0;
  bool complete = false;  // reached STOP
  std::optional<uint8_t> unknown_opcode;  // the first opcode the scan does not know
  size_t unknown_at = 0;
  // Damage torch's Unpickler would act on before noticing (an operand running past the
  // end, a memo index it would size a table to): what, and the opcode's offset.
  std::string damage;
  size_t damage_at = 0;
  // The storages its persistent ids name: ('storage', torch.<T>Storage, key, location,
  // numel), as torch.save and torch.jit.save write them.
  struct Storage {
    std::string key;
    std::string type;  // "torch.FloatStorage"
    int64_t numel;
  };
  std::vector<Storage> storages;
};

// Stops at STOP, at the first opcode it does not know, or at the first damage.
PickleScan scanPickle(std::string_view pickle);

// No TorchScript archive or inputs file nests deeper than this; 50x what real ones do.
constexpr size_t kMaxPickleNesting = 1000;

}  // namespace brisk

#include "core/frontend/pickle_scan.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace brisk {
namespace {

uint32_t littleEndian(std::string_view b, size_t at, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

// One entry of the unpickler's stack: its nesting depth and, for the few values a
// storage reference is made of (strings, ints, globals, flat tuples of them), the value
// itself. Containers keep no contents, so memo copies stay small.
struct SimValue {
  long depth = 0;  // -1: MARK
  enum Kind : uint8_t { kOther, kStr, kInt, kGlobal, kTuple } kind = kOther;
  std::string s;
  int64_t n = 0;
  std::vector<SimValue> items;  // kTuple: only when every item is a scalar kind
};

// Runs the opcodes TorchScript's and Python's picklers write (protocol 2) on a stack of
// SimValues. Each group of opcodes has its own method; each says whether it handled
// the opcode and how many operand bytes follow it.
class PickleSimulator {
 public:
  explicit PickleSimulator(std::string_view p) : p_(p) {}
  PickleScan run();

 private:
  enum class Outcome { kNotMine, kNext, kStop };
  Outcome valueOp(uint8_t op, size_t& operand);
  Outcome containerOp(uint8_t op);
  Outcome memoOp(uint8_t op, size_t& operand);
  Outcome stackOp(uint8_t op);

  void note(long d) { out_.depth = std::max(out_.depth, static_cast<size_t>(std::max(d, 0L))); }
  void push(SimValue v) {
    note(v.depth);
    stack_.push_back(std::move(v));
  }
  void pushDepth(long d) { push(SimValue{d}); }
  SimValue pop();
  std::vector<SimValue> popToMark();
  static long deepest(const std::vector<SimValue>& items);
  SimValue tupleOf(std::vector<SimValue> items) const;
  void raiseTop(long inner);
  void persistentId(const SimValue& id);
  // Operand length of a counted operand (`width` little-endian length bytes, then that
  // many bytes); more than what is left when the pickle ends inside it.
  size_t counted(int width) const {
    return rest_ < static_cast<size_t>(width) ? rest_ + 1 : width + size_t{littleEndian(p_, at_ + 1, width)};
  }
  SimValue intOperand(int width) const;
  SimValue long1(size_t operand) const;

  std::string_view p_;
  size_t at_ = 0;    // the current opcode's offset
  size_t rest_ = 0;  // bytes after it
  PickleScan out_;
  std::vector<SimValue> stack_;
  std::unordered_map<uint32_t, SimValue> memo_;
};

SimValue PickleSimulator::pop() {
  if (stack_.empty()) return SimValue{};
  SimValue v = std::move(stack_.back());
  stack_.pop_back();
  if (v.depth < 0) v = SimValue{};
  return v;
}

std::vector<SimValue> PickleSimulator::popToMark() {
  std::vector<SimValue> items;
  while (!stack_.empty() && stack_.back().depth >= 0) items.push_back(pop());
  if (!stack_.empty()) stack_.pop_back();
  std::reverse(items.begin(), items.end());
  return items;
}

long PickleSimulator::deepest(const std::vector<SimValue>& items) {
  long d = 0;
  for (const SimValue& i : items) d = std::max(d, i.depth);
  return d;
}

SimValue PickleSimulator::tupleOf(std::vector<SimValue> items) const {
  SimValue t{0, SimValue::kTuple};
  bool flat = items.size() <= 8;
  for (const SimValue& i : items) {
    t.depth = std::max(t.depth, i.depth + 1);
    flat = flat && i.kind != SimValue::kOther && i.kind != SimValue::kTuple;
  }
  if (items.empty()) t.depth = 1;
  if (flat) t.items = std::move(items);
  else t.kind = SimValue::kOther;
  return t;
}

// The top container now holds a value `inner` deep.
void PickleSimulator::raiseTop(long inner) {
  if (stack_.empty()) return;
  stack_.back().depth = std::max(stack_.back().depth, inner + 1);
  note(stack_.back().depth);
}

// ('storage', torch.<T>Storage, key, location, numel): what BINPERSID resolves.
void PickleSimulator::persistentId(const SimValue& id) {
  if (id.kind != SimValue::kTuple || id.items.size() != 5 || id.items[0].s != "storage" ||
      id.items[1].kind != SimValue::kGlobal || id.items[2].kind != SimValue::kStr ||
      id.items[4].kind != SimValue::kInt)
    return;
  out_.storages.push_back({id.items[2].s, id.items[1].s, id.items[4].n});
}

SimValue PickleSimulator::intOperand(int width) const {
  SimValue v{0, SimValue::kInt};
  if (rest_ >= static_cast<size_t>(width)) {
    uint32_t u = littleEndian(p_, at_ + 1, width);
    v.n = width == 4 ? static_cast<int32_t>(u) : static_cast<int64_t>(u);
  }
  return v;
}

// LONG1: a little-endian two's-complement integer of `operand - 1` bytes.
SimValue PickleSimulator::long1(size_t operand) const {
  SimValue v{0, SimValue::kInt};
  const size_t len = operand - 1;
  if (operand > rest_ || len < 1 || len > 8) {
    v.kind = SimValue::kOther;
    return v;
  }
  uint64_t u = 0;
  for (size_t i = len; i-- > 0;) u = (u << 8) | static_cast<uint8_t>(p_[at_ + 2 + i]);
  if (len < 8 && (u >> (8 * len - 1)) & 1) u |= ~uint64_t{0} << (8 * len);  // sign-extend
  v.n = static_cast<int64_t>(u);
  return v;
}

// Opcodes that push one scalar value.
PickleSimulator::Outcome PickleSimulator::valueOp(uint8_t op, size_t& operand) {
  switch (op) {
    case 0x80: operand = 1; return Outcome::kNext;                     // PROTO
    case 'K': case 'M': case 'J':                                      // BININT1/2, BININT
      operand = op == 'K' ? 1 : op == 'M' ? 2 : 4;
      push(intOperand(static_cast<int>(operand)));
      return Outcome::kNext;
    case 'G': operand = 8; pushDepth(0); return Outcome::kNext;        // BINFLOAT
    case 'N': case 0x88: case 0x89: pushDepth(0); return Outcome::kNext;  // None, True, False
    case 0x8a: operand = counted(1); push(long1(operand)); return Outcome::kNext;  // LONG1
    case 'X': case 0x8c: {                                             // BINUNICODE, SHORT_BINUNICODE
      operand = counted(op == 'X' ? 4 : 1);
      SimValue v{0, SimValue::kStr};
      const size_t header = op == 'X' ? 4 : 1;
      if (operand <= rest_) v.s = std::string(p_.substr(at_ + 1 + header, operand - header));
      push(std::move(v));
      return Outcome::kNext;
    }
    case 'B': case 'T': operand = counted(4); pushDepth(0); return Outcome::kNext;  // BINBYTES, BINSTRING
    case 'C': case 'U': operand = counted(1); pushDepth(0); return Outcome::kNext;  // SHORT_BINBYTES/STRING
    case 'c': {                                                        // GLOBAL module\nname\n
      const size_t nl1 = p_.find('\n', at_ + 1);
      const size_t nl2 = nl1 == std::string_view::npos ? nl1 : p_.find('\n', nl1 + 1);
      if (nl2 == std::string_view::npos) return Outcome::kStop;
      operand = nl2 - at_;
      SimValue v{0, SimValue::kGlobal};
      v.s = std::string(p_.substr(at_ + 1, nl1 - at_ - 1)) + "." + std::string(p_.substr(nl1 + 1, nl2 - nl1 - 1));
      push(std::move(v));
      return Outcome::kNext;
    }
    default: return Outcome::kNotMine;
  }
}

// Opcodes that build or fill containers and objects.
PickleSimulator::Outcome PickleSimulator::containerOp(uint8_t op) {
  switch (op) {
    case '}': case ']': pushDepth(1); break;                           // EMPTY_DICT, EMPTY_LIST
    case ')': push(tupleOf({})); break;                                // EMPTY_TUPLE
    case 't': push(tupleOf(popToMark())); break;                       // TUPLE
    case 'l': pushDepth(deepest(popToMark()) + 1); break;              // LIST
    case 0x85: case 0x86: case 0x87: {                                 // TUPLE1..3
      std::vector<SimValue> items;
      for (int i = 0; i < op - 0x84; ++i) items.push_back(pop());
      std::reverse(items.begin(), items.end());
      push(tupleOf(std::move(items)));
      break;
    }
    case 'a': case 'b': raiseTop(pop().depth); break;                  // APPEND, BUILD
    case 's': {                                                        // SETITEM
      const long v = pop().depth, k = pop().depth;
      raiseTop(std::max(k, v));
      break;
    }
    case 'e': case 'u': raiseTop(deepest(popToMark())); break;         // APPENDS, SETITEMS
    case 'R': case 0x81: {                                             // REDUCE, NEWOBJ
      const long args = pop().depth;
      pop();
      pushDepth(args + 1);
      break;
    }
    case 'Q': persistentId(pop()); pushDepth(0); break;                // BINPERSID
    default: return Outcome::kNotMine;
  }
  return Outcome::kNext;
}

// Memo writes and reads.
PickleSimulator::Outcome PickleSimulator::memoOp(uint8_t op, size_t& operand) {
  switch (op) {
    case 'q': case 'r': {                                              // BINPUT, LONG_BINPUT
      operand = op == 'q' ? 1 : 4;
      if (rest_ < operand) return Outcome::kNext;
      const uint32_t key = littleEndian(p_, at_ + 1, static_cast<int>(operand));
      // Picklers number memo entries from 0, one per BINPUT of at least 2 bytes; torch's
      // Unpickler sizes its memo table to the key (16 bytes an entry: 2^31 -> 32 GB).
      if (key > p_.size()) {
        out_.damage = "memo index " + std::to_string(key) + " is beyond any this pickle can hold";
        out_.damage_at = at_;
        return Outcome::kStop;
      }
      if (!stack_.empty() && stack_.back().depth >= 0) memo_[key] = stack_.back();
      return Outcome::kNext;
    }
    case 'h': case 'j': {                                              // BINGET, LONG_BINGET
      operand = op == 'h' ? 1 : 4;
      auto it = rest_ >= operand ? memo_.find(littleEndian(p_, at_ + 1, static_cast<int>(operand))) : memo_.end();
      push(it == memo_.end() ? SimValue{} : it->second);
      return Outcome::kNext;
    }
    default: return Outcome::kNotMine;
  }
}

// Marks and plain stack manipulation.
PickleSimulator::Outcome PickleSimulator::stackOp(uint8_t op) {
  switch (op) {
    case '(': stack_.push_back(SimValue{-1}); break;                   // MARK
    case '0': pop(); break;                                            // POP
    case '1': popToMark(); break;                                      // POP_MARK
    case '2':                                                          // DUP
      push(stack_.empty() || stack_.back().depth < 0 ? SimValue{} : stack_.back());
      break;
    case '.': out_.complete = true; return Outcome::kStop;             // STOP
    default: return Outcome::kNotMine;
  }
  return Outcome::kNext;
}

PickleScan PickleSimulator::run() {
  for (at_ = 0; at_ < p_.size();) {
    const uint8_t op = static_cast<uint8_t>(p_[at_]);
    rest_ = p_.size() - at_ - 1;
    size_t operand = 0;
    Outcome r = valueOp(op, operand);
    if (r == Outcome::kNotMine) r = containerOp(op);
    if (r == Outcome::kNotMine) r = memoOp(op, operand);
    if (r == Outcome::kNotMine) r = stackOp(op);
    if (r == Outcome::kNotMine) {
      out_.unknown_opcode = op;
      out_.unknown_at = at_;
      break;
    }
    if (r == Outcome::kStop) break;
    if (operand > rest_) {  // torch's Unpickler would allocate what the operand claims first
      out_.damage = "an operand runs past the end of the pickle";
      out_.damage_at = at_;
      break;
    }
    at_ += 1 + operand;
  }
  return std::move(out_);
}

}  // namespace

PickleScan scanPickle(std::string_view pickle) { return PickleSimulator(pickle).run(); }

}  // namespace brisk

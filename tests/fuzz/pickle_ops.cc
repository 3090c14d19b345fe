#include "tests/fuzz/pickle_ops.h"

namespace brisk::fuzz {
namespace {

uint32_t le(std::string_view b, size_t at, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

// Operand length of `code` at `at` (the opcode byte), or -1 if unknown/past the end.
long operandLength(std::string_view b, size_t at) {
  size_t rest = b.size() - at - 1;
  auto fixed = [&](size_t n) -> long { return n <= rest ? static_cast<long>(n) : -1; };
  auto counted = [&](int width) -> long {
    if (static_cast<size_t>(width) > rest) return -1;
    size_t n = le(b, at + 1, width);
    return width + n <= rest ? static_cast<long>(width + n) : -1;
  };
  auto lines = [&](int count) -> long {
    size_t p = at + 1;
    for (int i = 0; i < count; ++i) {
      size_t nl = b.find('\n', p);
      if (nl == std::string_view::npos) return -1;
      p = nl + 1;
    }
    return static_cast<long>(p - at - 1);
  };
  switch (static_cast<uint8_t>(b[at])) {
    case 0x80: return fixed(1);                         // PROTO
    case 'K': case 'q': case 'h': return fixed(1);      // BININT1, BINPUT, BINGET
    case 'M': return fixed(2);                          // BININT2
    case 'J': case 'r': case 'j': return fixed(4);      // BININT, LONG_BINPUT, LONG_BINGET
    case 'G': return fixed(8);                          // BINFLOAT
    case 0x8a: return counted(1);                       // LONG1
    case 'X': case 'B': case 'T': return counted(4);    // BINUNICODE, BINBYTES, BINSTRING
    case 'C': case 'U': case 0x8c: return counted(1);   // SHORT_BINBYTES, SHORT_BINSTRING, SHORT_BINUNICODE
    case 'c': return lines(2);                          // GLOBAL module\nname\n
    case '}': case ']': case ')': case '(': case 'R': case 'b': case 't': case 0x85: case 0x86:
    case 0x87: case 'u': case 's': case 'e': case 'a': case 0x88: case 0x89: case 'N': case 'Q':
    case '.': case '0': case '1': case '2': case 0x94:
      return 0;
    default: return -1;
  }
}

}  // namespace

std::vector<PickleOp> scanPickle(std::string_view b) {
  std::vector<PickleOp> ops;
  size_t at = 0;
  while (at < b.size()) {
    long n = operandLength(b, at);
    if (n < 0) {
      ops.push_back(PickleOp{at, b.size() - at, static_cast<uint8_t>(b[at]), false});
      break;
    }
    ops.push_back(PickleOp{at, static_cast<size_t>(n) + 1, static_cast<uint8_t>(b[at]), true});
    at += n + 1;
  }
  return ops;
}

const std::vector<uint8_t>& stackOpcodes() {
  static const std::vector<uint8_t> ops = {'}', ']', ')', '(', 'R', 'b', 't', 0x85, 0x86, 0x87, 'u',
                                           's', 'e', 'a', 0x88, 0x89, 'N', 'Q', '.', '0', '1', '2'};
  return ops;
}

}  // namespace brisk::fuzz

#pragma once
// Splits a pickle (protocol 2, what torch.save and TorchScript's data.pkl/constants.pkl
// use) into opcodes with their operands, so the mutators can change it one opcode at a
// time: replace, delete, duplicate, re-nest, change an integer or a string operand.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brisk::fuzz {

struct PickleOp {
  size_t pos = 0;  // offset of the opcode byte
  size_t len = 0;  // opcode + operand bytes
  uint8_t code = 0;
  bool known = true;  // false: an opcode the scanner does not know; the rest is one blob
};

std::vector<PickleOp> scanPickle(std::string_view bytes);

// Opcodes that take no operand and only move things on the unpickler's stack: the
// vocabulary for replacing and inserting opcodes.
const std::vector<uint8_t>& stackOpcodes();

}  // namespace brisk::fuzz

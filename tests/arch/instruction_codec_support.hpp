#pragma once
// Helpers of the instruction codec's tests: one instruction decoded or described, a list
// encoded, a row described word by word, and the message of an encode that must fail.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "arch/instruction.hpp"

namespace lockstep::arch::codec_testing {

inline Instruction decode_one(std::vector<uint32_t> words) {
  const auto decoded = decode(words, 0);
  EXPECT_EQ(decoded.word_count, words.size());
  return decoded.instruction;
}

inline std::string text_of(std::vector<uint32_t> words) { return describe(decode_one(words)); }

inline std::vector<uint32_t> encode_all(const std::vector<Instruction>& instructions) {
  std::vector<uint32_t> words;
  for (const auto& in : instructions) encode_into(in, words);
  return words;
}

inline std::vector<std::string> texts_of(const std::vector<uint32_t>& words) {
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); i += decode(words, i).word_count) {
    out.push_back(describe(decode(words, i).instruction));
  }
  return out;
}

inline std::string encode_failure(const Instruction& in) {
  try {
    encode(in);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "encode accepted " << describe(in);
  return "";
}
}  // namespace lockstep::arch::codec_testing

#pragma once
// p2p_3w's exchange in a Repeat of 3, as package YAML: tile 0 sends the 12 bytes at 0x60000
// (tokens of seed 7), tile 1 receives them at 0x70000. Each test adds segments, steps and
// expectations; never includes anything but the standard library.
#include <string>

namespace lockstep::testing {

inline const std::string kP2pSend = "{exchange: {phase: 1, row: 0x50000}}";
inline const std::string kP2pReceive = "{exchange: {phase: 1, row: 0x50000, incoming_base: 0x70000}}";
// The 12 bytes p2p_3w's sender holds (tokens 7), as tile 1 receives them.
inline const std::string kP2pTokens = "008001400180014002800140";

// The two tiles' rows and tables, with the extra segment lines and the Repeat bodies given;
// `expectations` (lines of the list) may be empty.
inline std::string repeated_p2p(const std::string& sender_extra, const std::string& sender_body,
                                const std::string& receiver_extra, const std::string& receiver_body,
                                const std::string& expectations) {
  return "version: 1\n"
         "machine: {name: ipu21-c600-t16, digest: \"ec84217a6976797c\"}\n"
         "phases:\n"
         "  - {id: 1, label: p2p}\n"
         "tiles:\n"
         "  - tile: 0\n"
         "    table: {address: 0x50000, size: 0x1000}\n"
         "    segments:\n"
         "      - {address: 0x50000, words: [40a0001b, 784c0001, 43a00000]}\n"
         "      - {address: 0x60000, size: 12, fill: {tokens: 7}}\n" +
         sender_extra +
         "    steps:\n"
         "      - repeat: {count: 3, pointers: [{address: 0x58000, stride: 12}], body: [" +
         sender_body +
         "]}\n"
         "  - tile: 1\n"
         "    table: {address: 0x50000, size: 0x1000}\n"
         "    segments:\n"
         "      - {address: 0x50000, words: [64000000, 64008640, 61800000, 40a00007, 43a00000]}\n" +
         receiver_extra +
         "    steps:\n"
         "      - repeat: {count: 3, pointers: [{address: 0x58000, stride: 12}], body: [" +
         receiver_body + "]}\n" + (expectations.empty() ? "" : "expectations:\n" + expectations);
}

}  // namespace lockstep::testing

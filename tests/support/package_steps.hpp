#pragma once
// The step of tile `tile` at an index path (step 3.1: the second step of the body of the Repeat
// at step 3), as its kind T, for tests that edit one field of a package.
#include <initializer_list>
#include <variant>
#include <vector>

#include "formats/package.hpp"

namespace lockstep::testing {

template <typename T>
T& step_of(arch::Package& p, size_t tile, std::initializer_list<size_t> path) {
  std::vector<arch::Step>* list = &p.tiles[tile].steps;
  arch::Step* step = nullptr;
  for (size_t index : path) {
    step = &(*list)[index];
    if (auto* r = std::get_if<arch::RepeatStep>(&step->kind)) list = &r->body;
  }
  return std::get<T>(step->kind);
}

}  // namespace lockstep::testing

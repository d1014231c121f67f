// Overflow-checked integer arithmetic for descriptor and image validation (internal).
#pragma once

#include <cstdint>
#include <optional>

namespace simpler::detail {

template <typename T>
std::optional<T> checked_add(T a, T b) {
  T r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <typename T>
std::optional<T> checked_mul(T a, T b) {
  T r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace simpler::detail

// Reading the exported symbols of a compiled image without loading it (internal).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace simpler::kc {

// True when `image` is a 64-bit little-endian ELF shared object whose dynamic symbol
// table defines `name` (global or weak). False with `error` set when the image is not
// such an ELF file or is malformed; false with `error` empty when the symbol is absent
// (so an empty `name` only validates the image).
// Every read is bounds-checked against the image.
bool elf_defines_symbol(std::span<const uint8_t> image, std::string_view name, std::string* error);

}  // namespace simpler::kc

// Walks the section headers to the SHT_DYNSYM table and its string table (ELF64, LE).
#include "kernel_compiler_elf.h"

#include <elf.h>

#include <cstring>

namespace simpler::kc {
namespace {

// Copies a T at `offset` if it lies inside the image (the image may be unaligned).
template <typename T>
bool read_at(std::span<const uint8_t> image, uint64_t offset, T* out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(out, image.data() + offset, sizeof(T));
  return true;
}

// The NUL-terminated string at `offset` of a string table [table, table + table_size).
bool string_at(std::span<const uint8_t> image, uint64_t table, uint64_t table_size, uint64_t offset,
               std::string_view* out) {
  if (table > image.size() || table_size > image.size() - table || offset >= table_size)
    return false;
  const char* begin = reinterpret_cast<const char*>(image.data() + table + offset);
  const size_t limit = table_size - offset;
  const void* nul = std::memchr(begin, '\0', limit);
  if (nul == nullptr) return false;
  *out = std::string_view(begin, static_cast<const char*>(nul) - begin);
  return true;
}

}  // namespace

bool elf_defines_symbol(std::span<const uint8_t> image, std::string_view name, std::string* error) {
  error->clear();
  Elf64_Ehdr header;
  if (!read_at(image, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    *error = "not an ELF file";
    return false;
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    *error = "not a 64-bit little-endian ELF file";
    return false;
  }
  if (header.e_type != ET_DYN) {
    *error = "not an ELF shared object";
    return false;
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr)) {
    *error = "unexpected ELF section header size";
    return false;
  }
  // The whole table must be present: a truncated image is malformed even when the part
  // we need happens to survive.
  const uint64_t table_bytes = uint64_t{header.e_shnum} * sizeof(Elf64_Shdr);
  if (header.e_shoff > image.size() || table_bytes > image.size() - header.e_shoff) {
    *error = "ELF section header table out of bounds (truncated image?)";
    return false;
  }
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!read_at(image, header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), &section)) {
      *error = "ELF section header table out of bounds";
      return false;
    }
    if (section.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr strings;
    if (section.sh_link >= header.e_shnum ||
        !read_at(image, header.e_shoff + uint64_t{section.sh_link} * sizeof(Elf64_Shdr),
                 &strings)) {
      *error = "ELF dynamic string table out of bounds";
      return false;
    }
    if (section.sh_entsize != sizeof(Elf64_Sym)) {
      *error = "unexpected ELF symbol entry size";
      return false;
    }
    const uint64_t count = section.sh_size / sizeof(Elf64_Sym);
    for (uint64_t s = 0; s < count; ++s) {
      Elf64_Sym symbol;
      if (!read_at(image, section.sh_offset + s * sizeof(Elf64_Sym), &symbol)) {
        *error = "ELF dynamic symbol table out of bounds";
        return false;
      }
      const unsigned binding = ELF64_ST_BIND(symbol.st_info);
      const unsigned visibility = ELF64_ST_VISIBILITY(symbol.st_other);
      if (symbol.st_shndx == SHN_UNDEF || (binding != STB_GLOBAL && binding != STB_WEAK) ||
          (visibility != STV_DEFAULT && visibility != STV_PROTECTED))
        continue;
      std::string_view symbol_name;
      if (!string_at(image, strings.sh_offset, strings.sh_size, symbol.st_name, &symbol_name)) {
        *error = "ELF symbol name out of bounds";
        return false;
      }
      if (symbol_name == name) return true;
    }
  }
  return false;
}

}  // namespace simpler::kc

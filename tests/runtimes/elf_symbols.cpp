#include "elf_symbols.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace simpler::test {
namespace {

template <typename T>
T read_at(const std::vector<char>& file, uint64_t offset) {
  if (offset > file.size() || sizeof(T) > file.size() - offset)
    throw std::runtime_error("truncated ELF file");
  T value;
  std::memcpy(&value, file.data() + offset, sizeof(T));
  return value;
}

}  // namespace

std::set<std::string> exported_dynamic_symbols(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<char> file(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(file.data(), static_cast<std::streamsize>(file.size())))
    throw std::runtime_error("cannot read " + path);
  const auto header = read_at<Elf64_Ehdr>(file, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    throw std::runtime_error(path + " is not an ELF64 file");
  }
  std::set<std::string> names;
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    const auto section =
        read_at<Elf64_Shdr>(file, header.e_shoff + uint64_t{i} * header.e_shentsize);
    if (section.sh_type != SHT_DYNSYM) continue;
    const auto strings =
        read_at<Elf64_Shdr>(file, header.e_shoff + uint64_t{section.sh_link} * header.e_shentsize);
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= section.sh_size; off += sizeof(Elf64_Sym)) {
      const auto sym = read_at<Elf64_Sym>(file, section.sh_offset + off);
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
      const uint64_t name_at = strings.sh_offset + sym.st_name;
      if (name_at >= file.size()) throw std::runtime_error("bad symbol name offset");
      names.insert(std::string(file.data() + name_at,
                               strnlen(file.data() + name_at, file.size() - name_at)));
    }
  }
  return names;
}

}  // namespace simpler::test

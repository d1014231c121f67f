// Test helper: the names of the defined global/weak symbols in an ELF64 shared object's
// dynamic symbol table (what `nm -D --defined-only` lists).
#pragma once

#include <set>
#include <string>

namespace simpler::test {

std::set<std::string> exported_dynamic_symbols(const std::string& path);  // throws on a bad file

}  // namespace simpler::test

#include "kernel_compiler_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "kernel_compiler_files.h"
#include "simpler/worker/kernel_compiler.h"
#include "task_interface/sha256.h"

namespace simpler::kc {
namespace {

constexpr std::string_view kEntryMagic = "simpler-kernel-cache-entry 2";

std::string sha256_of(const uint8_t* data, size_t size) {
  sha::Sha256 hash;
  hash.update(data, size);
  return hash.finish_hex();
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Refuses what another user could have written: not ours, or group/world-writable.
void check_ownership(const std::filesystem::path& path, const struct stat& info, const char* what,
                     const std::string& fix) {
  if (info.st_uid != ::geteuid()) {
    throw KernelCacheError("kernel cache " + std::string(what) + " '" + path.string() +
                           "' is owned by uid " + std::to_string(info.st_uid) +
                           ", not by this user (uid " + std::to_string(::geteuid()) +
                           "); another user could plant images in it. " + fix);
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw KernelCacheError("kernel cache " + std::string(what) + " '" + path.string() +
                           "' is writable by group or others (mode " + mode_text(info.st_mode) +
                           "); another user could plant images in it. " + fix);
  }
}

std::string dir_fix(const std::filesystem::path& dir) {
  return "Run 'chmod 700 " + dir.string() +
         "' if it is yours, or use another cache_dir / SIMPLER_CACHE_DIR.";
}

// Splits a make rule into its file names: backslash-newline continues a line, "\ " is a
// space inside a name, "$$" a dollar. The target (up to the first unescaped ':') is
// dropped.
std::vector<std::string> make_prerequisites(const std::string& rule) {
  std::vector<std::string> names;
  std::string current;
  bool target_done = false;
  auto flush = [&] {
    if (!current.empty() && target_done) names.push_back(current);
    current.clear();
  };
  for (size_t i = 0; i < rule.size(); ++i) {
    const char c = rule[i];
    if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == '\n') {
      flush();
      ++i;
    } else if (c == '\\' && i + 1 < rule.size() && (rule[i + 1] == ' ' || rule[i + 1] == '#')) {
      current += rule[++i];
    } else if (c == '$' && i + 1 < rule.size() && rule[i + 1] == '$') {
      current += '$';
      ++i;
    } else if (c == ':' && !target_done &&
               (i + 1 == rule.size() || rule[i + 1] == ' ' || rule[i + 1] == '\n')) {
      current.clear();
      target_done = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  return names;
}

}  // namespace

void check_cache_dir(const std::filesystem::path& dir) {
  struct stat link {};
  if (::lstat(dir.c_str(), &link) != 0) return;  // missing: created private later
  if (S_ISLNK(link.st_mode) && link.st_uid != ::geteuid()) {
    check_ownership(dir, link, "directory symlink", dir_fix(dir));
  }
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return;  // dangling link: the store fails harmlessly
  if (!S_ISDIR(info.st_mode)) return;           // not a directory: stores fail harmlessly
  check_ownership(dir, info, "directory", dir_fix(dir));
}

bool create_private_dirs(const std::filesystem::path& dir) {
  std::filesystem::path prefix;
  for (const auto& part : dir) {
    prefix /= part;
    if (prefix == prefix.root_path()) continue;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat info {};
  return ::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::optional<std::vector<uint8_t>> load_entry(const std::filesystem::path& entry) {
  const int fd = ::open(entry.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat info {};
  const bool stat_ok = ::fstat(fd, &info) == 0;
  ::close(fd);
  if (!stat_ok || !S_ISREG(info.st_mode)) return std::nullopt;
  check_ownership(entry, info, "entry",
                  "Delete it ('rm " + entry.string() + "'); it is rebuilt on the next compile.");
  auto bytes = read_file(entry);
  if (!bytes) return std::nullopt;
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  const size_t end = text.find("\nend\n");
  if (end == std::string_view::npos || text.substr(0, kEntryMagic.size()) != kEntryMagic) {
    return std::nullopt;
  }
  std::istringstream header{std::string(text.substr(0, end))};
  std::string line;
  std::getline(header, line);  // the magic
  std::string image_hex;
  size_t image_size = 0;
  bool have_image = false;
  while (std::getline(header, line)) {
    if (line.rfind("image ", 0) == 0) {
      std::istringstream fields(line.substr(6));
      have_image = static_cast<bool>(fields >> image_hex >> image_size);
    } else if (line.rfind("dep ", 0) == 0 && line.size() > 4 + 64 + 1) {
      const std::string want = line.substr(4, 64);
      const std::filesystem::path dep = line.substr(4 + 64 + 1);
      auto content = read_file(dep);
      if (!content || sha256_of(content->data(), content->size()) != want) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  const size_t image_at = end + 5;
  if (!have_image || bytes->size() - image_at != image_size) return std::nullopt;
  if (sha256_of(bytes->data() + image_at, image_size) != image_hex) return std::nullopt;
  return std::vector<uint8_t>(bytes->begin() + static_cast<ptrdiff_t>(image_at), bytes->end());
}

bool store_entry(const std::filesystem::path& entry, const std::vector<uint8_t>& image,
                 const std::vector<Dependency>& deps) {
  std::string header(kEntryMagic);
  header += "\nimage " + sha256_of(image.data(), image.size()) + " " + std::to_string(image.size());
  for (const Dependency& dep : deps) {
    const std::string path = dep.path.string();
    if (path.find('\n') != std::string::npos) return false;  // cannot be recorded faithfully
    header += "\ndep " + dep.sha256_hex + " " + path;
  }
  header += "\nend\n";
  std::vector<uint8_t> bytes(header.begin(), header.end());
  bytes.insert(bytes.end(), image.begin(), image.end());
  return write_file_atomically(entry, bytes);
}

std::vector<Dependency> read_dependencies(const std::string& make_rule,
                                          const std::filesystem::path& base,
                                          const std::filesystem::path& exclude) {
  std::vector<Dependency> deps;
  for (const std::string& name : make_prerequisites(make_rule)) {
    std::filesystem::path path = std::filesystem::path(name);
    if (path.is_relative()) path = base / path;
    path = path.lexically_normal();
    if (path == exclude.lexically_normal()) continue;
    auto content = read_file(path);
    if (!content) continue;
    deps.push_back({path, sha256_of(content->data(), content->size())});
  }
  return deps;
}

}  // namespace simpler::kc

// Helpers for the Wire* tests: locating the shared fixtures folder.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

// Finds <shared>/<rel>. Order: $VL_SHARED_DIR, then ../shared, shared, ../../shared relative to the working
// directory (the repo root when run as documented), then the same relative to the test binary's directory.
// Returns "" and lists the places tried in *tried when absent.
std::string wire_find_shared(const std::string& rel, std::string* tried) {
  std::string list;
  auto probe = [&](const fs::path& base) -> std::string {
    fs::path p = base / rel;
    list += "  " + p.string() + "\n";
    std::error_code ec;
    return fs::exists(p, ec) ? fs::weakly_canonical(p, ec).string() : std::string();
  };
  if (const char* env = std::getenv("VL_SHARED_DIR"); env && *env)
    if (auto r = probe(env); !r.empty()) return r;
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  for (const char* up : {"../shared", "shared", "../../shared"})
    if (auto r = probe(cwd / up); !r.empty()) return r;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // build/native[-asan]/vl_tests -> repo root is two levels up
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
      if (auto r = probe(d / "../shared"); !r.empty()) return r;
  }
  if (tried) *tried = list;
  return {};
}

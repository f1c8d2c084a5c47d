// Helpers for the tests that read files kept in the repo (native/tests/fixtures, native/tests/tshark).
#include <unistd.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;

// Finds <repo>/<rel> (rel is repo-relative, e.g. "native/tests/fixtures/rocev2/x.pcap"). The repo root is looked
// for from the working directory and from the test binary's directory (build/native[-asan]/vl_tests), walking up:
// a test never reads anything outside the repo. Returns "" and lists the places tried in *tried when absent.
std::string vl_test_file(const std::string& rel, std::string* tried) {
  std::string list;
  auto walk = [&](fs::path d) -> std::string {
    for (; !d.empty(); d = d.parent_path()) {
      const fs::path p = d / rel;
      list += "  " + p.string() + "\n";
      std::error_code ec;
      if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
      if (fs::exists(d / ".git", ec) || d == d.root_path()) break;    // the repo root: stop there
    }
    return {};
  };
  std::error_code ec;
  if (auto r = walk(fs::current_path(ec)); !r.empty()) return r;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    if (auto r = walk(exe.parent_path()); !r.empty()) return r;
  if (tried) *tried = list;
  return {};
}

#include "test_util.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "../../formats/layout.hpp"
#include "../../formats/xxh64.hpp"
#include "plan_internal.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::test {

EdgeList complete_graph(vid_t n) {
  EdgeList e;
  for (vid_t i = 0; i < n; ++i)
    for (vid_t j = i + 1; j < n; ++j) e.emplace_back(i, j);
  return e;
}

EdgeList complete_bipartite(vid_t a, vid_t b) {
  EdgeList e;
  for (vid_t i = 0; i < a; ++i)
    for (vid_t j = 0; j < b; ++j) e.emplace_back(i, a + j);
  return e;
}

EdgeList wheel(vid_t rim) {
  EdgeList e;
  for (vid_t i = 0; i < rim; ++i) {
    e.emplace_back(0, 1 + i);
    e.emplace_back(1 + i, 1 + (i + 1) % rim);
  }
  return e;
}

EdgeList friendship(vid_t k) {
  EdgeList e;
  for (vid_t i = 0; i < k; ++i) {
    e.emplace_back(0, 1 + 2 * i);
    e.emplace_back(0, 2 + 2 * i);
    e.emplace_back(1 + 2 * i, 2 + 2 * i);
  }
  return e;
}

EdgeList disjoint_cliques(vid_t cliques, vid_t size) {
  EdgeList e;
  for (vid_t c = 0; c < cliques; ++c)
    for (vid_t i = 0; i < size; ++i)
      for (vid_t j = i + 1; j < size; ++j) e.emplace_back(c * size + i, c * size + j);
  return e;
}

EdgeList random_graph(vid_t n, std::uint64_t m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<vid_t> pick(0, n - 1);
  EdgeList e;
  e.reserve(m);
  for (std::uint64_t i = 0; i < m; ++i) e.emplace_back(pick(rng), pick(rng));
  return e;
}

OrientedGraph case_graph(const GraphCase& c, std::uint64_t seed) {
  const EdgeList e = c.skewed ? skewed_graph(c.n, c.m, seed) : random_graph(c.n, c.m, seed);
  return orient_edge_list(vertex_count(e), e);
}

OrientedGraph generated_graph(const GenerateOptions& o) {
  EdgeList e;
  for (const auto& x : generate_edges(o))
    e.emplace_back(static_cast<vid_t>(x.first), static_cast<vid_t>(x.second));
  return orient_edge_list(std::uint64_t{1} << o.scale, e);
}

std::string case_name(const GraphCase& c) {
  return std::string(c.skewed ? "skewed" : "random") + "_n" + std::to_string(c.n);
}

EdgeList skewed_graph(vid_t n, std::uint64_t m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<vid_t> pick(0, n - 1);
  const vid_t hubs = std::max<vid_t>(1, n / 100);
  std::uniform_int_distribution<vid_t> hub(0, hubs - 1);
  EdgeList e;
  e.reserve(m);
  for (std::uint64_t i = 0; i < m; ++i) {
    if (i % 2 == 0)
      e.emplace_back(hub(rng), pick(rng));
    else
      e.emplace_back(pick(rng), pick(rng));
  }
  return e;
}

std::string plain_edge_text(const EdgeList& e, std::uint64_t shift, bool messy) {
  std::string s;
  std::uint64_t i = 0;
  for (auto [a, b] : e) {
    s += std::to_string(a + shift) + " " + std::to_string(b + shift) + "\n";
    ++i;
    if (messy && i % 10 == 0)
      s += std::to_string(b + shift) + " " + std::to_string(a + shift) + "\n";
    if (messy && i % 97 == 0)
      s += std::to_string(a + shift) + " " + std::to_string(a + shift) + "\n";
  }
  return s;
}

std::string plain_edge_text_crossing_2_to_32(const EdgeList& base, std::size_t wide) {
  const EdgeList head(base.begin(),
                      base.begin() + static_cast<std::ptrdiff_t>(std::min(wide, base.size())));
  return plain_edge_text(base) + plain_edge_text(head, std::uint64_t{1} << 32);
}

std::uint64_t vertex_count(const EdgeList& e) {
  std::uint64_t n = 0;
  for (auto [u, v] : e) n = std::max<std::uint64_t>(n, std::max(u, v) + 1ull);
  return n;
}

namespace {
std::vector<std::vector<vid_t>> adjacency(std::uint64_t n, const EdgeList& e) {
  std::vector<std::set<vid_t>> s(n);
  for (auto [u, v] : e) {
    if (u == v) continue;
    s[u].insert(v);
    s[v].insert(u);
  }
  std::vector<std::vector<vid_t>> adj(n);
  for (std::uint64_t i = 0; i < n; ++i) adj[i].assign(s[i].begin(), s[i].end());
  return adj;
}
}  // namespace

count_t brute_force_triangles(std::uint64_t n, const EdgeList& e) {
  const auto pv = brute_force_per_vertex(n, e);
  count_t sum = 0;
  for (auto c : pv) sum += c;
  return sum / 3;
}

std::vector<count_t> brute_force_per_vertex(std::uint64_t n, const EdgeList& e) {
  const auto adj = adjacency(n, e);
  std::vector<count_t> pv(n, 0);
  for (std::uint64_t u = 0; u < n; ++u)
    for (vid_t v : adj[u]) {
      if (v <= u) continue;
      for (vid_t w : adj[v]) {
        if (w <= v) continue;
        if (std::binary_search(adj[u].begin(), adj[u].end(), w)) {
          ++pv[u];
          ++pv[v];
          ++pv[w];
        }
      }
    }
  return pv;
}

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "tristream-test-XXXXXX").string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string json_field(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const std::size_t at = json.find(k);
  if (at == std::string::npos) return "";
  const std::size_t v = at + k.size();
  return json.substr(v, json.find_first_of(",}", v) - v);
}

std::string q(const std::string& s) {
  return "'" + s + "'";
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_edge_list(const std::string& path, const EdgeList& e) {
  std::ostringstream s;
  for (auto [u, v] : e) s << u << ' ' << v << '\n';
  write_text(path, s.str());
}

RunResult run_shell(const std::string& command) {
  TempDir tmp;
  const std::string out = tmp.file("stdout"), err = tmp.file("stderr");
  const std::string cmd = command + " >" + q(out) + " 2>" + q(err) + " </dev/null";
  const int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

RunResult run_cli(const std::string& args) {
  return run_shell(q(TRISTREAM_BINARY) + " " + args);
}

namespace {
// True once process `pid` has a handler installed for `sig` (its SigCgt mask in /proc).
bool catches_signal(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 7, "SigCgt:") != 0) continue;
    const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
    return (mask >> (sig - 1)) & 1ULL;
  }
  return false;
}
}  // namespace

std::uint64_t child_peak_rss(const std::vector<std::string>& args, int& status,
                             const std::string& stdout_path) {
  std::vector<std::string> all{TRISTREAM_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    const int out = stdout_path.empty()
                        ? null
                        : ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(null, 2);
    ::execv(TRISTREAM_BINARY, argv.data());
    ::_exit(127);
  }
  rusage ru{};
  int st = 0;
  if (pid < 0 || ::wait4(pid, &st, 0, &ru) != pid) return 0;
  status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
}

SignalledRun run_cli_signalled(const std::vector<std::string>& args, double delay, int sig,
                               const std::string& dir, const std::string& tmpdir) {
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(TRISTREAM_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TRISTREAM_BINARY, argv.data());
    _exit(127);
  }
  SignalledRun o;
  int raw = 0;
  auto decode = [&] {
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
  };
  // 1. The child's handler for `sig` (the delay counts from then, so that a slow start, e.g.
  //    under a sanitizer on a loaded machine, does not meet the signal's default action), then
  //    the delay, watching for an early end either way.
  auto ended = [&] {
    if (::waitpid(pid, &raw, WNOHANG) != pid) return false;
    o.finished_first = true;
    decode();
    o.out = test::read_text(out);
    return true;
  };
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  const auto launched = std::chrono::steady_clock::now();
  while (!catches_signal(pid, sig) && since(launched) < 30) {
    if (ended()) return o;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto start = std::chrono::steady_clock::now();
  while (since(start) < delay) {
    if (ended()) return o;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // 2. The signal, then its end (killed after a hard cap so that a hang fails the test).
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(pid, sig);
  for (;;) {
    if (::waitpid(pid, &raw, WNOHANG) == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count() > 30) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &raw, 0);
      ADD_FAILURE() << "still running 30 s after the signal";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  o.seconds_after_signal =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  decode();
  o.out = test::read_text(out);
  o.err = test::read_text(err);
  return o;
}

std::string data_file(const std::string& name) {
  return std::string(TRISTREAM_TEST_DATA_DIR) + "/" + name;
}

Plan sliced_plan(const Plan& plan, std::uint32_t slices, bool per_vertex, std::size_t first) {
  Plan out = plan;
  out.units.clear();
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    const WorkUnit& w = plan.units[u];
    if (u < first || (u - first) % 2 != 0 || slices <= 1) {
      out.units.push_back(w);
      continue;
    }
    for (std::uint32_t x = 0; x < slices; ++x)
      out.units.push_back(plan_internal::unit_slice(w, x, slices));
  }
  plan_internal::finish_units(out, per_vertex, plan.in_flight);
  return out;
}

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void flip_offsets_checksum(const std::string& path) {
  using namespace tcsr::detail;
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  unsigned char head[kHeaderSize];
  f.read(reinterpret_cast<char*>(head), kHeaderSize);
  unsigned char* entry = head + kOffSectionTable + (kRowOffsets - 1) * kSectionEntrySize;
  put_u64(entry + kSecChecksum, get_u64(entry + kSecChecksum) ^ 1);
  put_u64(head + kOffHeaderChecksum, xxh64(head, kOffHeaderChecksum));
  f.seekp(0);
  f.write(reinterpret_cast<const char*>(head), kHeaderSize);
}

void expect_input_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << parts.back();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

std::set<OrigEdge> edge_set(const std::string& path) {
  tcsr::Reader r(path);
  const OrientedGraph g = r.load(true);
  std::set<OrigEdge> out;
  for (std::uint64_t u = 0; u < g.n(); ++u)
    for (eid_t e = g.csr.offsets[u]; e < g.csr.offsets[u + 1]; ++e) {
      const std::uint64_t a = g.perm[u], b = g.perm[g.csr.cols[e]];
      out.emplace(std::min(a, b), std::max(a, b));
    }
  return out;
}

std::set<OrigEdge> clean(const std::vector<OrigEdge>& edges) {
  std::set<OrigEdge> out;
  for (auto [a, b] : edges)
    if (a != b) out.emplace(std::min(a, b), std::max(a, b));
  return out;
}

}  // namespace tristream::test

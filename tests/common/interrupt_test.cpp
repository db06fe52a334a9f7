// interrupt_test.cpp — the SIGINT/SIGTERM flag (common/interrupt.hpp): which signal set it, the
// Interrupted error and its exit status, SigintScope keeping a signal that came before it, and the
// CPU counter abandoning its work when the flag is set.
#include "common/interrupt.hpp"

#include <gtest/gtest.h>

#include <csignal>

#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {
namespace {

// Installs the handlers for the test's lifetime and clears the flag before and after.
class Handlers {
 public:
  Handlers() {
    sigaction(SIGINT, nullptr, &old_int_);
    sigaction(SIGTERM, nullptr, &old_term_);
    clear_interrupt();
    install_interrupt_handlers();
  }
  ~Handlers() {
    clear_interrupt();
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

ErrorKind kind_thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "nothing thrown";
  return ErrorKind::Internal;
}

TEST(Interrupt, SigintSetsTheFlagAndExitStatus130) {
  Handlers h;
  EXPECT_FALSE(interrupt_requested());
  EXPECT_NO_THROW(throw_if_interrupted());
  std::raise(SIGINT);
  EXPECT_TRUE(interrupt_requested());
  EXPECT_EQ(interrupt_signal(), SIGINT);
  EXPECT_EQ(interrupt_exit_status(), 130);
  EXPECT_EQ(kind_thrown([] { throw_if_interrupted(); }), ErrorKind::Interrupted);
  EXPECT_EQ(Error(ErrorKind::Interrupted, "x").exit_code(), 130);
}

TEST(Interrupt, SigtermIsHandledLikeSigintWithExitStatus143) {
  Handlers h;
  std::raise(SIGTERM);
  EXPECT_TRUE(interrupt_requested());
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  EXPECT_EQ(interrupt_exit_status(), 143);
  // The first signal is the one remembered.
  std::raise(SIGINT);
  EXPECT_EQ(interrupt_signal(), SIGTERM);
}

TEST(Interrupt, ScopeKeepsASignalReceivedUnderInstalledHandlers) {
  Handlers h;
  std::raise(SIGINT);
  {
    SigintScope scope(true);
    EXPECT_TRUE(interrupt_requested());  // e.g. a signal during the convert step of `count`
  }
  EXPECT_TRUE(interrupt_requested());
}

TEST(Interrupt, ScopeClearsAStaleFlagWhenItInstallsTheHandlers) {
  Handlers h;
  std::raise(SIGINT);
  // Handlers no longer installed (as in a library caller between two counts): the scope
  // installs them and starts with a clear flag.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  SigintScope scope(true);
  EXPECT_FALSE(interrupt_requested());
}

TEST(Interrupt, CpuCounterAbandonsItsWork) {
  Handlers h;
  const auto e = test::complete_graph(200);
  const OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto counter = make_cpu_counter({});
  const CsrView v = g.csr.view();
  EXPECT_EQ(counter->count(v), test::brute_force_triangles(test::vertex_count(e), e));
  std::raise(SIGINT);
  EXPECT_EQ(kind_thrown([&] { counter->count(v); }), ErrorKind::Interrupted);
}

TEST(Interrupt, InCorePipelineReportsInterrupted) {
  Handlers h;
  const auto e = test::random_graph(300, 3000, 5);
  const OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 100);
  PipelineOptions o;
  o.backend = "cpu";
  o.handle_sigint = true;
  std::raise(SIGINT);
  const CountReport r = count_source(*src, o);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.stats.units, 0u);
}

}  // namespace
}  // namespace tristream

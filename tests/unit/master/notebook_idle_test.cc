// When a notebook is idle: Determined's three notebook_idle_types decided
// on parsed Jupyter answers, the idle clock's timeout, and the probe against
// a real Jupyter server (Debian's jupyter-notebook behind a /proxy/<task>/
// prefix, as the master serves it) whose kernels come and go.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "common/http_client.h"
#include "master/interactive/jupyter_probe.h"
#include "master/interactive/notebook_idle.h"
#include "master/interactive/notebook_watch.h"
#include "tests/support/held_port.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace ring {
namespace notebook_idle_test {
namespace {

using namespace std::chrono_literals;
using Time = NotebookIdleClock::Time;

JupyterState Parse(const std::string& kernels, const std::string& terminals = "[]",
                   const std::string& sessions = "[]") {
  auto state = ParseJupyterState(kernels, terminals, sessions);
  EXPECT_TRUE(state.ok()) << state.status().message();
  return state.ok() ? *state : JupyterState{};
}

const char* kIdleKernel =
    R"([{"id":"k1","name":"python3","last_activity":"2026-11-26T10:00:00Z","execution_state":"idle","connections":0}])";
const char* kConnectedKernel =
    R"([{"id":"k1","name":"python3","last_activity":"2026-11-26T10:00:05Z","execution_state":"idle","connections":1}])";
const char* kBusyKernel =
    R"([{"id":"k1","name":"python3","last_activity":"2026-11-26T10:00:09Z","execution_state":"busy","connections":1}])";

TEST(NotebookIdle, TypesReadTheirNamesAsDeterminedWritesThem) {
  EXPECT_EQ(ParseNotebookIdleType("kernels_or_terminals"), NotebookIdleType::kKernelsOrTerminals);
  EXPECT_EQ(ParseNotebookIdleType("kernel_connections"), NotebookIdleType::kKernelConnections);
  EXPECT_EQ(ParseNotebookIdleType("activity"), NotebookIdleType::kActivity);
  EXPECT_FALSE(ParseNotebookIdleType("idle"));
  EXPECT_EQ(ToString(NotebookIdleType::kActivity), "activity");
}

TEST(NotebookIdle, KernelsOrTerminalsIsIdleOnlyWithNothingRunning) {
  NotebookIdleClock clock(NotebookIdleType::kKernelsOrTerminals, 60s);
  EXPECT_TRUE(clock.IsIdle(Parse("[]")));
  EXPECT_FALSE(clock.IsIdle(Parse(kIdleKernel)));
  EXPECT_FALSE(clock.IsIdle(Parse("[]", R"([{"name":"1","last_activity":"2026-11-26T10:00:00Z"}])")));
  EXPECT_FALSE(clock.IsIdle(Parse("[]", "[]", R"([{"id":"s1"}])")));
}

TEST(NotebookIdle, KernelConnectionsIsIdleWithoutABrowserOnAnyKernel) {
  NotebookIdleClock clock(NotebookIdleType::kKernelConnections, 60s);
  EXPECT_TRUE(clock.IsIdle(Parse("[]")));
  EXPECT_TRUE(clock.IsIdle(Parse(kIdleKernel)));
  EXPECT_FALSE(clock.IsIdle(Parse(kConnectedKernel)));
}

TEST(NotebookIdle, ActivityIsIdleWhenNothingMovedSinceTheLastLook) {
  NotebookIdleClock clock(NotebookIdleType::kActivity, 60s);
  const Time t0{};
  EXPECT_FALSE(clock.Observe(t0, Parse(kIdleKernel))) << "the first look has nothing to compare with";
  EXPECT_FALSE(clock.idle_since());
  EXPECT_FALSE(clock.Observe(t0 + 10s, Parse(kIdleKernel)));
  EXPECT_EQ(clock.idle_since(), t0 + 10s);
  EXPECT_FALSE(clock.Observe(t0 + 20s, Parse(kConnectedKernel))) << "its last_activity moved";
  EXPECT_FALSE(clock.idle_since());
  EXPECT_FALSE(clock.Observe(t0 + 30s, Parse(kBusyKernel)));
  EXPECT_FALSE(clock.Observe(t0 + 40s, Parse(kBusyKernel))) << "a busy kernel is never idle";
  EXPECT_FALSE(clock.idle_since());
}

TEST(NotebookIdle, TheClockEndsANotebookIdleForItsTimeoutAndStartsOverOnActivity) {
  NotebookIdleClock clock(NotebookIdleType::kKernelsOrTerminals, 60s);
  const Time t0{};
  EXPECT_FALSE(clock.Observe(t0, Parse("[]")));
  EXPECT_FALSE(clock.Observe(t0 + 59s, Parse("[]")));
  EXPECT_FALSE(clock.Observe(t0 + 61s, Parse(kIdleKernel)));  // a kernel started: the clock starts over
  EXPECT_FALSE(clock.Observe(t0 + 70s, Parse("[]")));
  clock.Unknown();  // a look that failed is never idle
  EXPECT_FALSE(clock.Observe(t0 + 131s, Parse("[]")));
  EXPECT_FALSE(clock.Observe(t0 + 190s, Parse("[]")));
  EXPECT_TRUE(clock.Observe(t0 + 191s, Parse("[]")));
}

TEST(NotebookIdle, AnswersThatAreNotJupytersAreErrorsNamingTheirPath) {
  auto bad = ParseJupyterState("{}", "[]", "[]");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("api/kernels"), std::string::npos);
  EXPECT_FALSE(ParseJupyterState("[]", "[1]", "[]").ok());
  EXPECT_FALSE(ParseJupyterState("[]", "[]", "<html>").ok());
}

TEST(NotebookIdle, TheProbeReadsARealJupyterServer) {
  if (!std::filesystem::exists("/usr/bin/jupyter-notebook"))
    GTEST_SKIP() << "jupyter-notebook is not installed (deploy/install-deps.sh installs it)";
  testing::HeldPort port(testing::HeldPort::Use::kServerMayBind);
  char tmpl[] = "/tmp/ring-jupyter-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  testing::ChildProcess jupyter(
      {"jupyter-notebook", "--no-browser", "--ip=127.0.0.1", "--port=" + std::to_string(port.port()),
       "--NotebookApp.base_url=/proxy/t7/", "--NotebookApp.token=t0k", "--NotebookApp.notebook_dir=" + dir,
       "--allow-root"},
      {{"HOME", dir}, {"JUPYTER_RUNTIME_DIR", dir + "/runtime"}}, dir + "/jupyter.log");
  const std::string base = "http://127.0.0.1:" + std::to_string(port.port()) + "/proxy/t7";
  Result<JupyterState> state = Unavailable("not asked yet");
  ASSERT_TRUE(
      testing::TestCluster::WaitFor([&] { return (state = ProbeJupyter(base, "t0k", 2s)).ok(); }, 30s))
      << state.status().message();
  NotebookIdleClock clock(NotebookIdleType::kKernelsOrTerminals, 0s);
  EXPECT_TRUE(clock.IsIdle(*state));
  EXPECT_FALSE(ProbeJupyter(base, "wrong-token", 2s).ok()) << "the probe sends the server's token";

  HttpClient http(*Url::Parse(base));
  http.SetHeader("Authorization", "token t0k");
  auto started = http.Post("/api/kernels", R"({"name":"python3"})");
  ASSERT_TRUE(started.ok());
  ASSERT_EQ(started->status, 201) << started->body;
  const std::string kernel = nlohmann::json::parse(started->body).value("id", "");
  state = ProbeJupyter(base, "t0k", 2s);
  ASSERT_TRUE(state.ok()) << state.status().message();
  EXPECT_EQ(state->kernels, 1u);
  EXPECT_FALSE(clock.IsIdle(*state));
  EXPECT_TRUE(NotebookIdleClock(NotebookIdleType::kKernelConnections, 0s).IsIdle(*state))
      << "no browser is connected to the kernel";
  EXPECT_FALSE(state->last_activity.empty());

  auto deleted = http.Request("DELETE", "/api/kernels/" + kernel);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, 204);
  state = ProbeJupyter(base, "t0k", 2s);
  ASSERT_TRUE(state.ok());
  EXPECT_TRUE(clock.IsIdle(*state));
  jupyter.Stop(std::chrono::seconds(5));
  std::filesystem::remove_all(dir);
}

// The watch asks each running notebook's server (a fake here) and keeps one
// clock per allocation: a notebook still starting (no service) or not
// answering is never idle; proxied traffic counts under `activity`; a
// notebook no longer running is forgotten.
TEST(NotebookWatch, KeepsAClockPerRunningNotebook) {
  std::map<std::string, Result<JupyterState>> answers;
  std::vector<std::string> asked;
  NotebookWatch watch([&](const std::string& base_url, const std::string& token) -> Result<JupyterState> {
    asked.push_back(base_url + " " + token);
    return answers.at(base_url);
  });
  JupyterState idle, busy;
  busy.kernels = 1;
  busy.kernel_busy = true;
  busy.last_activity = "2026-11-27T01:00:00Z";
  answers.emplace("http://n1:8888/proxy/1/", idle);
  answers.emplace("http://n1:8889/proxy/2/", busy);
  answers.emplace("http://n2:8888/proxy/3/", Unavailable("connection refused"));
  const Time t0{};
  std::vector<NotebookWatch::Target> targets = {
      {"notebook-1.0", NotebookIdleType::kKernelsOrTerminals, 60s, "http://n1:8888/proxy/1/", "a", {}},
      {"notebook-2.0", NotebookIdleType::kKernelsOrTerminals, 60s, "http://n1:8889/proxy/2/", "b", {}},
      {"notebook-3.0", NotebookIdleType::kKernelsOrTerminals, 60s, "http://n2:8888/proxy/3/", "c", {}},
      {"notebook-4.0", NotebookIdleType::kKernelsOrTerminals, 60s, "", "", {}},  // still starting
  };
  watch.Look(targets, t0);
  EXPECT_EQ(asked, (std::vector<std::string>{"http://n1:8888/proxy/1/ a", "http://n1:8889/proxy/2/ b",
                                             "http://n2:8888/proxy/3/ c"}));
  EXPECT_EQ(watch.IdleSince("notebook-1.0"), t0);
  EXPECT_FALSE(watch.IdleSince("notebook-2.0")) << "a kernel runs";
  EXPECT_FALSE(watch.IdleSince("notebook-3.0")) << "a server that does not answer is never idle";
  EXPECT_FALSE(watch.IdleSince("notebook-4.0")) << "a notebook that announced nothing yet is not idle";
  watch.Look(targets, t0 + 10s);
  EXPECT_EQ(watch.IdleSince("notebook-1.0"), t0) << "idle since the first idle look";

  // Under `activity`, traffic through the proxy since the last look is activity.
  std::vector<NotebookWatch::Target> quiet = {
      {"notebook-1.0", NotebookIdleType::kActivity, 60s, "http://n1:8888/proxy/1/", "a", {}}};
  NotebookWatch activity([&](const std::string& url, const std::string&) { return answers.at(url); });
  activity.Look(quiet, t0);
  activity.Look(quiet, t0 + 1s);
  EXPECT_EQ(activity.IdleSince("notebook-1.0"), t0 + 1s);
  quiet[0].proxied = std::chrono::system_clock::now();
  activity.Look(quiet, t0 + 2s);
  EXPECT_FALSE(activity.IdleSince("notebook-1.0")) << "a proxied request is activity";
  activity.Look(quiet, t0 + 3s);
  EXPECT_EQ(activity.IdleSince("notebook-1.0"), t0 + 3s);

  // Ended notebooks are forgotten.
  watch.Look({targets[1]}, t0 + 20s);
  EXPECT_FALSE(watch.IdleSince("notebook-1.0"));
}

}  // namespace
}  // namespace notebook_idle_test
}  // namespace ring

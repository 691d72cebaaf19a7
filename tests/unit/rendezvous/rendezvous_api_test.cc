// The rendezvous routes through the router on a real io_context (no sockets):
// status codes and bodies, and reads that wait on the connection's strand until
// the key is set, the wait times out, or the allocation ends.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include <utility>  // before Asio

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include "master/api/routes.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;

const char* kConfig = R"(name: ddp
entrypoint: /usr/bin/python3 train.py
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
resources:
  slots_per_trial: 2
max_restarts: 0
)";

class RendezvousApiTest : public testing::LifecycleFixture {
 protected:
  void SetUp() override {
    LifecycleFixture::SetUp();
    RegisterRendezvousRoutes(router_, ctx_);
    channel_ = Connect("agent-1", 2);
    CreateFrom(kConfig);
    auto starts = channel_->Of<proto::Start>();
    ASSERT_EQ(starts.size(), 2u);
    token_ = starts[0].allocation_token;
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    for (auto& t : threads_) t.join();
    LifecycleFixture::TearDown();
  }

  // Dispatches on a strand of its own, like one HTTP connection.
  std::future<ApiResponse> Start(std::string method, std::map<std::string, std::string> query,
                                 std::string body = {}, std::string token = "") {
    ApiRequest req;
    req.method = std::move(method);
    req.path = "/api/v1/allocations/1.0/rendezvous";
    req.query = std::move(query);
    req.headers["authorization"] = "Bearer " + (token.empty() ? token_ : token);
    req.body = std::move(body);
    return net::co_spawn(
        net::make_strand(io_),
        [this, req = std::move(req)]() mutable -> net::awaitable<ApiResponse> {
          co_return co_await router_.Dispatch(req);
        },
        net::use_future);
  }
  ApiResponse Call(std::string method, std::map<std::string, std::string> query, std::string body = {},
                   std::string token = "") {
    return Start(std::move(method), std::move(query), std::move(body), std::move(token)).get();
  }
  static std::string Message(const ApiResponse& r) {
    return nlohmann::json::parse(r.body, nullptr, false)["error"].value("message", "");
  }

  Router router_;
  ApiContext ctx_{store_, controller_.lifecycle(), controller_.agents(), "test"};
  std::shared_ptr<testing::RecordingChannel> channel_;
  std::string token_;
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_ = net::make_work_guard(io_);
  std::vector<std::thread> threads_;
};

TEST_F(RendezvousApiTest, PutThenGetReturnsTheRawBytes) {
  const std::string bytes("\x00\x01gloo\xff", 7);
  auto put = Call("PUT", {{"key", "rank/1/addr"}}, bytes);
  EXPECT_EQ(put.status, 204) << put.body;
  EXPECT_TRUE(put.body.empty());
  auto get = Call("GET", {{"key", "rank/1/addr"}});
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.content_type, "application/octet-stream");
  EXPECT_EQ(get.body, bytes);
}

TEST_F(RendezvousApiTest, MissingKeyIs404AtOnceWithoutTimeout) {
  const auto t0 = std::chrono::steady_clock::now();
  auto get = Call("GET", {{"key", "nope"}});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(get.status, 404);
  EXPECT_EQ(Message(get), "rendezvous key nope is not set");
}

TEST_F(RendezvousApiTest, WaitingReadIsAnsweredAsSoonAsTheKeyIsSet) {
  auto waiting = Start("GET", {{"key", "master"}, {"timeout_ms", "20000"}});
  auto other = Start("GET", {{"key", "master"}, {"timeout_ms", "20000"}});
  EXPECT_EQ(waiting.wait_for(300ms), std::future_status::timeout);
  const auto set_at = std::chrono::steady_clock::now();
  EXPECT_EQ(Call("PUT", {{"key", "master"}}, "127.0.0.1:29500").status, 204);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(other.wait_for(5s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - set_at, 1s);  // woken by the set, not the 20 s timeout
  auto got = waiting.get();
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "127.0.0.1:29500");
  EXPECT_EQ(other.get().body, "127.0.0.1:29500");
}

TEST_F(RendezvousApiTest, WaitingReadTimesOutWith404) {
  const auto t0 = std::chrono::steady_clock::now();
  auto get = Call("GET", {{"key", "never"}, {"timeout_ms", "300"}});
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(get.status, 404);
  EXPECT_EQ(Message(get), "rendezvous key never is not set");
  EXPECT_GE(waited, 290ms);
  EXPECT_LT(waited, 3s);
  // The timed-out waiter is gone: a later set wakes nobody and the key reads fine.
  EXPECT_EQ(Call("PUT", {{"key", "never"}}, "now").status, 204);
  EXPECT_EQ(Call("GET", {{"key", "never"}, {"timeout_ms", "300"}}).body, "now");
}

TEST_F(RendezvousApiTest, WaitingReadGets409WhenTheAllocationEnds) {
  auto waiting = Start("GET", {{"key", "never"}, {"timeout_ms", "30000"}});
  EXPECT_EQ(waiting.wait_for(200ms), std::future_status::timeout);
  ASSERT_TRUE(controller_.Kill(1).ok());
  for (int rank = 0; rank < 2; ++rank)
    controller_.OnAgentMessage(
        "agent-1", proto::StateChange{"1.0", rank, proto::ProcessState::kExited, {}, 15, ""}, now_);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto got = waiting.get();
  EXPECT_EQ(got.status, 409);
  EXPECT_NE(Message(got).find("1.0 has ended"), std::string::npos) << got.body;
  EXPECT_EQ(Call("PUT", {{"key", "k"}}, "v").status, 409);
}

TEST_F(RendezvousApiTest, CheckListsSetAndMissingKeysWithoutWaiting) {
  EXPECT_EQ(Call("PUT", {{"key", "rank/0"}}, "a").status, 204);
  EXPECT_EQ(Call("PUT", {{"key", "rank/2"}}, "c").status, 204);
  auto check = Call("GET", {{"keys", "rank/0,rank/1,rank/2"}});
  ASSERT_EQ(check.status, 200) << check.body;
  EXPECT_EQ(check.content_type, "application/json");
  auto j = nlohmann::json::parse(check.body);
  EXPECT_EQ(j["set"], nlohmann::json({"rank/0", "rank/2"}));
  EXPECT_EQ(j["missing"], nlohmann::json({"rank/1"}));
  EXPECT_EQ(Call("GET", {{"keys", "rank/0,,rank/1"}}).status, 400);  // an empty key
}

TEST_F(RendezvousApiTest, BadRequestsSayWhatIsWrong) {
  auto no_key = Call("GET", {});
  EXPECT_EQ(no_key.status, 400);
  EXPECT_NE(Message(no_key).find("key"), std::string::npos);
  EXPECT_EQ(Call("PUT", {}, "v").status, 400);
  auto bad_key = Call("PUT", {{"key", "white space"}}, "v");
  EXPECT_EQ(bad_key.status, 400);
  EXPECT_NE(Message(bad_key).find("\"white space\""), std::string::npos) << bad_key.body;
  auto long_wait = Call("GET", {{"key", "k"}, {"timeout_ms", "60001"}});
  EXPECT_EQ(long_wait.status, 400);
  EXPECT_NE(Message(long_wait).find("timeout_ms"), std::string::npos);
  auto big = Call("PUT", {{"key", "big"}}, std::string((4u << 20) + 1, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_NE(Message(big).find("per value"), std::string::npos);
  EXPECT_EQ(Call("GET", {{"key", "k"}}, "", "wrong-token").status, 401);
}

}  // namespace
}  // namespace ring

// The task proxy against real daemons: a trial starts an HTTP and WebSocket
// server on a free port and announces it with its allocation's token; the
// test then plays the owner, an admin, another user and a trial process
// against the proxy's own origin. Each security claim of docs/security.md's
// "The task proxy" is an attack here: a reused link, another task's cookie,
// a bearer token sent to the proxy, an allocation token minting a link or
// announcing for another allocation, a deactivated owner's cookie.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "master/auth/tokens.h"
#include "tests/support/proxy_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_certs.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::proxy_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// An HTTP server with a WebSocket echo at .../ws, announced to the master.
constexpr const char* kServer = R"(import base64, hashlib, json, os, ssl, struct, threading, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
released = threading.Event()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        if self.path.endswith("/drop"):
            # Kept alive as far as the proxy can tell, then closed at once.
            self.answer({"dropped": True})
            self.close_connection = True
            return
        if self.path.endswith("/release"):
            released.set()
            return self.answer({"released": True})
        if self.path.endswith("/slow"):
            # The first piece now, the rest once /release was asked for.
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"6\r\nfirst\n\r\n")
            self.wfile.flush()
            released.wait(20)
            self.wfile.write(b"7\r\nsecond\n\r\n0\r\n\r\n")
            return
        self.answer({"method": "GET", "path": self.path, "cookie": self.headers.get("Cookie"),
                     "authorization": self.headers.get("Authorization"),
                     "forwarded_for": self.headers.get("X-Forwarded-For")})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer({"method": "POST", "path": self.path, "bytes": len(body),
                     "sha256": hashlib.sha256(body).hexdigest()})

    def frame(self, opcode, data):
        head = bytes([0x80 | opcode])
        if len(data) < 126:
            head += bytes([len(data)])
        else:
            head += bytes([126]) + struct.pack("!H", len(data))
        self.wfile.write(head + data)
        self.wfile.flush()

    def websocket(self):
        accept = base64.b64encode(hashlib.sha1((self.headers["Sec-WebSocket-Key"] + GUID).encode()).digest())
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept.decode())
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                break
            opcode, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack("!H", self.rfile.read(2))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if opcode == 8:
                self.frame(8, data)
                break
            self.frame(opcode, b"echo: " + data)
        self.close_connection = True

server = ThreadingHTTPServer(("", 0), Handler)
port = server.server_address[1]
alloc, token = os.environ["RING_ALLOCATION_ID"], os.environ["RING_ALLOCATION_TOKEN"]
request = urllib.request.Request(
    os.environ["RING_MASTER_URL"] + "/api/v1/allocations/" + alloc + "/proxy",
    data=json.dumps({"port": port, "name": "echo"}).encode(), method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
tls = ssl.create_default_context(cafile=os.environ.get("RING_CA_FILE"))
announced = json.load(urllib.request.urlopen(request, context=tls))
info = os.path.join(json.loads(os.environ["RING_HPARAMS"])["dir"], "info-" + os.environ["RING_EXPERIMENT_ID"])
with open(info + ".tmp", "w") as f:
    json.dump({"task_id": announced["task_id"], "allocation_id": alloc, "token": token, "port": port}, f)
os.rename(info + ".tmp", info)
server.serve_forever()
)";

// A WebSocket upgrade with `cookie`; on 101, one text frame there and back.
// Returns the status and the echoed text.
std::pair<int, std::string> WebSocketEcho(int port, int64_t task, const std::string& cookie,
                                          const std::string& text) {
  RawConnection c(port);
  EXPECT_TRUE(c.connected());
  const std::string origin = "http://127.0.0.1:" + std::to_string(port);
  EXPECT_TRUE(c.Send("GET /proxy/" + std::to_string(task) +
                     "/ws HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nOrigin: " + origin +
                     "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     "Cookie: ring_proxy=" +
                     cookie + "\r\n\r\n"));
  std::string head;
  char ch;
  while (head.find("\r\n\r\n") == std::string::npos && c.Read(&ch, 1) == 1) head += ch;
  if (head.size() < 12) return {0, ""};
  const int status = std::stoi(head.substr(9, 3));
  if (status != 101) return {status, ""};
  EXPECT_NE(head.find("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), std::string::npos) << head;
  std::string frame = {static_cast<char>(0x81), static_cast<char>(0x80 | text.size())};
  const char mask[4] = {1, 2, 3, 4};
  frame.append(mask, 4);
  for (size_t i = 0; i < text.size(); ++i) frame += static_cast<char>(text[i] ^ mask[i % 4]);
  EXPECT_TRUE(c.Send(frame));
  char h[2];
  if (c.Read(h, 2) != 2) return {status, ""};
  std::string payload(static_cast<unsigned char>(h[1]) & 0x7f, '\0');
  c.Read(payload.data(), payload.size());
  return {status, payload};
}

class ProxyE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    TestCluster::MasterOptions master;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (name.find("Limits") != std::string::npos)
      master.extra_args = {"--config", cluster_.WriteFile("master.yaml",
                                                          "proxy:\n  idle_timeout_ms: 1500\n"
                                                          "  max_connections_per_user: 2\n")};
    if (name.find("Tls") != std::string::npos) {
      // This case's master speaks HTTPS only; its proxy too.
      ca_.WriteCert(cluster_.dir() + "/ca.crt");
      ca_.IssueServerCert({"IP:127.0.0.1"}, cluster_.dir() + "/master.crt", cluster_.dir() + "/master.key");
      master.tls_cert_file = cluster_.dir() + "/master.crt";
      master.tls_key_file = cluster_.dir() + "/master.key";
      master.ca_file = cluster_.dir() + "/ca.crt";
    }
    cluster_.StartMaster(master);
    TestCluster::AgentOptions options;
    const char* path = std::getenv("PATH");
    options.env["PATH"] = std::string("/usr/bin:/bin") + (path ? std::string(":") + path : "");
    cluster_.StartAgent("agent-1", 2, options);
    dir_ = cluster_.dir() + "/served";
    fs::create_directories(dir_);
    model_ = cluster_.MakeModelDir("proxied", {{"serve.py", kServer}});
    config_ = cluster_.WriteFile("serve.yaml",
                                 "name: proxied\nentrypoint: python3 serve.py\nhyperparameters:\n"
                                 "  dir: " +
                                     dir_ +
                                     "\nsearcher:\n  name: single\n  metric: x\n  max_length:\n"
                                     "    batches: 1\nmax_restarts: 0\n");
  }
  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  // Starts the server as `user`'s experiment; its announcement's facts.
  nlohmann::json Serve(const std::string& user, const std::string& token) {
    auto created = cluster_.RingAs(user, token, {"--json", "experiment", "create", config_, model_});
    EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
    const int64_t exp = nlohmann::json::parse(created.out).value("id", int64_t{0});
    const std::string info = dir_ + "/info-" + std::to_string(exp);
    EXPECT_TRUE(TestCluster::WaitFor([&] { return fs::exists(info); }, 60s)) << "the server never announced";
    if (!fs::exists(info)) return {};
    auto j = nlohmann::json::parse(ReadFileText(info));
    j["experiment_id"] = exp;
    return j;
  }

  // POST /api/v1/tasks/{id}/proxy/link with a bearer token.
  std::pair<int, nlohmann::json> Link(int64_t task, const std::string& token) {
    auto http = cluster_.NewClient();
    http->SetBearerToken(token);
    auto res = http->Request("POST", "/api/v1/tasks/" + std::to_string(task) + "/proxy/link", "{}");
    EXPECT_TRUE(res.ok());
    if (!res.ok()) return {0, {}};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }

  TestCa ca_;
  TestCluster cluster_;
  std::string dir_, model_, config_;
};

TEST_F(ProxyE2E, TheOwnerOpensPagesAndWebSocketsThroughAOneTimeLink) {
  const std::string ada = cluster_.CreateUser("ada", "ada-password");
  const auto served = Serve("ada", ada);
  ASSERT_TRUE(served.contains("task_id"));
  const int64_t task = served["task_id"];
  const std::string base = "/proxy/" + std::to_string(task);

  // The CLI prints the one-time link alone on standard output.
  auto printed = cluster_.RingAs("ada", ada, {"task", "proxy-link", std::to_string(task)});
  ASSERT_EQ(printed.exit_code, 0) << printed.out << printed.err;
  std::string url = printed.out.substr(0, printed.out.find('\n'));
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url;
  const int port = PortOf(url);
  ASSERT_NE(port, PortOf(cluster_.url())) << "the proxy must be an origin of its own";
  // A HEAD (a chat's link preview) does not use the link up.
  const std::string ticket_target = url.substr(url.find('/', url.find("//") + 2));
  EXPECT_EQ(Exchange(port, "HEAD", ticket_target, {}).status, 405);
  const std::string cookie = RedeemLink(url, task);
  ASSERT_EQ(cookie.size(), 64u);

  // The link works once.
  const std::string target = url.substr(url.find('/', url.find("//") + 2));
  EXPECT_EQ(Exchange(port, "GET", target, {}).status, 401);

  // A page, with the path kept whole; neither the proxy's cookie nor any
  // Authorization header reaches the task's server, its own cookies do.
  Answer page = Exchange(port, "GET", base + "/tree?x=1",
                         {{"Cookie", "_xsrf=abc; ring_proxy=" + cookie}, {"Authorization", "Bearer " + ada}});
  ASSERT_EQ(page.status, 200) << page.body;
  auto seen = nlohmann::json::parse(page.body);
  EXPECT_EQ(seen["path"], base + "/tree?x=1");
  EXPECT_EQ(seen["cookie"], "_xsrf=abc");
  EXPECT_TRUE(seen["authorization"].is_null()) << seen.dump();
  EXPECT_EQ(seen["forwarded_for"], "127.0.0.1");

  // A body of 3 MiB goes through whole.
  std::string body(3 << 20, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  Answer posted = Exchange(port, "POST", base + "/upload", {{"Cookie", "ring_proxy=" + cookie}}, body);
  ASSERT_EQ(posted.status, 200) << posted.body;
  auto stored = nlohmann::json::parse(posted.body);
  EXPECT_EQ(stored["bytes"], body.size());
  EXPECT_EQ(stored["sha256"], HashToken(body));

  // An answer is streamed: its first piece arrives while the server still
  // holds the rest (it sends that only once /release was asked for).
  {
    RawConnection slow(port);
    ASSERT_TRUE(
        slow.Send("GET " + base + "/slow HTTP/1.1\r\nHost: x\r\nCookie: ring_proxy=" + cookie + "\r\n\r\n"));
    std::string got;
    char piece[4096];
    while (got.find("first") == std::string::npos) {
      const ssize_t n = slow.ReadSome(piece, sizeof piece);
      ASSERT_GT(n, 0) << "the first piece did not come before the rest: " << got;
      got.append(piece, n);
    }
    EXPECT_EQ(got.find("second"), std::string::npos);
    EXPECT_EQ(Exchange(port, "GET", base + "/release", {{"Cookie", "ring_proxy=" + cookie}}).status, 200);
    while (got.find("0\r\n\r\n") == std::string::npos) {
      const ssize_t n = slow.ReadSome(piece, sizeof piece);
      ASSERT_GT(n, 0) << got;
      got.append(piece, n);
    }
    EXPECT_NE(got.find("second"), std::string::npos) << got;
    // The connection stays open for the next request, to the same server.
    ASSERT_TRUE(slow.Send("GET " + base +
                          "/again HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: ring_proxy=" + cookie +
                          "\r\n\r\n"));
    const std::string again = slow.ReadAll();
    EXPECT_EQ(again.rfind("HTTP/1.1 200", 0), 0u) << again;
    EXPECT_NE(again.find("/again"), std::string::npos) << again;
  }

  // A kept-alive connection the server closed silently: the next request
  // without a body is sent again on a new one, not answered 502.
  {
    RawConnection kept(port);
    const std::string get =
        "GET " + base + "/drop HTTP/1.1\r\nHost: x\r\nCookie: ring_proxy=" + cookie + "\r\n\r\n";
    ASSERT_TRUE(kept.Send(get));
    std::string first;
    char piece[4096];
    while (first.find("\"dropped\": true}") == std::string::npos) {
      const ssize_t n = kept.ReadSome(piece, sizeof piece);
      ASSERT_GT(n, 0) << first;
      first.append(piece, n);
    }
    std::this_thread::sleep_for(200ms);  // the server's close reaches the proxy
    ASSERT_TRUE(kept.Send("GET " + base +
                          "/after HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: ring_proxy=" + cookie +
                          "\r\n\r\n"));
    const std::string after = kept.ReadAll();
    EXPECT_EQ(after.rfind("HTTP/1.1 200", 0), 0u) << after;
    EXPECT_NE(after.find("/after"), std::string::npos) << after;
  }

  // A WebSocket there and back.
  auto [status, echoed] = WebSocketEcho(port, task, cookie, "hello kernel");
  EXPECT_EQ(status, 101);
  EXPECT_EQ(echoed, "echo: hello kernel");

  // The path without its slash is sent to it; an unknown path is the proxy's 404.
  Answer bare = Exchange(port, "GET", base + "?a=b", {{"Cookie", "ring_proxy=" + cookie}});
  EXPECT_EQ(bare.status, 308);
  EXPECT_EQ(bare.headers["location"], base + "/?a=b");
  EXPECT_EQ(Exchange(port, "GET", "/elsewhere", {}).status, 404);

  // Once the allocation has ended, its announcement is forgotten: 502
  // saying so (first, while the process is gone but its allocation is not
  // yet ended, the proxy finds the server unreachable: a 502 too).
  auto killed = cluster_.RingAs("ada", ada, {"experiment", "kill", served["experiment_id"].dump()});
  ASSERT_EQ(killed.exit_code, 0) << killed.out << killed.err;
  Answer gone;
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        gone = Exchange(port, "GET", base + "/tree", {{"Cookie", "ring_proxy=" + cookie}});
        return gone.status == 502 && gone.body.find("announced no service") != std::string::npos;
      },
      30s))
      << gone.status << " " << gone.body;
  EXPECT_NE(gone.body.find("announced no service"), std::string::npos) << gone.body;
}

// The proxy's own answers (the link's redirect, its refusals and error
// pages) carry headers of their own: nothing in them runs, is framed, is
// cached or leaks a referrer. What the task's server answers passes as it
// is: the web UI's Content-Security-Policy would break a notebook's pages,
// and is not added.
TEST_F(ProxyE2E, TheProxysOwnAnswersCarryItsHeadersAndProxiedOnesNotTheUis) {
  const std::string ada = cluster_.CreateUser("ada", "ada-password");
  const auto served = Serve("ada", ada);
  ASSERT_TRUE(served.contains("task_id"));
  const int64_t task = served["task_id"];
  const std::string base = "/proxy/" + std::to_string(task);
  auto [link_status, link] = Link(task, ada);
  ASSERT_EQ(link_status, 200) << link.dump();
  const std::string url = link["url"];
  const int port = PortOf(url);
  const auto expect_own = [](Answer a, const std::string& what) {
    SCOPED_TRACE(what + ": HTTP " + std::to_string(a.status));
    EXPECT_EQ(a.headers["content-security-policy"], "default-src 'none'; frame-ancestors 'none'");
    EXPECT_EQ(a.headers["x-frame-options"], "DENY");
    EXPECT_EQ(a.headers["x-content-type-options"], "nosniff");
    EXPECT_EQ(a.headers["referrer-policy"], "no-referrer");
    EXPECT_EQ(a.headers["cache-control"], "no-store");
  };

  // The link's redirect, which sets the cookie.
  Answer redeemed = Exchange(port, "GET", url.substr(url.find('/', url.find("//") + 2)), {});
  ASSERT_EQ(redeemed.status, 303) << redeemed.body;
  expect_own(redeemed, "the link's redirect");
  const std::string set = redeemed.headers["set-cookie"];
  const std::string cookie = set.substr(11, set.find(';') - 11);
  // Its refusals and error pages.
  expect_own(Exchange(port, "GET", base + "/", {}), "no cookie");
  expect_own(Exchange(port, "GET", base + "/", {{"Cookie", "ring_proxy=" + std::string(64, 'a')}}),
             "a made-up cookie");
  expect_own(Exchange(port, "GET", "/elsewhere", {}), "an unknown path");
  expect_own(Exchange(port, "GET", url.substr(url.find('/', url.find("//") + 2)), {}), "a used link");

  // A proxied answer: the server's headers, none of the UI's or the proxy's.
  Answer page = Exchange(port, "GET", base + "/tree", {{"Cookie", "ring_proxy=" + cookie}});
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.headers["content-type"], "application/json");
  for (const char* header : {"content-security-policy", "x-frame-options", "referrer-policy"})
    EXPECT_EQ(page.headers.count(header), 0u) << header << ": " << page.headers[header];
}

TEST_F(ProxyE2E, OnlyTheOwnerAndAdminsGetIn) {
  const std::string ada = cluster_.CreateUser("ada", "ada-password");
  const std::string bob = cluster_.CreateUser("bob", "bob-password");
  const auto adas = Serve("ada", ada);
  const auto bobs = Serve("bob", bob);
  ASSERT_TRUE(adas.contains("task_id"));
  ASSERT_TRUE(bobs.contains("task_id"));
  const int64_t task = adas["task_id"];
  const int64_t bob_task = bobs["task_id"];
  ASSERT_NE(task, bob_task);
  const std::string base = "/proxy/" + std::to_string(task);

  // A fresh task has had no proxied traffic; the owner's link says where it is served.
  {
    auto [fresh_status, fresh] = Link(task, ada);
    ASSERT_EQ(fresh_status, 200) << fresh.dump();
    EXPECT_TRUE(fresh["last_activity"].is_null()) << fresh.dump();
    EXPECT_EQ(fresh["service"]["port"], adas["port"]);
    EXPECT_EQ(fresh["service"]["name"], "echo");
  }

  // Bob may not ask for a link to ada's task.
  auto [bob_link_status, bob_link] = Link(task, bob);
  EXPECT_EQ(bob_link_status, 403) << bob_link.dump();
  // An allocation's token mints no link, not even for its own task.
  EXPECT_EQ(Link(task, adas["token"]).first, 401);
  // A trial cannot announce a service for another allocation's task.
  {
    auto http = cluster_.NewClient();
    http->SetBearerToken(adas["token"]);
    auto res =
        http->Request("POST", "/api/v1/allocations/" + bobs["allocation_id"].get<std::string>() + "/proxy",
                      R"({"port": 1})");
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->status, 401) << res->body;
  }

  // Bob's own cookie (for his task) opens neither ada's pages nor her WebSockets.
  auto [own_status, own_link] = Link(bob_task, bob);
  ASSERT_EQ(own_status, 200) << own_link.dump();
  const int port = PortOf(own_link["url"]);
  const std::string bob_cookie = RedeemLink(own_link["url"], bob_task);
  ASSERT_FALSE(bob_cookie.empty());
  EXPECT_EQ(Exchange(port, "GET", "/proxy/" + std::to_string(bob_task) + "/",
                     {{"Cookie", "ring_proxy=" + bob_cookie}})
                .status,
            200);
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Cookie", "ring_proxy=" + bob_cookie}}).status, 403);
  EXPECT_EQ(WebSocketEcho(port, task, bob_cookie, "x").first, 403);

  // A bearer token sent to the proxy opens nothing: cookies only.
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Authorization", "Bearer " + ada}}).status, 401);
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Authorization", "Bearer " + cluster_.admin_token()}}).status,
            401);
  // A made-up cookie neither.
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Cookie", "ring_proxy=" + std::string(64, 'a')}}).status,
            401);

  // Proxied traffic was recorded for bob's task, not for ada's (all refused so far).
  EXPECT_TRUE(Link(bob_task, bob).second["last_activity"].is_string());
  EXPECT_TRUE(Link(task, ada).second["last_activity"].is_null());

  // An admin opens ada's task.
  auto [admin_status, admin_link] = Link(task, cluster_.admin_token());
  ASSERT_EQ(admin_status, 200) << admin_link.dump();
  const std::string admin_cookie = RedeemLink(admin_link["url"], task);
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Cookie", "ring_proxy=" + admin_cookie}}).status, 200);
  EXPECT_EQ(WebSocketEcho(port, task, admin_cookie, "admin").second, "echo: admin");

  // Ada's cookie stops working once her account is deactivated.
  auto [ada_status, ada_link] = Link(task, ada);
  ASSERT_EQ(ada_status, 200);
  const std::string ada_cookie = RedeemLink(ada_link["url"], task);
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Cookie", "ring_proxy=" + ada_cookie}}).status, 200);
  int64_t ada_id = 0;
  const auto users = cluster_.GetJson("/api/v1/users");
  for (const auto& u : users["users"])
    if (u["username"] == "ada") ada_id = u["id"].get<int64_t>();
  ASSERT_GT(ada_id, 0);
  auto patched =
      cluster_.client().Request("PATCH", "/api/v1/users/" + std::to_string(ada_id), R"({"active": false})");
  ASSERT_TRUE(patched.ok());
  ASSERT_EQ(patched->status, 200) << patched->body;
  EXPECT_EQ(Exchange(port, "GET", base + "/", {{"Cookie", "ring_proxy=" + ada_cookie}}).status, 403);
  EXPECT_EQ(WebSocketEcho(port, task, ada_cookie, "x").first, 403);
}

TEST_F(ProxyE2E, LimitsPerUserAndIdleConnectionsHold) {
  const auto served = Serve("admin", cluster_.admin_token());
  ASSERT_TRUE(served.contains("task_id"));
  const int64_t task = served["task_id"];
  auto [status, link] = Link(task, cluster_.admin_token());
  ASSERT_EQ(status, 200) << link.dump();
  const int port = PortOf(link["url"]);
  const std::string cookie = RedeemLink(link["url"], task);
  const std::string upgrade = "GET /proxy/" + std::to_string(task) +
                              "/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                              "Cookie: ring_proxy=" +
                              cookie + "\r\n\r\n";
  // Header fields over max_header_bytes are refused before anything else.
  EXPECT_EQ(Exchange(port, "GET", "/proxy/" + std::to_string(task) + "/",
                     {{"Cookie", "ring_proxy=" + cookie}, {"X-Big", std::string(70 * 1024, 'a')}})
                .status,
            431);

  // Two WebSockets are the user's limit (max_connections_per_user: 2) ...
  RawConnection first(port), second(port);
  ASSERT_TRUE(first.Send(upgrade));
  ASSERT_TRUE(second.Send(upgrade));
  char head[12];
  ASSERT_EQ(first.Read(head, sizeof head), 12);
  EXPECT_EQ(std::string(head, 12), "HTTP/1.1 101");
  ASSERT_EQ(second.Read(head, sizeof head), 12);
  EXPECT_EQ(std::string(head, 12), "HTTP/1.1 101");
  // ... so a third connection of theirs is refused while both are open.
  Answer third =
      Exchange(port, "GET", "/proxy/" + std::to_string(task) + "/", {{"Cookie", "ring_proxy=" + cookie}});
  EXPECT_EQ(third.status, 503) << third.body;
  EXPECT_NE(third.body.find("max_connections_per_user"), std::string::npos) << third.body;
  // Silent for idle_timeout_ms (1.5 s), both are closed and their places given back.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(first.ReadUntilClosed());
  EXPECT_TRUE(second.ReadUntilClosed());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_EQ(
      Exchange(port, "GET", "/proxy/" + std::to_string(task) + "/", {{"Cookie", "ring_proxy=" + cookie}})
          .status,
      200);
}

TEST_F(ProxyE2E, UnderTlsTheProxySpeaksHttpsOnlyAndItsCookieIsSecure) {
  const auto served = Serve("admin", cluster_.admin_token());
  ASSERT_TRUE(served.contains("task_id"));
  const int64_t task = served["task_id"];
  auto [status, link] = Link(task, cluster_.admin_token());
  ASSERT_EQ(status, 200) << link.dump();
  const std::string url = link["url"];
  ASSERT_EQ(url.rfind("https://127.0.0.1:", 0), 0u) << url;
  const std::string origin = url.substr(0, url.find('/', 8));

  HttpClient proxy(*Url::Parse(origin), 10s);
  proxy.SetCaFile(cluster_.ca_file());
  auto opened = proxy.Get(url.substr(origin.size()));
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->status, 303);
  const std::string cookie = opened->headers["set-cookie"];
  EXPECT_NE(cookie.find("; Secure"), std::string::npos) << cookie;
  ASSERT_EQ(cookie.rfind("ring_proxy=", 0), 0u) << cookie;
  proxy.SetHeader("Cookie", cookie.substr(0, cookie.find(';')));
  auto page = proxy.Get("/proxy/" + std::to_string(task) + "/over-tls");
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_EQ(page->status, 200) << page->body;
  EXPECT_EQ(nlohmann::json::parse(page->body)["path"], "/proxy/" + std::to_string(task) + "/over-tls");

  // Plain HTTP on the proxy's port gets no answer: a cookie never crosses in clear text.
  RawConnection plain(PortOf(origin));
  ASSERT_TRUE(plain.connected());
  plain.Send("GET /proxy/" + std::to_string(task) + "/ HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(plain.ReadAll().find("HTTP/1.1 200"), std::string::npos);
}

}  // namespace
}  // namespace ring::testing::proxy_e2e

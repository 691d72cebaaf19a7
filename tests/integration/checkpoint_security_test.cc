// Attacks on checkpoint storage against a real master and agent: a trial
// (this test, holding a live allocation's token, over the real HTTP API)
// registers folders and files made of links or under names the master did
// not issue, swaps a registered folder for a link before garbage collection,
// and users download what they should not; plus the download rule, the
// allowed storage roots at submit, and streamed answers (memory held by a
// slow reader, the limit of large answers at once).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/archive.h"
#include "master/files/checkpoint_folder.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::checkpoint_security {
namespace {

namespace fs = std::filesystem;

std::string Sha(const std::string& bytes) {
  Sha256 sha;
  sha.Update(bytes.data(), bytes.size());
  return sha.HexDigest();
}

void WriteBytes(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string SleeperConfig(const std::string& extra = "") {
  return "name: sleeper\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n"
         "  max_length:\n    batches: 10\nmax_restarts: 0\n" +
         extra;
}

// A running trial of `owner` (a token): its allocation id and token, and a
// client that speaks the trial API with it.
struct Trial {
  int64_t experiment_id = 0;
  std::string alloc;
  std::string token;
  std::unique_ptr<CheckedHttpClient> http;

  nlohmann::json Prepare(int* status = nullptr) {
    auto res = http->Post("/api/v1/allocations/" + alloc + "/checkpoints/prepare", "{}");
    EXPECT_TRUE(res.ok());
    if (status) *status = res.ok() ? res->status : 0;
    return res.ok() ? nlohmann::json::parse(res->body, nullptr, false) : nlohmann::json();
  }
  // Registers `uuid` with `files` (path → the size and SHA-256 of these bytes).
  std::pair<int, std::string> Register(const std::string& uuid,
                                       const std::map<std::string, std::string>& files) {
    nlohmann::json resources = nlohmann::json::array();
    for (const auto& [path, bytes] : files)
      resources.push_back({{"path", path}, {"size", bytes.size()}, {"sha256", Sha(bytes)}});
    const nlohmann::json body = {{"uuid", uuid}, {"batches", 5}, {"resources", resources}};
    auto res = http->Post("/api/v1/allocations/" + alloc + "/checkpoints", body.dump());
    EXPECT_TRUE(res.ok());
    return {res.ok() ? res->status : 0, res.ok() ? res->body : ""};
  }
};

Trial StartTrial(TestCluster& cluster, const std::string& owner_token, const std::string& extra_config = "") {
  static int n = 0;
  const std::string tag = std::to_string(++n);
  const std::string flag = cluster.dir() + "/alloc-" + tag;
  const std::string model = cluster.MakeModelDir(
      "sleeper-" + tag,
      {{"run.sh", "echo \"$RING_EXPERIMENT_ID $RING_ALLOCATION_ID $RING_ALLOCATION_TOKEN\" > \"" + flag +
                      ".tmp\"\nmv \"" + flag + ".tmp\" \"" + flag + "\"\nexec sleep 300\n"}});
  const std::string config = cluster.WriteFile("sleeper-" + tag + ".yaml", SleeperConfig(extra_config));
  auto made = RunCommand({BinDir() + "/ring", "-m", cluster.url(), "experiment", "create", config, model},
                         {{"RING_TOKEN", owner_token}});
  EXPECT_EQ(made.exit_code, 0) << made.out << made.err;
  Trial t;
  EXPECT_TRUE(TestCluster::WaitFor([&] { return fs::exists(flag); }, std::chrono::seconds(30)))
      << "the trial did not start";
  std::istringstream in(ReadFileText(flag));
  in >> t.experiment_id >> t.alloc >> t.token;
  t.http = cluster.NewClient();
  t.http->SetBearerToken(t.token);
  return t;
}

// The secrets a hostile trial wants: the master's database, cluster token
// and the admin's password file.
struct Secrets {
  fs::path data;
  std::map<std::string, std::string> files;  // name → bytes
};

Secrets ReadSecrets(TestCluster& cluster) {
  Secrets s;
  s.data = cluster.dir() + "/master";
  for (const char* name : {"ringmaster.db", "cluster-token"})
    s.files[name] = ReadFileText((s.data / name).string());
  s.files["admin-password"] = ReadFileText(cluster.admin_password_file());
  EXPECT_FALSE(s.files["cluster-token"].empty());
  return s;
}

// True when `answer` holds any secret's bytes (the token and password whole,
// the database's header page).
bool Leaks(const std::string& answer, const Secrets& s) {
  if (answer.find(s.files.at("cluster-token")) != std::string::npos) return true;
  if (answer.find(s.files.at("admin-password")) != std::string::npos) return true;
  return answer.find("SQLite format 3") != std::string::npos;
}

// GET as `token`; the status and body.
std::pair<int, std::string> Download(TestCluster& cluster, const std::string& token,
                                     const std::string& uuid) {
  auto http = cluster.NewClient();
  http->SetBearerToken(token);
  auto res = http->Get("/api/v1/checkpoints/" + uuid + "/download");
  EXPECT_TRUE(res.ok());
  return {res.ok() ? res->status : 0, res.ok() ? res->body : ""};
}

// `ring experiment download-model-def` as `token` into a new folder; the
// command's result and the folder.
std::pair<CommandResult, std::string> DownloadModel(TestCluster& cluster, const std::string& token,
                                                    int64_t experiment_id) {
  static int n = 0;
  const std::string dir = cluster.dir() + "/model-download-" + std::to_string(++n);
  auto run = RunCommand({BinDir() + "/ring", "-m", cluster.url(), "experiment", "download-model-def",
                         std::to_string(experiment_id), dir},
                        {{"RING_TOKEN", token}});
  return {run, dir};
}

class CheckpointAttacks : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("agent-1", 4);
    ada_ = cluster_.CreateUser("ada", "ada-password");
    bob_ = cluster_.CreateUser("bob", "bob-password");
    ASSERT_FALSE(ada_.empty());
    ASSERT_FALSE(bob_.empty());
  }
  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  TestCluster cluster_;
  std::string ada_, bob_;
};

TEST_F(CheckpointAttacks, RegistrationTakesOnlyIssuedUuidsOfRealFolders) {
  Trial trial = StartTrial(cluster_, ada_);
  const Secrets secrets = ReadSecrets(cluster_);
  const std::map<std::string, std::string> one = {{"w.bin", "weights"}};

  // Names the master never issued.
  for (const std::string bad : {"2026-11-25", "../x", "0b0e6f57-7d1e-4f53-9a3c-6a1d1c0b9e11"}) {
    auto [status, body] = trial.Register(bad, one);
    EXPECT_EQ(status, 400) << bad << ": " << body;
  }
  EXPECT_NE(std::get<1>(trial.Register("0b0e6f57-7d1e-4f53-9a3c-6a1d1c0b9e11", one)).find("not issued"),
            std::string::npos);

  // An issued uuid whose folder is a link to the master's data folder.
  int status = 0;
  auto issued = trial.Prepare(&status);
  ASSERT_EQ(status, 201) << issued.dump();
  ASSERT_EQ(issued["uuid"].get<std::string>().size(), 36u);
  const fs::path root = fs::path(issued["path"].get<std::string>()).parent_path();
  EXPECT_EQ(root, fs::path(cluster_.dir() + "/master/checkpoints"));
  fs::create_directory_symlink(secrets.data, issued["path"].get<std::string>());
  auto [linked_status, linked_body] =
      trial.Register(issued["uuid"], {{"ringmaster.db", secrets.files.at("ringmaster.db")},
                                      {"cluster-token", secrets.files.at("cluster-token")}});
  EXPECT_EQ(linked_status, 400) << linked_body;
  EXPECT_NE(linked_body.find("link"), std::string::npos) << linked_body;
  int got = 0;
  cluster_.GetJson("/api/v1/checkpoints/" + issued["uuid"].get<std::string>(), &got);
  EXPECT_EQ(got, 404) << "a refused registration must store nothing";

  // A real folder of links to each secret.
  auto links = trial.Prepare();
  const fs::path links_dir = links["path"].get<std::string>();
  fs::create_directory(links_dir);
  fs::create_symlink(secrets.data / "ringmaster.db", links_dir / "ringmaster.db");
  fs::create_symlink(secrets.data / "cluster-token", links_dir / "cluster-token");
  fs::create_symlink(cluster_.admin_password_file(), links_dir / "admin-password");
  auto [links_status, links_body] = trial.Register(links["uuid"], secrets.files);
  EXPECT_EQ(links_status, 400) << links_body;

  // A hard link to the cluster token (the test runs as root, so the kernel
  // lets it link a file it does not own).
  auto hard = trial.Prepare();
  const fs::path hard_dir = hard["path"].get<std::string>();
  fs::create_directory(hard_dir);
  fs::create_hard_link(secrets.data / "cluster-token", hard_dir / "cluster-token");
  auto [hard_status, hard_body] =
      trial.Register(hard["uuid"], {{"cluster-token", secrets.files.at("cluster-token")}});
  EXPECT_EQ(hard_status, 400) << hard_body;
  EXPECT_NE(hard_body.find("hard link"), std::string::npos) << hard_body;

  // A uuid issued to this allocation, used again once registered; and a real one.
  auto good = trial.Prepare();
  WriteBytes(fs::path(good["path"].get<std::string>()) / "w.bin", "weights");
  EXPECT_EQ(trial.Register(good["uuid"], one).first, 201);
  EXPECT_EQ(trial.Register(good["uuid"], one).first, 200) << "a retried registration is accepted";
}

TEST_F(CheckpointAttacks, DownloadSendsOnlyRegisteredFilesAndNeverFollowsLinks) {
  Trial trial = StartTrial(cluster_, ada_);
  const Secrets secrets = ReadSecrets(cluster_);

  // A good checkpoint, with a file the trial left but did not register.
  auto good = trial.Prepare();
  const fs::path dir = good["path"].get<std::string>();
  const std::map<std::string, std::string> files = {{"w.bin", std::string(100000, 'w')},
                                                    {"sub/o.bin", "opt"}};
  for (const auto& [path, bytes] : files) WriteBytes(dir / path, bytes);
  fs::create_symlink(secrets.data / "cluster-token", dir / "extra-token");
  ASSERT_EQ(trial.Register(good["uuid"], files).first, 201);
  auto [ok_status, tar] = Download(cluster_, bob_, good["uuid"]);
  ASSERT_EQ(ok_status, 200) << tar;
  const fs::path out = cluster_.dir() + "/unpacked";
  ASSERT_TRUE(UnpackArchive(tar, out.string()).ok());
  EXPECT_EQ(ReadFileText((out / "w.bin").string()), files.at("w.bin"));
  EXPECT_EQ(ReadFileText((out / "sub/o.bin").string()), "opt");
  EXPECT_TRUE(fs::exists(out / ".ring-checkpoint.json"));
  EXPECT_FALSE(fs::exists(out / "extra-token")) << "only registered files are sent";
  EXPECT_FALSE(Leaks(tar, secrets));

  // Registered, then a file swapped for a link to the cluster token.
  fs::remove(dir / "w.bin");
  fs::create_symlink(secrets.data / "cluster-token", dir / "w.bin");
  auto [link_status, link_body] = Download(cluster_, bob_, good["uuid"]);
  EXPECT_EQ(link_status, 409) << link_body;
  EXPECT_NE(link_body.find("w.bin"), std::string::npos) << link_body;
  EXPECT_FALSE(Leaks(link_body, secrets));

  // Registered with files named like the secrets and their sizes, then the
  // folder swapped for a link to the master's data folder.
  auto named = trial.Prepare();
  const fs::path named_dir = named["path"].get<std::string>();
  std::map<std::string, std::string> lookalikes;
  for (const auto& [name, bytes] : secrets.files) lookalikes[name] = std::string(bytes.size(), 'x');
  lookalikes.erase("admin-password");
  for (const auto& [name, bytes] : lookalikes) WriteBytes(named_dir / name, bytes);
  ASSERT_EQ(trial.Register(named["uuid"], lookalikes).first, 201);
  fs::remove_all(named_dir);
  fs::create_directory_symlink(secrets.data, named_dir);
  auto [swap_status, swap_body] = Download(cluster_, ada_, named["uuid"]);
  EXPECT_EQ(swap_status, 409) << swap_body;
  EXPECT_NE(swap_body.find("link"), std::string::npos) << swap_body;
  EXPECT_FALSE(Leaks(swap_body, secrets));

  // The same folder made real again with a hard link to the token: refused.
  fs::remove(named_dir);
  fs::create_directory(named_dir);
  fs::create_hard_link(secrets.data / "cluster-token", named_dir / "cluster-token");
  WriteBytes(named_dir / "ringmaster.db", lookalikes.at("ringmaster.db"));
  auto [hard_status, hard_body] = Download(cluster_, ada_, named["uuid"]);
  EXPECT_EQ(hard_status, 409) << hard_body;
  EXPECT_FALSE(Leaks(hard_body, secrets));

  // Same size, other bytes: not the registered SHA-256.
  auto changed = trial.Prepare();
  const fs::path changed_dir = changed["path"].get<std::string>();
  WriteBytes(changed_dir / "w.bin", "aaaa");
  ASSERT_EQ(trial.Register(changed["uuid"], {{"w.bin", "aaaa"}}).first, 201);
  WriteBytes(changed_dir / "w.bin", "bbbb");
  auto [sha_status, sha_body] = Download(cluster_, ada_, changed["uuid"]);
  EXPECT_EQ(sha_status, 409) << sha_body;
  EXPECT_NE(sha_body.find("SHA-256"), std::string::npos) << sha_body;
}

TEST_F(CheckpointAttacks, GarbageCollectionRemovesALinkNeverItsTarget) {
  // Keeps nothing once the trial ends.
  Trial trial = StartTrial(cluster_, ada_,
                           "checkpoint_storage:\n  host_path: " + cluster_.dir() +
                               "/master/checkpoints\n  save_trial_best: 0\n  save_trial_latest: 0\n");
  const fs::path victim = cluster_.dir() + "/victim";
  WriteBytes(victim / "precious.txt", "keep me");

  auto swapped = trial.Prepare();
  const fs::path dir = swapped["path"].get<std::string>();
  WriteBytes(dir / "w.bin", "weights");
  ASSERT_EQ(trial.Register(swapped["uuid"], {{"w.bin", "weights"}}).first, 201);
  fs::remove_all(dir);
  fs::create_directory_symlink(victim, dir);

  auto plain = trial.Prepare();  // and one that is simply deleted
  const fs::path plain_dir = plain["path"].get<std::string>();
  WriteBytes(plain_dir / "w.bin", "weights");
  fs::create_symlink(victim / "precious.txt", plain_dir / "link-to-victim");
  ASSERT_EQ(trial.Register(plain["uuid"], {{"w.bin", "weights"}}).first, 201);

  int status = 0;
  cluster_.PostJson("/api/v1/experiments/" + std::to_string(trial.experiment_id) + "/kill", {}, &status);
  ASSERT_EQ(status, 200);
  auto deleted = [&](const std::string& uuid) {
    return cluster_.GetJson("/api/v1/checkpoints/" + uuid).value("state", "") == "DELETED";
  };
  ASSERT_TRUE(TestCluster::WaitFor([&] { return deleted(swapped["uuid"]) && deleted(plain["uuid"]); },
                                   std::chrono::seconds(30)));
  EXPECT_EQ(ReadFileText((victim / "precious.txt").string()), "keep me") << "the victim folder was deleted";
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir))) << "the link itself is removed";
  EXPECT_FALSE(fs::exists(fs::symlink_status(plain_dir)));
}

// The download rule, with the master's default and with experiments made
// private in master.yaml.
TEST_F(CheckpointAttacks, OtherUsersDownloadOnlyWhenExperimentsAreTeamReadable) {
  Trial trial = StartTrial(cluster_, ada_);
  auto c = trial.Prepare();
  WriteBytes(fs::path(c["path"].get<std::string>()) / "w.bin", "weights");
  ASSERT_EQ(trial.Register(c["uuid"], {{"w.bin", "weights"}}).first, 201);
  EXPECT_EQ(Download(cluster_, bob_, c["uuid"]).first, 200) << "team-readable by default";
  auto [team_model, team_dir] = DownloadModel(cluster_, bob_, trial.experiment_id);
  EXPECT_EQ(team_model.exit_code, 0) << team_model.out << team_model.err;
  EXPECT_NE(ReadFileText(team_dir + "/run.sh").find("exec sleep 300"), std::string::npos)
      << "the model definition as submitted";

  cluster_.StopMaster();
  TestCluster::MasterOptions options;
  options.extra_args = {"--config", cluster_.WriteFile("private.yaml", "experiments_team_readable: false\n")};
  cluster_.StartMaster(options);
  const std::string bob = cluster_.SignIn("bob", "bob-password");
  const std::string ada = cluster_.SignIn("ada", "ada-password");
  auto [status, body] = Download(cluster_, bob, c["uuid"]);
  EXPECT_EQ(status, 403) << body;
  EXPECT_NE(body.find("experiments_team_readable"), std::string::npos) << body;
  EXPECT_EQ(Download(cluster_, ada, c["uuid"]).first, 200) << "the owner always may";
  EXPECT_EQ(Download(cluster_, cluster_.admin_token(), c["uuid"]).first, 200) << "admins always may";

  auto [refused, refused_dir] = DownloadModel(cluster_, bob, trial.experiment_id);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("experiments_team_readable"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(refused_dir + "/run.sh"));
  for (const std::string& token : {ada, cluster_.admin_token()}) {
    auto [model, dir] = DownloadModel(cluster_, token, trial.experiment_id);
    EXPECT_EQ(model.exit_code, 0) << model.out << model.err;
    EXPECT_TRUE(fs::exists(dir + "/run.sh"));
  }
}

class StorageRoots : public ::testing::Test {
 protected:
  TestCluster cluster_;
};

TEST_F(StorageRoots, SubmitRefusesStorageOutsideTheAllowedRoots) {
  const std::string shared = cluster_.dir() + "/shared";
  fs::create_directories(shared);
  TestCluster::MasterOptions options;
  options.extra_args = {
      "--config",
      cluster_.WriteFile("roots.yaml", "checkpoint_storage:\n  allowed_roots: [" + shared + "]\n")};
  cluster_.StartMaster(options);
  auto tar = PackDirectory(cluster_.MakeModelDir("m", {{"run.sh", "true\n"}}));
  ASSERT_TRUE(tar.ok());
  auto submit = [&](const std::string& storage, std::string* message) {
    const std::string config = SleeperConfig("checkpoint_storage:\n" + storage);
    int status = 0;
    auto body = cluster_.PostJson(
        "/api/v1/experiments",
        {{"config", config}, {"model_definition", Base64Encode(*tar)}, {"activate", false}}, &status);
    if (message) *message = body.dump();
    return status;
  };
  std::string message;
  EXPECT_EQ(submit("  host_path: /etc\n", &message), 400);
  EXPECT_NE(message.find("experiment.yaml:10: checkpoint_storage.host_path"), std::string::npos) << message;
  EXPECT_EQ(submit("  host_path: " + cluster_.dir() + "/master\n", &message), 400) << "the data folder";
  EXPECT_EQ(submit("  host_path: " + shared + "/../master\n", &message), 400);
  EXPECT_NE(message.find("checkpoint_storage.host_path"), std::string::npos) << message;
  EXPECT_EQ(submit("  host_path: " + shared + "\n  storage_path: ../../master\n", &message), 400);
  EXPECT_NE(message.find("experiment.yaml:11: checkpoint_storage.storage_path"), std::string::npos)
      << message;
  EXPECT_EQ(submit("  host_path: " + shared + "\n  storage_path: /etc\n", &message), 400);
  EXPECT_NE(message.find("experiment.yaml:11: checkpoint_storage.storage_path"), std::string::npos)
      << message;
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments").value("total", -1), 0) << "refusals store nothing";
  EXPECT_EQ(submit("  host_path: " + shared + "/team-a\n  storage_path: runs/1\n", &message), 201) << message;
  EXPECT_EQ(submit("  host_path: " + cluster_.dir() + "/master/checkpoints\n", &message), 201)
      << "the default root is always allowed: " << message;
}

int64_t VmRssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

TEST(StreamedAnswers, ASlowReaderHoldsOneBufferAndTheLimitRefusesTheNext) {
  TestCluster cluster;
  TestCluster::MasterOptions options;
  options.extra_args = {"--config", cluster.WriteFile("streams.yaml", "max_streamed_answers: 1\n")};
  cluster.StartMaster(options);
  cluster.StartAgent("agent-1", 1);
  Trial trial = StartTrial(cluster, cluster.admin_token());
  // 128 MiB that gzip cannot shrink.
  constexpr size_t kBytes = 128u << 20;
  std::string bytes(kBytes, '\0');
  std::mt19937_64 random(7);
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    const uint64_t v = random();
    std::memcpy(bytes.data() + i, &v, 8);
  }
  auto c = trial.Prepare();
  WriteBytes(fs::path(c["path"].get<std::string>()) / "big.bin", bytes);
  ASSERT_EQ(trial.Register(c["uuid"], {{"big.bin", bytes}}).first, 201);
  bytes.clear();
  bytes.shrink_to_fit();
  auto small = trial.Prepare();
  WriteBytes(fs::path(small["path"].get<std::string>()) / "w.bin", "weights");
  ASSERT_EQ(trial.Register(small["uuid"], {{"w.bin", "weights"}}).first, 201);

  const pid_t master = cluster.master()->pid();
  const int64_t before = VmRssKiB(master);
  RawConnection slow(PortOf(cluster.url()));
  ASSERT_TRUE(slow.Send("GET /api/v1/checkpoints/" + c["uuid"].get<std::string>() +
                        "/download HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + cluster.admin_token() +
                        "\r\n\r\n"));
  std::vector<char> piece(256 * 1024);
  ASSERT_EQ(slow.Read(piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
  EXPECT_NE(std::string(piece.data(), 200).find("200 OK"), std::string::npos);
  EXPECT_NE(std::string(piece.data(), 400).find("chunked"), std::string::npos);
  int64_t peak = before;
  size_t read = piece.size();
  for (int i = 0; i < 12; ++i) {  // about 3 MiB in 3 s: far slower than the master could send
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    ASSERT_EQ(slow.Read(piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
    read += piece.size();
    peak = std::max(peak, VmRssKiB(master));
  }
  EXPECT_LT(peak - before, 48 * 1024)
      << "the master grew by " << (peak - before) << " KiB for a slow reader of a " << (kBytes >> 20)
      << " MiB checkpoint";

  // The one slot is taken: the next large answer is refused, and says why.
  auto [busy, body] = Download(cluster, cluster.admin_token(), small["uuid"]);
  EXPECT_EQ(busy, 503) << body;
  EXPECT_NE(body.find("max_streamed_answers"), std::string::npos) << body;
  auto model_http = cluster.NewClient();
  model_http->SetBearerToken(cluster.admin_token());
  auto model_busy =
      model_http->Get("/api/v1/experiments/" + std::to_string(trial.experiment_id) + "/model_definition");
  ASSERT_TRUE(model_busy.ok());
  EXPECT_EQ(model_busy->status, 503) << "a user's model download takes a slot too";
  // A trial's own fetch is streamed as well, and never waits behind users' downloads.
  auto model = trial.http->Get("/api/v1/allocations/" + trial.alloc + "/model_definition");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->status, 200) << model->body;
  EXPECT_EQ(model->headers["transfer-encoding"], "chunked");
  EXPECT_EQ(model->headers.count("content-length"), 0u);
  EXPECT_EQ(model->body.substr(0, 2), "\x1f\x8b") << "a gzip stream";

  // Read it all: a whole, valid answer; then the slot is free again. What
  // has come, not whole pieces: the answer's end falls anywhere in a piece,
  // and a full piece would wait out the 5 s timeout on the kept-alive
  // connection. The last 5 bytes read, across reads, are the end mark.
  std::string tail;
  for (;;) {
    const ssize_t n = slow.ReadSome(piece.data(), piece.size());
    if (n <= 0) break;
    read += static_cast<size_t>(n);
    tail.append(piece.data() + (n > 5 ? n - 5 : 0), piece.data() + n);
    if (tail.size() > 5) tail.erase(0, tail.size() - 5);
    if (tail == "0\r\n\r\n") break;
  }
  EXPECT_EQ(tail, "0\r\n\r\n") << "the answer ends with the last chunk";
  EXPECT_GT(read, kBytes) << "the whole checkpoint came";
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return Download(cluster, cluster.admin_token(), small["uuid"]).first == 200; },
      std::chrono::seconds(30)));
}

}  // namespace
}  // namespace ring::testing::checkpoint_security

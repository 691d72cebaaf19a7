// The permission scheme of shared checkpoint storage (docs/operations.md,
// "Checkpoint folders") with real Unix accounts: a master running as an
// unprivileged account of its own group, a storage root set up as the docs
// say, two users writing with the trial runtime's storage under any umask.
// User B cannot read user A's checkpoint on disk; the master (a real
// ringmaster process as that account) registers, sends and deletes it.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "common/archive.h"
#include "master/files/checkpoint_folder.h"
#include "ring/trial/checkpoint_storage.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::checkpoint_permissions {
namespace {

namespace fs = std::filesystem;

// Accounts made for the test and removed at its end.
class Accounts {
 public:
  Accounts() : tag_(std::to_string(::getpid())) {}
  ~Accounts() {
    for (const auto& user : users_) RunCommand({"userdel", user});
    for (const auto& group : groups_) RunCommand({"groupdel", group});
  }
  std::string Group(const std::string& base) {
    const std::string name = "ringt_" + base + "_" + tag_;
    auto r = RunCommand({"groupadd", name});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    groups_.push_back(name);
    return name;
  }
  // A user whose primary group is `group`, or a group of its own.
  std::string User(const std::string& base, const std::string& group = "") {
    const std::string name = "ringt_" + base + "_" + tag_;
    std::vector<std::string> argv = {"useradd", "-M", "-s", "/usr/sbin/nologin"};
    if (group.empty()) {
      argv.push_back("-U");
    } else {
      argv.insert(argv.end(), {"-N", "-g", group});
    }
    argv.push_back(name);
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    users_.push_back(name);
    if (group.empty()) groups_.push_back(name);  // userdel removes it too; groupdel then just fails
    return name;
  }

 private:
  std::string tag_;
  std::vector<std::string> users_;
  std::vector<std::string> groups_;
};

struct Ids {
  uid_t uid;
  gid_t gid;
};
Ids IdsOf(const std::string& user) {
  struct passwd* pw = ::getpwnam(user.c_str());
  EXPECT_NE(pw, nullptr) << user;
  return pw ? Ids{pw->pw_uid, pw->pw_gid} : Ids{0, 0};
}

// Runs `work` in a child as `who` with `mask` as its umask; its exit code
// (0 when `work` returned true).
int RunAs(Ids who, mode_t mask, const std::function<bool()>& work) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::umask(mask);
    if (::setgroups(0, nullptr) != 0 || ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0) ::_exit(90);
    bool ok = false;
    try {
      ok = work();
    } catch (...) {
      ::_exit(91);
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Writes checkpoint `uuid` under `root` as the trial runtime does, with a
// file in a subfolder that the writer creates with its own (umask) modes.
bool WriteCheckpoint(const fs::path& root, const std::string& uuid) {
  ring::trial::SharedFsStorage storage(root);
  const fs::path dir = storage.BeginWrite(uuid);
  std::ofstream(dir / "w.bin") << "weights of A";
  fs::create_directory(dir / "sub");
  std::ofstream(dir / "sub" / "o.bin") << "optimizer of A";
  storage.Commit(uuid);
  return true;
}

TEST(CheckpointPermissions, OwnersWriteTheMasterReadsAndDeletesOthersCannotRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create Unix accounts (useradd) and switch to them";
  Accounts accounts;
  const std::string group = accounts.Group("ckg");
  const std::string master_user = accounts.User("ckm", group);
  const std::string user_a = accounts.User("cka");
  const std::string user_b = accounts.User("ckb");
  ASSERT_FALSE(::testing::Test::HasFailure()) << "cannot create the accounts";
  const Ids m = IdsOf(master_user), a = IdsOf(user_a), b = IdsOf(user_b);

  TestCluster cluster;
  const fs::path dir = cluster.dir();
  // The test's folder: everyone may pass; the master writes its port file here.
  fs::permissions(dir, fs::perms::all | fs::perms::sticky_bit);
  fs::create_directories(dir / "master");
  ASSERT_EQ(::chown((dir / "master").c_str(), m.uid, m.gid), 0);
  ASSERT_EQ(::chmod((dir / "master").c_str(), 0700), 0);
  ASSERT_EQ(::chown(cluster.admin_password_file().c_str(), m.uid, m.gid), 0);
  // The shared root as docs/operations.md sets it up.
  const fs::path root = dir / "shared";
  fs::create_directories(root);
  ASSERT_EQ(::chown(root.c_str(), m.uid, m.gid), 0);
  ASSERT_EQ(::chmod(root.c_str(), 03773), 0);
  const std::string yaml = cluster.WriteFile("master.yaml", "checkpoint_root: " + root.string() + "\n");
  ::chmod(yaml.c_str(), 0644);

  TestCluster::MasterOptions options;
  options.launcher = {"setpriv", "--reuid=" + std::to_string(m.uid), "--regid=" + std::to_string(m.gid),
                      "--clear-groups", "--"};
  options.extra_args = {"--config", yaml};
  cluster.StartMaster(options);
  // The agent (root here) takes only a token file of its own, as on a real
  // agent machine where the token is copied over.
  const std::string agent_token = (dir / "agent-token").string();
  fs::copy_file(cluster.cluster_token_file(), agent_token);
  ASSERT_EQ(::chmod(agent_token.c_str(), 0600), 0);
  TestCluster::AgentOptions agent_options;
  agent_options.token_file = agent_token;
  cluster.StartAgent("agent-1", 1, agent_options);
  const std::string flag = (dir / "alloc").string();
  const std::string model = cluster.MakeModelDir(
      "sleeper",
      {{"run.sh", "echo \"$RING_EXPERIMENT_ID $RING_ALLOCATION_ID $RING_ALLOCATION_TOKEN\" > \"" + flag +
                      ".tmp\"\nmv \"" + flag + ".tmp\" \"" + flag + "\"\nexec sleep 300\n"}});
  const std::string config = cluster.WriteFile(
      "sleeper.yaml",
      "name: sleeper\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n"
      "    batches: 10\nmax_restarts: 0\ncheckpoint_storage:\n  host_path: " +
          root.string() + "\n  save_trial_best: 0\n  save_trial_latest: 0\n");
  auto made = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return fs::exists(flag); }, std::chrono::seconds(30)));
  int64_t experiment = 0;
  std::string alloc, token;
  std::istringstream(ReadFileText(flag)) >> experiment >> alloc >> token;
  auto trial = cluster.NewClient();
  trial->SetBearerToken(token);

  for (const mode_t mask : {mode_t{022}, mode_t{077}, mode_t{0}}) {
    SCOPED_TRACE("umask " + std::to_string(mask));
    auto issued = trial->Post("/api/v1/allocations/" + alloc + "/checkpoints/prepare", "{}");
    ASSERT_TRUE(issued.ok() && issued->status == 201) << (issued.ok() ? issued->body : "");
    const std::string uuid = nlohmann::json::parse(issued->body)["uuid"];
    const fs::path folder = root / uuid;

    ASSERT_EQ(RunAs(a, mask, [&] { return WriteCheckpoint(root, uuid); }), 0) << "user A cannot write";
    for (const fs::path& p : {folder, folder / "sub"}) {
      struct stat st {};
      ASSERT_EQ(::lstat(p.c_str(), &st), 0);
      EXPECT_EQ(st.st_uid, a.uid) << p;
      EXPECT_EQ(st.st_gid, m.gid) << p << ": the group comes from the root (setgid)";
      EXPECT_EQ(st.st_mode & 0777, 0770u) << p;
    }
    for (const fs::path& p : {folder / "w.bin", folder / "sub" / "o.bin"}) {
      struct stat st {};
      ASSERT_EQ(::lstat(p.c_str(), &st), 0);
      EXPECT_EQ(st.st_gid, m.gid) << p;
      EXPECT_EQ(st.st_mode & 0777, 0640u) << p;
    }
    // User B: neither the files nor the folder, nor a listing of the root.
    EXPECT_EQ(RunAs(b, 022,
                    [&] {
                      return ::open((folder / "w.bin").c_str(), O_RDONLY) < 0 && errno == EACCES &&
                             ::opendir(folder.c_str()) == nullptr && errno == EACCES &&
                             ::opendir(root.c_str()) == nullptr;
                    }),
              0)
        << "user B reads user A's checkpoint on disk";

    // The master registers it (it reads every file) and sends it.
    nlohmann::json resources = nlohmann::json::array();
    for (const auto& [path, bytes] :
         std::map<std::string, std::string>{{"w.bin", "weights of A"}, {"sub/o.bin", "optimizer of A"}}) {
      Sha256 sha;
      sha.Update(bytes.data(), bytes.size());
      resources.push_back({{"path", path}, {"size", bytes.size()}, {"sha256", sha.HexDigest()}});
    }
    auto registered =
        trial->Post("/api/v1/allocations/" + alloc + "/checkpoints",
                    nlohmann::json{{"uuid", uuid}, {"batches", 1}, {"resources", resources}}.dump());
    ASSERT_TRUE(registered.ok());
    EXPECT_EQ(registered->status, 201) << registered->body;
    auto tar = cluster.client().Get("/api/v1/checkpoints/" + uuid + "/download");
    ASSERT_TRUE(tar.ok());
    ASSERT_EQ(tar->status, 200) << tar->body;
    const fs::path out = dir / ("out-" + uuid);
    ASSERT_TRUE(UnpackArchive(tar->body, out.string()).ok());
    EXPECT_EQ(ReadFileText((out / "sub" / "o.bin").string()), "optimizer of A");
  }

  // Garbage collection by the master's account deletes A's folders.
  int status = 0;
  cluster.PostJson("/api/v1/experiments/" + std::to_string(experiment) + "/kill", {}, &status);
  ASSERT_EQ(status, 200);
  auto left = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(root))
      if (e.path().filename().string().rfind(".", 0) != 0) ++n;
    return n;
  };
  EXPECT_TRUE(TestCluster::WaitFor([&] { return left() == 0; }, std::chrono::seconds(30)))
      << left() << " checkpoint folders are left";
  if (::testing::Test::HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::checkpoint_permissions

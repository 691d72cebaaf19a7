#include "tests/support/slurm_cluster.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "tests/support/test_cluster.h"

namespace ring::testing {
namespace slurm_cluster {

namespace fs = std::filesystem;

std::string SlurmNetnsScript() {
  return SourceDir() + "/deploy/netns-cluster.sh";
}

// 10.215.0.0/16 is the Slurm tests' own (NetnsCluster takes 10.213.*, the
// benchmarks 10.214.*); a subnet no namespace cluster of this host uses now.
std::string FreeSlurmSubnet() {
  std::string used;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/run/ring-netns", ec))
    used += ReadFileText((entry.path() / "subnet").string()) + " ";
  for (int i = 0; i < 250; ++i) {
    const std::string subnet = "10.215." + std::to_string((getpid() + i) % 250 + 1);
    if (used.find(subnet + "\n") == std::string::npos) return subnet;
  }
  return "10.215.251";
}

bool Executable(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"})
    if (access((std::string(dir) + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

void WriteText(const std::string& path, const std::string& text, fs::perms perms) {
  std::ofstream(path, std::ios::trunc) << text;
  fs::permissions(path, perms, fs::perm_options::replace);
}

// Slurm's auth/jwt plugin (slurm-wlm-jwt-plugin), where Debian and others
// put Slurm's plugins.
bool HaveJwtPlugin() {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/aarch64-linux-gnu/slurm-wlm",
                          "/usr/lib64/slurm", "/usr/lib/slurm"})
    if (fs::exists(std::string(dir) + "/auth_jwt.so")) return true;
  return false;
}

}  // namespace slurm_cluster
using namespace slurm_cluster;

std::string SlurmCluster::WhyNoRestd() {
  if (!Executable("slurmrestd")) return "slurmrestd is not installed (deploy/install-deps.sh installs it)";
  if (!HaveJwtPlugin())
    return "Slurm's auth/jwt plugin is not installed (deploy/install-deps.sh installs slurm-wlm-jwt-plugin)";
  return "";
}

std::string SlurmCluster::WhyUnavailable() {
  if (geteuid() != 0)
    return "a Slurm cluster in network namespaces needs root (this is uid " + std::to_string(geteuid()) + ")";
  for (const char* program :
       {"slurmctld", "slurmd", "munged", "sbatch", "squeue", "sinfo", "scancel", "ip", "nsenter", "unshare"})
    if (!Executable(program))
      return std::string(program) + " is not installed (deploy/install-deps.sh installs slurm-wlm and munge)";
  auto r = RunCommand({SlurmNetnsScript(), "check"});
  if (r.exit_code != 0) return r.err.empty() ? "netns-cluster.sh check failed" : r.err;
  return "";
}

SlurmCluster::SlurmCluster(const std::string& dir)
    : dir_(dir), name_("sl" + std::to_string(getpid() % 1000000)) {
  Start();
  if (!ok_) {
    DumpLogs();
    Stop();
  }
}

SlurmCluster::~SlurmCluster() {
  Stop();
}

void SlurmCluster::Start() {
  std::error_code ec;
  for (const char* sub : {"munge", "state", "run", "log", "spool-n1", "spool-n2"})
    fs::create_directories(dir_ + "/" + sub, ec);
  fs::permissions(dir_ + "/munge", fs::perms(0755), fs::perm_options::replace, ec);

  // The namespaces: NAME-0 the controller (.2), NAME-1 n1 (.3), NAME-2 n2 (.4).
  const std::string subnet = FreeSlurmSubnet();
  auto up = RunCommand({SlurmNetnsScript(), "up", name_, "3", "--subnet", subnet});
  namespaces_up_ = true;  // down removes whatever part of it exists
  if (up.exit_code != 0) {
    error_ = "netns-cluster.sh up failed: " + up.err + up.out;
    return;
  }
  bridge_address_ = subnet + ".1";

  // munge: one private daemon on the host serves every namespace (its socket
  // is a path on the shared file system).
  std::string key(1024, '\0');
  std::random_device random;
  for (auto& c : key) c = static_cast<char>(random());
  WriteText(dir_ + "/munge/key", key, fs::perms::owner_read);
  const std::string socket = dir_ + "/munge/socket";
  munged_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{
          "munged", "--foreground", "--force", "--socket=" + socket, "--key-file=" + dir_ + "/munge/key",
          "--pid-file=" + dir_ + "/munge/munged.pid", "--log-file=" + dir_ + "/munge/munged.log",
          "--seed-file=" + dir_ + "/munge/seed"},
      std::map<std::string, std::string>{}, dir_ + "/log/munged.out");

  if (WhyNoRestd().empty()) {
    std::string jwt(32, '\0');
    for (auto& c : jwt) c = static_cast<char>(random());
    jwt_key_ = dir_ + "/jwt.key";
    WriteText(jwt_key_, jwt, fs::perms::owner_read | fs::perms::owner_write);
  }
  conf_ = dir_ + "/slurm.conf";
  std::ostringstream conf;
  conf << "ClusterName=ringtest\n"
       << "SlurmctldHost=" << HostName() << "(" << subnet << ".2)\n"
       << "SlurmctldPort=6917\nSlurmdPort=6918\n"
       << "AuthType=auth/munge\nAuthInfo=socket=" << socket
       << "\nCredType=cred/munge\n"
       // Tokens (slurmrestd's users) besides munge, where the plugin is.
       << (jwt_key_.empty() ? "" : "AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=" + jwt_key_ + "\n")
       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
       << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
       << "JobCompType=jobcomp/none\nSlurmUser=root\nSlurmdUser=root\nMailProg=/bin/true\n"
       << "ReturnToService=2\n"
       // Fast scheduling on a small machine (../FACTS: batch delay off, an
       // Epilog so a job's end schedules the next at once).
       << "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,default_queue_depth=200\n"
       << "MinJobAge=2\nEpilog=/bin/true\n"
       << "StateSaveLocation=" << dir_ << "/state\n"
       << "SlurmdSpoolDir=" << dir_ << "/spool-%n\n"
       << "SlurmctldPidFile=" << dir_ << "/run/slurmctld.pid\n"
       << "SlurmdPidFile=" << dir_ << "/run/slurmd-%n.pid\n"
       << "SlurmctldLogFile=" << dir_ << "/log/slurmctld.log\n"
       << "SlurmdLogFile=" << dir_ << "/log/slurmd-%n.log\n";
  for (size_t i = 0; i < nodes_.size(); ++i)
    conf << "NodeName=" << nodes_[i] << " NodeHostname=" << nodes_[i] << " NodeAddr=" << subnet << "."
         << (i + 3)
         << " CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000\n";
  conf << "PartitionName=" << partition_ << " Nodes=" << nodes_[0] << "," << nodes_[1]
       << " Default=YES MaxTime=INFINITE State=UP\n";
  WriteText(conf_, conf.str(), fs::perms(0644));

  // munged must answer before the daemons authenticate.
  if (!TestCluster::WaitFor([&] { return fs::exists(socket); }, std::chrono::seconds(10))) {
    error_ = "munged did not create its socket";
    return;
  }
  const auto env = this->env();
  slurmctld_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"ip", "netns", "exec", name_ + "-0", "slurmctld", "-D", "-f", conf_}, env,
      dir_ + "/log/slurmctld.out");
  for (size_t i = 0; i < nodes_.size(); ++i)
    slurmds_.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{
            "nsenter", "--net=/run/netns/" + name_ + "-" + std::to_string(i + 1), "unshare", "--uts", "sh",
            "-c", "hostname " + nodes_[i] + " && exec slurmd -D -N " + nodes_[i] + " -f " + conf_},
        env, dir_ + "/log/slurmd-" + nodes_[i] + ".out"));

  const bool idle = TestCluster::WaitFor(
      [&] {
        auto r = Run({"sinfo", "-h", "-N", "-o", "%N %T"}, std::chrono::seconds(5));
        return r.exit_code == 0 && r.out == nodes_[0] + " idle\n" + nodes_[1] + " idle\n";
      },
      std::chrono::seconds(30));
  if (!idle) {
    error_ = "the Slurm nodes did not become idle within 30 s (sinfo: " +
             Run({"sinfo", "-h", "-N", "-o", "%N %T"}).out + ")";
    return;
  }
  ok_ = true;
}

void SlurmCluster::Stop() {
  // Jobs first, while the controller can still end them cleanly.
  if (ok_ && slurmctld_ && slurmctld_->running()) Run({"scancel", "--full", "--partition", partition_});
  if (restd_) restd_->Stop(std::chrono::seconds(3));
  restd_.reset();
  restd_port_.reset();
  for (auto& slurmd : slurmds_) slurmd->Stop(std::chrono::seconds(3));
  slurmds_.clear();
  if (slurmctld_) slurmctld_->Stop(std::chrono::seconds(3));
  slurmctld_.reset();
  if (munged_) munged_->Stop(std::chrono::seconds(3));
  munged_.reset();
  // Kills whatever still runs in the namespaces (job steps), removes them,
  // their veths and the bridge.
  if (namespaces_up_) RunCommand({SlurmNetnsScript(), "down", name_});
  namespaces_up_ = false;
  ok_ = false;
}

std::string SlurmCluster::StartRestd(std::string* why) {
  if (*why = WhyNoRestd(); !why->empty()) return "";
  if (jwt_key_.empty()) {
    *why = "slurm.conf has no JWT key";
    return "";
  }
  if (!restd_) {
    // Held while slurmrestd runs: it binds the port with SO_REUSEADDR.
    restd_port_ = std::make_unique<HeldPort>(HeldPort::Use::kServerMayBind);
    auto env = this->env();
    env["SLURM_JWT"] = "daemon";  // its own calls to slurmctld use auth/jwt too
    restd_url_ = "http://127.0.0.1:" + std::to_string(restd_port_->port());
    restd_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"slurmrestd", "-u", "nobody", "-a", "rest_auth/jwt", "-s", "openapi/v0.0.38",
                                 "127.0.0.1:" + std::to_string(restd_port_->port())},
        env, dir_ + "/log/slurmrestd.out");
    const bool up = TestCluster::WaitFor(
        [&] {
          auto r =
              RunCommand({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", restd_url_ + "/openapi/v3"},
                         {}, std::chrono::seconds(5));
          return r.out == "401" || r.out == "200";
        },
        std::chrono::seconds(15));
    if (!up) {
      *why = "slurmrestd did not answer: " + ReadFileText(dir_ + "/log/slurmrestd.out");
      restd_->Stop(std::chrono::seconds(3));
      restd_.reset();
      return "";
    }
  }
  return restd_url_;
}

CommandResult SlurmCluster::Run(std::vector<std::string> argv, std::chrono::milliseconds timeout) const {
  return RunCommand(argv, env(), timeout);
}

bool SlurmCluster::WaitIdle(std::chrono::milliseconds timeout) const {
  return TestCluster::WaitFor(
      [&] {
        auto r = Run({"squeue", "-h", "-o", "%i"}, std::chrono::seconds(5));
        return r.exit_code == 0 && r.out.empty();
      },
      timeout);
}

void SlurmCluster::DumpLogs() const {
  for (const char* log : {"slurmctld.log", "slurmd-n1.log", "slurmd-n2.log", "slurmctld.out", "slurmd-n1.out",
                          "slurmd-n2.out", "munged.out", "slurmrestd.out"}) {
    const std::string text = ReadFileText(dir_ + "/log/" + log);
    if (text.empty()) continue;
    fprintf(stderr, "---- %s (last 4000 bytes) ----\n%s\n", log,
            text.substr(text.size() > 4000 ? text.size() - 4000 : 0).c_str());
  }
}

}  // namespace ring::testing

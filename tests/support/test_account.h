#pragma once
// A Unix account made for one test (useradd --system, with a group of its
// own, no home) and removed after it. Needs root.
#include <pwd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/support/process.h"

namespace ring::testing {

class TestAccount {
 public:
  explicit TestAccount(const std::string& tag) : name_("ringt_" + tag + "_" + std::to_string(::getpid())) {
    RunCommand({"userdel", name_});
    auto made = RunCommand({"useradd", "--system", "--no-create-home", "--user-group", "--shell",
                            "/usr/sbin/nologin", "--home-dir", "/nonexistent", name_});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    if (passwd* pw = ::getpwnam(name_.c_str())) {
      uid_ = pw->pw_uid;
      gid_ = pw->pw_gid;
    }
  }
  ~TestAccount() { RunCommand({"userdel", name_}); }
  TestAccount(const TestAccount&) = delete;
  TestAccount& operator=(const TestAccount&) = delete;
  const std::string& name() const { return name_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }
  // `argv` run as this account (setpriv: its uid, gid and no other group).
  std::vector<std::string> As(std::vector<std::string> argv) const {
    std::vector<std::string> full = {"setpriv", "--reuid=" + std::to_string(uid_),
                                     "--regid=" + std::to_string(gid_), "--clear-groups"};
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
  }

 private:
  std::string name_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

}  // namespace ring::testing

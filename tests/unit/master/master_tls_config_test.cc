// The master's TLS settings: master.yaml's tls keys, the flags' pairing, and
// certificate and key files checked at start with errors that name them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "master/http/http_server.h"
#include "master/master_config.h"
#include "tests/support/test_certs.h"

namespace ring {
namespace {

class MasterTlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ring-tls-config-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Result<MasterConfig> Load(const std::string& text) {
    std::ofstream(dir_ + "/master.yaml") << text;
    return MasterConfig::FromYamlFile(dir_ + "/master.yaml");
  }
  // Finalize with everything but TLS at its defaults, the data inside dir_.
  Status Finalize(MasterTlsConfig tls) {
    MasterConfig c;
    c.data_dir = dir_ + "/data";
    c.tls = std::move(tls);
    return c.Finalize("ringmaster");
  }
  std::string dir_;
};

TEST_F(MasterTlsConfigTest, TlsKeysParse) {
  auto c = Load("tls:\n  cert_file: /etc/ring/master.crt\n  key_file: /etc/ring/master.key\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->tls.enabled());
  EXPECT_EQ(c->tls.cert_file, "/etc/ring/master.crt");
  EXPECT_EQ(c->tls.key_file, "/etc/ring/master.key");
  EXPECT_FALSE(MasterConfig{}.tls.enabled());
}

TEST_F(MasterTlsConfigTest, MistakesInTheTlsKeysNameThem) {
  auto typo = Load("threads: 2\ntls:\n  cert: /etc/ring/master.crt\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find(":3: unknown key \"tls.cert\""), std::string::npos)
      << typo.status().message();
  auto not_a_map = Load("tls: yes\n");
  ASSERT_FALSE(not_a_map.ok());
  EXPECT_NE(not_a_map.status().message().find("tls must be a map"), std::string::npos)
      << not_a_map.status().message();
}

TEST_F(MasterTlsConfigTest, ACertificateNeedsItsKeyAndTheOtherWayRound) {
  Status no_key = Finalize({"/etc/ring/master.crt", ""});
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(no_key.message().find("tls.key_file (--tls-key)"), std::string::npos) << no_key.message();
  Status no_cert = Finalize({"", "/etc/ring/master.key"});
  ASSERT_FALSE(no_cert.ok());
  EXPECT_NE(no_cert.message().find("tls.cert_file (--tls-cert)"), std::string::npos) << no_cert.message();
}

TEST_F(MasterTlsConfigTest, UnusableFilesStopTheMasterNamingTheFile) {
  auto files = testing::MakeTestTlsFiles(dir_);
  EXPECT_TRUE(Finalize({files.cert, files.key}).ok()) << Finalize({files.cert, files.key}).message();

  const std::string missing = dir_ + "/missing.key";
  Status no_key = Finalize({files.cert, missing});
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(no_key.message().find("TLS key file " + missing + " cannot be read"), std::string::npos)
      << no_key.message();

  const std::string garbage = dir_ + "/garbage.crt";
  std::ofstream(garbage) << "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  Status bad_cert = CheckTlsFiles(garbage, files.key);
  ASSERT_FALSE(bad_cert.ok());
  EXPECT_NE(bad_cert.message().find("TLS certificate file " + garbage), std::string::npos)
      << bad_cert.message();

  // The CA's key is a fine key, but not the one of the master's certificate.
  testing::TestCa other;
  other.WriteKey(dir_ + "/other.key");
  Status mismatch = CheckTlsFiles(files.cert, dir_ + "/other.key");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.message().find("TLS key file " + dir_ + "/other.key does not match the certificate in " +
                                    files.cert),
            std::string::npos)
      << mismatch.message();
}

}  // namespace
}  // namespace ring

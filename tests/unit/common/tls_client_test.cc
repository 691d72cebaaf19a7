// The TLS client pieces every client shares: https URLs, CA files, and what
// a failed handshake tells the user.
#include <gtest/gtest.h>

#include <openssl/x509_vfy.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/http_client.h"
#include "common/tls_client.h"
#include "tests/support/test_certs.h"

namespace ring {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ring-tls-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TlsUrlTest, HttpsUrlsParseWithPort443ByDefault) {
  auto url = Url::Parse("https://master.example");
  ASSERT_TRUE(url.ok()) << url.status().message();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->port, "443");
  EXPECT_EQ(url->ToString(), "https://master.example:443");

  auto with_port = Url::Parse("https://10.0.0.1:8443/prefix/");
  ASSERT_TRUE(with_port.ok());
  EXPECT_EQ(with_port->port, "8443");
  EXPECT_EQ(with_port->path, "/prefix");
  EXPECT_EQ(Url::Parse("http://h")->port, "80");

  auto bad = Url::Parse("ftp://h:1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("https://"), std::string::npos) << bad.status().message();
}

TEST(TlsClientTest, AnUntrustedCertificateSaysToPassTheCa) {
  Status s = DescribeHandshakeFailure(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
                                      "certificate verify failed", "https://127.0.0.1:8443");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(s.message().rfind("certificate verify failed for https://127.0.0.1:8443: "
                              "unable to get local issuer certificate",
                              0),
            0u)
      << s.message();
  EXPECT_NE(s.message().find("(use --ca-file or RING_CA_FILE"), std::string::npos) << s.message();
  EXPECT_TRUE(IsCertificateFailure(s));
}

TEST(TlsClientTest, AWrongHostSaysWhichNamesCount) {
  for (long result : {long{X509_V_ERR_HOSTNAME_MISMATCH}, long{X509_V_ERR_IP_ADDRESS_MISMATCH}}) {
    Status s = DescribeHandshakeFailure(result, "certificate verify failed", "https://localhost:1");
    EXPECT_TRUE(IsCertificateFailure(s)) << s.message();
    EXPECT_NE(s.message().find("mismatch"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("subjectAltName"), std::string::npos) << s.message();
  }
}

TEST(TlsClientTest, OtherHandshakeFailuresAskWhetherTheMasterServesHttps) {
  Status s = DescribeHandshakeFailure(X509_V_OK, "stream truncated", "https://127.0.0.1:8080");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_FALSE(IsCertificateFailure(s));
  EXPECT_NE(s.message().find("TLS handshake with https://127.0.0.1:8080 failed: stream truncated"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("plain http://"), std::string::npos) << s.message();
  EXPECT_FALSE(IsCertificateFailure(Unavailable("cannot connect to http://h:1: refused")));
}

TEST(TlsClientTest, CaFilesAreCheckedAndErrorsNameThem) {
  TempDir dir;
  EXPECT_TRUE(MakeClientTlsContext("").ok());  // the system's CAs only

  const std::string missing = dir.path() + "/missing.pem";
  auto no_file = MakeClientTlsContext(missing);
  ASSERT_FALSE(no_file.ok());
  EXPECT_NE(no_file.status().message().find(missing + " cannot be read"), std::string::npos)
      << no_file.status().message();

  const std::string garbage = dir.path() + "/garbage.pem";
  std::ofstream(garbage) << "not a certificate\n";
  Status bad = CheckCaFile(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find(garbage + " holds no PEM certificate"), std::string::npos) << bad.message();

  auto files = testing::MakeTestTlsFiles(dir.path());
  EXPECT_TRUE(CheckCaFile(files.ca_cert).ok()) << CheckCaFile(files.ca_cert).message();
}

TEST(TlsClientTest, TheCaFileComesFromRingCaFile) {
  ::setenv(kCaFileEnv, "/etc/ring/ca.pem", 1);
  EXPECT_EQ(CaFileFromEnv(), "/etc/ring/ca.pem");
  ::unsetenv(kCaFileEnv);
  EXPECT_EQ(CaFileFromEnv(), "");
}

}  // namespace
}  // namespace ring

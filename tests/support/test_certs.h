#pragma once
// Throwaway X.509 certificates for TLS tests, made with OpenSSL's C API at
// test time: a CA (EC P-256, self-signed) and server certificates it signs
// for given subjectAltNames. Valid from an hour ago for a day. Throws
// std::runtime_error when OpenSSL fails.
#include <openssl/types.h>

#include <memory>
#include <string>
#include <vector>

namespace ring::testing {

class TestCa {
 public:
  explicit TestCa(const std::string& common_name = "Ringmaster Test CA");
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  // The CA's certificate, PEM, as clients trust it (--ca-file).
  void WriteCert(const std::string& path) const;
  // The CA's own private key, PEM (a key that matches no server certificate).
  void WriteKey(const std::string& path) const;
  // Issues a server certificate for `alt_names` ("IP:127.0.0.1",
  // "DNS:master.example") and writes it and its unencrypted key, PEM.
  void IssueServerCert(const std::vector<std::string>& alt_names, const std::string& cert_path,
                       const std::string& key_path) const;

 private:
  struct Deleter {
    void operator()(EVP_PKEY* key) const;
    void operator()(X509* cert) const;
  };
  std::unique_ptr<EVP_PKEY, Deleter> key_;
  std::unique_ptr<X509, Deleter> cert_;
};

// The usual set for one test: a CA and a master certificate for 127.0.0.1,
// written into `dir` as ca.crt, master.crt and master.key.
struct TestTlsFiles {
  std::string ca_cert;
  std::string cert;
  std::string key;
};
TestTlsFiles MakeTestTlsFiles(const std::string& dir);

}  // namespace ring::testing

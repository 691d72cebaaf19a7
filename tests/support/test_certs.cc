#include "tests/support/test_certs.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <functional>
#include <stdexcept>

namespace ring::testing {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error("test certificates: " + what);
}

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) Fail("cannot make an EC key");
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) Fail("bad extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, its issuer's name set and
// validity an hour back to a day ahead; extensions and signature to follow.
X509* NewCert(EVP_PKEY* key, const std::string& common_name) {
  static std::atomic<long> serial{1000};
  X509* cert = X509_new();
  if (!cert) Fail("X509_new failed");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  return cert;
}

void Write(const std::string& path, const std::function<int(BIO*)>& write) {
  BIO* bio = BIO_new_file(path.c_str(), "w");
  if (!bio) Fail("cannot write " + path);
  const int ok = write(bio);
  BIO_free(bio);
  if (ok != 1) Fail("cannot write PEM to " + path);
}

}  // namespace

void TestCa::Deleter::operator()(EVP_PKEY* key) const {
  EVP_PKEY_free(key);
}
void TestCa::Deleter::operator()(X509* cert) const {
  X509_free(cert);
}

TestCa::TestCa(const std::string& common_name) : key_(NewKey()), cert_(NewCert(key_.get(), common_name)) {
  X509* cert = cert_.get();
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  AddExtension(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  AddExtension(cert, cert, NID_subject_key_identifier, "hash");
  if (X509_sign(cert, key_.get(), EVP_sha256()) == 0) Fail("cannot sign the CA certificate");
}

TestCa::~TestCa() = default;

void TestCa::WriteCert(const std::string& path) const {
  Write(path, [&](BIO* bio) { return PEM_write_bio_X509(bio, cert_.get()); });
}

void TestCa::WriteKey(const std::string& path) const {
  Write(path, [&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key_.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

void TestCa::IssueServerCert(const std::vector<std::string>& alt_names, const std::string& cert_path,
                             const std::string& key_path) const {
  if (alt_names.empty()) Fail("a server certificate needs a subjectAltName");
  std::unique_ptr<EVP_PKEY, Deleter> key(NewKey());
  const std::string& first = alt_names.front();
  std::unique_ptr<X509, Deleter> cert(NewCert(key.get(), first.substr(first.find(':') + 1)));
  X509* c = cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(cert_.get()));
  std::string sans;
  for (const auto& name : alt_names) sans += (sans.empty() ? "" : ",") + name;
  AddExtension(c, cert_.get(), NID_basic_constraints, "critical,CA:FALSE");
  AddExtension(c, cert_.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  AddExtension(c, cert_.get(), NID_ext_key_usage, "serverAuth");
  AddExtension(c, cert_.get(), NID_subject_alt_name, sans);
  AddExtension(c, cert_.get(), NID_authority_key_identifier, "keyid");
  if (X509_sign(c, key_.get(), EVP_sha256()) == 0) Fail("cannot sign the server certificate");
  Write(cert_path, [&](BIO* bio) { return PEM_write_bio_X509(bio, c); });
  Write(key_path, [&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

TestTlsFiles MakeTestTlsFiles(const std::string& dir) {
  TestTlsFiles files{dir + "/ca.crt", dir + "/master.crt", dir + "/master.key"};
  TestCa ca;
  ca.WriteCert(files.ca_cert);
  ca.IssueServerCert({"IP:127.0.0.1"}, files.cert, files.key);
  return files;
}

}  // namespace ring::testing

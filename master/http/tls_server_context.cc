#include "master/http/tls_server_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509err.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace ring {

namespace ssl = boost::asio::ssl;

namespace {

// Fails with what is wrong with `path` when it cannot be opened.
Status CheckReadable(const std::string& what, const std::string& path) {
  std::ifstream probe(path);
  if (!probe) return InvalidArgument("TLS " + what + " " + path + " cannot be read: " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const std::string& cert_file,
                                                           const std::string& key_file) {
  if (cert_file.empty() || key_file.empty())
    return InvalidArgument("TLS needs both a certificate file and a key file");
  if (Status s = CheckReadable("certificate file", cert_file); !s.ok()) return s;
  if (Status s = CheckReadable("key file", key_file); !s.ok()) return s;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec)
    return InvalidArgument("TLS certificate file " + cert_file +
                           " holds no PEM certificate OpenSSL accepts: " + ec.message());
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH)
    return InvalidArgument("TLS key file " + key_file + " does not match the certificate in " + cert_file);
  if (ec)
    return InvalidArgument("TLS key file " + key_file +
                           " holds no unencrypted PEM private key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return InvalidArgument("TLS key file " + key_file + " does not match the certificate in " + cert_file);
  }
  return ctx;
}

}  // namespace ring

#include "common/tls_client.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace ring {

namespace ssl = boost::asio::ssl;

namespace {

// Asio's host-name check, plus the reason OpenSSL reports when it fails
// (otherwise the handshake only says "certificate verify failed").
struct HostNameCheck {
  ssl::host_name_verification check;
  bool is_address;
  bool operator()(bool preverified, ssl::verify_context& ctx) const {
    if (!preverified) return false;
    if (check(preverified, ctx)) return true;
    X509_STORE_CTX_set_error(ctx.native_handle(),
                             is_address ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
    return false;
  }
};

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeClientTlsContext(const std::string& ca_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  ctx->set_default_verify_paths(ec);  // a host without system CAs still trusts ca_file
  if (!ca_file.empty()) {
    std::ifstream probe(ca_file);
    if (!probe) return InvalidArgument("CA file " + ca_file + " cannot be read: " + std::strerror(errno));
    ctx->load_verify_file(ca_file, ec);
    if (ec)
      return InvalidArgument("CA file " + ca_file +
                             " holds no PEM certificate OpenSSL accepts: " + ec.message());
  }
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

Status PrepareClientTls(TlsStream& stream, const std::string& host) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(host, ec);
  const bool is_address = !ec;
  if (!is_address && SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()) != 1)
    return InvalidArgument("cannot use \"" + host + "\" as the TLS server name");
  stream.set_verify_callback(HostNameCheck{ssl::host_name_verification(host), is_address}, ec);
  if (ec) return Internal("cannot set up certificate verification: " + ec.message());
  return Status::Ok();
}

Status ClientHandshakeError(TlsStream& stream, const boost::system::error_code& ec, std::string_view url) {
  return DescribeHandshakeFailure(SSL_get_verify_result(stream.native_handle()), ec.message(), url);
}

Status DescribeHandshakeFailure(long verify_result, std::string_view error, std::string_view url) {
  if (verify_result == X509_V_OK) {
    return Unavailable("TLS handshake with " + std::string(url) + " failed: " + std::string(error) +
                       " (does the master serve HTTPS? Without tls settings it serves plain http://)");
  }
  const std::string reason = X509_verify_cert_error_string(verify_result);
  const bool wrong_host =
      verify_result == X509_V_ERR_HOSTNAME_MISMATCH || verify_result == X509_V_ERR_IP_ADDRESS_MISMATCH;
  const std::string hint =
      wrong_host ? "the certificate does not name this host: connect with a name or address in its "
                   "subjectAltName; --ca-file or RING_CA_FILE choose the CA to trust"
                 : "use --ca-file or RING_CA_FILE to trust the CA that signed the master's certificate";
  return Unavailable("certificate verify failed for " + std::string(url) + ": " + reason + " (" + hint + ")");
}

}  // namespace ring

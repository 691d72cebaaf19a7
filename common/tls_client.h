#pragma once
// The client side of TLS, shared by HttpClient (CLI, agent downloads, trial
// runtime) and the agent's WebSocket link: a context that trusts the system's
// CAs plus an optional CA file, TLS 1.2 or newer, and streams that check the
// server's certificate chain and host name (SNI for names). Includes Asio's
// ssl headers, so only the .cc files that open connections include it.
#include <memory>
#include <string>
#include <string_view>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/ssl/context.hpp>

#include "common/asio/any_stream.h"

#include "common/status.h"

namespace ring {

// A client context: system default CA paths, plus `ca_file` (PEM, one or more
// certificates) when not empty; peers must present a certificate that
// verifies. An unreadable or malformed CA file is an error naming it.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeClientTlsContext(const std::string& ca_file);

// Before the handshake: SNI (host names only; RFC 6066 has no SNI for IP
// addresses) and host-name verification of the certificate (its subjectAltName
// must name `host`, a DNS name or an IP address).
Status PrepareClientTls(TlsStream& stream, const std::string& host);

// What a failed client handshake means for the user: a certificate that did
// not verify (with OpenSSL's reason and what to do), or another TLS failure.
// `url` names the server in the message.
Status ClientHandshakeError(TlsStream& stream, const boost::system::error_code& ec, std::string_view url);

// Pure part of ClientHandshakeError: `verify_result` is SSL_get_verify_result
// (X509_V_OK when the chain was not the problem), `error` the handshake's
// error text.
Status DescribeHandshakeFailure(long verify_result, std::string_view error, std::string_view url);

}  // namespace ring

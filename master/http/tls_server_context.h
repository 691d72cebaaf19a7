#pragma once
// The master's TLS settings as an OpenSSL context: the certificate chain and
// private key from PEM files, TLS 1.2 or newer. Includes Asio's ssl headers,
// so only the HTTP server includes it.
#include <memory>
#include <string>

#include <utility>  // before Asio

#include <boost/asio/ssl/context.hpp>

#include "common/status.h"

namespace ring {

// Loads `cert_file` (the server certificate, then any intermediates) and
// `key_file` (its private key, unencrypted). A missing, unreadable or
// malformed file, or a key that does not match the certificate, is an error
// naming the file.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const std::string& cert_file,
                                                                        const std::string& key_file);

}  // namespace ring

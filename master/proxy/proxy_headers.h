#pragma once
// What the task proxy changes in the headers it forwards. Pure: messages in,
// messages out (tested without a socket).
#include <string>

#include <utility>  // before Asio

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/message.hpp>

namespace ring {

// Toward the task's server: without the proxy's cookie, Authorization,
// Proxy-Authorization or hop-by-hop headers; with X-Forwarded-For (`peer`
// added) and X-Forwarded-Proto. An upgrade keeps Connection: Upgrade. A
// non-empty `service_token` (what the service announced) is sent as
// `Authorization: token <service_token>`.
void PrepareUpstreamRequest(boost::beast::http::request<boost::beast::http::buffer_body>& req,
                            const std::string& peer, bool tls, bool upgrade,
                            const std::string& service_token = "");
// Toward the browser: without hop-by-hop headers (a 101 keeps its upgrade)
// and without a Set-Cookie of the proxy's cookie's name.
void PrepareClientResponse(boost::beast::http::response<boost::beast::http::buffer_body>& res, bool upgrade);

}  // namespace ring

#pragma once
// The task proxy's own answers: its error pages and the link's redirect.
// Nothing in them runs, frames them, is cached or leaks a referrer
// (Content-Security-Policy default-src 'none', X-Frame-Options DENY,
// nosniff, Referrer-Policy no-referrer, Cache-Control no-store).
#include <string>

#include <utility>  // before Asio

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include "common/status.h"

namespace ring {

// A small HTML page saying `title` and `text` (escaped).
boost::beast::http::response<boost::beast::http::string_body> ProxyPage(boost::beast::http::status status,
                                                                        const std::string& title,
                                                                        const std::string& text,
                                                                        unsigned version, bool keep_alive);
// The status of a page refusing with `s`.
boost::beast::http::status ProxyStatusOf(const Status& s);

}  // namespace ring

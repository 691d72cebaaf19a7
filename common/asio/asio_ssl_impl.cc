// Asio's SSL code, compiled once (BOOST_ASIO_SEPARATE_COMPILATION).
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/ssl/impl/src.hpp>

// Asio's non-template code, compiled once (BOOST_ASIO_SEPARATE_COMPILATION).
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/impl/src.hpp>

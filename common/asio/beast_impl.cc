// Beast's non-template code, compiled once (BOOST_BEAST_SEPARATE_COMPILATION).
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/beast/src.hpp>

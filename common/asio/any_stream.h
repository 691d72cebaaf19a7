#pragma once
// A connection that is plain TCP or TLS over TCP, as one type. Beast's HTTP
// and WebSocket operations are instantiated for it once in each file that
// uses them, instead of once per stream type, and the streams' own
// operations (TCP with deadlines, TLS records, the WebSocket teardown) only
// in any_stream.cc: the files that speak HTTP or WebSocket compile in about
// half the time.
//
// It is an AsyncReadStream and an AsyncWriteStream for Beast. A read or
// write passes on at most kMaxBuffers buffers of its sequence, which their
// contracts allow (they may transfer fewer bytes than offered). Completion
// handlers are type-erased (one allocation per operation) and keep their
// associated executor; they lose any cancellation slot, which nothing here
// uses (deadlines are the TCP stream's and the WebSocket's own timers).
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <variant>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

namespace ring {

using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// A move-only completion handler of signature void(error_code, Args...)
// holding any handler of that signature, with its associated executor.
template <class... Args>
class ErasedHandler {
 public:
  using executor_type = boost::asio::any_io_executor;

  // `fallback` is the executor of the I/O object, for handlers without one.
  template <class Handler>
  ErasedHandler(Handler&& handler, const executor_type& fallback)
      : executor_(boost::asio::get_associated_executor(handler, fallback)),
        impl_(std::make_unique<Model<std::decay_t<Handler>>>(std::forward<Handler>(handler))) {}
  ErasedHandler(ErasedHandler&&) noexcept = default;
  ErasedHandler& operator=(ErasedHandler&&) noexcept = default;

  executor_type get_executor() const noexcept { return executor_; }

  // Frees the held state, then calls the handler (once).
  void operator()(boost::system::error_code ec, Args... args) {
    auto impl = std::move(impl_);
    impl->Invoke(impl, ec, args...);
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual void Invoke(std::unique_ptr<Concept>& self, boost::system::error_code ec, Args... args) = 0;
  };
  template <class Handler>
  struct Model final : Concept {
    explicit Model(Handler h) : handler(std::move(h)) {}
    void Invoke(std::unique_ptr<Concept>& self, boost::system::error_code ec, Args... args) override {
      Handler h(std::move(handler));
      self.reset();  // destroys *this; only the local copy is used below
      std::move(h)(ec, args...);
    }
    Handler handler;
  };

  executor_type executor_;
  std::unique_ptr<Concept> impl_;
};

// At most N buffers, as a buffer sequence Asio accepts.
template <class Buffer, std::size_t N>
struct BufferArray {
  using value_type = Buffer;
  using const_iterator = const Buffer*;
  const Buffer* begin() const { return items.data(); }
  const Buffer* end() const { return items.data() + count; }
  std::array<Buffer, N> items{};
  std::size_t count = 0;
};

class AnyStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  static constexpr std::size_t kMaxBuffers = 16;
  using MutableBuffers = BufferArray<boost::asio::mutable_buffer, kMaxBuffers>;
  using ConstBuffers = BufferArray<boost::asio::const_buffer, kMaxBuffers>;
  using IoHandler = ErasedHandler<std::size_t>;
  using DoneHandler = ErasedHandler<>;

  explicit AnyStream(boost::beast::tcp_stream plain);
  explicit AnyStream(TlsStream tls);
  AnyStream(AnyStream&&) noexcept;
  AnyStream& operator=(AnyStream&&) noexcept;
  ~AnyStream();

  executor_type get_executor() noexcept;
  // The TCP connection under it: deadlines, socket options, closing.
  boost::beast::tcp_stream& tcp();
  // The TLS stream (for its handshake), or null over plain TCP.
  TlsStream* tls();

  template <class MutableBufferSequence, class ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return boost::asio::async_initiate<ReadToken, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const MutableBufferSequence& b) {
          ReadSome(Gather<MutableBuffers>(b), IoHandler(std::move(handler), get_executor()));
        },
        token, buffers);
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return boost::asio::async_initiate<WriteToken, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const ConstBufferSequence& b) {
          WriteSome(Gather<ConstBuffers>(b), IoHandler(std::move(handler), get_executor()));
        },
        token, buffers);
  }

  // Ends this side of the connection: TLS's close_notify (waiting for the
  // peer's, within the TCP deadline), a FIN over plain TCP.
  template <class Token>
  auto async_shutdown(Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        [this](auto handler) { Shutdown(DoneHandler(std::move(handler), get_executor())); }, token);
  }

  // Beast's hooks: closing the socket on a WebSocket timeout, and the
  // WebSocket's closing handshake at the transport level.
  friend void beast_close_socket(AnyStream& stream) { stream.CloseSocket(); }
  friend void teardown(boost::beast::role_type role, AnyStream& stream, boost::system::error_code& ec) {
    stream.Teardown(role, ec);
  }
  template <class TeardownHandler>
  friend void async_teardown(boost::beast::role_type role, AnyStream& stream, TeardownHandler&& handler) {
    stream.AsyncTeardown(role, DoneHandler(std::forward<TeardownHandler>(handler), stream.get_executor()));
  }

 private:
  template <class Array, class Sequence>
  static Array Gather(const Sequence& sequence) {
    Array out;
    for (auto it = boost::asio::buffer_sequence_begin(sequence),
              end = boost::asio::buffer_sequence_end(sequence);
         it != end && out.count < out.items.size(); ++it)
      out.items[out.count++] = *it;
    return out;
  }

  void ReadSome(MutableBuffers buffers, IoHandler handler);
  void WriteSome(ConstBuffers buffers, IoHandler handler);
  void Shutdown(DoneHandler handler);
  void CloseSocket();
  void Teardown(boost::beast::role_type role, boost::system::error_code& ec);
  void AsyncTeardown(boost::beast::role_type role, DoneHandler handler);

  std::unique_ptr<std::variant<boost::beast::tcp_stream, TlsStream>> stream_;
};

}  // namespace ring

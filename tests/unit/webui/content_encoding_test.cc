// gzip content coding of kept answers: Accept-Encoding forms, the bytes
// (inflated back by zlib), the ETag of each coding, 304 on the gzip ETag, and
// the answers it leaves alone.
#include <gtest/gtest.h>
#include <zlib.h>

#include "master/http/conditional_get.h"
#include "master/http/content_encoding.h"

namespace ring {
namespace {

std::string Gunzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

std::string JsonBody() {
  std::string body = "{\"reports\":[";
  for (int i = 0; i < 500; ++i)
    body += (i ? "," : "") + std::string("{\"batches\":") + std::to_string(i) + "}";
  return body + "]}";
}

ApiResponse Kept(const std::string& body) {
  ApiResponse r;
  r.body = body;
  r.etag = BodyEtag(body);
  r.gzip_body = std::make_shared<std::string>(Gzip(body));
  return r;
}

ApiRequest GetAccepting(const std::string& accept_encoding) {
  ApiRequest req;
  req.method = "GET";
  req.path = "/api/v1/trials/1/metrics";
  if (!accept_encoding.empty()) req.headers["accept-encoding"] = accept_encoding;
  return req;
}

TEST(ContentEncodingTest, GzipInflatesBackToTheSameBytes) {
  const std::string body = JsonBody();
  const std::string gz = Gzip(body);
  EXPECT_LT(gz.size(), body.size() / 3);
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(Gunzip(gz), body);
  EXPECT_EQ(Gunzip(Gzip("")), "");
}

TEST(ContentEncodingTest, AcceptEncodingForms) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br, zstd"));  // what browsers send
  EXPECT_TRUE(AcceptsGzip("deflate, GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("br ; q=1, * ; q=0.1"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("br, deflate"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));  // named explicitly: not wanted
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=nonsense"));
  EXPECT_FALSE(AcceptsGzip("gzipped"));
}

TEST(ContentEncodingTest, SendsTheKeptGzipBodyWithItsOwnEtag) {
  const std::string body = JsonBody();
  ApiResponse r = Kept(body);
  ApplyContentEncoding(GetAccepting("gzip, deflate"), r);
  EXPECT_EQ(r.Header("Content-Encoding"), "gzip");
  EXPECT_EQ(r.Header("Vary"), "Accept-Encoding");
  EXPECT_EQ(Gunzip(r.body), body);
  EXPECT_EQ(r.etag, GzipEtag(BodyEtag(body)));
  EXPECT_NE(r.etag, BodyEtag(body));

  ApplyConditionalGet(GetAccepting("gzip"), r);
  EXPECT_EQ(r.Header("ETag"), GzipEtag(BodyEtag(body)));

  // A client holding the gzip form's tag revalidates it into a 304.
  ApiRequest again = GetAccepting("gzip");
  again.headers["if-none-match"] = GzipEtag(BodyEtag(body));
  ApiResponse second = Kept(body);
  ApplyContentEncoding(again, second);
  ApplyConditionalGet(again, second);
  EXPECT_EQ(second.status, 304);
  EXPECT_TRUE(second.body.empty());

  // ... and the identity tag does not match the gzip form.
  again.headers["if-none-match"] = BodyEtag(body);
  ApiResponse third = Kept(body);
  ApplyContentEncoding(again, third);
  ApplyConditionalGet(again, third);
  EXPECT_EQ(third.status, 200);
}

TEST(ContentEncodingTest, IdentityForClientsWithoutGzip) {
  const std::string body = JsonBody();
  ApiResponse r = Kept(body);
  ApplyContentEncoding(GetAccepting(""), r);
  ApplyConditionalGet(GetAccepting(""), r);
  EXPECT_EQ(r.body, body);
  EXPECT_EQ(r.Header("Content-Encoding"), "");
  EXPECT_EQ(r.Header("Vary"), "Accept-Encoding");  // a cache must not give it the gzip form
  EXPECT_EQ(r.Header("ETag"), BodyEtag(body));
}

TEST(ContentEncodingTest, LeavesOtherAnswersAlone) {
  ApiResponse plain;  // nothing kept ready: never compressed per request
  plain.body = JsonBody();
  ApplyContentEncoding(GetAccepting("gzip"), plain);
  EXPECT_EQ(plain.body, JsonBody());
  EXPECT_TRUE(plain.headers.empty());

  ApiResponse error = Kept(JsonBody());
  error.status = 404;
  ApplyContentEncoding(GetAccepting("gzip"), error);
  EXPECT_EQ(error.body, JsonBody());

  ApiRequest post = GetAccepting("gzip");
  post.method = "POST";
  ApiResponse posted = Kept(JsonBody());
  ApplyContentEncoding(post, posted);
  EXPECT_EQ(posted.body, JsonBody());
  EXPECT_TRUE(posted.headers.empty());
}

}  // namespace
}  // namespace ring

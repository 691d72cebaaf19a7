#include "master/http/static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ring {
namespace {

std::string ContentType(const std::filesystem::path& p) {
  const auto ext = p.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".map") return "application/json";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  if (ext == ".webp") return "image/webp";
  return "application/octet-stream";
}

bool ReadFile(const std::filesystem::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// A path whose last segment names a file ("app.js", "logo.png") or that is
// under /assets/ is a file request: missing, it is a 404, not the app's page.
bool LooksLikeFile(const std::string& path) {
  if (path.rfind("/assets/", 0) == 0) return true;
  const auto slash = path.rfind('/');
  return path.find('.', slash == std::string::npos ? 0 : slash) != std::string::npos;
}

}  // namespace

ApiResponse StaticFiles::Serve(const std::string& path) const {
  namespace fs = std::filesystem;
  if (root_.empty()) return ApiResponse::Error(NotFound("the web UI is not installed on this master"));
  if (path.find("..") != std::string::npos) return ApiResponse::Error(NotFound("no such file"));
  const fs::path root(root_);
  fs::path file = root / fs::path(path).relative_path();
  std::error_code ec;
  const bool is_file = fs::is_regular_file(file, ec);
  if (!is_file) {
    if (LooksLikeFile(path)) return ApiResponse::Error(NotFound("no such file: " + path));
    file = root / "index.html";  // a client-side route of the single-page app
  }
  ApiResponse r;
  if (!ReadFile(file, r.body))
    return ApiResponse::Error(
        NotFound("the web UI is not built (no " + file.string() + "); build it with deploy/build.sh"));
  r.content_type = ContentType(file);
  // Vite names assets by a hash of their content: cache them for good; the
  // page itself is revalidated (ETag) so a new build shows at once.
  const bool hashed = is_file && path.rfind("/assets/", 0) == 0;
  r.headers.emplace_back("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
  return r;
}

}  // namespace ring

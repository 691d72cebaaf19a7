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

}  // namespace

ApiResponse StaticFiles::Serve(const std::string& path) const {
  namespace fs = std::filesystem;
  if (root_.empty()) return ApiResponse::Error(NotFound("the web UI is not installed on this master"));
  if (path.find("..") != std::string::npos) return ApiResponse::Error(NotFound("no such file"));
  const fs::path root(root_);
  fs::path file = root / fs::path(path).relative_path();
  std::error_code ec;
  bool is_asset = fs::is_regular_file(file, ec);
  if (!is_asset) file = root / "index.html";  // SPA fallback
  ApiResponse r;
  if (!ReadFile(file, r.body))
    return ApiResponse::Error(NotFound("the web UI is not built: " + file.string()));
  r.content_type = ContentType(file);
  const bool hashed = path.rfind("/assets/", 0) == 0;
  r.headers.emplace_back("Cache-Control",
                         hashed && is_asset ? "public, max-age=31536000, immutable" : "no-cache");
  return r;
}

}  // namespace ring

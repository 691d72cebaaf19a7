#pragma once
// Serves the web UI's built files from one directory, with cache headers
// (hashed assets are immutable, index.html is revalidated) and a fallback to
// index.html for client-side routes.
#include <string>

#include "master/http/api_types.h"

namespace ring {

class StaticFiles {
 public:
  explicit StaticFiles(std::string root) : root_(std::move(root)) {}
  ApiResponse Serve(const std::string& path) const;

 private:
  std::string root_;
};

}  // namespace ring

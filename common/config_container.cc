// The container keys of the experiment config: environment.image,
// environment.registry_auth, environment.force_pull_image and bind_mounts,
// with Determined's meaning (docs/containers.md).
#include <filesystem>

#include "common/config_parser.h"

namespace ring {
namespace {

// An image reference as the runtimes take it: no spaces or control
// characters, and not an option ("-...").
bool IsImageReference(const std::string& image) {
  if (image.empty() || image.front() == '-' || image.size() > 512) return false;
  for (unsigned char c : image)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

}  // namespace

void ConfigParser::ParseImage(const YAML::Node& node, EnvironmentConfig& out) {
  const std::string p = "environment.image";
  out.image_line = w_.Line(node);
  const auto read = [&](const YAML::Node& v, const std::string& at) {
    const std::string image = w_.String(v, at, true);
    if (!IsImageReference(image))
      w_.Fail(v, at + " must be an image reference like \"registry/name:tag\", got \"" + image + "\"");
    return image;
  };
  if (!node.IsMap()) {
    if (!node.IsScalar())
      w_.Fail(node,
              p + " must be an image name or a map {cpu: ..., cuda: ...}, got " + YamlWalker::Show(node));
    out.cpu_image = out.cuda_image = read(node, p);
    return;
  }
  // Determined's map form: one image per kind of slot; gpu and rocm are cuda.
  Keys(node, p, {"cpu", "cuda", "gpu", "rocm"});
  for (const char* kind : {"cpu", "cuda", "gpu", "rocm"}) {
    const auto v = node[kind];
    if (!Present(v)) continue;
    const std::string at = p + "." + kind;
    Try(at, [&] {
      std::string& slot = std::string(kind) == "cpu" ? out.cpu_image : out.cuda_image;
      const std::string image = read(v, at);
      if (!slot.empty() && slot != image)
        w_.Fail(v, at + " names another image than the one given for GPU slots (" + slot +
                       "); gpu, cuda and rocm all mean the image of GPU slots");
      slot = image;
    });
  }
}

void ConfigParser::ParseRegistryAuth(const YAML::Node& node, EnvironmentConfig& out) {
  const std::string p = "environment.registry_auth";
  w_.RequireMap(node, p);
  Keys(node, p, {"username", "password", "serveraddress", "email", "auth", "identitytoken", "registrytoken"});
  RegistryAuth auth;
  for (auto [key, field] : {std::pair{"username", &auth.username}, std::pair{"password", &auth.password},
                            std::pair{"serveraddress", &auth.serveraddress}, std::pair{"email", &auth.email},
                            std::pair{"auth", &auth.auth}, std::pair{"identitytoken", &auth.identitytoken},
                            std::pair{"registrytoken", &auth.registrytoken}}) {
    Try(p + "." + key, [&, key = key, field = field] {
      // The values are secrets: an error never shows them.
      const auto v = node[key];
      if (!Present(v)) return;
      if (!v.IsScalar()) w_.Fail(v, p + "." + key + " must be a string");
      *field = v.Scalar();
    });
  }
  if (Present(node["username"]) != Present(node["password"]) && !Present(node["auth"]))
    w_.Error(node, p, p + " needs both username and password (or auth)");
  out.registry_auth = std::move(auth);
}

void ConfigParser::ParseBindMounts(const YAML::Node& node, std::vector<BindMount>& out) {
  const std::string p = "bind_mounts";
  if (!node.IsSequence()) w_.Fail(node, p + " must be a list of mounts, got " + YamlWalker::Show(node));
  const auto absolute = [&](const YAML::Node& v, const std::string& at) {
    const std::string path = w_.String(v, at, true);
    if (path.front() != '/') w_.Fail(v, at + " must be an absolute path, got \"" + path + "\"");
    for (const auto& part : std::filesystem::path(path))
      if (part == ".." || part == ".")
        w_.Fail(v, at + " must not contain \"" + part.string() + "\", got \"" + path + "\"");
    if (path.find(',') != std::string::npos || path.find(':') != std::string::npos)
      w_.Fail(v, at + " must not contain \",\" or \":\", got \"" + path + "\"");
    return std::filesystem::path(path).lexically_normal().string();
  };
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = p + "[" + std::to_string(i) + "]";
    const YAML::Node item = node[i];
    Try(at, [&] {
      w_.RequireMap(item, at);
      Keys(item, at, {"host_path", "container_path", "read_only", "propagation"});
      BindMount m;
      m.line = w_.Line(item);
      m.host_path = absolute(w_.Required(item, at, "host_path"), at + ".host_path");
      m.container_path = absolute(w_.Required(item, at, "container_path"), at + ".container_path");
      if (m.container_path == "/") w_.Fail(item["container_path"], at + ".container_path must not be \"/\"");
      if (Present(item["read_only"])) m.read_only = w_.Bool(item["read_only"], at + ".read_only");
      if (Present(item["propagation"])) {
        m.propagation = w_.String(item["propagation"], at + ".propagation");
        static const char* kModes[] = {"rprivate", "private", "rshared", "shared", "rslave", "slave"};
        bool known = false;
        for (const char* mode : kModes) known |= m.propagation == mode;
        if (!known)
          w_.Fail(
              item["propagation"],
              at + ".propagation must be one of rprivate, private, rshared, shared, rslave, slave, got \"" +
                  m.propagation + "\"");
      }
      for (const BindMount& other : out)
        if (other.container_path == m.container_path)
          w_.Fail(item["container_path"], at + ".container_path " + m.container_path + " is mounted twice");
      out.push_back(std::move(m));
    });
  }
}

}  // namespace ring

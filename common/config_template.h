#pragma once
// Config templates (Determined's `det template`): an experiment config laid
// over a named partial config. Maps merge key by key, recursively; any
// other value of the experiment's config replaces the template's (a list
// is replaced whole).
#include <string>

#include "common/status.h"

namespace ring {

// Whether `yaml_text` can be a template: a YAML map (kInvalidConfig naming
// `name` and the line otherwise).
Status CheckTemplateText(const std::string& name, const std::string& yaml_text);

// The experiment's config over the template's, as YAML text.
// kInvalidConfig when either is not a YAML map.
Result<std::string> ApplyTemplate(const std::string& template_name, const std::string& template_yaml,
                                  const std::string& config_yaml);

}  // namespace ring

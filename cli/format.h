#pragma once
// Text helpers for the CLI's human output: JSON values, hyperparameters,
// sizes and progress. Pure functions.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ring::cli {

// null/missing → "-", numbers with 6 significant digits, strings as is,
// objects and arrays as compact JSON.
std::string FormatValue(const nlohmann::json& value);
// The field `key` of `object`, formatted; "-" when absent.
std::string Field(const nlohmann::json& object, const std::string& key);
// {"lr":0.1,"opt":{"m":0.9}} → "lr=0.1 opt.m=0.9" (keys sorted, nested flattened).
std::string FormatHparams(const nlohmann::json& hparams);
// {"loss":0.5,"acc":0.9} → "acc=0.9 loss=0.5".
std::string FormatMetrics(const nlohmann::json& metrics);
// 1536 → "1.5 KiB".
std::string FormatBytes(uint64_t bytes);
// 0.45 → "45%"; numbers above 1 are taken as percentages already.
std::string FormatProgress(const nlohmann::json& progress);

// Tolerant field access: the default when absent or of another type.
std::string GetString(const nlohmann::json& object, const std::string& key, const std::string& fallback = "");
int64_t GetInt(const nlohmann::json& object, const std::string& key, int64_t fallback = 0);
// The member `key`, or a null value when absent (never throws).
const nlohmann::json& Member(const nlohmann::json& object, const std::string& key);

// "64", "64K", "64MiB", "1G" (binary units) → bytes; nullopt when malformed.
std::optional<uint64_t> ParseByteSize(const std::string& text);

}  // namespace ring::cli

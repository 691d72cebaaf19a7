// The model registry's request bodies: what each field may hold, and a
// refusal that names the field.
#include "master/api/model_requests.h"

#include <gtest/gtest.h>

namespace ring {
namespace {

std::string Refusal(const Status& s) {
  return s.ok() ? "(accepted)" : s.message();
}

TEST(ModelRequests, NamesAreLettersDigitsAndDotDashUnderscoreNotDigitsOnly) {
  for (const char* ok : {"mnist", "bert-base_v1.2", "7b", "A"}) EXPECT_TRUE(CheckModelName(ok).ok()) << ok;
  for (const char* bad : {"", "has space", "a/b", "12345", "ünïcode"})
    EXPECT_NE(Refusal(CheckModelName(bad)).find("name must be 1 to 128 characters"), std::string::npos)
        << bad;
  EXPECT_FALSE(CheckModelName(std::string(129, 'a')).ok());
}

TEST(ModelRequests, ANewModelTakesNameDescriptionAndLabelsOnly) {
  auto m = DecodeNewModel(nlohmann::json::parse(R"({"name": "mnist", "description": "digits\nsmall",
                                                   "labels": ["cv", "cv", "small"]})"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "mnist");
  EXPECT_EQ(m->description, "digits\nsmall");
  EXPECT_EQ(m->labels, (std::vector<std::string>{"cv", "small"})) << "kept once each";
  EXPECT_NE(Refusal(DecodeNewModel({{"description", "x"}}).status()).find("name is required"),
            std::string::npos);
  EXPECT_NE(
      Refusal(DecodeNewModel({{"name", "m"}, {"owner", "eve"}}).status()).find("unknown field \"owner\""),
      std::string::npos);
  EXPECT_NE(Refusal(DecodeNewModel({{"name", "m"}, {"labels", "cv"}}).status()).find("labels must be a list"),
            std::string::npos);
  EXPECT_FALSE(DecodeNewModel(nlohmann::json::array()).ok());
}

TEST(ModelRequests, PatchesChangeOnlyWhatTheyName) {
  auto u = DecodeModelUpdate({{"archived", true}});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->archived, true);
  EXPECT_FALSE(u->description.has_value());
  EXPECT_NE(Refusal(DecodeModelUpdate({{"archived", "yes"}}).status()).find("archived must be true or false"),
            std::string::npos);
  auto v = DecodeModelVersionUpdate({{"notes", "line 1\nline 2"}, {"metadata", {{"acc", 0.9}}}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->notes, "line 1\nline 2");
  EXPECT_EQ(v->metadata_json, R"({"acc":0.9})");
  EXPECT_FALSE(v->name.has_value());
  EXPECT_NE(Refusal(DecodeModelVersionUpdate({{"name", "tab\there"}}).status()).find("name must be a string"),
            std::string::npos);
}

TEST(ModelRequests, AVersionNeedsACheckpointUuid) {
  auto v = DecodeNewModelVersion({{"checkpoint_uuid", "abc"}, {"name", "best"}, {"labels", {"prod"}}});
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->checkpoint_uuid, "abc");
  EXPECT_EQ(v->name, "best");
  EXPECT_EQ(v->metadata_json, "{}");
  EXPECT_EQ(v->labels, (std::vector<std::string>{"prod"}));
  EXPECT_NE(Refusal(DecodeNewModelVersion({{"name", "best"}}).status()).find("checkpoint_uuid is required"),
            std::string::npos);
  EXPECT_NE(Refusal(DecodeNewModelVersion({{"checkpoint_uuid", "abc"}, {"metadata", "x"}}).status())
                .find("metadata must be a JSON object"),
            std::string::npos);
  EXPECT_NE(Refusal(DecodeNewModelVersion({{"checkpoint_uuid", "abc"}, {"comment", "x"}}).status())
                .find("unknown field \"comment\""),
            std::string::npos);
}

TEST(ModelRequests, VersionNumbersArePositiveIntegers) {
  EXPECT_EQ(*ParseModelVersion("3"), 3);
  for (const char* bad : {"0", "-1", "x", "", "1.5", "99999999999999"})
    EXPECT_NE(Refusal(ParseModelVersion(bad).status()).find("version must be a positive integer"),
              std::string::npos)
        << bad;
}

}  // namespace
}  // namespace ring

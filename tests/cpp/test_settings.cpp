// KILN_* environment variables: one parser, usual spellings in any case, and a warning
// that lists the accepted values for anything else (the default is used then).
#include <gtest/gtest.h>

#include "scoped_env.h"
#include "util/env.h"

#include <string>
#include <utility>

using namespace kiln::detail;

namespace {
/// Reads `name` with `read` while it holds `value`; returns the result and what went to stderr.
template <typename Read> auto with_value(const char* name, const char* value, Read read) {
  ScopedEnv env(name, value);
  testing::internal::CaptureStderr();
  auto result = read();
  return std::pair(result, testing::internal::GetCapturedStderr());
}
}  // namespace

TEST(Settings, FlagsTakeTheUsualSpellingsInAnyCase) {
  for (const char* yes : {"1", "true", "True", "TRUE", "on", "ON", "yes", "Y", " enabled "}) {
    auto [value, err] = with_value("KILN_TEST_FLAG", yes, [] { return env_flag("KILN_TEST_FLAG", false); });
    EXPECT_TRUE(value) << yes;
    EXPECT_EQ(err, "") << yes;
  }
  for (const char* no : {"0", "false", "False", "off", "No", "n", "DISABLE"}) {
    auto [value, err] = with_value("KILN_TEST_FLAG", no, [] { return env_flag("KILN_TEST_FLAG", true); });
    EXPECT_FALSE(value) << no;
    EXPECT_EQ(err, "") << no;
  }
}

TEST(Settings, UnsetOrEmptyMeansTheDefault) {
  for (const char* value : {static_cast<const char*>(nullptr), "", "   "}) {
    auto [flag, err] = with_value("KILN_TEST_FLAG", value, [] { return env_flag("KILN_TEST_FLAG", true); });
    EXPECT_TRUE(flag);
    EXPECT_EQ(err, "");
  }
}

TEST(Settings, AnythingElseWarnsWithTheAcceptedValues) {
  auto [flag, err] = with_value("KILN_TEST_FLAG", "maybe", [] { return env_flag("KILN_TEST_FLAG", true); });
  EXPECT_TRUE(flag);
  EXPECT_NE(err.find("KILN_TEST_FLAG=\"maybe\" is not a valid value"), std::string::npos) << err;
  EXPECT_NE(err.find("1|true|on|yes"), std::string::npos) << err;
  EXPECT_NE(err.find("the default (1)"), std::string::npos) << err;

  auto read_backend = [] { return env_choice("KILN_TEST_BACKEND", {{"llvm|cpu", 0}, {"interp|interpreter", 1}}, 0); };
  auto [backend, backend_err] = with_value("KILN_TEST_BACKEND", "gpu", read_backend);
  EXPECT_EQ(backend, 0);
  EXPECT_NE(backend_err.find("accepted: llvm|cpu, interp|interpreter"), std::string::npos) << backend_err;
  EXPECT_EQ(with_value("KILN_TEST_BACKEND", "Interp", read_backend).first, 1);
}

TEST(Settings, NumbersAreCheckedAgainstTheirRange) {
  auto read = [] { return env_unsigned("KILN_TEST_NUMBER", 1, 100, 2); };
  EXPECT_EQ(with_value("KILN_TEST_NUMBER", "42", read).first, 42u);
  EXPECT_EQ(with_value("KILN_TEST_NUMBER", " 7 ", read).first, 7u);
  for (const char* bad : {"0", "101", "-3", "4x", "1e3", "99999999999999999999999"}) {
    auto [value, err] = with_value("KILN_TEST_NUMBER", bad, read);
    EXPECT_EQ(value, 2u) << bad;
    EXPECT_NE(err.find("an integer from 1 to 100"), std::string::npos) << bad << ": " << err;
  }
}

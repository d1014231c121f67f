// The log sink: levels, names, parsing, a replaced sink sees exactly the lines at or above
// the threshold, long lines are not truncated.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "simpler/log/log.h"

namespace {

struct Captured {
  std::vector<std::tuple<int, std::string, std::string>> lines;
};

void capture(void* user, int level, const char* component, const char* message) {
  static_cast<Captured*>(user)->lines.emplace_back(level, component, message);
}

class LogSink : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = simpler_log_threshold();
    simpler_log_set_sink(&capture, &captured_);
  }
  void TearDown() override {
    simpler_log_set_sink(nullptr, nullptr);
    simpler_log_set_threshold(saved_);
  }
  Captured captured_;
  int saved_ = 0;
};

TEST(LogLevels, NamesAndParsing) {
  EXPECT_STREQ(simpler_log_level_name(SIMPLER_LOG_LEVEL_DEBUG), "DEBUG");
  EXPECT_STREQ(simpler_log_level_name(SIMPLER_LOG_LEVEL_WARNING), "WARNING");
  EXPECT_STREQ(simpler_log_level_name(35), "WARNING");
  EXPECT_STREQ(simpler_log_level_name(SIMPLER_LOG_LEVEL_OFF), "OFF");
  EXPECT_EQ(simpler_log_parse_level("Debug"), SIMPLER_LOG_LEVEL_DEBUG);
  EXPECT_EQ(simpler_log_parse_level("warn"), SIMPLER_LOG_LEVEL_WARNING);
  EXPECT_EQ(simpler_log_parse_level("ERROR"), SIMPLER_LOG_LEVEL_ERROR);
  EXPECT_EQ(simpler_log_parse_level("off"), SIMPLER_LOG_LEVEL_OFF);
  EXPECT_EQ(simpler_log_parse_level("25"), 25);
  EXPECT_EQ(simpler_log_parse_level("loud"), -1);
  EXPECT_EQ(simpler_log_parse_level(""), -1);
  EXPECT_EQ(simpler_log_parse_level(nullptr), -1);
}

TEST_F(LogSink, DeliversOnlyLinesAtOrAboveTheThreshold) {
  simpler_log_set_threshold(SIMPLER_LOG_LEVEL_INFO);
  EXPECT_FALSE(simpler_log_enabled(SIMPLER_LOG_LEVEL_DEBUG));
  EXPECT_TRUE(simpler_log_enabled(SIMPLER_LOG_LEVEL_INFO));
  simpler_log(SIMPLER_LOG_LEVEL_DEBUG, "t", "hidden %d", 1);
  simpler_log(SIMPLER_LOG_LEVEL_INFO, "t", "shown %d", 2);
  simpler_log(SIMPLER_LOG_LEVEL_ERROR, nullptr, "no component");
  ASSERT_EQ(captured_.lines.size(), 2u);
  EXPECT_EQ(captured_.lines[0],
            std::make_tuple(SIMPLER_LOG_LEVEL_INFO, std::string("t"), std::string("shown 2")));
  EXPECT_EQ(std::get<1>(captured_.lines[1]), "simpler");
}

TEST_F(LogSink, LongLinesArriveWhole) {
  simpler_log_set_threshold(SIMPLER_LOG_LEVEL_WARNING);
  const std::string big(5000, 'x');
  simpler_log(SIMPLER_LOG_LEVEL_WARNING, "t", "<%s>", big.c_str());
  ASSERT_EQ(captured_.lines.size(), 1u);
  EXPECT_EQ(std::get<2>(captured_.lines[0]), "<" + big + ">");
}

TEST_F(LogSink, OffSilencesEverything) {
  simpler_log_set_threshold(SIMPLER_LOG_LEVEL_OFF);
  simpler_log(SIMPLER_LOG_LEVEL_ERROR, "t", "even errors");
  EXPECT_TRUE(captured_.lines.empty());
}

}  // namespace

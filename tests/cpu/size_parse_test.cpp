#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/size_parse.hpp"

using kiln::core::format_size;
using kiln::core::parse_size;

TEST(SizeParse, BinarySuffixes) {
  EXPECT_EQ(parse_size("4096", "-b"), 4096u);
  EXPECT_EQ(parse_size("1K", "-b"), 1024u);
  EXPECT_EQ(parse_size("1M", "-b"), 1048576u);
  EXPECT_EQ(parse_size("1G", "-b"), 1073741824u);
  EXPECT_EQ(parse_size("2T", "-b"), 2ull << 40);
  EXPECT_EQ(parse_size("512k", "-b"), 512u * 1024u);
  EXPECT_EQ(parse_size("8MB", "-b"), 8u << 20);
  EXPECT_EQ(parse_size("0", "-b"), 0u);
}

TEST(SizeParse, RejectsNonSizesNamingTheArgument) {
  for (const char* text : {"", "M", "1.5M", "-1", "12Q", "1MM", "1 M", "99999999999999999999"}) {
    try {
      parse_size(text, "-e");
      FAIL() << "accepted '" << text << "'";
    } catch (const kiln::UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("-e"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(parse_size("17179869184T", "-e"), kiln::UsageError);  // overflows 64 bits
}

TEST(SizeParse, FormatsReadably) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1024), "1 KiB");
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
}

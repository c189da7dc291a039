// Checks the text form of a unique id (weftUniqueIdToString/FromString), which
// is how weft-run and scripts pass ids through the environment: it must
// round-trip every byte value, be 256 lowercase hex digits, and reject wrong
// lengths, non-hex characters and NULL arguments with a sentence that says so.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cctype>
#include <cstring>
#include <string>

namespace {

weftUniqueId patternId(int seed) {
  weftUniqueId id;
  for (int i = 0; i < WEFT_UNIQUE_ID_BYTES; ++i) id.internal[i] = static_cast<char>(i * 31 + seed);
  return id;
}

std::string lastError() { return weftGetLastError(nullptr); }

TEST(UniqueIdText, RoundTripsEveryByteValue) {
  for (int seed = 0; seed < 3; ++seed) {
    weftUniqueId id = patternId(seed), back;
    char text[WEFT_UNIQUE_ID_STRLEN];
    ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess) << lastError();
    EXPECT_EQ(lastError(), "");
    ASSERT_EQ(std::strlen(text), 2u * WEFT_UNIQUE_ID_BYTES);
    for (size_t i = 0; i < std::strlen(text); ++i)
      ASSERT_TRUE(std::isxdigit(static_cast<unsigned char>(text[i])) &&
                  !std::isupper(static_cast<unsigned char>(text[i])))
          << "character " << i << " is '" << text[i] << "'";
    std::memset(&back, 0, sizeof(back));
    ASSERT_EQ(weftUniqueIdFromString(text, &back), weftSuccess) << lastError();
    EXPECT_EQ(0, std::memcmp(&id, &back, sizeof(id)));
  }
}

TEST(UniqueIdText, KnownEncoding) {
  weftUniqueId id;
  std::memset(&id, 0, sizeof(id));
  id.internal[0] = static_cast<char>(0xab);
  id.internal[1] = 0x01;
  id.internal[WEFT_UNIQUE_ID_BYTES - 1] = static_cast<char>(0xf0);
  char text[WEFT_UNIQUE_ID_STRLEN];
  ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess);
  EXPECT_EQ(std::string(text, 4), "ab01");
  EXPECT_EQ(std::string(text + 2 * WEFT_UNIQUE_ID_BYTES - 2), "f0");
}

TEST(UniqueIdText, UppercaseHexIsAccepted) {
  weftUniqueId id = patternId(7), back;
  char text[WEFT_UNIQUE_ID_STRLEN];
  ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess);
  for (char* p = text; *p; ++p)
    *p = static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  ASSERT_EQ(weftUniqueIdFromString(text, &back), weftSuccess) << lastError();
  EXPECT_EQ(0, std::memcmp(&id, &back, sizeof(id)));
}

TEST(UniqueIdText, WrongLengthIsRejected) {
  weftUniqueId id = patternId(1), back;
  char text[WEFT_UNIQUE_ID_STRLEN];
  ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess);
  std::string full = text;
  for (const std::string& bad : {std::string(), full.substr(0, full.size() - 1),
                                 full.substr(0, full.size() - 2), full + "0", full + "00"}) {
    EXPECT_EQ(weftUniqueIdFromString(bad.c_str(), &back), weftInvalidArgument) << bad.size();
    EXPECT_NE(lastError().find("characters"), std::string::npos) << lastError();
  }
}

TEST(UniqueIdText, NonHexIsRejected) {
  weftUniqueId id = patternId(2), back;
  char text[WEFT_UNIQUE_ID_STRLEN];
  ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess);
  for (size_t pos : {size_t{0}, size_t{1}, size_t{100}, size_t{255}}) {
    for (char bad : {'g', 'G', ' ', 'x', '-', ':'}) {
      std::string s = text;
      s[pos] = bad;
      EXPECT_EQ(weftUniqueIdFromString(s.c_str(), &back), weftInvalidArgument)
          << "'" << bad << "' at " << pos;
      EXPECT_NE(lastError().find("non-hex"), std::string::npos) << lastError();
    }
  }
}

TEST(UniqueIdText, NullArgumentsAndShortBufferAreRejected) {
  weftUniqueId id = patternId(3);
  char text[WEFT_UNIQUE_ID_STRLEN];
  EXPECT_EQ(weftUniqueIdToString(nullptr, text, sizeof(text)), weftInvalidArgument);
  EXPECT_NE(lastError().find("uniqueId"), std::string::npos) << lastError();
  EXPECT_EQ(weftUniqueIdToString(&id, nullptr, sizeof(text)), weftInvalidArgument);
  EXPECT_NE(lastError().find("str must"), std::string::npos) << lastError();
  EXPECT_EQ(weftUniqueIdToString(&id, text, WEFT_UNIQUE_ID_STRLEN - 1), weftInvalidArgument);
  EXPECT_NE(lastError().find("str must"), std::string::npos) << lastError();
  EXPECT_EQ(weftUniqueIdFromString(nullptr, &id), weftInvalidArgument);
  EXPECT_NE(lastError().find("str is NULL"), std::string::npos) << lastError();
  ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess);
  EXPECT_EQ(weftUniqueIdFromString(text, nullptr), weftInvalidArgument);
  EXPECT_NE(lastError().find("uniqueId"), std::string::npos) << lastError();
}

}  // namespace

// Bad input never crashes and never yields a silently empty topology: every
// unusable file gives weftResult_t plus a sentence naming the file and the
// problem. Also the XML reader on its own.
#include <gtest/gtest.h>
#include <hwloc.h>

#include "topo/xml_reader.h"
#include "topo_test_util.h"

namespace weft::testing {
namespace {

using topo::Topology;

// Loads `content` from a temp file and expects failure with `needle` in the sentence.
void expectRejected(const std::string& content, const std::string& needle) {
  TempFile file(content);
  Topology t;
  weftResult_t res = topo::loadTopology(file.path(), &t);
  EXPECT_NE(res, weftSuccess) << "accepted: " << content.substr(0, 80);
  EXPECT_NE(lastError().find(file.path()), std::string::npos) << lastError();
  EXPECT_NE(lastError().find(needle), std::string::npos) << lastError();
}

TEST(TopoInput, MissingFileAndDirectory) {
  Topology t;
  EXPECT_EQ(topo::loadTopology("/nonexistent/weft/topo.xml", &t), weftSystemError);
  EXPECT_NE(lastError().find("/nonexistent/weft/topo.xml"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("No such file"), std::string::npos) << lastError();
  EXPECT_NE(topo::loadTopology("/tmp", &t), weftSuccess);
  EXPECT_NE(lastError().find("not a regular file"), std::string::npos) << lastError();
}

TEST(TopoInput, EmptyGarbageAndUnknownRoot) {
  expectRejected("", "empty");
  expectRejected("  \n\t ", "empty");
  expectRejected(std::string("\x7f"
                             "ELF\x01\x02\x00\x00garbage",
                             16),
                 "not XML");
  expectRejected("<html><body>hi</body></html>", "starts with <html>");
}

TEST(TopoInput, BrokenNcclFiles) {
  expectRejected(
      "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\">",
      "truncated");
  expectRejected("<system><cpu><pci busid=\"0000:01:00.0\"></cpu></system>", "does not match");
  expectRejected("<system><cpu><pci busid=\"zz:1\" class=\"0x030200\"/></cpu></system>",
                 "not a PCI bus id");
  expectRejected("<system><cpu><pci busid=\"0000:01:00.0\" class=0x030200/></cpu></system>",
                 "not quoted");
  // Well-formed, but with no GPU there is nothing to map.
  expectRejected(
      "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:02:00.0\" "
      "class=\"0x020700\"/></cpu></system>",
      "no GPU");
}

TEST(TopoInput, BrokenHwlocFiles) {
  std::string good =
      hwlocMachine({hostBridge(pciBridge("0000:00:01.0", nvidiaGpu("0000:01:00.0")))});
  // Cut in the middle: hwloc refuses it.
  expectRejected(good.substr(0, good.size() / 2), "hwloc");
  // No I/O objects at all (exported without --whole-io).
  expectRejected(hwlocMachine({""}), "no PCI devices");
  // A newer format than this hwloc reads is refused with the version named.
  if (hwloc_get_api_version() < 0x00030000) {
    std::string v3 = good;
    v3.replace(v3.find("version=\"2.0\""), 13, "version=\"3.0\"");
    expectRejected(v3, "3.0");
  }
  // PCI devices but no GPU.
  expectRejected(
      hwlocMachine({hostBridge(pciBridge("0000:00:01.0", ibNic("0000:01:00.0", "mlx5_0")))}),
      "no GPU");
}

TEST(TopoInput, BmcGraphicsIsNotAGpu) {
  // ATI ES1000 (AMD vendor, VGA class) and ASPEED are BMC display, not GPUs.
  std::string io =
      hostBridge(pciBridge("0000:00:01.0", pciDevice("0000:01:03.0", "0300 [1002:515e]", 0.2)) +
                 pciBridge("0000:00:02.0", pciDevice("0000:02:00.0", "0300 [1a03:2000]", 0.2)) +
                 pciBridge("0000:00:03.0", nvidiaGpu("0000:03:00.0")));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  ASSERT_EQ(t.machine.gpus.size(), 1u);
  EXPECT_EQ(t.machine.pci[t.machine.gpus[0].pci].busId, "0000:03:00.0");
}

TEST(TopoInput, XmlReaderSkipsPrologAndDecodesEntities) {
  std::unique_ptr<topo::XmlElement> root;
  std::string error;
  const char* text =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE topology [ <!ENTITY x \"y\"> ]>\n<!-- a <comment> -->\n"
      "<a k='1 &lt; 2 &amp; &#x41;&#66;'>\n  text <![CDATA[ <not-an-element/> ]]>\n  <b/><c "
      "x=\"&quot;\"></c>\n</a>\n";
  ASSERT_TRUE(topo::parseXml(text, &root, &error)) << error;
  EXPECT_EQ(root->name, "a");
  EXPECT_EQ(root->attrOr("k", ""), "1 < 2 & AB");
  ASSERT_EQ(root->children.size(), 2u);
  EXPECT_EQ(root->children[1]->attrOr("x", ""), "\"");
  EXPECT_EQ(root->children[0]->line, 6);
}

TEST(TopoInput, XmlReaderErrorsNameTheLine) {
  std::unique_ptr<topo::XmlElement> root;
  std::string error;
  EXPECT_FALSE(topo::parseXml("<a>\n<b>\n</a>", &root, &error));
  EXPECT_EQ(error.rfind("line 3:", 0), 0u) << error;
  EXPECT_FALSE(topo::parseXml("<a/><b/>", &root, &error));
  EXPECT_NE(error.find("second top-level"), std::string::npos) << error;
  EXPECT_FALSE(topo::parseXml("<a x=\"&bogus;\"/>", &root, &error));
  EXPECT_NE(error.find("entity"), std::string::npos) << error;
  EXPECT_FALSE(topo::parseXml("<!-- never closed", &root, &error));
  // Deep nesting is refused, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "<p>";
  EXPECT_FALSE(topo::parseXml(deep, &root, &error));
  EXPECT_NE(error.find("nested too deeply"), std::string::npos) << error;
}

}  // namespace
}  // namespace weft::testing

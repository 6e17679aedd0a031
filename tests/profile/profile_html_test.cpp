// The timeline page without a browser: one band element per exchange window, the data
// inline and safe inside <script>, the same bytes for the same profile.
#include "profile/profile_html.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace lockstep::replay {
namespace {

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Two tiles, exchange 1 in epochs 0 and 1 and exchange 2 once; tile 1 only syncs with
// exchange 2. A label that tries to close the script element.
arch::Profile three_windows() {
  arch::Profile profile;
  profile.clock_hz = 1'000'000'000;
  const auto step = [&](arch::ProfileStepKind kind, const std::string& kernel, uint32_t phase) {
    arch::ProfileStep s;
    s.kind = kind;
    s.kernel = kernel;
    s.phase = phase;
    s.phase_label = "</script><b>x";
    if (kind == arch::ProfileStepKind::Exchange) {
      s.event_cycles = 8;
      s.activities = {{arch::ActivityKind::Send, 0, 4}, {arch::ActivityKind::Receive, 2, 6}};
    }
    profile.steps.push_back(s);
    return static_cast<uint32_t>(profile.steps.size() - 1);
  };
  const uint32_t work = step(arch::ProfileStepKind::Compute, "k", 0);
  const uint32_t x1 = step(arch::ProfileStepKind::Exchange, "exchange", arch::kExchangePhaseBit | 1);
  const uint32_t x2 = step(arch::ProfileStepKind::Exchange, "exchange", arch::kExchangePhaseBit | 2);
  const uint32_t sync2 = step(arch::ProfileStepKind::Synchronization, "sync", arch::kExchangePhaseBit | 2);
  for (uint32_t t = 0; t < 2; ++t) {
    arch::TileProfile tile{t, t, {}};
    tile.samples = {{0, 10, work, 0, 0}, {10, 20, x1, 0, 0},   {20, 30, work, 1, 0},
                    {30, 40, x1, 1, 0},  {40, 50, work, 0, 0}, {50, 60, t == 0 ? x2 : sync2, 0, 0}};
    profile.tiles.push_back(tile);
  }
  return profile;
}

TEST(ProfileHtmlTest, OneBandPerExchangeWindowAndSafeData) {
  const ProfileHtml page = render_profile_html(three_windows(), {false, "three <windows>"});
  EXPECT_EQ(page.bands, 3u);
  EXPECT_EQ(page.tiles, 2u);
  EXPECT_EQ(page.samples, 12u);
  EXPECT_EQ(count_of(page.html, "class=\"phase-band\""), 3u);
  EXPECT_EQ(count_of(page.html, "</script>"), 2u);  // the label cannot close the data early
  EXPECT_NE(page.html.find("<h1>three &lt;windows&gt;</h1>"), std::string::npos);
  const size_t begin = page.html.find('>', page.html.find("id=\"profile-data\"")) + 1;
  const size_t end = page.html.find("</script>", begin);
  const auto data = nlohmann::json::parse(page.html.substr(begin, end - begin));
  EXPECT_EQ(data["span"], 60);
  ASSERT_EQ(data["bands"].size(), 3u);
  // In key order (invocation, epoch, phase): 1/0, 2/0, 1/1. Exchange 2: tile 0's exchange
  // and tile 1's sync both [50, 60); event start 60 - 8 = 52.
  EXPECT_EQ(data["bands"][1][3], 2);
  EXPECT_EQ(data["bands"][1][0], 50);
  EXPECT_EQ(data["bands"][1][1], 60);
  EXPECT_EQ(data["bands"][1][2], 52);
  EXPECT_EQ(data["bands"][1][9], 1);  // one tile only synchronizing
  EXPECT_EQ(data["bands"][2][4], 1);  // epoch 1 of exchange 1
  // The exchange step's roles as length * 5 + role: send [0,2), both [2,4), receive [4,6),
  // idle [6,8).
  EXPECT_EQ(data["steps"][1][6], nlohmann::json::parse("[10, 12, 11, 14]"));
  EXPECT_EQ(data["samples"][0].size(), 6u * 4);
  EXPECT_EQ(data["strings"][data["bands"][0][6].get<size_t>()], "</script><b>x");
}

TEST(ProfileHtmlTest, SameProfileSameBytes) {
  const auto a = render_profile_html(three_windows(), {true, "p"});
  const auto b = render_profile_html(three_windows(), {true, "p"});
  EXPECT_EQ(a.html, b.html);
}

}  // namespace
}  // namespace lockstep::replay

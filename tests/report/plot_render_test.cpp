// Plots: axis ticks, label placement, and SVG/PNG/PDF rendering that is byte-identical
// from one rendering to the next (no dates, no random ids).
#include <gtest/gtest.h>

#include "report/plot.hpp"
#include "report/plot_axis.hpp"
#include "report/plot_labels.hpp"

namespace lockstep::replay {
namespace {

PhasePlot sample_plot() {
  PhasePlot plot;
  plot.title = "Phase 17: layer.attn.scores";
  plot.subtitle = "executed 27 times";
  plot.reference_name = "B1024";
  const struct {
    const char* name;
    double max_row, horizon;
    bool paired, frontier, passed, reference;
  } points[] = {
      {"latency", 1000, 12000, false, true, true, false}, {"S32", 1000, 5000, false, false, false, false},
      {"S64", 1100, 9500, false, true, true, false},      {"B128", 1300, 7000, false, true, true, false},
      {"B256", 1128, 7374, false, false, true, false},    {"B256p", 1100, 7374, true, true, true, false},
      {"B512", 1128, 7374, false, false, true, false},    {"B1024", 1140, 9824, false, false, true, true},
  };
  for (const auto& p : points) {
    plot.points.push_back({p.name, p.max_row, p.horizon, p.paired, p.frontier, p.passed, p.reference});
  }
  return plot;
}

TEST(PlotAxis, RoundTicksCoverTheData) {
  const AxisScale s = nice_axis(1000, 1300);
  EXPECT_LE(s.lo, 1000);
  EXPECT_GE(s.hi, 1300);
  ASSERT_GE(s.ticks.size(), 3u);
  const double step = s.ticks[1] - s.ticks[0];
  EXPECT_EQ(step, 50);
  for (double t : s.ticks) {
    EXPECT_GE(t, s.lo);
    EXPECT_LE(t, s.hi);
  }
  const AxisScale flat = nice_axis(64, 64);  // one value: still a usable range
  EXPECT_LT(flat.lo, 64);
  EXPECT_GT(flat.hi, 64);
  EXPECT_GE(nice_axis(0, 3).ticks.size(), 2u);
  EXPECT_EQ(nice_axis(0, 3).ticks[1] - nice_axis(0, 3).ticks[0], 1);  // never below 1
  EXPECT_GE(nice_axis(5, 10).lo, 0);
  EXPECT_EQ(tick_text(19194), "19,194");
  EXPECT_EQ(tick_text(1000000), "1,000,000");
  EXPECT_EQ(tick_text(950), "950");
}

TEST(PlotLabels, CrowdedLabelsDoNotOverlap) {
  // Five labels at one spot: each must find its own place.
  std::vector<LabelRequest> requests(5, LabelRequest{100, 100, 40, 12, 7});
  const auto placed = place_labels(requests, {}, Box{0, 0, 400, 400});
  for (size_t i = 0; i < placed.size(); ++i) {
    for (size_t j = i + 1; j < placed.size(); ++j) {
      EXPECT_EQ(placed[i].box.overlap(placed[j].box), 0) << i << " vs " << j;
    }
  }
  EXPECT_FALSE(placed[0].leader);
}

TEST(PlotLabels, StaysInsideTheArea) {
  // A point at the right edge: its label goes to the left.
  const auto placed = place_labels({LabelRequest{395, 200, 40, 12, 7}}, {}, Box{0, 0, 400, 400});
  EXPECT_LE(placed[0].box.x + placed[0].box.w, 400);
}

TEST(PlotRender, ThreeFormatsAndByteIdenticalTwice) {
  const PlotFiles a = render_phase_plot(sample_plot());
  const PlotFiles b = render_phase_plot(sample_plot());
  // Compared as booleans: a failure would otherwise print whole files.
  EXPECT_TRUE(a.svg == b.svg);
  EXPECT_TRUE(a.png == b.png);
  EXPECT_TRUE(a.pdf == b.pdf);
  EXPECT_NE(a.svg.find("id=\"surface1\""), std::string::npos);
  EXPECT_NE(a.svg.find("<svg"), std::string::npos);
  EXPECT_EQ(a.png.substr(1, 3), "PNG");
  EXPECT_EQ(a.pdf.substr(0, 5), "%PDF-");
  EXPECT_EQ(a.pdf.find("CreationDate"), std::string::npos);
  EXPECT_EQ(a.pdf.find("ModDate"), std::string::npos);
  // PNG IHDR: width and height, big-endian, at bytes 16..23.
  auto be32 = [&](size_t at) {
    return (static_cast<uint32_t>(static_cast<unsigned char>(a.png[at])) << 24) |
           (static_cast<uint32_t>(static_cast<unsigned char>(a.png[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<unsigned char>(a.png[at + 2])) << 8) |
           static_cast<uint32_t>(static_cast<unsigned char>(a.png[at + 3]));
  };
  EXPECT_EQ(be32(16), 1350u);
  EXPECT_EQ(be32(20), 900u);
}

TEST(PlotRender, DifferentDataDifferentPicture) {
  PhasePlot other = sample_plot();
  other.points[0].horizon = 13000;
  EXPECT_NE(render_phase_plot(other).png, render_phase_plot(sample_plot()).png);
}

TEST(PlotRender, EmptyPlotStillRenders) {
  PhasePlot empty;
  empty.title = "Phase 1: nothing";
  const PlotFiles files = render_phase_plot(empty);
  EXPECT_FALSE(files.svg.empty());
  EXPECT_FALSE(files.png.empty());
  EXPECT_FALSE(files.pdf.empty());
}

}  // namespace
}  // namespace lockstep::replay

#pragma once
// A profile's timeline as one self-contained HTML page (inline script and style, no
// network): phase bands (one per global exchange window), aggregate rows (per-kind share of
// the shown tiles over time), per-tile lanes drawn on a canvas so 1,472 tiles stay usable,
// zoom and pan, a tile filter and hover details. The renderer semantics of
// docs/IPU21-DEVICE.md 15.5; the page itself: docs/profile-queries.md, "The timeline".
#include <cstddef>
#include <string>

#include "profile/profile.hpp"

namespace lockstep::replay {

struct ProfileHtmlOptions {
  bool shared_clock = false;  // else crop to the latest tile's first sample, as the stack does
  std::string title;          // the page's heading (the profile's file name, say)
};

struct ProfileHtml {
  std::string html;
  size_t bands = 0;    // elements with class "phase-band"
  size_t samples = 0;  // samples on the timeline
  size_t tiles = 0;    // lanes
};

// The page. The same profile and options give the same bytes.
ProfileHtml render_profile_html(const arch::Profile& profile, const ProfileHtmlOptions& options);

// The page's script and style (profile_html_script.cpp).
extern const char* const kProfileTimelineScript;
extern const char* const kProfileTimelineStyle;

}  // namespace lockstep::replay

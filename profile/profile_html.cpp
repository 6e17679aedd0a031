// The timeline page: the profile placed on its timeline, packed as compact JSON (shared
// strings, steps, per-tile sample arrays of start deltas) inside the page, one DOM element per
// phase band, and the script that draws the rest (profile_html_script.cpp).
#include "profile/profile_html.hpp"

#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "io/html_escape.hpp"
#include "profile/profile_analysis.hpp"

namespace lockstep::replay {

using arch::html_escape;
namespace {

using Json = nlohmann::json;

class StringTable {
 public:
  uint32_t add(const std::string& text) {
    const auto [it, added] = index_.try_emplace(text, static_cast<uint32_t>(strings_.size()));
    if (added) strings_.push_back(text);
    return it->second;
  }
  Json json() const { return strings_; }

 private:
  std::map<std::string, uint32_t> index_;
  std::vector<std::string> strings_;
};

// [kind, kernel, operation, phase, label, event cycles, [length * 5 + role, ...],
//  [name, value, ...], shown idle (compute marked active=false)]
Json steps_json(const arch::Profile& profile, StringTable& strings) {
  Json steps = Json::array();
  for (const auto& step : profile.steps) {
    Json roles = Json::array();
    for (const auto& segment : role_segments(step.activities, step.event_cycles)) {
      // The segments tile [0, event cycles) without gaps: a length and a role say it all.
      roles.push_back(uint64_t{segment.end - segment.start} * 5 + static_cast<uint64_t>(segment.role));
    }
    Json metadata = Json::array();
    for (const auto& m : step.metadata) {
      metadata.push_back(strings.add(m.name));
      metadata.push_back(strings.add(m.value));
    }
    const std::string* active = arch::find_metadata(step, "active");
    const bool shown_idle = step.kind == arch::ProfileStepKind::Compute && active != nullptr && *active == "false";
    steps.push_back(Json::array({static_cast<int>(step.kind), strings.add(step.kernel), strings.add(step.operation),
                                 step.phase, strings.add(step.phase_label), step.event_cycles, std::move(roles),
                                 std::move(metadata), shown_idle ? 1 : 0}));
  }
  return steps;
}

// The "samples" array's text: per tile a flat [start delta, duration, step, context, ...],
// a context being (epoch, invocation); fills data["contexts"] and data["tiles"]. Written by
// hand: the whole model has millions of samples, and a Json value per number would cost
// more memory than the page.
std::string samples_json(const arch::Profile& profile, const ProfileTimeline& timeline, Json& data) {
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> contexts;
  Json context_list = Json::array();
  Json tiles = Json::array();
  std::string text = "[";
  char buffer[24];
  const auto number = [&](int64_t value) {
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    text.append(buffer, result.ptr);
  };
  size_t next = 0;  // timeline.samples run tile by tile
  for (uint32_t t = 0; t < profile.tiles.size(); ++t) {
    tiles.push_back(profile.tiles[t].physical_tile);
    text += t == 0 ? "[" : ",[";
    uint64_t previous = 0;
    for (bool first = true; next < timeline.samples.size() && timeline.samples[next].tile == t; ++next, first = false) {
      const PlacedSample& placed = timeline.samples[next];
      const auto& sample = profile.tiles[t].samples[placed.sample];
      const auto key = std::make_pair(sample.epoch, sample.invocation);
      auto [it, added] = contexts.try_emplace(key, static_cast<uint32_t>(contexts.size()));
      if (added) context_list.push_back(Json::array({sample.epoch, sample.invocation}));
      if (!first) text += ',';
      number(static_cast<int64_t>(placed.offset) - static_cast<int64_t>(previous));
      text += ',';
      number(static_cast<int64_t>(placed.duration));
      text += ',';
      number(sample.step);
      text += ',';
      number(it->second);
      previous = placed.offset;
    }
    text += ']';
  }
  data["contexts"] = std::move(context_list);
  data["tiles"] = std::move(tiles);
  return text + "]";
}

// [window start (last entry), end, event start, phase, epoch, invocation, label, event cycles,
//  tiles, sync-only tiles, measured, arrival wait, boundary, first entry]
Json bands_json(const std::vector<ExchangeWindow>& windows, StringTable& strings) {
  Json bands = Json::array();
  for (const auto& w : windows) {
    bands.push_back(Json::array({w.max_start, w.max_end, w.event_start(), w.key.phase, w.key.epoch, w.key.invocation,
                                 strings.add(w.label), w.event_cycles, w.tiles, w.sync_only_tiles, w.measured(),
                                 w.arrival_wait(), w.boundary(), w.min_start}));
  }
  return bands;
}

std::string band_title(const ExchangeWindow& w) {
  std::string title = "exchange phase " + std::to_string(w.key.phase) + ", epoch " + std::to_string(w.key.epoch);
  if (w.key.invocation > 0) title += ", invocation " + std::to_string(w.key.invocation);
  if (!w.label.empty()) title += " (" + w.label + ")";
  title += ": cycles " + std::to_string(w.max_start) + ".." + std::to_string(w.max_end) + ", measured " +
           std::to_string(w.measured()) + ", arrival wait " + std::to_string(w.arrival_wait()) + ", boundary " +
           std::to_string(w.boundary()) + ", " + std::to_string(w.tiles) + " tiles exchanging, " +
           std::to_string(w.sync_only_tiles) + " only synchronizing";
  return title;
}

std::string bands_html(const std::vector<ExchangeWindow>& windows) {
  std::string html;
  for (size_t i = 0; i < windows.size(); ++i) {
    html += "<div class=\"phase-band\" data-band=\"" + std::to_string(i) + "\" title=\"" +
            html_escape(band_title(windows[i])) + "\">" + std::to_string(windows[i].key.phase) + "</div>\n";
  }
  return html;
}

// The JSON as it may sit inside <script>: "</" cannot end the element early.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string facts_line(const arch::Profile& profile, const ProfileTimeline& timeline, bool shared_clock, size_t tiles,
                       size_t bands) {
  std::string line = std::to_string(tiles) + " tiles, " + std::to_string(timeline.samples.size()) + " samples, " +
                     std::to_string(bands) + " exchange windows; span " + std::to_string(timeline.span) + " cycles";
  if (profile.clock_hz > 0) {
    char ms[64];
    std::snprintf(ms, sizeof ms, " (%.3f ms at %.0f MHz)", cycles_to_ms(timeline.span, profile.clock_hz),
                  static_cast<double>(profile.clock_hz) / 1e6);
    line += ms;
  }
  line += shared_clock ? "; shared clock (from the earliest first sample)"
                       : "; cropped at the latest tile's first sample (+" + std::to_string(timeline.crop) + " cycles)";
  if (!profile.source.empty()) line += "; source " + profile.source;
  if (!profile.machine_name.empty()) line += "; machine " + profile.machine_name;
  return line;
}

}  // namespace

ProfileHtml render_profile_html(const arch::Profile& profile, const ProfileHtmlOptions& options) {
  const ProfileTimeline timeline = place_samples(profile, options.shared_clock);
  const std::vector<ExchangeWindow> windows = exchange_windows(profile, timeline);
  StringTable strings;
  Json data;
  data["span"] = timeline.span;
  data["clockHz"] = profile.clock_hz;
  data["steps"] = steps_json(profile, strings);
  const std::string samples = samples_json(profile, timeline, data);
  data["bands"] = bands_json(windows, strings);
  data["strings"] = strings.json();
  const std::string title = options.title.empty() ? "profile" : options.title;

  ProfileHtml page;
  page.bands = windows.size();
  page.samples = timeline.samples.size();
  page.tiles = profile.tiles.size();
  std::string& h = page.html;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + html_escape(title) + " - Lockstep profile</title>\n<style>\n";
  h += kProfileTimelineStyle;
  h += "</style>\n</head>\n<body data-status=\"loading\">\n<header>\n<h1>" + html_escape(title) + "</h1>\n";
  h += "<p class=\"facts\">" +
       html_escape(facts_line(profile, timeline, options.shared_clock, page.tiles, page.bands)) +
       "</p>\n<div id=\"legend\"></div>\n</header>\n";
  h += "<div id=\"controls\">\n<label>Tiles <input id=\"tile-filter\" size=\"24\" "
       "placeholder=\"all, or e.g. 0-63,100\"></label>\n"
       "<label>Lane height <select id=\"lane-height\"><option "
       "value=\"0\">auto</option><option>1</option>"
       "<option>2</option><option>4</option><option>8</option><option>16</option></select></label>\n"
       "<button id=\"reset\" type=\"button\">Whole span</button>\n<span id=\"view-range\"></span>\n"
       "<span class=\"hint\">wheel: zoom &middot; drag: pan &middot; shift+wheel: scroll tiles "
       "&middot; "
       "double-click: whole span</span>\n</div>\n";
  h += "<div id=\"timeline\">\n<canvas id=\"axis\"></canvas>\n<div id=\"bands\">\n" + bands_html(windows) + "</div>\n";
  h += "<canvas id=\"aggregate\"></canvas>\n<div id=\"lanes-scroll\"><div "
       "id=\"lanes-spacer\"><canvas id=\"lanes\">"
       "</canvas></div></div>\n</div>\n<div id=\"tooltip\" hidden></div>\n<p "
       "id=\"status\">loading</p>\n";
  h += "<script type=\"application/json\" id=\"profile-data\">";
  std::string json = script_safe(data.dump(-1, ' ', false, Json::error_handler_t::replace));
  json.pop_back();  // the closing brace: the samples (numbers only) go last
  h += json + ",\"samples\":" + samples + "}";
  h += "</script>\n<script>\n";
  h += kProfileTimelineScript;
  h += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace lockstep::replay

// The array-view page: one HTML file with the frames inlined as JSON and a small script that
// draws the array as SVG. Nothing is fetched: the page works from a file:// URL, offline.
#include "sim/trace/array_view.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

namespace systole::trace {

namespace {

// Escapes text for an HTML element's content.
std::string HtmlText(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

// The frames as compact JSON: per cycle, 7 numbers per PE (x, bank, w0, w1, psum, loading,
// load_bank), row-major. `</` is written `<\/` so the data cannot close its <script> element.
std::string FramesJson(const ArrayFrames& frames) {
  nlohmann::json cycles = nlohmann::json::array();
  nlohmann::json pes = nlohmann::json::array();
  for (const ArrayCycle& cycle : frames.cycles) {
    cycles.push_back(cycle.cycle);
    nlohmann::json row = nlohmann::json::array();
    for (const PeState& pe : cycle.pes) {
      row.push_back(pe.x);
      row.push_back(pe.bank ? 1 : 0);
      row.push_back(pe.w0);
      row.push_back(pe.w1);
      row.push_back(pe.psum);
      row.push_back(pe.loading ? 1 : 0);
      row.push_back(pe.load_bank ? 1 : 0);
    }
    pes.push_back(std::move(row));
  }
  const nlohmann::json data = {{"rows", frames.rows}, {"cols", frames.cols}, {"bf16", frames.bf16},
                               {"cycles", cycles}, {"pes", pes}};
  const std::string text = data.dump();
  std::string safe;
  safe.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    safe += text[i];
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') safe += '\\';
  }
  return safe;
}

constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Systole array view: {title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }}
h1 {{ font-size: 1.3em; margin: 0 0 .3em; }}
#controls button {{ font-size: 1em; min-width: 2.4em; }}
#controls {{ display: flex; gap: .5em; align-items: center; flex-wrap: wrap; margin: .6em 0; }}
#slider {{ width: 24em; }}
#legend {{ max-width: 60em; line-height: 1.45; }}
.key {{ display: inline-block; width: 1em; height: 1em; vertical-align: -0.15em; border: 1px solid #555; }}
svg text {{ font: 11px ui-monospace, monospace; }}
</style></head>
<body>
<h1>The systolic array, cycle by cycle</h1>
<div>{rows}&times;{cols} {kind} array &middot; {count} cycles from <code>{title}</code></div>
<div id="controls">
  <button id="first" title="first cycle">first</button>
  <button id="prev" title="previous cycle (&larr;)">&#x25C0;</button>
  <button id="play" title="play / pause (space)">play</button>
  <button id="next" title="next cycle (&rarr;)">&#x25B6;</button>
  <button id="last" title="last cycle">last</button>
  <input id="slider" type="range" min="0" value="0">
  <span id="label"></span>
  <label><input id="busy" type="checkbox" checked> skip cycles where nothing changes</label>
</div>
<svg id="array" xmlns="http://www.w3.org/2000/svg"></svg>
<div id="legend">
<p><span class="key" style="background:#ffe9a8"></span> a PE whose input or partial sum changed this cycle
&middot; <span class="key" style="border:2px solid #d9480f"></span> a weight shifting into a bank
&middot; <b>w</b> the weight bank the input multiplies, <b>w&prime;</b> the other bank &middot; <b>?</b> a
register that has not changed since the waveform began (still its power-up value: the simulator
fills those randomly, as real flip-flops come up unknown).</p>
<p>Weights stay in place (weight-stationary): PE (t, j) holds W[t][j]. Each cycle, input elements
move one PE to the right and partial sums one PE down; row t of the array receives element t of
an input row one cycle after row t&minus;1 (the skew), so that it meets the partial sum of the same
input row coming from above. The bottom row emits one output row per cycle, C values wide. While
one weight tile computes, the next shifts into the other bank (double buffering): each input
element carries the bank it multiplies with, so the switch travels through the array with the data.</p>
</div>
<script id="frames" type="application/json">{json}</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("frames").textContent);
const R = data.rows, C = data.cols, N = data.cycles.length, F = 7;
const view = new DataView(new ArrayBuffer(4));
function asFloat(bits) {{ view.setUint32(0, bits >>> 0); return view.getFloat32(0); }}
function fmt(v) {{ return Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(2) : String(+v.toFixed(3)); }}
function element(bits) {{ return data.bf16 ? fmt(asFloat(bits << 16)) : String((bits << 24) >> 24); }}
function sum(bits) {{ return data.bf16 ? fmt(asFloat(bits)) : String(bits | 0); }}
function field(i, t, j, k) {{ return data.pes[i][(t * C + j) * F + k]; }}
// The first cycle at which each register differs from its first sample: before it, its value is
// the simulator's power-up fill, shown as "?".
const written = new Array(R * C * F).fill(N);
for (let i = 1; i < N; ++i) for (let k = 0; k < R * C * F; ++k)
  if (written[k] === N && data.pes[i][k] !== data.pes[0][k]) written[k] = i;
function known(i, t, j, k) {{ return i >= written[(t * C + j) * F + k]; }}
// A cycle is busy when some PE's input, partial sum or weights differ from the cycle before:
// registers hold their last values while the array idles (and random ones before reset).
function busy(i) {{
  if (i === 0) return true;
  const a = data.pes[i], b = data.pes[i - 1];
  for (let k = 0; k < a.length; ++k) if (a[k] !== b[k]) return true;
  return false;
}}
function moved(i, t, j) {{
  return i > 0 && (field(i, t, j, 0) !== field(i - 1, t, j, 0) || field(i, t, j, 4) !== field(i - 1, t, j, 4));
}}
const W = 112, H = 74, X0 = 70, Y0 = 30;
const svg = document.getElementById("array");
svg.setAttribute("width", X0 + C * W + 30);
svg.setAttribute("height", Y0 + R * H + 50);
const NS = "http://www.w3.org/2000/svg";
function add(tag, attrs, text) {{
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  svg.appendChild(e); return e;
}}
const cells = [];
for (let t = 0; t < R; ++t) {{
  cells.push([]);
  add("text", {{x: 4, y: Y0 + t * H + H / 2 + 4}}, "row " + t);
  for (let j = 0; j < C; ++j) {{
    const x = X0 + j * W, y = Y0 + t * H;
    const rect = add("rect", {{x: x + 4, y: y + 4, width: W - 8, height: H - 8, rx: 6, fill: "#fff", stroke: "#888"}});
    const xin = add("text", {{x: x + 10, y: y + 20}});
    const w = add("text", {{x: x + 10, y: y + 35}});
    const w2 = add("text", {{x: x + 10, y: y + 49, fill: "#777"}});
    const ps = add("text", {{x: x + 10, y: y + 63}});
    cells[t].push({{rect, xin, w, w2, ps}});
  }}
}}
for (let j = 0; j < C; ++j) add("text", {{x: X0 + j * W + 10, y: Y0 - 10}}, "column " + j);
const outs = [];
for (let j = 0; j < C; ++j) outs.push(add("text", {{x: X0 + j * W + 10, y: Y0 + R * H + 22, fill: "#1c7ed6"}}));
add("text", {{x: 4, y: Y0 + R * H + 22}}, "out \u2193");
const slider = document.getElementById("slider"), label = document.getElementById("label");
slider.max = Math.max(N - 1, 0);
let index = 0, timer = null;
function draw() {{
  if (N === 0) {{ label.textContent = "no cycles"; return; }}
  for (let t = 0; t < R; ++t) for (let j = 0; j < C; ++j) {{
    const c = cells[t][j], bank = field(index, t, j, 1);
    const active = bank ? field(index, t, j, 3) : field(index, t, j, 2);
    const other = bank ? field(index, t, j, 2) : field(index, t, j, 3);
    const show = (k, text) => known(index, t, j, k) ? text : "?";
    c.xin.textContent = "x " + show(0, element(field(index, t, j, 0)));
    c.w.textContent = "w" + bank + " " + show(bank ? 3 : 2, element(active));
    c.w2.textContent = "w" + (1 - bank) + "\u2032 " + show(bank ? 2 : 3, element(other));
    c.ps.textContent = "\u03a3 " + show(4, sum(field(index, t, j, 4)));
    c.rect.setAttribute("fill", moved(index, t, j) ? "#ffe9a8" : "#fff");
    const loading = field(index, t, j, 5);
    c.rect.setAttribute("stroke", loading ? "#d9480f" : "#888");
    c.rect.setAttribute("stroke-width", loading ? 3 : 1);
  }}
  for (let j = 0; j < C; ++j) outs[j].textContent = known(index, R - 1, j, 4) ? sum(field(index, R - 1, j, 4)) : "?";
  slider.value = index;
  label.textContent = "cycle " + data.cycles[index] + " (" + (index + 1) + " of " + N + ")";
}}
function step(delta) {{
  const skip = document.getElementById("busy").checked;
  let i = index;
  do {{ i += delta; }} while (skip && i > 0 && i < N - 1 && !busy(i));
  index = Math.min(Math.max(i, 0), N - 1); draw();
}}
document.getElementById("first").onclick = () => {{ index = 0; draw(); }};
document.getElementById("last").onclick = () => {{ index = N - 1; draw(); }};
document.getElementById("prev").onclick = () => step(-1);
document.getElementById("next").onclick = () => step(1);
document.getElementById("play").onclick = () => {{
  if (timer) {{ clearInterval(timer); timer = null; return; }}
  timer = setInterval(() => {{ if (index >= N - 1) {{ clearInterval(timer); timer = null; }} else step(1); }}, 400);
}};
slider.oninput = () => {{ index = +slider.value; draw(); }};
document.addEventListener("keydown", e => {{
  if (e.key === "ArrowRight") step(1); else if (e.key === "ArrowLeft") step(-1);
  else if (e.key === " ") {{ e.preventDefault(); document.getElementById("play").click(); }}
}});
const hash = /#cycle=(\d+)/.exec(location.hash);
if (hash) {{ const k = data.cycles.indexOf(+hash[1]); if (k >= 0) index = k; }}
else {{ for (let i = 1; i < N; ++i) if (busy(i)) {{ index = i; break; }} }}
draw();
</script>
</body></html>
)HTML";

}  // namespace

std::string ArrayViewHtml(const ArrayFrames& frames) {
  return fmt::format(fmt::runtime(kPage), fmt::arg("title", HtmlText(frames.source)), fmt::arg("rows", frames.rows),
                     fmt::arg("cols", frames.cols),
                     fmt::arg("kind", frames.bf16 ? "bf16 (fp32 partial sums)" : "int8 (int32 partial sums)"),
                     fmt::arg("count", frames.cycles.size()), fmt::arg("json", FramesJson(frames)));
}

}  // namespace systole::trace

// ferry's local console. It reads what any client reads: the Step
// Functions API of the local region (POST / with X-Amz-Target) and its
// read-only views (GET /_ferry/world, /_ferry/history, ...), every second
// while visible.
// Names from the data are always inserted as text, never as HTML.
"use strict";

const refreshMs = 1000;
// state is what the page knows. pinned is the execution the URL names
// (#execution=ARN), shown until the URL changes; selected the one shown
// (pinned, else the newest running deploy). byArn holds every execution
// read (complete once the list was read to its end), inputs each one's
// input (it never changes). drawn says which graph is drawn, events are
// the shown execution's history, detail what its detail shows. now is the
// region's clock (it may be virtual), in epoch seconds.
const state = { machine: null, definition: null, drawn: null, selected: null, pinned: null,
  executions: [], byArn: new Map(), complete: false, inputs: new Map(), events: [], eventsOf: null, detail: null, now: 0 };
const appTitle = "ferry local console";

// el makes an element with attributes and children (strings become text).
function el(tag, attrs, ...children) {
  const svg = ["svg", "g", "rect", "text", "path", "title"].includes(tag);
  const e = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}

async function sfn(op, body) {
  const res = await fetch("/", {
    method: "POST",
    headers: { "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AWSStepFunctions." + op },
    body: JSON.stringify(body || {}),
  });
  if (!res.ok) throw new Error(op + ": HTTP " + res.status);
  return res.json();
}

async function getJSON(path) {
  const res = await fetch(path, { headers: { Accept: "application/json" } });
  if (!res.ok) throw new Error(path + ": HTTP " + res.status);
  return res.json();
}

function when(epochSeconds) {
  if (epochSeconds === undefined || epochSeconds === null) return "";
  return new Date(epochSeconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function duration(from, to) {
  if (!from) return "";
  const s = Math.max(0, Math.round((to || from) - from));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

// edges lists the transitions of a States Language state: Next, Default,
// each Choice's Next (success edges) and each Catch's Next (catch edges).
function edges(st) {
  const out = [];
  if (st.Next) out.push({ to: st.Next, kind: "next" });
  if (st.Default) out.push({ to: st.Default, kind: "next" });
  for (const c of st.Choices || []) if (c.Next) out.push({ to: c.Next, kind: "next" });
  for (const c of st.Catch || []) if (c.Next) out.push({ to: c.Next, kind: "catch" });
  return out;
}

// chooses returns where a Choice state sends input when its rules are
// all top-level IsPresent tests (as the machine's first Choice, Query?,
// is), else null: the branch cannot be told from the input alone.
function chooses(st, input) {
  if (!st || st.Type !== "Choice" || !input || typeof input !== "object") return null;
  for (const c of st.Choices || []) {
    const m = /^\$\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(c.Variable || "");
    if (!m || typeof c.IsPresent !== "boolean") return null;
    if ((m[1] in input) === c.IsPresent) return c.Next;
  }
  return st.Default || null;
}

// branchOf lists the states an execution with input may pass through:
// those reachable from StartAt, the first Choice taking the input's
// branch only, in breadth-first order (success edges before catches).
function branchOf(def, input) {
  const order = [def.StartAt], seen = new Set(order);
  const first = chooses(def.States[def.StartAt], input);
  for (let i = 0; i < order.length; i++) {
    const st = def.States[order[i]];
    if (!st) continue;
    const out = i === 0 && first ? [{ to: first }] : edges(st);
    for (const e of out) if (!seen.has(e.to) && def.States[e.to]) { seen.add(e.to); order.push(e.to); }
  }
  return order;
}

// layoutOf lays out the states of names (branchOf) top to bottom within
// width: loops are broken where a depth-first walk from the start meets a
// state it is still inside; each state goes one row below the lowest of
// the states that lead to it; the ends (Succeed, Fail) share the bottom
// row; within a row, states are ordered by where their neighbours are.
function layoutOf(def, names, width) {
  const inBranch = new Set(names);
  const outs = new Map(names.map((n) => [n, [...new Set(edges(def.States[n]).map((e) => e.to))].filter((t) => inBranch.has(t))]));
  const back = new Set(), onStack = new Set(), done = new Set(), post = [];
  const walk = (n) => {
    onStack.add(n);
    for (const t of outs.get(n)) {
      if (onStack.has(t)) back.add(n + "\u0000" + t);
      else if (!done.has(t)) walk(t);
    }
    onStack.delete(n); done.add(n); post.push(n);
  };
  walk(names[0]);
  for (const n of names) if (!done.has(n)) walk(n);
  const isEnd = (n) => ["Succeed", "Fail"].includes(def.States[n].Type);
  const row = new Map();
  for (const n of post.reverse()) {
    if (!row.has(n)) row.set(n, 0);
    for (const t of outs.get(n)) if (!back.has(n + "\u0000" + t)) row.set(t, Math.max(row.get(t) || 0, row.get(n) + 1));
  }
  const last = Math.max(0, ...names.filter((n) => !isEnd(n)).map((n) => row.get(n))) + 1;
  for (const n of names) if (isEnd(n)) row.set(n, last);
  const rows = [];
  for (const n of names) (rows[row.get(n)] = rows[row.get(n)] || []).push(n);
  const packed = rows.filter(Boolean);
  orderRows(packed, outs, back);
  const cols = Math.max(...packed.map((r) => r.length));
  // Edges that skip rows run down lanes at the left, one per state they
  // lead to; loops is the room at the right for the edges that go back up.
  const rowOf = new Map();
  packed.forEach((r, y) => r.forEach((n) => rowOf.set(n, y)));
  const lanes = new Map();
  for (const n of names) {
    for (const t of outs.get(n)) {
      if (!back.has(n + "\u0000" + t) && rowOf.get(t) - rowOf.get(n) > 2 && !lanes.has(t)) lanes.set(t, 6 + 5 * lanes.size);
    }
  }
  const gapX = 10, gapY = 22, h = 28, loops = 36, left = 10 + 5 * lanes.size;
  const w = Math.max(60, Math.min(180, (width - left - loops - gapX * (cols + 1)) / cols));
  const pos = new Map();
  packed.forEach((r, y) => {
    const offset = left + (width - left - loops - r.length * (w + gapX) + gapX) / 2;
    r.forEach((n, x) => pos.set(n, { x: offset + x * (w + gapX), y: gapY / 2 + y * (h + gapY), w, h }));
  });
  return { pos, outs, back, lanes, gapY, width, height: packed.length * (h + gapY), names };
}

// edgePath is the SVG path of the edge from a state placed at a to one
// placed at b: a curve down, a loop at the right back up, or, for an edge
// that skips two rows or more, along the gaps between rows and down its
// lane at x.
function edgePath(a, b, back, lane, gapY) {
  const x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y;
  if (back) {
    return `M${a.x + a.w},${a.y + a.h / 2} C${a.x + a.w + 30},${a.y + a.h / 2} ${b.x + b.w + 30},${b.y + b.h / 2} ${b.x + b.w},${b.y + b.h / 2}`;
  }
  if (lane !== undefined && y2 - y1 > 2 * (a.h + gapY) - a.h) {
    return `M${x1},${y1} V${y1 + gapY / 2} H${lane} V${y2 - gapY / 2} H${x2} V${y2}`;
  }
  return `M${x1},${y1} C${x1},${y1 + 18} ${x2},${y2 - 18} ${x2},${y2}`;
}

// orderRows orders each row by the mean place of each state's neighbours
// in the rows above, then below (a few sweeps of the barycentre
// heuristic), to uncross the edges.
function orderRows(rows, outs, back) {
  const ins = new Map();
  for (const [n, ts] of outs) for (const t of ts) if (!back.has(n + "\u0000" + t)) (ins.get(t) || ins.set(t, []).get(t)).push(n);
  const place = new Map();
  const mark = () => rows.forEach((r) => r.forEach((n, i) => place.set(n, (i + 0.5) / r.length)));
  const mean = (ns, own) => {
    const ps = ns.filter((m) => place.has(m)).map((m) => place.get(m));
    return ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : own;
  };
  mark();
  for (let sweep = 0; sweep < 4; sweep++) {
    const down = sweep % 2 === 0;
    for (const r of down ? rows : rows.slice().reverse()) {
      const key = new Map(r.map((n) => [n, mean(down ? ins.get(n) || [] : outs.get(n).filter((t) => !back.has(n + "\u0000" + t)), place.get(n))]));
      r.sort((a, b) => key.get(a) - key.get(b));
      r.forEach((n, i) => place.set(n, (i + 0.5) / r.length));
    }
  }
}

// label fits a state's name in a box w pixels wide.
function label(name, w) {
  const fit = Math.max(4, Math.floor((w - 8) / 6.3));
  return name.length > fit ? name.slice(0, fit - 1) + "…" : name;
}

function drawGraph(def, layout) {
  const svg = document.getElementById("graph");
  svg.replaceChildren();
  svg.setAttribute("width", layout.width);
  svg.setAttribute("height", layout.height);
  svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  const lines = el("g", { class: "edges" });
  const nodes = el("g", { class: "states" });
  for (const name of layout.names) {
    const st = def.States[name], a = layout.pos.get(name);
    const kinds = new Map();
    for (const e of edges(st)) if (!kinds.has(e.to) || e.kind === "next") kinds.set(e.to, e.kind);
    for (const to of layout.outs.get(name)) {
      const d = edgePath(a, layout.pos.get(to), layout.back.has(name + "\u0000" + to), layout.lanes.get(to), layout.gapY);
      lines.append(el("path", { class: "edge " + kinds.get(to), d, "data-from": name, "data-to": to }));
    }
    const kind = st.Type === "Choice" ? " choice" : "";
    const g = el("g", { class: "state" + kind, "data-state": name, "data-type": st.Type, tabindex: 0, role: "button" },
      el("title", {}, `${name} (${st.Type}): show its input and output`),
      el("rect", { x: a.x, y: a.y, width: a.w, height: a.h }),
      el("text", { x: a.x + a.w / 2, y: a.y + a.h / 2 }, label(name, a.w)));
    g.addEventListener("click", () => showDetail({ state: name }));
    g.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); showDetail({ state: name }); } });
    nodes.append(g);
  }
  svg.append(lines, nodes);
}

// showGraph draws the branch the shown execution takes, laid out to the
// figure's width, unless it is drawn already.
function showGraph(x) {
  const fig = document.getElementById("graph").parentElement;
  const width = Math.floor(fig.clientWidth);
  const names = branchOf(state.definition, state.inputs.get(x.executionArn));
  const key = names.join(",") + "@" + width;
  if (state.drawn === key) return;
  state.drawn = key;
  drawGraph(state.definition, layoutOf(state.definition, names, width));
}

// progressOf reads an execution's history: the states of the machine's
// top level (states) it visited, the transitions it took (from\0to), the
// one it is in (running), and how it ended. The states of a Map's
// iterations count as the Map's.
function progressOf(events, status, states) {
  const visited = new Set(), taken = new Set();
  let lastEntered = null;
  for (const ev of events) {
    const entered = ev.stateEnteredEventDetails;
    if (!entered || !states[entered.name] || entered.name === lastEntered) continue;
    if (lastEntered) taken.add(lastEntered + "\u0000" + entered.name);
    visited.add(entered.name);
    lastEntered = entered.name;
  }
  return { visited, taken, current: status === "RUNNING" ? lastEntered : null, end: status === "RUNNING" ? null : lastEntered };
}

function paintGraph(progress, status) {
  for (const g of document.querySelectorAll("#graph .state")) {
    const name = g.getAttribute("data-state");
    g.classList.toggle("visited", progress.visited.has(name));
    g.classList.toggle("current", progress.current === name);
    g.classList.toggle("failed", status !== "SUCCEEDED" && progress.end === name);
    g.classList.toggle("succeeded", status === "SUCCEEDED" && progress.end === name);
    g.toggleAttribute("aria-current", progress.current === name);
  }
  for (const e of document.querySelectorAll("#graph .edge")) {
    e.classList.toggle("taken", progress.taken.has(e.getAttribute("data-from") + "\u0000" + e.getAttribute("data-to")));
  }
}

// errorOf says an event's error and cause in one line (a Lambda error
// payload's errorMessage for its cause), "" when it has none.
function errorOf(ev) {
  const d = detailsOf(ev);
  if (!d.error && !d.cause) return "";
  let cause = d.cause || "";
  try { const c = JSON.parse(cause); cause = c.errorMessage || cause; } catch (_) { /* plain text */ }
  return [d.error, cause].filter(Boolean).join(": ");
}

// latestDocument is the execution's latest state document (execution.State
// after Validate): the last JSON object a state entered with or exited
// with, and when (epoch seconds).
function latestDocument(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i], text = (ev.stateExitedEventDetails || {}).output || (ev.stateEnteredEventDetails || {}).input;
    if (!text) continue;
    try {
      const doc = JSON.parse(text);
      if (doc && typeof doc === "object" && !Array.isArray(doc)) return { doc, at: ev.timestamp };
    } catch (_) { /* not JSON */ }
  }
  return null;
}

// seconds says a count of seconds as 1h02m, 3m05s.
function seconds(n) {
  return duration(1, 1 + Math.max(0, n));
}

// showHealth shows, from the latest state document, each service's
// healthy instances of its target, its stability window (held so far,
// left), the next health check and the bake's countdown, counted down on
// the region's clock from when the document was written.
function showHealth(events, x) {
  const root = document.getElementById("health");
  const latest = x.kind === "deploy" ? latestDocument(events) : null;
  const doc = latest ? latest.doc : {};
  const health = doc.health, bake = doc.bake, running = x.status === "RUNNING";
  const since = latest ? state.now - latest.at : 0;
  root.hidden = !health && !bake && !doc.bake_seconds;
  if (root.hidden) return;
  const rows = Object.entries((health && health.services) || {}).sort(([a], [b]) => a.localeCompare(b)).map(([name, h]) => {
    let stable = h.stable_seconds ? `window ${seconds(h.stable_seconds)}` : "";
    if (h.healthy_since && h.stable_seconds) {
      const held = state.now - Date.parse(h.healthy_since) / 1000;
      stable = `held ${seconds(held)} of ${seconds(h.stable_seconds)}` + (held < h.stable_seconds ? `, ${seconds(h.stable_seconds - held)} left` : ", stable");
    } else if (h.missing) stable = "group not seen at the last check";
    const ok = h.healthy >= h.target && h.target > 0;
    return el("tr", { "data-service": name },
      el("td", {}, name),
      el("td", { class: "count " + (ok ? "ok" : "short") }, `${h.healthy}/${h.target}`,
        el("meter", { min: 0, max: Math.max(1, h.target), value: Math.min(h.healthy, h.target), title: "healthy of the target" })),
      el("td", {}, `${h.launched} launched · ${h.in_service || 0} in service` + (h.terminating ? ` · ${h.terminating} terminating` : "")),
      el("td", {}, h.steps ? `step ${h.step}/${h.steps}` : ""),
      el("td", { class: "stable" }, stable));
  });
  const facts = [];
  if (health && running && !health.healthy && health.wait_seconds) facts.push(`next health check in ${seconds(health.wait_seconds - since)}` + (health.checks ? ` (${health.checks} made)` : ""));
  if (bake && bake.done) facts.push("baked");
  else if (bake) facts.push(`bake: ${seconds((bake.left_seconds || 0) - (running ? since : 0))} left` + (bake.standby && bake.standby.length ? `, ${bake.standby.length} previous group(s) standing by` : ""));
  else if (doc.bake_seconds) facts.push(`bake of ${seconds(doc.bake_seconds)} once healthy`);
  root.replaceChildren(
    el("h3", {}, "Health", el("span", { class: "muted" }, latest ? ` as of ${when(latest.at)}` : "")),
    rows.length ? el("table", { class: "health" },
      el("thead", {}, el("tr", {}, ["service", "healthy/target", "instances", "canary", "stability window"].map((c) => el("th", { scope: "col" }, c)))),
      el("tbody", {}, rows)) : el("p", { class: "muted" }, "No health check yet."),
    el("p", { id: "countdowns" }, facts.join(" · ")));
}

// latestAnalysis is the newest canary analysis a state document of the
// events carries (health.analysis), with when it was written: the one
// that rolled a release back stays shown once the execution has ended.
function latestAnalysis(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i], text = (ev.stateExitedEventDetails || {}).output || (ev.stateEnteredEventDetails || {}).input;
    if (!text || !text.includes('"analysis"')) continue;
    try {
      const doc = JSON.parse(text);
      if (doc && doc.health && doc.health.analysis) return { a: doc.health.analysis, at: ev.timestamp, doc };
    } catch (_) { /* not JSON */ }
  }
  return null;
}

// recordedAnalysis is the release's last canary analysis as the deployer
// recorded it (GET /_ferry/analysis, the ledger's record), or null: a
// judgement that failed is recorded, while the state keeps the check
// before it (the failing check ends in an error, which keeps no state).
async function recordedAnalysis(doc) {
  const q = new URLSearchParams({ project: doc.project_name || "", config: doc.config_name || "", release: doc.release_id || "" });
  const res = await fetch("/_ferry/analysis?" + q, { headers: { Accept: "application/json" } });
  return res.ok ? res.json() : null;
}

// showAnalysis shows the newest canary analysis of a deploy whose states
// carry one (the recorded one when there is one): the service judged
// worst with its score and class (pass, marginal, fail, nodata), the
// other services' scores, and each of its metrics' verdict, p-value,
// means and samples, as ferry follow prints them.
async function showAnalysis(events, x) {
  const root = document.getElementById("analysis");
  const latest = x.kind === "deploy" ? latestAnalysis(events) : null;
  root.hidden = !latest;
  if (!latest) return;
  const a = (await recordedAnalysis(latest.doc)) || latest.a, report = a.report || {};
  const others = Object.entries(a.scores || {}).filter(([svc]) => svc !== a.service)
    .sort(([p], [q]) => p.localeCompare(q)).map(([svc, score]) => `${svc} ${Math.round(score)}`);
  const head = report.class === "nodata" ? `${a.service}: nodata` : `${a.service}: score ${Math.round(report.score)}, ${report.class}`;
  const num = (v) => (typeof v === "number" ? Number(v.toPrecision(4)).toString() : "");
  const rows = (report.metrics || []).map((m) => el("tr", { "data-metric": m.name },
    el("td", {}, m.name),
    el("td", { class: "verdict v-" + m.verdict }, m.verdict),
    el("td", {}, m.verdict === "nodata" ? "" : Number(m.p_value.toPrecision(2)).toString()),
    el("td", {}, m.verdict === "nodata" ? "" : `${num(m.new_mean)} against ${num(m.previous_mean)}`),
    el("td", {}, `${m.new_samples} new · ${m.previous_samples} previous`)));
  root.dataset.class = report.class || "";
  root.replaceChildren(
    el("h3", {}, "Canary analysis" + (a.bake ? " (bake)" : ""), el("span", { class: "muted" }, ` judged ${when(Date.parse(a.at) / 1000)}`)),
    el("p", { class: "analysis-head c-" + report.class }, head + (others.length ? ` (${others.join(", ")})` : "")),
    el("table", { class: "health" },
      el("thead", {}, el("tr", {}, ["metric", "verdict", "p-value", "mean, new against previous", "samples"].map((c) => el("th", { scope: "col" }, c)))),
      el("tbody", {}, rows)));
}

// detailsOf is an event's details object (its *EventDetails field).
function detailsOf(ev) {
  for (const [k, v] of Object.entries(ev)) if (k.endsWith("EventDetails") && v && typeof v === "object") return v;
  return {};
}

// stateOfEvents names the state each event belongs to: the state last
// entered and not yet exited when it was recorded.
function stateOfEvents(events) {
  const of = new Map();
  let inside = null;
  for (const ev of events) {
    const en = ev.stateEnteredEventDetails, ex = ev.stateExitedEventDetails;
    if (en) inside = en.name;
    of.set(ev.id, inside);
    if (ex) inside = null;
  }
  return of;
}

function showHistory(events) {
  const body = document.querySelector("#history tbody");
  const stateOf = stateOfEvents(events);
  body.replaceChildren(...events.slice().reverse().map((ev) => {
    const open = el("button", { type: "button", class: "link", "data-event": ev.id }, ev.type);
    open.addEventListener("click", () => showDetail({ event: ev.id }));
    const d = detailsOf(ev);
    const summary = errorOf(ev) || (d.output !== undefined ? "output " + d.output : d.input !== undefined ? "input " + d.input : "");
    return el("tr", { "data-event": ev.id, "aria-current": isShown({ event: ev.id }) ? "true" : "false" },
      el("td", {}, ev.id), el("td", {}, when(ev.timestamp)), el("td", {}, open), el("td", {}, stateOf.get(ev.id) || ""),
      el("td", { class: errorOf(ev) ? "error" : "muted summary" }, summary.length > 200 ? summary.slice(0, 199) + "…" : summary));
  }));
}

// isShown says whether what (a {state} or an {event}) is in the detail.
function isShown(what) {
  const d = state.detail;
  return !!d && (what.event !== undefined ? d.event === what.event : d.state === what.state);
}

// pretty indents JSON text; other text is returned as it is.
function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (_) { return String(text); }
}

// showDetail shows what (a state, {state: name}, or an event, {event:
// id}) of the shown execution: an event's input, output, error, cause
// and parameters; a state's at its last visit (its entered event's input,
// its exited event's output, the error and cause of any failure while in
// it). null hides the detail.
function showDetail(what) {
  state.detail = what;
  const root = document.getElementById("detail");
  root.hidden = !what;
  if (!what) return;
  const events = state.events;
  const stateOf = stateOfEvents(events);
  let title, fields = [];
  if (what.event !== undefined) {
    const ev = events.find((e) => e.id === what.event);
    title = ev ? `Event ${ev.id}: ${ev.type}` + (stateOf.get(ev.id) ? ` (${stateOf.get(ev.id)})` : "") : `Event ${what.event}`;
    if (ev) fields = fieldsOf([ev]);
  } else {
    let last = -1;
    events.forEach((e, i) => { if (e.stateEnteredEventDetails && e.stateEnteredEventDetails.name === what.state) last = i; });
    title = `State ${what.state}` + (last < 0 ? ": not visited" : ` (entered at event ${events[last].id})`);
    if (last >= 0) fields = fieldsOf(events.slice(last).filter((e) => stateOf.get(e.id) === what.state));
  }
  document.getElementById("detail-title").textContent = title;
  document.getElementById("detail-fields").replaceChildren(...fields.flatMap(([k, v]) =>
    [el("dt", {}, k), el("dd", {}, el("pre", { class: k === "error" || k === "cause" ? "error" : "" }, pretty(v)))]));
  for (const g of document.querySelectorAll("#graph .state")) g.classList.toggle("shown", what.state === g.getAttribute("data-state"));
  for (const tr of document.querySelectorAll("#history tbody tr")) tr.setAttribute("aria-current", String(isShown({ event: Number(tr.getAttribute("data-event")) })));
}

// fieldsOf lists the input, output, error, cause and parameters the
// events carry, in that order, each once (the first event's).
function fieldsOf(events) {
  const out = new Map();
  for (const ev of events) {
    const d = detailsOf(ev);
    for (const k of ["input", "parameters", "output", "error", "cause"]) if (d[k] !== undefined && d[k] !== "" && !out.has(k)) out.set(k, d[k]);
  }
  return ["input", "parameters", "output", "error", "cause"].filter((k) => out.has(k)).map((k) => [k, out.get(k)]);
}

// kindOf tells what an execution's input asks of the state machine, as its
// first Choice (Query?) does: a plan, a drift query, a reconcile pass or a
// promotion by their top-level key; any other input is a release to deploy.
function kindOf(input) {
  if (!input || typeof input !== "object") return "deploy";
  if ("promotion" in input) return "promotion";
  if ("reconcile_pass" in input) return "reconcile";
  if ("plan" in input || "drift" in input) return "query";
  return "deploy";
}

// learnKinds reads the input of each execution not seen before
// (DescribeExecution), a few at a time.
async function learnKinds(executions) {
  const todo = executions.filter((x) => !state.inputs.has(x.executionArn));
  for (let i = 0; i < todo.length; i += 8) {
    await Promise.all(todo.slice(i, i + 8).map(async (x) => {
      const d = await sfn("DescribeExecution", { executionArn: x.executionArn });
      let input = null;
      try { input = JSON.parse(d.input || "null"); } catch (_) { /* not JSON: a release that failed Validate */ }
      state.inputs.set(x.executionArn, input);
    }));
  }
  for (const x of executions) x.kind = kindOf(state.inputs.get(x.executionArn));
}

// chosen is the execution to show: the pinned one, else the newest
// running deploy, else the newest deploy, else the newest execution.
function chosen() {
  if (state.pinned) return state.pinned;
  const newest = (xs) => xs.reduce((a, b) => (!a || b.startDate > a.startDate ? b : a), null);
  const deploys = state.executions.filter((x) => x.kind === "deploy");
  const x = newest(deploys.filter((d) => d.status === "RUNNING")) || newest(deploys) || newest(state.executions);
  return x ? x.executionArn : null;
}

// pinnedByURL reads the execution the URL names: #execution=ARN.
function pinnedByURL() {
  const v = new URLSearchParams(location.hash.replace(/^#/, "")).get("execution");
  return v || null;
}

// pin shows arn until the URL changes (null: follow the newest deploy).
function pin(arn) {
  if (arn) location.hash = "execution=" + encodeURIComponent(arn);
  else history.replaceState(null, "", location.pathname + location.search);
  state.pinned = pinnedByURL();
  tick();
}

// lists are the execution lists of the page, by kind, each paged.
const lists = [
  { id: "deploys", title: "Deploys", kinds: ["deploy"], page: 0 },
  { id: "promotions", title: "Promotions", kinds: ["promotion"], page: 0 },
  { id: "queries", title: "Reconcile passes and queries", kinds: ["reconcile", "query"], page: 0 },
];
const pageSize = 10;

// listSection makes a list's section: its title and count, its page of
// executions, and buttons to the newer and older pages.
function listSection(list) {
  const what = list.title.toLowerCase();
  const newer = el("button", { type: "button", class: "newer", "aria-label": "newer " + what }, "‹ newer");
  const older = el("button", { type: "button", class: "older", "aria-label": "older " + what }, "older ›");
  newer.addEventListener("click", () => { list.page--; showList(list); });
  older.addEventListener("click", () => { list.page++; showList(list); });
  return el("section", { id: list.id, class: "list", "aria-labelledby": list.id + "-title" },
    el("h3", { id: list.id + "-title" }, list.title + " ", el("span", { class: "count muted" })),
    el("ul", { class: "executions" }),
    el("p", { class: "none muted" }, "None."),
    el("p", { class: "pager", hidden: true }, newer, " ", el("span", { class: "range muted" }), " ", older));
}

function executionButton(x) {
  const button = el("button", { type: "button", "data-arn": x.executionArn, "aria-current": x.executionArn === state.selected ? "true" : "false" },
    el("span", { class: "status " + x.status }, x.status), " ", duration(x.startDate, x.stopDate || state.now),
    el("span", { class: "name" }, x.name), el("span", { class: "muted" }, when(x.startDate)));
  button.addEventListener("click", () => pin(x.executionArn));
  return el("li", {}, button);
}

// showList shows one page of a kind's executions, newest first, and
// pager buttons to the newer and older pages.
function showList(list) {
  const root = document.getElementById(list.id);
  const xs = state.executions.filter((x) => list.kinds.includes(x.kind)).sort((a, b) => b.startDate - a.startDate);
  const pages = Math.max(1, Math.ceil(xs.length / pageSize));
  list.page = Math.max(0, Math.min(list.page, pages - 1));
  const from = list.page * pageSize, page = xs.slice(from, from + pageSize);
  root.setAttribute("data-total", xs.length);
  root.querySelector(".count").textContent = xs.length ? String(xs.length) : "";
  root.querySelector("ul").replaceChildren(...page.map(executionButton));
  root.querySelector(".none").hidden = xs.length > 0;
  const pager = root.querySelector(".pager");
  pager.hidden = pages < 2;
  pager.querySelector(".range").textContent = `${from + 1}–${from + page.length} of ${xs.length}`;
  pager.querySelector(".newer").disabled = list.page === 0;
  pager.querySelector(".older").disabled = list.page >= pages - 1;
}

function showExecutions() {
  document.getElementById("no-executions").hidden = state.executions.length > 0;
  for (const list of lists) showList(list);
}

// readExecutions reads the executions list page by page (nextToken),
// newest first. After the first full read, it stops at the first page
// with nothing new (only executions already seen, and ended) once it has
// seen again every execution that was running (whose status may have
// changed).
async function readExecutions() {
  const running = new Set([...state.byArn.values()].filter((x) => x.status === "RUNNING").map((x) => x.executionArn));
  let token;
  do {
    const out = await sfn("ListExecutions", { stateMachineArn: state.machine, maxResults: 100, nextToken: token });
    let fresh = false;
    for (const x of out.executions || []) {
      const known = state.byArn.get(x.executionArn);
      fresh = fresh || !known || known.status !== x.status || x.status === "RUNNING";
      state.byArn.set(x.executionArn, Object.assign(known || {}, x));
      running.delete(x.executionArn);
    }
    token = out.nextToken;
    if (state.complete && !fresh && running.size === 0) break;
  } while (token);
  state.complete = true;
  state.executions = [...state.byArn.values()];
}

// historyOf is the execution's whole history, oldest first, as the
// region's history view serves it: GetExecutionHistory's events with the
// state documents' packed parts unpacked, as people read them.
async function historyOf(arn) {
  return (await getJSON("/_ferry/history?execution=" + encodeURIComponent(arn))).events;
}

async function showExecution() {
  const x = state.executions.find((e) => e.executionArn === state.selected);
  document.getElementById("follow").hidden = !state.pinned;
  if (!x) {
    document.title = appTitle;
    if (state.pinned) document.getElementById("execution-title").textContent = `No execution ${state.pinned} in this region`;
    return;
  }
  document.getElementById("execution-title").textContent = x.name;
  document.title = `${x.name} · ${x.status} · ${appTitle}`;
  const status = document.getElementById("execution-status");
  status.replaceChildren(el("span", { class: "status " + x.status }, x.status), ` started ${when(x.startDate)}`,
    x.stopDate ? `, ended ${when(x.stopDate)}` : "", ` (${duration(x.startDate, x.stopDate || state.now)})`);
  const events = await historyOf(x.executionArn);
  if (state.eventsOf !== x.executionArn) state.detail = null;
  state.events = events;
  state.eventsOf = x.executionArn;
  showGraph(x);
  paintGraph(progressOf(events, x.status, state.definition.States), x.status);
  showHealth(events, x);
  await showAnalysis(events, x);
  showHistory(events);
  showDetail(state.detail);
}

// registration is a load balancer's or target group's row: its healthy
// instances of those registered, each instance's state, and the
// connections it cut (went dark: from a healthy instance to none while
// still claimed, or a gap between a withdrawal and serving again).
function registration(kind, r) {
  const states = Object.entries(r.instances || {});
  const healthy = states.filter(([, s]) => s === "healthy").length;
  const cut = r.cut_connections || 0;
  return el("tr", { "data-registration": r.name },
    el("td", { class: "muted", title: kind === "ELB" ? "classic load balancer" : "target group" }, kind), el("td", { class: "name" }, r.name),
    el("td", { class: "count" }, `${healthy}/${states.length}`),
    el("td", {}, states.map(([id, s]) => el("span", { class: "h-" + s }, `${id}=${s} `))),
    el("td", { class: cut ? "cut" : "muted" }, `${cut} cut` + (r.went_dark ? ` (${r.went_dark} went dark)` : "")));
}

function showWorld(world) {
  const root = document.getElementById("world");
  const parts = [];
  for (const a of world.accounts || []) {
    parts.push(el("h3", {}, `${a.account} ${a.region}`));
    for (const g of a.groups || []) {
      const rows = (g.instances || []).map((i) => el("tr", {},
        el("td", {}, i.id), el("td", { class: "lc-" + i.lifecycle }, i.lifecycle), el("td", {}, i.health), el("td", {}, i.zone),
        el("td", {}, Object.entries(i.lb || {}).map(([k, v]) => el("span", { class: "h-" + v, title: k }, v + " ")))));
      parts.push(el("div", { class: "group" + (g.status ? " deleting" : ""), "data-group": g.name },
        el("h4", {}, g.name),
        el("p", { class: "muted" }, `release ${g.tags && g.tags.ReleaseID || "?"} · desired ${g.desired} (min ${g.min}, max ${g.max})`,
          g.status ? ` · ${g.status}` : "", g.suspended && g.suspended.length ? ` · suspended ${g.suspended.join(", ")}` : ""),
        rows.length ? el("table", { class: "instances" },
          el("thead", {}, el("tr", {}, ["instance", "lifecycle", "health", "zone", "load balancers"].map((h) => el("th", { scope: "col" }, h)))),
          el("tbody", {}, rows)) : el("p", { class: "muted" }, "no instances")));
    }
    const regs = [...(a.load_balancers || []).map((r) => ["ELB", r]), ...(a.target_groups || []).map((r) => ["TG", r])];
    if (regs.length) {
      parts.push(el("h4", {}, "Load balancers"));
      parts.push(el("table", { class: "registrations" },
        el("thead", {}, el("tr", {}, ["", "name", "healthy", "instances", "cut connections"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, regs.map(([kind, r]) => registration(kind, r)))));
    }
    if ((a.alarms || []).length) {
      parts.push(el("h4", {}, "Alarms"));
      parts.push(el("table", {}, el("tbody", {}, a.alarms.map((al) => el("tr", {}, el("td", {}, al.name), el("td", {}, al.state))))));
    }
  }
  if (!parts.length) parts.push(el("p", { class: "muted" }, "Nothing deployed yet."));
  root.replaceChildren(...parts);
}

async function refresh() {
  try {
    const info = await getJSON("/_ferry/info");
    state.now = Date.parse(info.now) / 1000 || Date.now() / 1000;
    document.getElementById("region").textContent =
      `account ${info.account || "?"} · ${info.region || "?"} · bucket ${info.bucket || "?"} · region time ${when(state.now)}`;
    if (!state.machine) {
      const machines = await sfn("ListStateMachines", {});
      if (!machines.stateMachines || !machines.stateMachines.length) return;
      state.machine = machines.stateMachines[0].stateMachineArn;
      const d = await sfn("DescribeStateMachine", { stateMachineArn: state.machine });
      state.definition = JSON.parse(d.definition);
    }
    await readExecutions();
    await learnKinds(state.executions);
    state.selected = chosen();
    showExecutions();
    await showExecution();
    showWorld(await getJSON("/_ferry/world"));
    document.body.setAttribute("data-refreshed", String(Date.now()));
  } catch (err) {
    document.getElementById("region").textContent = "cannot reach the region: " + err.message;
  }
}

let busy = false;
async function tick() {
  if (busy || document.visibilityState !== "visible") return;
  busy = true;
  try { await refresh(); } finally { busy = false; }
}

document.addEventListener("DOMContentLoaded", () => {
  state.pinned = pinnedByURL();
  document.getElementById("lists").replaceChildren(...lists.map(listSection));
  window.addEventListener("hashchange", () => { state.pinned = pinnedByURL(); tick(); });
  document.getElementById("follow").addEventListener("click", () => pin(null));
  document.getElementById("detail-close").addEventListener("click", () => showDetail(null));
  tick();
  setInterval(tick, refreshMs);
});

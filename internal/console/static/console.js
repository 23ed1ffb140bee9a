// ferry's local console. It reads what any client reads: the Step
// Functions API of the local region (POST / with X-Amz-Target) and its
// read-only world view (GET /_ferry/world), every second while visible.
// Names from the data are always inserted as text, never as HTML.
"use strict";

const refreshMs = 1000;
// now is the region's clock (it may be virtual), in epoch seconds.
// pinned is the execution the URL names (#execution=ARN), if any: shown
// until the URL changes; else the console follows the newest running
// deploy (follow). inputs caches each execution's input (it never changes).
const state = { machine: null, definition: null, layout: null, selected: null, pinned: null,
  executions: [], byArn: new Map(), complete: false, inputs: new Map(), now: 0 };
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

// layoutOf places every state of a definition in layers: a state's layer
// is its distance from StartAt along success edges first, then catch
// edges; each layer is a row, its states spread across it.
function layoutOf(def) {
  const layer = new Map([[def.StartAt, 0]]);
  const bfs = (starts, kinds) => {
    const q = starts.slice();
    while (q.length) {
      const name = q.shift();
      const st = def.States[name];
      if (!st) continue;
      for (const e of edges(st)) {
        if (!kinds.includes(e.kind) || layer.has(e.to)) continue;
        layer.set(e.to, layer.get(name) + 1);
        q.push(e.to);
      }
    }
  };
  bfs([def.StartAt], ["next"]);
  bfs([...layer.keys()], ["next", "catch"]);
  for (const name of Object.keys(def.States)) if (!layer.has(name)) layer.set(name, layer.size);
  const rows = [];
  for (const [name, l] of layer) (rows[l] = rows[l] || []).push(name);
  const w = 150, h = 30, gapX = 20, gapY = 26;
  const width = Math.max(...rows.filter(Boolean).map((r) => r.length)) * (w + gapX) + gapX;
  const pos = new Map();
  rows.filter(Boolean).forEach((names, y) => {
    const offset = (width - names.length * (w + gapX) + gapX) / 2;
    names.forEach((name, x) => pos.set(name, { x: offset + x * (w + gapX), y: gapY + y * (h + gapY), w, h }));
  });
  return { pos, width, height: gapY + rows.filter(Boolean).length * (h + gapY) };
}

function drawGraph(def, layout) {
  const svg = document.getElementById("graph");
  svg.replaceChildren();
  svg.setAttribute("width", layout.width);
  svg.setAttribute("height", layout.height);
  svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  const lines = el("g", { class: "edges" });
  const nodes = el("g", { class: "states" });
  for (const [name, st] of Object.entries(def.States)) {
    const a = layout.pos.get(name);
    for (const e of edges(st)) {
      const b = layout.pos.get(e.to);
      if (!b) continue;
      const x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y;
      const d = y2 > y1 ? `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`
        : `M${x1},${a.y} C${x1 + 60},${a.y - 40} ${x2 + 60},${y2 + b.h + 40} ${x2},${b.y + b.h}`;
      lines.append(el("path", { class: "edge " + e.kind, d }));
    }
    const kind = st.Type === "Choice" ? " choice" : "";
    nodes.append(el("g", { class: "state" + kind, "data-state": name, "data-type": st.Type },
      el("title", {}, `${name} (${st.Type})`),
      el("rect", { x: a.x, y: a.y, width: a.w, height: a.h }),
      el("text", { x: a.x + a.w / 2, y: a.y + a.h / 2 }, name.length > 22 ? name.slice(0, 21) + "…" : name)));
  }
  svg.append(lines, nodes);
}

// progressOf reads an execution's history: the states it visited, the
// one it is in (running), and how it ended.
function progressOf(events, status) {
  const visited = new Set();
  let current = null, lastEntered = null;
  for (const ev of events) {
    const entered = ev.stateEnteredEventDetails, exited = ev.stateExitedEventDetails;
    if (entered) { visited.add(entered.name); current = entered.name; lastEntered = entered.name; }
    if (exited && current === exited.name) current = exited.name;
  }
  return { visited, current: status === "RUNNING" ? current : null, end: status === "RUNNING" ? null : lastEntered };
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
}

function errorOf(ev) {
  for (const k of Object.keys(ev)) {
    const d = ev[k];
    if (d && typeof d === "object" && (d.error || d.cause)) {
      let cause = d.cause || "";
      try { const c = JSON.parse(cause); cause = c.errorMessage || cause; } catch (_) { /* plain text */ }
      return [d.error, cause].filter(Boolean).join(": ");
    }
  }
  return "";
}

function showHistory(events) {
  const body = document.querySelector("#history tbody");
  body.replaceChildren(...events.slice().reverse().map((ev) => {
    const d = ev.stateEnteredEventDetails || ev.stateExitedEventDetails;
    return el("tr", {}, el("td", {}, ev.id), el("td", {}, when(ev.timestamp)), el("td", {}, ev.type),
      el("td", {}, d ? d.name : ""), el("td", { class: "error" }, errorOf(ev)));
  }));
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

// pinned reads the execution the URL names: #execution=ARN.
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
  { id: "deploys", kinds: ["deploy"] },
  { id: "promotions", kinds: ["promotion"] },
  { id: "queries", kinds: ["reconcile", "query"] },
];
const pageSize = 10;

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
  list.page = Math.min(list.page || 0, pages - 1);
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
// with nothing new: only executions already seen, ended, and older than
// every one that was running (whose status may have changed).
async function readExecutions() {
  const running = [...state.byArn.values()].filter((x) => x.status === "RUNNING").map((x) => x.startDate);
  const oldestRunning = Math.min(Infinity, ...running);
  let token;
  do {
    const out = await sfn("ListExecutions", { stateMachineArn: state.machine, maxResults: 100, nextToken: token });
    let fresh = false;
    for (const x of out.executions || []) {
      const known = state.byArn.get(x.executionArn);
      fresh = fresh || !known || known.status !== x.status || x.status === "RUNNING";
      state.byArn.set(x.executionArn, Object.assign(known || {}, x));
    }
    token = out.nextToken;
    const last = (out.executions || []).at(-1);
    if (state.complete && !fresh && (!last || last.startDate <= oldestRunning)) break;
  } while (token);
  state.complete = true;
  state.executions = [...state.byArn.values()];
}

async function historyOf(arn) {
  const events = [];
  let token;
  do {
    const out = await sfn("GetExecutionHistory", { executionArn: arn, maxResults: 1000, nextToken: token });
    events.push(...out.events);
    token = out.nextToken;
  } while (token);
  return events;
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
  paintGraph(progressOf(events, x.status), x.status);
  showHistory(events);
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
    const regs = [...(a.load_balancers || []).map((r) => ["load balancer", r]), ...(a.target_groups || []).map((r) => ["target group", r])];
    if (regs.length) {
      parts.push(el("h4", {}, "Registrations"));
      parts.push(el("table", {}, el("tbody", {}, regs.map(([kind, r]) => el("tr", { "data-registration": r.name },
        el("td", {}, kind), el("td", {}, r.name),
        el("td", {}, Object.entries(r.instances || {}).map(([id, s]) => el("span", { class: "h-" + s }, `${id}=${s} `))),
        el("td", { class: r.cut_connections ? "cut" : "muted" }, r.cut_connections ? `${r.cut_connections} cut` : "0 cut"))))));
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
      state.layout = layoutOf(state.definition);
      drawGraph(state.definition, state.layout);
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
  for (const list of lists) {
    const root = document.getElementById(list.id);
    root.querySelector(".newer").addEventListener("click", () => { list.page--; showList(list); });
    root.querySelector(".older").addEventListener("click", () => { list.page++; showList(list); });
  }
  window.addEventListener("hashchange", () => { state.pinned = pinnedByURL(); tick(); });
  document.getElementById("follow").addEventListener("click", () => pin(null));
  tick();
  setInterval(tick, refreshMs);
});

// idgen web: every number shown comes from the server (the library's Layout), as text.
"use strict";
const $ = (id) => document.getElementById(id);
let layoutText = "twitter";
let layoutInfo = null;

// This run's token (idgen web prints it in the URL, ?token=…): kept for this tab only, taken out
// of the address bar, and sent with every request (the operator routes need it).
const token = (() => {
  const params = new URLSearchParams(location.search);
  const given = params.get("token");
  if (given) {
    sessionStorage.setItem("idgen-token", given);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  return sessionStorage.getItem("idgen-token") || "";
})();

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (token) init.headers["x-idgen-token"] = token;
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const json = await res.json();
  return { ok: res.ok, status: res.status, json };
}

function showView(name) {
  for (const b of document.querySelectorAll(".tab")) {
    if (b.dataset.view === name) b.setAttribute("aria-current", "page");
    else b.removeAttribute("aria-current");
  }
  for (const v of ["compose", "inspect", "operator"]) $("view-" + v).hidden = v !== name;
}

// The input an error belongs to: "node.datacenter" → #node-datacenter, "text" →
// #inspect-text, "layout" → the custom spec or the select.
function fieldOf(input) {
  if (input === "text") return $("inspect-text");
  if (input === "layout") return $("layout").value === "custom" ? $("custom-spec") : $("layout");
  return $(input);
}

function setError(input, message) {
  const box = $("err-" + input);
  const field = fieldOf(input);
  if (box) box.textContent = message || "";
  if (field) {
    if (message) field.setAttribute("aria-invalid", "true");
    else field.removeAttribute("aria-invalid");
  }
}

function clearErrors(form) {
  for (const e of form.querySelectorAll(".error")) e.textContent = "";
  for (const i of form.querySelectorAll("input")) i.removeAttribute("aria-invalid");
  setError("layout", "");
}

// The errors of a 422 under their inputs ("node.datacenter" → #err-node-datacenter), each
// in its live region; focus goes to the first refused input, in the page's order.
function showErrors(errors, other) {
  const invalid = [];
  for (const e of errors) {
    const input = e.input.startsWith("node.") ? "node-" + e.input.slice(5) : e.input;
    if ($("err-" + input)) {
      setError(input, e.message);
      const field = fieldOf(input);
      if (field) invalid.push(field);
    } else if (other) other.textContent = e.message;
  }
  invalid.sort((a, b) => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
  if (invalid.length > 0) invalid[0].focus();
}

function drawBits(box, fields) {
  box.replaceChildren();
  const sign = el("div", { class: "field sign", role: "group", "aria-label": "sign bit, 1 bit, value 0" },
    el("div", { class: "name" }, "sign"), el("div", {}, "1 bit · 0"), el("div", { class: "binary" }, "0"));
  box.append(sign);
  let n = 0;
  for (const f of fields) {
    const cls = "field " + f.kind + (f.kind === "node" ? " n" + (n++) : "");
    const label = `${f.name}, ${f.bits} bits, value ${f.value}`;
    box.append(el("div", { class: cls, role: "group", "aria-label": label, "data-name": f.name },
      el("div", { class: "name" }, f.name),
      el("div", {}, `${f.bits} bits · ${f.value}`),
      el("div", { class: "binary" }, f.binary)));
  }
}

async function loadLayout() {
  const r = await api("GET", "/api/layout?layout=" + encodeURIComponent(layoutText));
  if (!r.ok) { showErrors(r.json.errors); return; }
  setError("layout", "");
  layoutInfo = r.json;
  const l = r.json;
  $("layout-summary").textContent =
    `${l.name}: epoch ${l.epoch_utc} (${l.epoch_ms} ms), ${l.unit_ms} ms ticks, ` +
    `${l.timestamp_bits} timestamp bits, lasts until ${l.last_utc}; spec ${l.spec}`;
  const box = $("node-inputs");
  const old = {};
  for (const i of box.querySelectorAll("input")) old[i.dataset.name] = i.value;
  box.replaceChildren();
  for (const f of l.node) {
    const id = "node-" + f.name;
    const input = el("input", { id, "data-name": f.name, inputmode: "numeric", "aria-describedby": "err-" + id });
    input.value = old[f.name] ?? "0";
    // Labelled with the library's name of the field, as its errors and its bits are.
    box.append(el("div", { class: "row" },
      el("label", { for: id }, f.name, el("span", { class: "hint" }, `0–${f.max}, ${f.bits} bits`)), input,
      el("p", { class: "error", id: "err-" + id, "aria-live": "polite" })));
  }
  $("label-sequence").replaceChildren("sequence",
    el("span", { class: "hint" }, `0–${l.max_sequence}, ${l.sequence_bits} bits`));
}

async function compose(ev) {
  ev.preventDefault();
  const out = $("compose-out");
  out.dataset.status = "pending";
  clearErrors($("compose-form"));
  $("compose-error").textContent = "";
  const node = {};
  for (const i of $("node-inputs").querySelectorAll("input")) node[i.dataset.name] = i.value;
  const r = await api("POST", "/api/compose",
    { layout: layoutText, time: $("time").value, node, sequence: $("sequence").value });
  if (!r.ok) {
    $("compose-result").hidden = true;
    $("id").textContent = "";
    showErrors(r.json.errors, $("compose-error"));
    out.dataset.status = "error";
    return;
  }
  const v = r.json;
  $("id").textContent = v.id;
  $("delta-formula").textContent = v.delta_formula;
  $("formula").textContent = v.formula;
  drawBits($("compose-bits"), v.fields);
  $("bit-groups").textContent = v.bit_groups;
  $("compose-result").hidden = false;
  out.dataset.status = "ok";
}

function row(tbody, name, value) {
  tbody.append(el("tr", {}, el("th", { scope: "row" }, name), el("td", { "data-row": name }, value ?? "")));
}

function browserZone(unixMs) {
  // unix_ms is below 2^53, so Number() is exact: formatting only, no arithmetic.
  const d = new Date(Number(unixMs));
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return d.toLocaleString(undefined, { timeZoneName: "short" }) + ` (${zone})`;
}

async function inspect(ev) {
  ev.preventDefault();
  const out = $("inspect-out");
  out.dataset.status = "pending";
  clearErrors($("inspect-form"));
  const r = await api("POST", "/api/inspect", { layout: layoutText, text: $("inspect-text").value });
  if (!r.ok) {
    $("inspect-result").hidden = true;
    showErrors(r.json.errors, $("err-text"));
    out.dataset.status = "error";
    return;
  }
  const v = r.json;
  const tbody = $("inspect-table").querySelector("tbody");
  tbody.replaceChildren();
  $("inspect-bits").replaceChildren();
  if (v.kind === "snowflake") {
    $("inspect-caption").textContent = `Snowflake ID ${v.id}`;
    row(tbody, "id", v.id);
    row(tbody, "utc", v.utc);
    row(tbody, "browser time", browserZone(v.unix_ms));
    row(tbody, "unix ms", v.unix_ms);
    for (const f of v.fields) if (f.kind !== "unused") row(tbody, f.name, f.value);
    row(tbody, "node", v.node);
    row(tbody, "layout", v.layout.spec);
    row(tbody, "layout lasts until", `${v.layout.last_utc} (${v.layout.last_unix_ms} ms)`);
    drawBits($("inspect-bits"), v.fields);
  } else {
    $("inspect-caption").textContent = v.kind === "public_id" ? `Public ID ${v.public_id}` : `UUID ${v.uuid}`;
    if (v.kind === "public_id") row(tbody, "prefix", v.prefix === "" ? "(none)" : v.prefix);
    row(tbody, "uuid", v.uuid);
    row(tbody, "version", `${v.version} (${v.version_name})`);
    if (v.unix_ms !== undefined) {
      row(tbody, "utc", v.utc);
      row(tbody, "browser time", browserZone(v.unix_ms));
      row(tbody, "unix ms", String(v.unix_ms));
    }
  }
  $("inspect-result").hidden = false;
  out.dataset.status = "ok";
}

// ---- operator view
async function refreshLeases() {
  const r = await api("GET", "/api/leases");
  if (!r.ok) { $("operator-error").textContent = r.json.errors.map((e) => e.message).join("; "); return; }
  $("operator-error").textContent = "";
  const layout = r.json.layout;
  const warning = layout.differs
    ? `This namespace recorded another layout than this page's --layout ${layout.server}: ` +
      `${layout.recorded}. Its generators refuse any other layout; give idgen web ` +
      `--layout ${layout.recorded_name || "custom:…"} to read its IDs.`
    : "";
  if ($("layout-warning").textContent !== warning) $("layout-warning").textContent = warning;
  const tbody = $("lease-table").querySelector("tbody");
  tbody.replaceChildren();
  for (const l of r.json.leases) {
    const free = el("button", { type: "button", "data-node": l.node }, `Free node ${l.node}`);
    free.addEventListener("click", () => freeNode(l));
    tbody.append(el("tr", { "data-node": l.node },
      el("td", {}, l.node), el("td", { class: "holder" }, l.holder), el("td", {}, l.expires_in),
      el("td", {}, l.last_timestamp), el("td", { class: "layout" }, layout.shown), el("td", {}, free)));
  }
  const counters = $("counter-table").querySelector("tbody");
  counters.replaceChildren();
  for (const c of r.json.counters) {
    counters.append(el("tr", { "data-counter": c.name },
      el("td", {}, c.name), el("td", {}, c.kind), el("td", { class: "value" }, c.next_value ?? "(missing)")));
  }
  $("counter-table").hidden = r.json.counters.length === 0;
  $("operator-status").textContent = `${r.json.leases.length} held node IDs, read at ${r.json.read_at}`;
  $("lease-table").dataset.refreshed = String(Number($("lease-table").dataset.refreshed || "0") + 1);
}

// Asks on the page (a <dialog>): a title, two lines, and the button that goes ahead.
// Resolves to whether it was pressed.
function ask(title, what, risk, go) {
  const d = $("free-dialog");
  $("free-title").textContent = title;
  $("free-what").textContent = what;
  $("free-risk").textContent = risk;
  $("free-confirm").textContent = go;
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "free"), { once: true });
    d.showModal();
    $("free-cancel").focus();
  });
}

function say(text, warn) {
  const s = $("free-status");
  s.textContent = text;
  s.classList.toggle("warning", Boolean(warn));
}

// Frees the row as the table showed it: the holder shown goes with the request, so a row
// that changed meanwhile (another holder, released) is refused and said so.
async function freeNode(l) {
  const state = l.live ? `its lease runs another ${l.expires_in}` : `its lease has ${l.expires_in}`;
  const go = await ask(`Free node ${l.node}?`,
    `Held by ${l.holder}; ${state}.`,
    l.live
      ? "A live lease is freed only if you then confirm freeing it by force."
      : `${l.holder} can no longer renew it; the next process to claim node ${l.node} takes it over.`,
    `Free node ${l.node}`);
  if (!go) { say(`Nothing was freed: node ${l.node} is still held by ${l.holder}.`); return; }
  let r = await api("POST", "/api/leases/free", { node: String(l.node), holder: l.holder, force: false });
  if (r.status === 409 && r.json.reason === "live") {
    const force = await ask(`Free node ${l.node} by force?`,
      `${r.json.holder} may still be issuing IDs with node ${l.node}: its lease runs another ${r.json.remaining}.`,
      `Forcing ends that lease now: until ${r.json.holder}'s next renewal fails, it and the next holder may both issue with node ${l.node}.`,
      "Free by force");
    if (!force) {
      say(`Nothing was freed: ${r.json.errors[0].message.split(": ")[0]}, and it was not forced.`);
      refreshLeases();
      return;
    }
    r = await api("POST", "/api/leases/free", { node: String(l.node), holder: l.holder, force: true });
  }
  if (r.ok) say(r.json.message);
  else if (r.json.reason === "changed") {
    say(`Node ${l.node} changed after the table was read (it showed ${l.holder}): ` +
      `${r.json.errors[0].message}. The table now shows it as it is.`, true);
  } else say(r.json.errors.map((e) => e.message).join("; "), true);
  refreshLeases();
}

async function start() {
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showView(b.dataset.view));
  $("layout").addEventListener("change", () => {
    const custom = $("layout").value === "custom";
    $("custom-box").hidden = !custom;
    layoutText = custom ? $("custom-spec").value : $("layout").value;
    loadLayout();
  });
  $("custom-apply").addEventListener("click", () => { layoutText = $("custom-spec").value; loadLayout(); });
  $("compose-form").addEventListener("submit", compose);
  $("inspect-form").addEventListener("submit", inspect);
  const config = await api("GET", "/api/config");
  const start = config.json.layout || "twitter";
  if ([...$("layout").options].some((o) => o.value === start && start !== "custom")) {
    $("layout").value = start;
  } else {
    $("layout").value = "custom";
    $("custom-box").hidden = false;
    $("custom-spec").value = start;
  }
  layoutText = start;
  await loadLayout();
  if (config.json.operator) {
    $("tab-operator").hidden = false;
    $("operator-store").textContent = config.json.store;
    refreshLeases();
    setInterval(refreshLeases, config.json.refresh_ms);
  }
  document.body.dataset.ready = "true";
}
start();

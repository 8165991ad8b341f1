// What every page uses: elements built from text only (never HTML: names, configurations and
// errors come from users' files), numbers as the CLI prints them, the view's state in the URL,
// the API, and downloads.

/** An element with attributes and children; strings become text nodes, never markup. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  return add(node, ...children);
}

/** Appends `children` (nested arrays flattened; null, undefined and false skipped; strings as text). */
export function add(node, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/** Replaces the children of `node` with `children`, as add() appends them. */
export function put(node, ...children) {
  return add(clear(node), ...children);
}

/** 0.8522, 1.23e-05: four significant digits, as `laconic runs` prints. */
export function number(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "-";
  if (Number.isInteger(value) && Math.abs(value) < 1e9) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) return value.toExponential(digits - 1);
  return Number(value.toPrecision(digits)).toString();
}

export function bytes(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "-";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let v = value, i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return (i === 0 ? String(v) : v.toPrecision(3)) + " " + units[i];
}

export function seconds(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "-";
  if (value < 1) return (value * 1000).toPrecision(3) + " ms";
  if (value < 120) return value.toPrecision(3) + " s";
  return (value / 60).toPrecision(3) + " min";
}

/** The view's state: the hash "#/page/arg?key=value&...". */
export function route() {
  const hash = decodeURIComponent(location.hash.slice(1) || "/runs");
  const [path, query = ""] = hash.split("?");
  const parts = path.split("/").filter(Boolean);
  return { page: parts[0] || "runs", arg: parts.slice(1).join("/"), params: new URLSearchParams(query) };
}

/** Rewrites the hash's parameters without a new history entry or a re-render. */
export function setParams(params) {
  const { page, arg } = route();
  const query = params.toString();
  const hash = "#/" + page + (arg ? "/" + encodeURIComponent(arg) : "") + (query ? "?" + query : "");
  history.replaceState(null, "", hash);
}

export function link(page, arg, params) {
  const query = params ? new URLSearchParams(params).toString() : "";
  return "#/" + page + (arg !== undefined && arg !== "" ? "/" + encodeURIComponent(arg) : "") + (query ? "?" + query : "");
}

export async function api(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

/** Offers `text` as a file called `name`. */
export function download(name, text, type = "text/csv") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function csv(header, rows) {
  const cell = (v) => {
    const s = v === null || v === undefined ? "" : String(v);
    return /[",\n]/.test(s) ? '"' + s.replaceAll('"', '""') + '"' : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(",")).join("\n") + "\n";
}

/** A command line the user can run to get the same numbers; shell-quoted. */
export function command(...words) {
  const quote = (w) => {
    if (/^[A-Za-z0-9_./:=,+-]+$/.test(w)) return w;
    if (!w.includes("'")) return "'" + w + "'";
    if (!/[$`"\\!]/.test(w)) return '"' + w + '"';  // SQL with its quotes, still one word
    return "'" + w.replaceAll("'", "'\\''") + "'";
  };
  return el("div", { class: "command", title: "the same numbers from the command line" }, words.map(quote).join(" "));
}

/** Flattens a configuration object to "a.b" -> value pairs. */
export function flatten(object, prefix = "", out = {}) {
  for (const [key, value] of Object.entries(object || {})) {
    const path = prefix ? prefix + "." + key : key;
    if (value && typeof value === "object" && !Array.isArray(value)) flatten(value, path, out);
    else out[path] = Array.isArray(value) ? JSON.stringify(value) : value;
  }
  return out;
}

// Hearing of commits: the server's event stream announces each one (it watches the database's
// data_version); where a stream cannot be had, the page asks every second. Pages subscribe to
// refresh what they show, fetching only what is new.
import { api } from "./util.js";

const listeners = new Set();
let changes = null;
let mode = "connecting";

function show(state) {
  mode = state;
  const badge = document.getElementById("live");
  if (!badge) return;
  badge.className = "live " + (state === "stream" ? "on" : state === "polling" ? "polling" : "");
  badge.textContent = state === "stream" ? "live" : state === "polling" ? "live (polling)" : state;
}

function heard(count) {
  if (changes !== null && count !== changes) for (const listener of listeners) listener();
  changes = count;
}

function poll() {
  show("polling");
  const tick = async () => {
    try {
      heard((await api("/api/changes")).changes);
    } catch {
      show("server gone");
    }
  };
  tick();
  setInterval(tick, 1000);
}

/** Whether the page was opened for a capture (`?static=1`): no live stream, no polling. */
export function staticMode() {
  return new URLSearchParams(location.search).get("static") === "1";
}

export function startLive() {
  // A capture (chromium --headless --screenshot --virtual-time-budget) waits for the network to
  // go quiet: an open event stream never lets it.
  if (staticMode()) return show("static: not live");
  if (!("EventSource" in window) || new URLSearchParams(location.search).has("poll")) return poll();
  const stream = new EventSource("/api/events");
  let opened = false;
  stream.addEventListener("change", (event) => {
    opened = true;
    show("stream");
    heard(Number(event.data));
  });
  stream.onerror = () => {
    if (!opened) {  // refused (too many streams) or not supported on the way: poll instead
      stream.close();
      poll();
    }
  };
}

/**
 * Calls `refresh` after every commit another process makes, until the returned function; one
 * call at a time: commits heard while it runs bring one more call after it.
 */
export function onChange(refresh) {
  let running = false, again = false;
  const call = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await refresh();
    } catch (error) {
      console.warn("refresh failed:", error);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      call();
    }
  };
  listeners.add(call);
  return () => listeners.delete(call);
}

export function liveMode() {
  return mode;
}

// The page: one view at a time, chosen by the URL's hash, whose parameters hold the view's whole
// state (filters, selection, axes, zoom), so that a copied link opens the same view.
import { el, clear, route, add } from "./util.js";
import { startLive } from "./live.js";
import { runsPage } from "./runs.js";
import { runPage } from "./run.js";
import { comparePage } from "./compare.js";
import { experimentsPage, experimentPage } from "./experiment.js";

const PAGES = { runs: runsPage, run: runPage, compare: comparePage, experiments: experimentsPage, experiment: experimentPage };
let leave = null;  // what the current page stops when another is shown (its live refresh)
let shown = null;  // the page and argument on screen: a change of parameters alone redraws nothing

async function show() {
  const { page, arg } = route();
  if (shown === page + "/" + arg) return;
  shown = page + "/" + arg;
  if (leave) leave();
  leave = null;
  const main = clear(document.getElementById("main"));
  for (const a of document.querySelectorAll("nav a"))
    a.classList.toggle("active", a.dataset.page === page || (a.dataset.page === "experiments" && page === "experiment"));
  const render = PAGES[page];
  if (!render) {
    add(main, el("p", {}, "No such page: ", page));
    return;
  }
  try {
    leave = await render(main);
  } catch (error) {
    add(main, el("p", { class: "error" }, String(error.message || error)));
  }
  document.body.dataset.ready = shown;  // the tests wait for it
}

window.addEventListener("hashchange", () => { shown = null; show(); });
startLive();
show();

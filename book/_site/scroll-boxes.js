// Boxes that scroll (a wide code block, table or output inside the page) can be reached and
// scrolled with the keyboard: each gets tabindex="0", the role "region" and a label saying what
// it is, while it scrolls (WCAG 2.1.1; axe's rule scrollable-region-focusable). The theme
// (pydata-sphinx-theme) gives some of them a tab stop but no name; this covers every box in the
// article, and follows it as the window changes size or widgets draw. Loaded by _config.yml.

const MARK = "data-scroll-box";

function kindOf(box) {
  if (box.closest(".cell_input")) return "Code";
  if (box.closest(".cell_output")) return "Output of the code above";
  if (box.matches("table, .pst-scrollable-table-container, .table-wrapper")) return "Table";
  if (box.querySelector("table") && !box.querySelector("pre")) return "Table";
  if (box.matches("pre") || box.closest("div.highlight")) return "Code";
  if (box.closest("mjx-container") || box.matches("mjx-container")) return "Formula";
  return "Content";
}

function scrolls(box) {
  const style = getComputedStyle(box);
  const sideways = /auto|scroll/.test(style.overflowX) && box.scrollWidth > box.clientWidth + 1;
  const down = /auto|scroll/.test(style.overflowY) && box.scrollHeight > box.clientHeight + 1;
  return sideways || down ? (sideways ? "sideways" : "down") : null;
}

export function markScrollBoxes(root = document.querySelector("article.bd-article")) {
  if (!root) return;
  // only an element wider or taller inside than its box can scroll: a cheap test first
  for (const box of root.querySelectorAll("*")) {
    const direction =
      box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1
        ? scrolls(box) : null;
    if (direction && box.getClientRects().length) {
      if (box.getAttribute(MARK) === direction) continue;
      box.setAttribute(MARK, direction);
      box.tabIndex = 0;
      if (!box.hasAttribute("role")) box.setAttribute("role", "region");
      box.setAttribute("aria-label", `${kindOf(box)}, scrolls ${direction}: use the arrow keys`);
    } else if (box.hasAttribute(MARK)) {
      box.removeAttribute(MARK);
      box.removeAttribute("aria-label");
      if (box.getAttribute("role") === "region") box.removeAttribute("role");
      box.tabIndex = -1;
    }
  }
}

let pending = null;
function soon() {
  if (pending) cancelAnimationFrame(pending);
  pending = requestAnimationFrame(() => { pending = null; markScrollBoxes(); });
}

function start() {
  markScrollBoxes();
  window.addEventListener("resize", soon);
  window.addEventListener("load", soon);
  // folded cells opened, widgets drawn after the page loaded, MathJax typesetting
  document.addEventListener("toggle", soon, true);
  const article = document.querySelector("article.bd-article");
  if (article) new MutationObserver(soon).observe(article, {childList: true, subtree: true});
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();

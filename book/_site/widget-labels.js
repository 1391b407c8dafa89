// ipywidgets' sliders draw their handle as a <div role="slider"> with no name: the widget's
// description sits beside it in a <label> that nothing points at (axe's rule
// aria-input-field-name; a screen reader says only "slider"). Each handle gets its widget's
// description as aria-label, or "Slider" where it has none, as the widgets draw from the page's
// saved state (after load). Loaded by _config.yml.

export function labelSliders(root = document) {
  for (const handle of root.querySelectorAll('[role="slider"]:not([aria-label]):not([aria-labelledby])')) {
    const widget = handle.closest(".widget-slider, .jupyter-widgets");
    const label = widget?.querySelector(".widget-label, label")?.textContent.trim();
    handle.setAttribute("aria-label", label || "Slider");
  }
}

function start() {
  labelSliders();
  const article = document.querySelector("article.bd-article") || document.body;
  new MutationObserver(() => labelSliders(article)).observe(article, { childList: true, subtree: true });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();

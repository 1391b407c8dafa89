// ipywidgets 8 typesets every widget label with MathJax 2's API, MathJax.Hub.Queue(["Typeset",
// MathJax.Hub, element]); MathJax 3 has no Hub, so a labelled widget on a page with mathematics
// threw "Cannot read properties of undefined (reading 'Queue')". This file (ours, Apache-2.0) runs
// after Sphinx's inline MathJax configuration and before MathJax itself: once MathJax 3 is ready,
// it adds a Hub whose Queue typesets the element with MathJax 3's own typesetPromise.
(function () {
  var config = window.MathJax;
  if (!config || config.version) return; // no mathematics on this page, or MathJax already loaded
  config.startup = config.startup || {};
  var ready = config.startup.ready;
  config.startup.ready = function () {
    if (ready) { ready(); } else { MathJax.startup.defaultReady(); }
    MathJax.Hub = {
      Queue: function () {
        Array.prototype.forEach.call(arguments, function (command) {
          if (!Array.isArray(command) || command[0] !== "Typeset") return;
          var elements = command[2] ? [command[2]] : undefined;
          MathJax.startup.promise = MathJax.startup.promise.then(function () {
            return MathJax.typesetPromise(elements);
          });
        });
      }
    };
  };
})();

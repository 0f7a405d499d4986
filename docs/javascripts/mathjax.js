// MathJax reads this configuration when it loads (mkdocs.yml's extra_javascript lists it
// first): it typesets only the formulas that pymdownx.arithmatex marks (generic mode).
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};

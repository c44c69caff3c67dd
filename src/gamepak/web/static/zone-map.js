// The zone page: the filter hides rows and map marks whose class and name do not match; the
// map zooms with the wheel (around the pointer) and pans by dragging, by changing its viewBox.
(function () {
  "use strict";
  var filter = document.getElementById("zone-filter");
  var rows = Array.prototype.slice.call(document.querySelectorAll(".zone-row"));
  var marks = Array.prototype.slice.call(document.querySelectorAll(".zone-object"));
  function matches(element, words) {
    var text = (element.getAttribute("data-class") + " " + element.getAttribute("data-name")).toLowerCase();
    return words.every(function (word) { return text.indexOf(word) !== -1; });
  }
  if (filter) {
    filter.addEventListener("input", function () {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      rows.forEach(function (row) { row.hidden = !matches(row, words); });
      marks.forEach(function (mark) { mark.setAttribute("visibility", matches(mark, words) ? "visible" : "hidden"); });
    });
  }
  var map = document.getElementById("zone-map");
  if (!map) { return; }
  var box = map.getAttribute("viewBox").split(" ").map(Number);
  function show() { map.setAttribute("viewBox", box.join(" ")); }
  function point(event) {
    var rect = map.getBoundingClientRect();
    var scale = Math.max(box[2] / rect.width, box[3] / rect.height);
    return [box[0] + (event.clientX - rect.left) * scale, box[1] + (event.clientY - rect.top) * scale, scale];
  }
  map.addEventListener("wheel", function (event) {
    event.preventDefault();
    var at = point(event);
    var factor = event.deltaY > 0 ? 1.25 : 0.8;
    box = [at[0] - (at[0] - box[0]) * factor, at[1] - (at[1] - box[1]) * factor, box[2] * factor, box[3] * factor];
    show();
  }, { passive: false });
  var dragging = null;
  map.addEventListener("pointerdown", function (event) { dragging = point(event); map.setPointerCapture(event.pointerId); });
  map.addEventListener("pointermove", function (event) {
    if (!dragging) { return; }
    var rect = map.getBoundingClientRect();
    var scale = dragging[2];
    box[0] = dragging[0] - (event.clientX - rect.left) * scale;
    box[1] = dragging[1] - (event.clientY - rect.top) * scale;
    show();
  });
  map.addEventListener("pointerup", function () { dragging = null; });
}());

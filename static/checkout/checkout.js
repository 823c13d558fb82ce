// Optional enhancements of the checkout: every page works without this file.
// - a live countdown for <time data-countdown datetime="...">; the page reloads at zero so the
//   server shows what the expired session now is;
// - a Print button on the challan (shown only when this script runs).
(function () {
  "use strict";

  function format(seconds) {
    if (seconds >= 172800) return Math.round(seconds / 86400) + " days";
    if (seconds >= 7200) return Math.round(seconds / 3600) + " hours";
    var m = Math.floor(seconds / 60), s = seconds % 60;
    return m + ":" + (s < 10 ? "0" : "") + s;
  }

  var timers = document.querySelectorAll("time[data-countdown]");
  if (timers.length) {
    var tick = function () {
      var now = Date.now(), done = false;
      timers.forEach(function (el) {
        var left = Math.max(0, Math.round((Date.parse(el.getAttribute("datetime")) - now) / 1000));
        el.textContent = format(left);
        if (left === 0) done = true;
      });
      if (done) { window.clearInterval(handle); window.setTimeout(function () { window.location.reload(); }, 1500); }
    };
    var handle = window.setInterval(tick, 1000);
    tick();
  }

  document.querySelectorAll("[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
})();

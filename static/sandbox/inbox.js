// The webhook inbox shows a delivery soon after it arrives: while it shows the newest page it
// reloads itself every 5 seconds, except while a delivery is open (a reload would close it) or
// the tab is hidden. Without this file the page has a Refresh link and works the same.
(function () {
  "use strict";
  if (!document.querySelector("[data-autorefresh]")) return;
  setInterval(function () {
    if (document.hidden || document.querySelector("details[open]")) return;
    window.location.reload();
  }, 5000);
})();

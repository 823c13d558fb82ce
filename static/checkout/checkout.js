// Optional enhancements of the checkout: every page works without this file.
// - a live countdown for <time data-countdown datetime="...">; the page reloads at zero so the
//   server shows what the expired session now is;
// - a Print button on the challan (shown only when this script runs);
// - the card form: the number spaced as typed and its network named, the expiry's slash
//   inserted (phone keypads often lack "/"), each field checked when the customer leaves it and
//   all of them before submitting, errors shown beside the field without clearing anything.
//   The server checks everything again (payments/checkout/forms.py);
// - the waiting page asks the server every few seconds whether anything changed and moves on
//   only then, and the result page takes the customer to the merchant after a few seconds
//   unless they choose to stay (WCAG 2.2.1). Without this script a <noscript> meta refresh
//   does both.
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

  var NETWORKS = [
    ["AMEX", "American Express", /^3[47]/],
    ["RUPAY", "RuPay", /^(60|65|81|82|508|353|356)/],
    ["VISA", "Visa", /^4/],
    ["MASTERCARD", "Mastercard", /^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/],
    ["DINERS", "Diners Club", /^(30[0-5]|36|38)/]
  ];
  function network(digits) {
    for (var i = 0; i < NETWORKS.length; i++) if (NETWORKS[i][2].test(digits)) return NETWORKS[i];
    return null;
  }
  function luhn(digits) {
    if (!/^\d{12,19}$/.test(digits)) return false;
    var sum = 0;
    for (var i = 0; i < digits.length; i++) {
      var d = +digits[digits.length - 1 - i];
      if (i % 2) { d *= 2; if (d > 9) d -= 9; }
      sum += d;
    }
    return sum % 10 === 0;
  }
  function spaced(digits, amex) {
    var groups = amex ? [4, 6, 5] : [4, 4, 4, 4, 3], out = [], at = 0;
    for (var i = 0; i < groups.length && at < digits.length; i++) {
      out.push(digits.slice(at, at + groups[i]));
      at += groups[i];
    }
    return out.join(" ");
  }
  function expiryParts(value) {
    var m = /^\s*(\d{1,2})\s*[\/\-.]\s*(\d{2}|\d{4})\s*$/.exec(value) || /^\s*(\d{2})(\d{2}|\d{4})\s*$/.exec(value);
    if (!m) return null;
    return [+m[1], m[2].length === 4 ? +m[2] : 2000 + +m[2]];
  }
  function showError(input, message) {
    var id = input.id + "-error", el = document.getElementById(id);
    var described = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (x) {
      return x && x !== id;
    });
    if (!message) {
      if (el) el.parentNode.removeChild(el);
      input.removeAttribute("aria-invalid");
      input.setAttribute("aria-describedby", described.join(" "));
      return true;
    }
    if (!el) {
      el = document.createElement("p");
      el.id = id;
      el.className = "error";
      input.parentNode.appendChild(el);
    }
    el.textContent = message;
    input.setAttribute("aria-invalid", "true");
    described.push(id);
    input.setAttribute("aria-describedby", described.join(" "));
    return false;
  }

  document.querySelectorAll("form[data-card-form]").forEach(function (form) {
    var number = form.querySelector("[data-card-number]"), expiry = form.querySelector("[data-card-expiry]");
    var cvv = form.querySelector("[data-card-cvv]"), label = form.querySelector("[data-card-network]");
    var msg = form.dataset;
    function digits() { return number.value.replace(/\D/g, ""); }
    function checkNumber() {
      var d = digits();
      if (!d) return showError(number, msg.errNumberRequired);
      if (!luhn(d)) return showError(number, msg.errNumber);
      if (!network(d)) return showError(number, msg.errNetwork);
      return showError(number, "");
    }
    function checkExpiry() {
      if (!expiry.value.trim()) return showError(expiry, msg.errExpiryRequired);
      var parts = expiryParts(expiry.value), now = new Date();
      if (!parts || parts[0] < 1 || parts[0] > 12) return showError(expiry, msg.errExpiry);
      if (parts[1] * 12 + parts[0] < now.getFullYear() * 12 + now.getMonth() + 1) {
        return showError(expiry, msg.errExpired);
      }
      return showError(expiry, "");
    }
    function checkCvv() {
      var want = (network(digits()) || [])[0] === "AMEX" ? 4 : 3;
      if (!new RegExp("^\\d{" + want + "}$").test(cvv.value.trim())) {
        return showError(cvv, want === 4 ? msg.errCvv4 : msg.errCvv3);
      }
      return showError(cvv, "");
    }
    number.addEventListener("input", function () {
      var d = digits().slice(0, 19), net = network(d);
      var atEnd = number.selectionStart === number.value.length;
      number.value = spaced(d, net && net[0] === "AMEX");
      if (atEnd) number.setSelectionRange(number.value.length, number.value.length);
      if (label) label.textContent = net ? net[1] : "";
    });
    expiry.addEventListener("input", function (event) {
      // "12" gets its slash; a "/" typed after it is not doubled; "1229" becomes "12/29".
      var v = expiry.value.replace(/\/\s*\//g, "/");
      if (/^\d{2}$/.test(v) && event.inputType !== "deleteContentBackward") v += "/";
      else if (/^\d{3,4}$/.test(v)) v = v.slice(0, 2) + "/" + v.slice(2);
      else if (/^\d\/$/.test(v)) v = "0" + v;
      if (v !== expiry.value) expiry.value = v;
    });
    // Leaving a field shows what is wrong with it; typing in it again clears that. A field
    // that is right is left alone on blur: removing text there would move the Pay button
    // from under the pointer that is pressing it.
    [[number, checkNumber], [expiry, checkExpiry], [cvv, checkCvv]].forEach(function (pair) {
      var input = pair[0], check = pair[1];
      input.addEventListener("blur", function () {
        if (input.value && input.getAttribute("aria-invalid") !== "true") check();
      });
      input.addEventListener("input", function () { showError(input, ""); });
    });
    form.addEventListener("submit", function (event) {
      var ok = [checkNumber(), checkExpiry(), checkCvv()];
      var first = [number, expiry, cvv][ok.indexOf(false)];
      if (first) { event.preventDefault(); first.focus(); }
    });
  });

  document.querySelectorAll("[data-poll]").forEach(function (panel) {
    var every = Math.max(1, +panel.getAttribute("data-poll") || 3) * 1000;
    var state = 'data-poll-state="' + panel.getAttribute("data-poll-state") + '"';
    function poll() {
      fetch(window.location.href, {redirect: "manual", credentials: "same-origin", headers: {Accept: "text/html"}})
        .then(function (response) {
          if (response.type === "opaqueredirect" || response.status >= 300) { window.location.reload(); return null; }
          return response.text();
        })
        .then(function (html) {
          if (html === null) return;
          if (html.indexOf(state) < 0) window.location.reload();
          else window.setTimeout(poll, every);
        })
        .catch(function () { window.setTimeout(poll, every); });
    }
    window.setTimeout(poll, every);
  });

  document.querySelectorAll("a[data-redirect-after]").forEach(function (link) {
    var timer = window.setTimeout(function () { window.location.assign(link.href); },
                                  (+link.getAttribute("data-redirect-after") || 0) * 1000);
    var stay = document.querySelector("[data-action=stay]"), note = document.querySelector("[data-redirect-note]");
    if (!stay) return;
    stay.hidden = false;
    stay.addEventListener("click", function () {
      window.clearTimeout(timer);
      stay.hidden = true;
      if (note) note.hidden = true;
    });
  });
})();

/* A LOCAL STAND-IN for Razorpay Standard Checkout (https://checkout.razorpay.com/v1/checkout.js),
 * which cannot be fetched here. Test code only: the stateful Razorpay double
 * (tests/acquirer_razorpay/double.py) serves it at /v1/checkout.js, and a test points
 * RAZORPAY_CHECKOUT_JS_URL at it.
 *
 * Its interface is the real one's as far as Razorpay's docs describe it (Standard Checkout,
 * "Integration Steps", "Checkout Options", "Handler Function", "Troubleshooting": modal):
 *
 *   var rzp = new Razorpay({key, order_id, amount, currency, name, prefill: {contact, email},
 *                           config, handler: fn(response), modal: {ondismiss: fn()}});
 *   rzp.on("payment.failed", fn({error: {code, description, source, step, reason, metadata}}));
 *   rzp.open(); rzp.close();
 *   handler's response: {razorpay_payment_id, razorpay_order_id, razorpay_signature}
 *
 * Like the real one, open() draws the processor's own frame over the page (public.html beside
 * this file, from the processor's origin): the card is typed there, never into the page that
 * opened it. The frame pays from its own origin (the double's checkout payment, then the
 * issuer's OTP) and tells this script only the handler's three values, or the failure, or that
 * the customer closed it.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var ORIGIN = new URL(script.src).origin;
  var FRAME = ORIGIN + "/v1/checkout/public";

  function Razorpay(options) {
    if (!(this instanceof Razorpay)) {
      return new Razorpay(options);
    }
    if (!options || !options.key) {
      throw new Error("Razorpay: the key option is required");
    }
    this.options = options;
    this.handlers = {};
    this.overlay = null;
    this.listener = null;
  }

  Razorpay.prototype.on = function (event, handler) {
    (this.handlers[event] = this.handlers[event] || []).push(handler);
  };

  Razorpay.prototype.fire = function (event, data) {
    (this.handlers[event] || []).forEach(function (handler) {
      handler(data);
    });
  };

  Razorpay.prototype.open = function () {
    var self = this;
    var options = this.options;
    var prefill = options.prefill || {};
    var query = new URLSearchParams({
      key_id: options.key,
      order_id: options.order_id || "",
      contact: prefill.contact || "",
      email: prefill.email || "",
      origin: window.location.origin,
    });
    var overlay = document.createElement("div");
    overlay.className = "razorpay-container";
    overlay.style.position = "fixed";
    overlay.style.inset = "0";
    overlay.style.background = "rgba(0, 0, 0, 0.6)";
    overlay.style.zIndex = "2147483647";
    var frame = document.createElement("iframe");
    frame.className = "razorpay-checkout-frame";
    frame.title = "Razorpay Checkout";
    frame.src = FRAME + "?" + query.toString();
    frame.style.width = "420px";
    frame.style.height = "520px";
    frame.style.border = "0";
    frame.style.background = "#fff";
    frame.style.display = "block";
    frame.style.margin = "40px auto";
    overlay.appendChild(frame);
    document.body.appendChild(overlay);
    this.overlay = overlay;
    this.listener = function (event) {
      if (event.origin !== ORIGIN || event.source !== frame.contentWindow) {
        return;
      }
      var data = event.data || {};
      if (data.razorpay === "success") {
        self.close();
        options.handler(data.response);
      } else if (data.razorpay === "failed") {
        self.fire("payment.failed", { error: data.error });
      } else if (data.razorpay === "dismiss") {
        self.close();
        if (options.modal && typeof options.modal.ondismiss === "function") {
          options.modal.ondismiss();
        }
      }
    };
    window.addEventListener("message", this.listener);
  };

  Razorpay.prototype.close = function () {
    if (this.listener) {
      window.removeEventListener("message", this.listener);
      this.listener = null;
    }
    if (this.overlay) {
      this.overlay.remove();
      this.overlay = null;
    }
  };

  window.Razorpay = Razorpay;
})();

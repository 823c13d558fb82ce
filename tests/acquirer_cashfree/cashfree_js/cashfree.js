/* A LOCAL STAND-IN for Cashfree.js v3 (https://sdk.cashfree.com/js/v3/cashfree.js), which cannot
 * be fetched here. Test code only: the stateful Cashfree double (tests/acquirer_cashfree/double.py)
 * serves it at /js/v3/cashfree.js, and a test points CASHFREE_JS_URL at it.
 *
 * Its interface is the real one's as far as Cashfree's docs describe it ("Cashfree.js":
 * Components, Cards Component, Component Customization; pay() as in Cashfree's samples):
 *
 *   const cashfree = Cashfree({mode: "sandbox" | "production"});
 *   const card = cashfree.create("cardNumber" | "cardHolder" | "cardExpiry" | "cardCvv", options);
 *   card.mount("#selector"); card.on("ready" | "change" | "complete" | "empty" | "loaderror", fn);
 *   card.isComplete(); card.data(); card.update(values); card.unmount(); card.destroy();
 *   cashfree.pay({paymentMethod: card, paymentSessionId, redirectTarget, returnUrl})
 *     -> Promise of {error: {message, code, type}} or {redirect: true}
 *
 * Like the real one, each field is a frame of the processor's origin (field.html beside this
 * file): the card is typed there, never into the page that mounts it, and data() tells the page
 * only the brand and the CVV's length. pay() asks the card number's frame to pay: it gathers its
 * sibling frames' values (same origin as itself) and sends Cashfree's order pay from that origin
 * (POST /pg/orders/sessions with the payment session), then the page follows the answer's link
 * to the issuer's 3-D Secure page. `mode` is taken and kept; the double is both of Cashfree's
 * environments here.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var ORIGIN = new URL(script.src).origin;
  var FIELD = new URL("field.html", script.src).href;
  var NAMES = ["cardNumber", "cardHolder", "cardExpiry", "cardCvv"];
  var components = [];
  var waiting = {};
  var next = 1;

  function Component(name, options) {
    this.name = name;
    this.options = options || {};
    this.handlers = {};
    this.frame = null;
    this.state = {
      value: {}, error: undefined, message: {}, invalid: undefined, empty: true, complete: false,
      ready: false, componentName: name, node: null, mounted: false, loaderror: false, focus: false,
      disabled: false, kind: "input",
    };
  }

  Component.prototype.on = function (event, handler) {
    (this.handlers[event] = this.handlers[event] || []).push(handler);
  };

  Component.prototype.fire = function (event) {
    var data = this.data();
    (this.handlers[event] || []).forEach(function (handler) {
      handler(data);
    });
  };

  Component.prototype.data = function () {
    return JSON.parse(JSON.stringify(this.state));
  };

  Component.prototype.isComplete = function () {
    return this.state.complete;
  };

  Component.prototype.mount = function (selector) {
    var node = typeof selector === "string" ? document.querySelector(selector) : selector;
    if (!node || NAMES.indexOf(this.name) < 0) {
      this.state.loaderror = true;
      this.state.error = { message: "cannot mount " + this.name };
      this.fire("loaderror");
      return;
    }
    var frame = document.createElement("iframe");
    frame.src = FIELD + "#" + this.name;
    frame.title = this.name;
    frame.setAttribute("scrolling", "no");
    node.appendChild(frame);
    this.frame = frame;
    this.state.node = null;
    this.state.mounted = true;
  };

  Component.prototype.update = function (values) {
    if (this.frame) {
      this.frame.contentWindow.postMessage({ type: "cf-update", values: values }, ORIGIN);
    }
  };

  Component.prototype.unmount = function () {
    if (this.frame) {
      this.frame.remove();
      this.frame = null;
      this.state.mounted = false;
    }
  };

  Component.prototype.destroy = function () {
    this.unmount();
    components = components.filter(function (c) { return c !== this; }, this);
  };

  window.addEventListener("message", function (event) {
    if (event.origin !== ORIGIN || !event.data || typeof event.data !== "object") {
      return;
    }
    var message = event.data;
    if (message.type === "cf-paid" && waiting[message.id]) {
      waiting[message.id](message);
      delete waiting[message.id];
      return;
    }
    components.forEach(function (component) {
      if (!component.frame || component.frame.contentWindow !== event.source) {
        return;
      }
      if (message.type === "cf-ready") {
        component.state.ready = true;
        component.fire("ready");
      } else if (message.type === "cf-state") {
        var was = component.state.complete;
        component.state.complete = !!message.complete;
        component.state.empty = !!message.empty;
        component.state.invalid = !!message.invalid;
        component.state.value = message.value || {};
        component.fire("change");
        if (component.state.complete && !was) {
          component.fire("complete");
        }
        if (component.state.empty) {
          component.fire("empty");
        }
      }
    });
  });

  function pay(options) {
    var method = options && options.paymentMethod;
    if (!method || method.name !== "cardNumber" || !method.frame) {
      return Promise.resolve({ error: { message: "paymentMethod must be a mounted cardNumber component",
                                        code: "payment_method_invalid", type: "validation_error" } });
    }
    var incomplete = components.filter(function (c) { return c.frame && !c.isComplete(); });
    if (incomplete.length) {
      return Promise.resolve({ error: { message: incomplete[0].name + " is not complete",
                                        code: "card_incomplete", type: "validation_error" } });
    }
    var id = next++;
    return new Promise(function (resolve) {
      waiting[id] = function (answer) {
        var body = answer.body || {};
        if (answer.status === 200 && body.action === "link" && body.data && body.data.url) {
          var target = options.redirectTarget || "_self";
          if (target === "_blank") {
            window.open(body.data.url, "_blank");
          } else {
            window.location.assign(body.data.url);
          }
          resolve({ redirect: true });
        } else {
          resolve({ error: { message: body.message || "payment failed", code: body.code || "payment_failed",
                             type: body.type || "api_error" } });
        }
      };
      method.frame.contentWindow.postMessage({ type: "cf-pay", id: id, paymentSessionId: options.paymentSessionId },
                                             ORIGIN);
    });
  }

  window.Cashfree = function Cashfree(config) {
    var mode = (config && config.mode) || "sandbox";
    return {
      mode: mode,
      create: function (name, options) {
        var component = new Component(name, options);
        components.push(component);
        return component;
      },
      pay: pay,
    };
  };
})();

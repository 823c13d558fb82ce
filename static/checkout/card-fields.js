/* The processor's own card fields (CARD_FORM_MODE=processor; docs/security.md lists this script).
 *
 * The processor's script takes the card, in one of two ways the form names (data-api, from
 * Acquirer.card_fields):
 *
 * - "cashfree-js-v3": the card method's boxes get the processor's card components, drawn by its
 *   script (Cashfree.js v3: Cashfree({mode}), cashfree.create(name).mount(selector),
 *   component.isComplete(), cashfree.pay({paymentMethod, paymentSessionId, redirectTarget}), as
 *   Cashfree's docs give them).
 * - "razorpay-checkout-v1": Pay opens the processor's own frame over this page (Razorpay
 *   Standard Checkout: new Razorpay({key, order_id, handler, modal: {ondismiss}}).open(),
 *   rzp.on("payment.failed", fn), as Razorpay's docs give them); its handler's answer
 *   (razorpay_payment_id, razorpay_order_id, razorpay_signature) goes back to our return
 *   address as its parameters, where our server checks the signature and asks the processor.
 *
 * Either way the card lives in the processor's fields and goes from them to the processor: this
 * script never reads it, and our form posts nothing of it.
 *
 * Pay: our server opens the attempt (a POST of the form, which carries the CSRF token and, when
 * asked, the mobile number) and answers what the fields pay with; the fields then pay, and the
 * customer comes back to our return address, where the processor's status query decides. When
 * the fields report an error instead (or the customer closes the processor's frame), the
 * customer goes to that return address at once: the status query decides there too.
 */
(function () {
  "use strict";

  var form = document.querySelector("form[data-card-fields]");
  if (!form) {
    return;
  }
  var payButton = form.querySelector("[data-card-fields-pay]");
  var message = form.querySelector("[data-card-fields-error]");

  function say(text) {
    message.textContent = text || "";
    message.hidden = !text;
  }

  function goBack(back, params) {
    var url = new URL(back, window.location.href);
    Object.keys(params || {}).forEach(function (name) {
      url.searchParams.set(name, params[name]);
    });
    window.location.assign(url.toString());
  }

  /* Cashfree.js v3: the fields are boxes of this page. */
  function cashfreeJs(refresh) {
    if (typeof window.Cashfree !== "function") {
      return null;
    }
    var cashfree = window.Cashfree({ mode: form.dataset.mode });
    var components = {};

    form.querySelectorAll("[data-card-field]").forEach(function (box) {
      var name = box.getAttribute("data-card-field");
      var component = cashfree.create(name, {});
      component.on("loaderror", function () {
        say(form.dataset.errLoad);
      });
      component.on("change", refresh);
      component.mount("#" + box.id);
      components[name] = component;
    });

    if (components.cardNumber && components.cardCvv) {
      // The CVV's length follows the card's brand (4 digits for Amex), as the docs show.
      components.cardNumber.on("change", function (data) {
        var value = data && data.value;
        if (value && value.cvvLength) {
          components.cardCvv.update({ cvvLength: value.cvvLength });
        }
      });
    }

    return {
      complete: function () {
        return Object.keys(components).every(function (name) {
          return components[name].isComplete();
        });
      },
      pay: function (session, back) {
        return cashfree
          .pay({ paymentMethod: components.cardNumber, paymentSessionId: session, redirectTarget: "_self" })
          .then(
            function (result) {
              if (!result || !result.redirect) {
                goBack(back); // an error, or paid without a page: the status query decides
              }
            },
            function () {
              goBack(back);
            }
          );
      },
    };
  }

  /* Razorpay Standard Checkout: the fields are the processor's own frame, opened on Pay. */
  function razorpayCheckout() {
    if (typeof window.Razorpay !== "function") {
      return null;
    }
    return {
      complete: function () {
        return true; // nothing of the card is on this page to be complete
      },
      pay: function (orderId, back) {
        var gone = false;
        function leave(params) {
          if (!gone) {
            gone = true;
            goBack(back, params);
          }
        }
        var phone = form.querySelector("[data-customer-phone]");
        var checkout = new window.Razorpay({
          key: form.dataset.optionKey,
          order_id: orderId,
          amount: form.dataset.amount,
          currency: "INR",
          name: form.dataset.merchant,
          prefill: {
            contact: (phone && phone.value) || form.dataset.contact || "",
            email: form.dataset.email || "",
            method: "card",
          },
          // Cards only: the other methods are this page's own.
          config: {
            display: {
              blocks: { cards: { name: "Card", instruments: [{ method: "card" }] } },
              sequence: ["block.cards"],
              preferences: { show_default_blocks: false },
            },
          },
          handler: function (response) {
            leave({
              razorpay_payment_id: response.razorpay_payment_id,
              razorpay_order_id: response.razorpay_order_id,
              razorpay_signature: response.razorpay_signature,
            });
          },
          modal: {
            ondismiss: function () {
              leave({}); // closed: the status query says whether a card reached the processor
            },
          },
        });
        checkout.on("payment.failed", function () {
          leave({}); // the status query records the decline
        });
        checkout.open();
      },
    };
  }

  var apis = { "cashfree-js-v3": cashfreeJs, "razorpay-checkout-v1": razorpayCheckout };
  var make = apis[form.dataset.api];
  var fields = null;

  function refresh() {
    payButton.disabled = !(fields && fields.complete());
  }

  fields = make ? make(refresh) : null;
  if (!fields) {
    say(form.dataset.errLoad);
    return;
  }
  refresh();

  function firstError(body) {
    if (body && body.errors) {
      var names = Object.keys(body.errors);
      if (names.length && body.errors[names[0]].length) {
        return body.errors[names[0]][0];
      }
    }
    return body && body.errorMessage;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!fields.complete()) {
      say(form.dataset.errIncomplete);
      return;
    }
    payButton.disabled = true;
    say("");
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (response) {
        return response.json().then(function (body) {
          return { status: response.status, ok: response.ok, body: body };
        });
      })
      .then(function (answer) {
        if (answer.status === 409 && answer.body.next) {
          window.location.assign(answer.body.next);
          return null;
        }
        if (!answer.ok || !answer.body.paymentSessionId) {
          say(firstError(answer.body) || form.dataset.errStart);
          payButton.disabled = false;
          return null;
        }
        return fields.pay(answer.body.paymentSessionId, answer.body.back || form.dataset.back);
      })
      .catch(function () {
        say(form.dataset.errStart);
        payButton.disabled = false;
      });
  });
})();

/* The processor's own card fields (CARD_FORM_MODE=processor; docs/security.md lists this script).
 *
 * The card method's boxes get the processor's card components, drawn by its script (Cashfree.js
 * v3: Cashfree({mode}), cashfree.create(name).mount(selector), component.isComplete(),
 * cashfree.pay({paymentMethod, paymentSessionId, redirectTarget}), as Cashfree's docs give them).
 * The card lives in those fields and goes from them to the processor: this script never reads
 * it, and our form posts nothing of it.
 *
 * Pay: our server opens the attempt (a POST of the form, which carries the CSRF token and, when
 * asked, the mobile number) and answers what the fields pay with; the fields then pay, and the
 * processor sends the customer to the issuer's 3-D Secure page and back to our return address,
 * where the processor's status query decides. When the fields report an error instead, the
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

  if (typeof window.Cashfree !== "function") {
    say(form.dataset.errLoad);
    return;
  }

  var cashfree = window.Cashfree({ mode: form.dataset.mode });
  var components = {};

  function complete() {
    return Object.keys(components).every(function (name) {
      return components[name].isComplete();
    });
  }

  function refresh() {
    payButton.disabled = !complete();
  }

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
    if (!complete()) {
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
        var back = answer.body.back || form.dataset.back;
        return cashfree
          .pay({
            paymentMethod: components.cardNumber,
            paymentSessionId: answer.body.paymentSessionId,
            redirectTarget: "_self",
          })
          .then(
            function (result) {
              if (!result || !result.redirect) {
                window.location.assign(back); // an error, or paid without a page: the status query decides
              }
            },
            function () {
              window.location.assign(back);
            }
          );
      })
      .catch(function () {
        say(form.dataset.errStart);
        payButton.disabled = false;
      });
  });
})();

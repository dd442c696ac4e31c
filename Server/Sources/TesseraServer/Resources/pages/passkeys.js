// Passkeys on the hosted pages (served as /assets/passkeys.js; the pages' CSP allows 'self').
//
// A form with data-passkey="sign-in" or data-passkey="register" is a passkey ceremony: its
// button asks the server for the options (POST to data-options with the form's hidden fields),
// hands them to navigator.credentials, and posts the answer in the form's "credential" field.
// The server checks everything; this file only carries bytes between the two. Without
// WebAuthn the forms stay hidden and the page works as before.
(function () {
  "use strict";
  if (!window.PublicKeyCredential || !navigator.credentials) return;

  function toBase64URL(buffer) {
    var bytes = new Uint8Array(buffer), text = "";
    for (var i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function fromBase64URL(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (base64.length % 4) base64 += "=";
    var binary = atob(base64), bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function descriptors(list) {
    return (list || []).map(function (item) {
      return { type: item.type, id: fromBase64URL(item.id), transports: item.transports };
    });
  }

  // WebAuthn Level 3's JSON forms where the browser has them, the same by hand where not.
  function creationOptions(json) {
    if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    var options = Object.assign({}, json);
    options.challenge = fromBase64URL(json.challenge);
    options.user = Object.assign({}, json.user, { id: fromBase64URL(json.user.id) });
    options.excludeCredentials = descriptors(json.excludeCredentials);
    return options;
  }

  function requestOptions(json) {
    if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    var options = Object.assign({}, json);
    options.challenge = fromBase64URL(json.challenge);
    options.allowCredentials = descriptors(json.allowCredentials);
    return options;
  }

  function credentialJSON(credential) {
    if (typeof credential.toJSON === "function") return credential.toJSON();
    var response = credential.response, json = {
      id: credential.id, rawId: toBase64URL(credential.rawId), type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      response: { clientDataJSON: toBase64URL(response.clientDataJSON) }
    };
    if (response.attestationObject) {
      json.response.attestationObject = toBase64URL(response.attestationObject);
      json.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.response.authenticatorData = toBase64URL(response.authenticatorData);
      json.response.signature = toBase64URL(response.signature);
      json.response.userHandle = response.userHandle ? toBase64URL(response.userHandle) : undefined;
    }
    return json;
  }

  function fields(form) {
    var body = new URLSearchParams();
    Array.prototype.forEach.call(form.querySelectorAll("input[type=hidden]"), function (input) {
      if (input.name !== "credential") body.append(input.name, input.value);
    });
    return body;
  }

  // The options, or an Error whose message the page can show; a "location" answer (the
  // account page wants a recent sign-in first) is followed.
  function fetchOptions(form) {
    return fetch(form.dataset.options, { method: "POST", body: fields(form), credentials: "same-origin" })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (body.location) { window.location.assign(body.location); throw null; }
          if (!response.ok) throw new Error(body.error_description || form.dataset.failed);
          return body;
        });
      });
  }

  function showError(form, error) {
    if (error === null) return;
    var box = document.getElementById(form.dataset.error);
    if (!box) return;
    // The person closed the browser's dialog or took too long: say so plainly, not as a fault.
    var cancelled = error && (error.name === "NotAllowedError" || error.name === "AbortError");
    box.textContent = cancelled ? form.dataset.cancelled : (error && error.message) || form.dataset.failed;
    if (error && error.name === "InvalidStateError" && form.dataset.exists) box.textContent = form.dataset.exists;
    box.hidden = false;
  }

  function submit(form, credential) {
    form.querySelector("input[name=credential]").value = JSON.stringify(credentialJSON(credential));
    form.submit();
  }

  var conditional = null;

  function signIn(form, mediation) {
    return fetchOptions(form).then(function (json) {
      var request = { publicKey: requestOptions(json) };
      if (mediation) {
        conditional = new AbortController();
        request.mediation = mediation;
        request.signal = conditional.signal;
      }
      return navigator.credentials.get(request);
    }).then(function (credential) {
      if (credential) submit(form, credential);
    });
  }

  function register(form) {
    return fetchOptions(form).then(function (json) {
      return navigator.credentials.create({ publicKey: creationOptions(json) });
    }).then(function (credential) {
      if (credential) submit(form, credential);
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("form[data-passkey]"), function (form) {
    var button = form.querySelector("button");
    form.hidden = false;
    button.addEventListener("click", function (event) {
      event.preventDefault();
      var box = document.getElementById(form.dataset.error);
      if (box) box.hidden = true;
      if (conditional) { conditional.abort(); conditional = null; }
      button.disabled = true;
      var ceremony = form.dataset.passkey === "register" ? register(form) : signIn(form, null);
      ceremony.catch(function (error) { showError(form, error); }).then(function () { button.disabled = false; });
    });
    // Conditional UI (§5.1.4.1): the browser offers the passkeys in the address field's
    // suggestions as the person types, without a dialog.
    if (form.dataset.passkey === "sign-in" && document.querySelector("input[autocomplete~=webauthn]") &&
        PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        if (available) signIn(form, "conditional").catch(function () { /* aborted for the button, or dismissed */ });
      });
    }
  });
})();

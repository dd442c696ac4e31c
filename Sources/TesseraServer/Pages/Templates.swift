import TesseraDomain

/// The hosted pages' Mustache templates, compiled into the binary so that `tessera`
/// runs from any directory. Every value is HTML-escaped by Mustache.
enum Templates {
    static let all: [String: String] = [
        "header": header, "footer": footer, "login": login, "consent": consent, "error": error,
        "logout": logout, "loggedout": loggedOut, "formpost": formPost, "account": account,
        "emaillinksent": emailLinkSent, "emaillinkconfirm": emailLinkConfirm, "message": message,
        "federationlink": federationLink, "continue": continuePage,
    ]

    static let header = """
    <!doctype html>
    <html lang="{{lang}}">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>{{title}} · Tessera</title>
    <link rel="stylesheet" href="/assets/tessera.css">
    </head>
    <body>
    <main class="card">
    <p class="brand" aria-hidden="true">Tessera</p>

    """

    static let footer = """
    </main>
    </body>
    </html>

    """

    static let login = """
    {{> header}}
    <h1>{{title}}</h1>
    {{#clientName}}<p class="subtitle">{{signInTo}} <strong>{{clientName}}</strong></p>{{/clientName}}
    {{#intro}}<p class="subtitle">{{intro}}</p>{{/intro}}
    {{#message}}<p class="alert" role="alert" id="form-error">{{message}}</p>{{/message}}
    <form method="post" action="{{action}}" novalidate>
    {{#interaction}}<input type="hidden" name="interaction" value="{{interaction}}">{{/interaction}}
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <label for="email">{{emailLabel}}</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="{{email}}"{{#fixedEmail}} readonly{{/fixedEmail}}{{#message}} aria-describedby="form-error" aria-invalid="true"{{/message}}{{^email}} autofocus{{/email}}>
    <label for="password">{{passwordLabel}}</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required{{#email}} autofocus{{/email}}>
    <button type="submit">{{submit}}</button>
    {{#linkAction}}<p class="divider"><span>{{or}}</span></p>
    <button type="submit" class="secondary" formaction="{{linkAction}}" formnovalidate>{{emailLink}}</button>{{/linkAction}}
    </form>
    {{#providers}}<form method="post" action="/login/federated/{{id}}" class="federated">
    {{#interaction}}<input type="hidden" name="interaction" value="{{interaction}}">{{/interaction}}
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <button type="submit" class="secondary provider-{{type}}">{{label}}</button>
    </form>
    {{/providers}}
    {{> footer}}
    """

    /// A redirect made as a page: after an upstream provider's login form, a browser applies
    /// that provider's CSP form-action to every redirect that follows, so the way on to the
    /// client starts afresh here.
    static let continuePage = """
    {{> header}}
    <meta http-equiv="refresh" content="0;url={{url}}">
    <h1>{{title}}</h1>
    <p><a href="{{url}}" id="continue">{{continue}}</a></p>
    {{> footer}}
    """

    /// An upstream identity whose address is an existing account's: the owner signs in to link it.
    static let federationLink = """
    {{> header}}
    <h1>{{title}}</h1>
    {{#message}}<p class="alert" role="alert" id="form-error">{{message}}</p>{{/message}}
    <p>{{intro}}</p>
    {{#hasPassword}}<form method="post" action="/federation/link" novalidate>
    <input type="hidden" name="link_token" value="{{linkToken}}">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <label for="email">{{emailLabel}}</label>
    <input id="email" type="email" value="{{email}}" readonly>
    <label for="password">{{passwordLabel}}</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required autofocus{{#message}} aria-describedby="form-error" aria-invalid="true"{{/message}}>
    <button type="submit">{{submit}}</button>
    </form>{{/hasPassword}}
    {{^hasPassword}}<p class="muted">{{noPassword}}</p>{{/hasPassword}}
    {{> footer}}
    """

    /// After "email me a link": the same words whether or not the address has an account.
    static let emailLinkSent = """
    {{> header}}
    <h1>{{title}}</h1>
    <p>{{intro}} <strong>{{email}}</strong>.</p>
    <p>{{instructions}}</p>
    <p class="muted">{{notReceived}}</p>
    {{> footer}}
    """

    /// Opening a sign-in link: one button on the device that asked for it, the email
    /// address again on any other.
    static let emailLinkConfirm = """
    {{> header}}
    <h1>{{title}}</h1>
    {{#message}}<p class="alert" role="alert" id="form-error">{{message}}</p>{{/message}}
    <p>{{intro}}{{#email}} <strong>{{email}}</strong>{{/email}}</p>
    <form method="post" action="{{action}}" novalidate>
    <input type="hidden" name="oob_code" value="{{oobCode}}">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    {{#askEmail}}<label for="email">{{emailLabel}}</label>
    <input id="email" name="email" type="email" autocomplete="username" required autofocus{{#message}} aria-describedby="form-error" aria-invalid="true"{{/message}}>{{/askEmail}}
    <button type="submit">{{submit}}</button>
    </form>
    {{> footer}}
    """

    /// A page that only says something: signed in, link expired.
    static let message = """
    {{> header}}
    <h1>{{title}}</h1>
    <p>{{message}}</p>
    {{#detail}}<p class="muted">{{detail}}</p>{{/detail}}
    {{> footer}}
    """

    static let consent = """
    {{> header}}
    <h1>{{title}}</h1>
    <p class="subtitle"><strong>{{clientName}}</strong> {{intro}}</p>
    <ul class="scopes">
    {{#scopes}}<li>{{text}}{{#sensitive}} <span class="tag">{{sensitive}}</span>{{/sensitive}}{{#essential}} <span class="tag">{{essential}}</span>{{/essential}}</li>
    {{/scopes}}
    </ul>
    <p class="muted">{{signedInAs}} {{email}}</p>
    <form method="post" action="/consent">
    <input type="hidden" name="interaction" value="{{interaction}}">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <div class="actions">
    <button type="submit" name="decision" value="deny" class="secondary">{{deny}}</button>
    <button type="submit" name="decision" value="allow">{{allow}}</button>
    </div>
    </form>
    {{> footer}}
    """

    static let account = """
    {{> header}}
    <h1>{{title}}</h1>
    <p class="muted">{{signedInAs}} {{email}}</p>
    <h2>{{appsTitle}}</h2>
    {{^apps}}<p>{{noApps}}</p>{{/apps}}
    {{#apps}}
    <section class="app">
    <h3>{{name}}</h3>
    <ul class="scopes">
    {{#scopes}}<li>{{text}}{{#sensitive}} <span class="tag">{{sensitive}}</span>{{/sensitive}}</li>
    {{/scopes}}
    </ul>
    <form method="post" action="/account/consents/revoke">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <input type="hidden" name="client_id" value="{{clientID}}">
    <button type="submit" class="secondary">{{revoke}}</button>
    </form>
    </section>
    {{/apps}}
    <h2>{{identitiesTitle}}</h2>
    {{^identities}}<p>{{noIdentities}}</p>{{/identities}}
    {{#identities}}
    <section class="app">
    <h3>{{name}}</h3>
    {{#email}}<p class="muted">{{email}}</p>{{/email}}
    <form method="post" action="/account/identities/remove">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <input type="hidden" name="provider" value="{{provider}}">
    <button type="submit" class="secondary">{{remove}}</button>
    </form>
    </section>
    {{/identities}}
    {{#connect}}<form method="post" action="/account/identities/connect/{{id}}">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <button type="submit" class="secondary">{{label}}</button>
    </form>
    {{/connect}}
    <h2>{{deleteTitle}}</h2>
    <form method="post" action="/account/delete">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    <label for="confirm">{{deleteConfirm}}</label>
    <input id="confirm" name="confirm" type="text" autocomplete="off">
    <button type="submit" class="danger">{{deleteButton}}</button>
    </form>
    <p><a href="/logout">{{signOut}}</a></p>
    {{> footer}}
    """

    static let error = """
    {{> header}}
    <h1>{{title}}</h1>
    <p>{{intro}}</p>
    {{#message}}<p class="muted">{{detailsLabel}}: {{message}}</p>{{/message}}
    <p class="muted">{{codeLabel}}: <code>{{code}}</code></p>
    {{> footer}}
    """

    static let logout = """
    {{> header}}
    <h1>{{title}}</h1>
    <p>{{question}}</p>
    <form method="post" action="/logout">
    <input type="hidden" name="csrf_token" value="{{csrf}}">
    {{#clientID}}<input type="hidden" name="client_id" value="{{clientID}}">{{/clientID}}
    {{#postLogoutRedirectURI}}<input type="hidden" name="post_logout_redirect_uri" value="{{postLogoutRedirectURI}}">{{/postLogoutRedirectURI}}
    {{#state}}<input type="hidden" name="state" value="{{state}}">{{/state}}
    <input type="hidden" name="confirm" value="yes">
    <div class="actions">
    <button type="submit">{{confirm}}</button>
    </div>
    </form>
    {{> footer}}
    """

    static let loggedOut = """
    {{> header}}
    <h1>{{title}}</h1>
    <p>{{message}}</p>
    {{> footer}}
    """

    static let formPost = """
    {{> header}}
    <h1>{{title}}</h1>
    <form method="post" action="{{action}}" id="response">
    {{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">
    {{/fields}}
    <noscript><button type="submit">{{continue}}</button></noscript>
    </form>
    <script nonce="{{nonce}}">document.getElementById("response").submit();</script>
    {{> footer}}
    """

    static let stylesheet = """
    :root { color-scheme: light dark; --accent: #1f6f43; --accent-text: #fff; --bg: #f4f5f7; --card: #fff; --text: #1b1d21; --muted: #5c6370; --border: #c9ced6; --alert: #a4161a; }
    @media (prefers-color-scheme: dark) { :root { --bg: #15171b; --card: #1f2228; --text: #eceef2; --muted: #a3a9b4; --border: #3b414b; --alert: #ff8a8a; --accent: #3fa66b; } }
    * { box-sizing: border-box; }
    body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center; background: var(--bg); color: var(--text); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    .card { width: min(420px, calc(100vw - 32px)); background: var(--card); border: 1px solid var(--border); border-radius: 12px; padding: 32px; margin: 16px; }
    .brand { margin: 0 0 16px; font-weight: 700; letter-spacing: .04em; color: var(--accent); }
    h1 { font-size: 1.5rem; margin: 0 0 8px; }
    .subtitle { margin: 0 0 24px; color: var(--muted); }
    label { display: block; font-weight: 600; margin: 16px 0 6px; }
    input[type=email], input[type=password], input[type=text] { width: 100%; padding: 10px 12px; font: inherit; color: inherit; background: transparent; border: 1px solid var(--border); border-radius: 8px; }
    input:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
    button { margin-top: 24px; width: 100%; padding: 12px; font: inherit; font-weight: 600; border: 0; border-radius: 8px; background: var(--accent); color: var(--accent-text); cursor: pointer; }
    button.secondary { background: transparent; color: var(--text); border: 1px solid var(--border); }
    .actions { display: flex; gap: 12px; } .actions button { flex: 1; }
    .alert { color: var(--alert); font-weight: 600; }
    .muted { color: var(--muted); font-size: .9rem; }
    .scopes { padding-left: 20px; } .scopes li { margin: 6px 0; }
    .tag { display: inline-block; font-size: .75rem; font-weight: 600; padding: 1px 6px; border-radius: 4px; border: 1px solid var(--border); color: var(--muted); vertical-align: 1px; }
    code { word-break: break-all; }
    h2 { font-size: 1.1rem; margin: 24px 0 8px; } h3 { font-size: 1rem; margin: 0 0 4px; }
    .app { border-top: 1px solid var(--border); padding: 16px 0; } .app button { margin-top: 8px; }
    a { color: var(--accent); }
    form.federated button { margin-top: 12px; }
    button.danger { background: var(--alert); color: #fff; }
    .divider { display: flex; align-items: center; gap: 12px; margin: 20px 0 -8px; color: var(--muted); font-size: .9rem; }
    .divider::before, .divider::after { content: ""; flex: 1; border-top: 1px solid var(--border); }
    """
}

// The consumer chat app, emulated for development: a person's chats, and
// the threads of the Pages they are one of the people of (owner, admin,
// editor), answered as the Page. Everything here goes
// through the public mobile APIs with a session token, as a phone app would;
// the page keeps the token in sessionStorage (this tab only) and builds every
// element with textContent, never HTML from data.

const view = document.getElementById("view");
const who = document.getElementById("who");
const signoutButton = document.getElementById("signout");
const POLL_MS = 1500;
let poll = null;

// ---- session -------------------------------------------------------------

function session() {
  try { return JSON.parse(sessionStorage.getItem("svc-chat-session")) || null; } catch { return null; }
}
function setSession(s) {
  if (s) sessionStorage.setItem("svc-chat-session", JSON.stringify(s));
  else sessionStorage.removeItem("svc-chat-session");
}

// ---- the API ---------------------------------------------------------------

// ApiError carries the envelope of a refused request: its message, and the
// field it names when it names one.
class ApiError extends Error {
  constructor(status, env) {
    const e = (env && env.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    // The envelope names a bad parameter in its message (CONTRACT §3):
    // "Invalid parameter: <field> …".
    const named = /^Invalid parameter: ([A-Za-z_][A-Za-z0-9_.]*)/.exec(this.message);
    this.field = named ? named[1] : "";
  }
}

async function api(method, path, body) {
  const s = session();
  const headers = { "Accept": "application/json" };
  if (s) headers["Authorization"] = "Bearer " + s.token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  // A phone app holds its token and nothing else: no cookie of the console
  // this browser may also be signed in to goes with the call.
  const res = await fetch(path, { method, headers, credentials: "omit", body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) {
    if (res.status === 401 && s) { setSession(null); location.hash = "#/signin"; }
    throw new ApiError(res.status, data);
  }
  return data;
}

const mobile = {
  signIn: (username, password) => api("POST", "/api/mobile/auth/session", { username, password }),
  chats: () => api("GET", "/api/mobile/chat?view=list"),
  pageThread: (cid) => api("GET", `/api/mobile/svcchat/page-messaging/threads/${encodeURIComponent(cid)}`),
  markRead: (cid) => api("POST", `/api/mobile/svcchat/page-messaging/threads/${encodeURIComponent(cid)}/read`, {}),
  writeToPage: (pageId, text) => api("POST", "/api/mobile/svcchat/page-messaging/messages", { pageId, text }),
  optIn: (pageId) => api("POST", "/api/mobile/svcchat/page-messaging/opt-in", { pageId, purposes: ["transactional"] }),
  optOut: (pageId, userId) => api("POST", "/api/mobile/svcchat/page-messaging/opt-out", { pageId, userId }),
  directThread: (id) => api("GET", `/api/mobile/chat/threads/${encodeURIComponent(id)}`),
  sendDirect: (toUserId, text) => api("POST", "/api/mobile/chat/messages", { toUserId, text }),
  // The Page side: one of a Page's people (owner, admin, editor) answering
  // in its threads as the Page.
  reply: (conversationId, text) => api("POST", "/api/mobile/svcchat/page-messaging/reply", { conversationId, text }),
  // Trust and safety (CONTRACT §16).
  blocks: () => api("GET", "/api/mobile/blocks"),
  blockPage: (pageId) => api("POST", "/api/mobile/blocks", { pageId }),
  unblockPage: (pageId) => api("DELETE", `/api/mobile/blocks?pageId=${encodeURIComponent(pageId)}`),
  report: (what, reason) => api("POST", "/api/mobile/reports", { ...what, reason }),
};

// graph reads a Graph node with the session, as the console does with its
// cookie: the Pages the person has a role on, and their conversations.
function graph(node, params) {
  const q = new URLSearchParams({ node, ...(params || {}) });
  return api("GET", `/api/v1/graph?${q}`);
}

const pageSide = {
  myPages: () => graph("me/pages", { limit: 100 }),
  page: (pageId) => graph(`page/${pageId}`),
  conversations: (pageId) => graph(`page/${pageId}/conversations`, { limit: 25 }),
  messages: (pageId, cid) => graph(`page/${pageId}/conversations/${cid}/messages`, { limit: 100 }),
};

// ---- building the page -----------------------------------------------------

// el makes an element: el("p", {class: "x", id: "y"}, "text", child, …).
function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}

function show(...nodes) {
  view.replaceChildren(...nodes);
}

function when(iso) {
  const d = new Date(iso);
  return isNaN(d) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// form builds a form whose submit runs fn(values) and shows a refusal's
// message beside the field it names (or above the button).
function form(id, fields, label, fn) {
  const general = el("p", { class: "error", role: "alert", hidden: true });
  const inputs = {};
  const rows = fields.map((f) => {
    const input = el(f.multiline ? "textarea" : "input", {
      id: `${id}-${f.name}`, name: f.name, type: f.type || "text", placeholder: f.placeholder || "",
      autocomplete: f.autocomplete || "off", required: f.required !== false, value: f.value,
    });
    const err = el("span", { class: "field-error", id: `${id}-${f.name}-error` });
    inputs[f.name] = { input, err };
    return el("label", { for: `${id}-${f.name}` }, f.label, input, err);
  });
  const button = el("button", { type: "submit", class: "primary", id: `${id}-submit` }, label);
  const f = el("form", { id, novalidate: true }, rows, general, button);
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    general.hidden = true;
    for (const { err } of Object.values(inputs)) err.textContent = "";
    const values = Object.fromEntries(Object.entries(inputs).map(([k, { input }]) => [k, input.value.trim()]));
    button.disabled = true;
    try {
      await fn(values, inputs);
    } catch (e) {
      const target = Object.entries(inputs).find(([k]) => e.field && e.field.toLowerCase().replace(/_/g, "") === k.toLowerCase());
      if (target) target[1].err.textContent = e.message;
      else { general.textContent = e.message; general.hidden = false; }
    } finally {
      button.disabled = false;
    }
  });
  return f;
}

function errorBox(e) {
  return el("p", { class: "error", role: "alert" }, e.message);
}

// ---- views -------------------------------------------------------------------

function signInView() {
  show(el("section", { class: "card narrow" },
    el("h1", {}, "Sign in"),
    el("p", { class: "muted" }, "As any seeded user (the passwords are in var/dev-credentials.json), a Test User of your app, or your own account. ",
      "New here? ", el("a", { href: "/signup?next=/chat", id: "signup" }, "Create an account"), "."),
    form("signin", [
      { name: "username", label: "Username", autocomplete: "username" },
      { name: "password", label: "Password", type: "password", autocomplete: "current-password" },
    ], "Sign in", async (v) => {
      const s = await mobile.signIn(v.username, v.password);
      setSession({ token: s.sessionToken, userId: s.userId, username: v.username });
      location.hash = "#/";
    })));
}

function threadLink(t) {
  if (t.kind === "page") {
    return el("a", { href: `#/page/${encodeURIComponent(t.pageId)}/${encodeURIComponent(t.conversationId)}`, class: "thread page", "data-deep-link": t.deepLink },
      el("strong", {}, t.pageName || `Page ${t.pageId}`),
      el("span", { class: "preview" }, t.lastMessage ? `${t.lastMessage.senderLabel}: ${t.lastMessage.text}` : ""),
      el("time", {}, when(t.updatedAt)));
  }
  return el("a", { href: `#/dm/${encodeURIComponent(t.threadId)}`, class: "thread direct" },
    el("strong", {}, t.withUserName || `User ${t.withUserId}`),
    el("span", { class: "preview" }, t.lastMessage ? `${t.lastMessage.senderLabel}: ${t.lastMessage.text}` : ""),
    el("time", {}, when(t.updatedAt)));
}

function sponsored(ad) {
  if (!ad) return null;
  return el("aside", { class: "sponsored", id: "sponsored" },
    el("span", { class: "tag" }, "Sponsored"),
    el("strong", {}, ad.title), el("p", {}, ad.body),
    ad.linkUrl ? el("a", { href: ad.linkUrl, rel: "noopener noreferrer", target: "_blank",
      // The click is counted by the ads plugin; the link opens regardless.
      onclick: () => { api("POST", `/api/mobile/ads/${encodeURIComponent(ad.adId)}/click`, {}).catch(() => {}); } }, "Learn more") : null);
}

async function chatsView() {
  const list = el("nav", { id: "threads", class: "threads" }, el("p", { class: "muted" }, "Loading…"));
  const me = session();
  const managed = el("section", { class: "card", id: "page-inboxes", hidden: true }, el("h2", {}, "Your Pages' inboxes"));
  const blocked = el("section", { class: "card", id: "blocked", hidden: true }, el("h2", {}, "Blocked"));
  show(
    managed,
    el("section", { class: "card" }, el("h1", {}, "Chats"), el("div", { id: "ad" }), list),
    el("section", { class: "card" }, el("h2", {}, "Write to a Page"),
      form("to-page", [
        { name: "pageId", label: "Page id" },
        { name: "text", label: "Message", multiline: true },
      ], "Send", async (v) => {
        const r = await mobile.writeToPage(v.pageId, v.text);
        location.hash = `#/page/${encodeURIComponent(v.pageId)}/${encodeURIComponent(r.conversationId)}`;
      })),
    el("section", { class: "card" }, el("h2", {}, "Open a deep link"),
      form("open-link", [{ name: "link", label: "Link", placeholder: "svcchat://page-inbox/<pageId>/<conversationId>" }], "Open",
        async (v) => { openDeepLink(v.link); })),
    el("section", { class: "card" }, el("h2", {}, "Message a person"),
      form("to-user", [
        { name: "toUserId", label: "User id" },
        { name: "text", label: "Message", multiline: true },
      ], "Send", async (v) => {
        const r = await mobile.sendDirect(v.toUserId, v.text);
        location.hash = `#/dm/${encodeURIComponent(r.threadId)}`;
      }),
      el("p", { class: "muted" }, `Your user id is ${me.userId}.`)),
    blocked,
  );
  pageInboxes(managed).catch((e) => { managed.hidden = false; managed.append(errorBox(e)); });
  blockList(blocked).catch(() => {});
  try {
    const data = await mobile.chats();
    const ad = sponsored(data.sponsoredAd);
    if (ad) document.getElementById("ad").replaceChildren(ad);
    const threads = data.threads || [];
    list.replaceChildren(...(threads.length ? threads.map(threadLink) : [el("p", { class: "muted" }, "No chats yet: write to a Page below.")]));
  } catch (e) {
    list.replaceChildren(errorBox(e));
  }
}

// pageInboxes lists, for each Page the person has a role on, its threads
// (newest first): they answer them as the Page.
async function pageInboxes(section) {
  const pages = (await pageSide.myPages()).data || [];
  if (!pages.length) return;
  section.hidden = false;
  for (const p of pages) {
    const box = el("nav", { class: "threads", "data-page-id": p.id }, el("p", { class: "muted" }, "Loading…"));
    section.append(el("h3", {}, p.name, " ", el("span", { class: "role" }, p.role)), box);
    try {
      const convs = (await pageSide.conversations(p.id)).data || [];
      box.replaceChildren(...(convs.length ? convs.map((c) =>
        el("a", { href: `#/inbox/${encodeURIComponent(p.id)}/${encodeURIComponent(c.id)}`, class: "thread managed" },
          el("strong", {}, `User ${c.user_id}`),
          el("span", { class: "preview" }, c.window_expires_at ? "can be answered" : "the 24-hour window is closed"),
          el("time", {}, when(c.updated_time))))
        : [el("p", { class: "muted" }, p.published ? "Nobody has written to this Page yet." : "Nobody can write to this Page: it is not published.")]));
    } catch (e) {
      box.replaceChildren(errorBox(e));
    }
  }
}

// blockList shows the Pages and people the person blocked, to unblock.
async function blockList(section) {
  const list = (await mobile.blocks()).data || [];
  if (!list.length) return;
  section.hidden = false;
  section.append(el("ul", { class: "blocks" }, list.map((b) => el("li", {},
    b.pageId ? `Page ${b.pageId}` : `User ${b.userId}`, " ",
    b.pageId ? el("button", { type: "button", class: "unblock", "data-page-id": b.pageId, onclick: async (ev) => {
      ev.target.disabled = true;
      try { await mobile.unblockPage(b.pageId); route(); } catch (e) { section.append(errorBox(e)); ev.target.disabled = false; }
    } }, "Unblock") : null))));
}

// openDeepLink follows svcchat://page-inbox/<pageId>/<conversationId>.
function openDeepLink(link) {
  const m = /^svcchat:\/\/page-inbox\/([^/?#]+)\/([^/?#]+)$/.exec(link.trim());
  if (!m) {
    const e = new ApiError(400, { error: { message: "A deep link looks like svcchat://page-inbox/<pageId>/<conversationId>." } });
    e.field = "link";
    throw e;
  }
  location.hash = `#/page/${m[1]}/${m[2]}`;
}

function messageItem(m) {
  const mine = m.direction === "inbound";
  const status = m.status ? el("span", { class: `status status-${m.status}`, title: m.error || "" }, m.status === "failed" && m.error ? `failed: ${m.error}` : m.status) : null;
  return el("li", { class: mine ? "mine" : "theirs", "data-message-id": m.id },
    el("span", { class: "sender" }, m.senderLabel),
    el("span", { class: "text" }, m.text),
    el("span", { class: "meta" }, el("time", {}, when(m.createdAt)), status));
}

function typingUntil(t) {
  if (t.typing === true) return Date.now() + 1000;
  const at = t.typingUntil || t.typingExpiresAt;
  return at ? Date.parse(at) : 0;
}

async function pageThreadView(pageId, cid) {
  const me = session();
  const header = el("div", { class: "thread-head" }, el("h1", { id: "thread-title" }, "…"));
  const items = el("ol", { id: "messages", class: "messages" });
  const typing = el("p", { id: "typing", class: "typing", hidden: true }, "typing…");
  const problems = el("div", { id: "thread-error" });
  const controls = el("div", { class: "controls" },
    el("button", { type: "button", id: "opt-in", onclick: () => act(() => mobile.optIn(pageId), "Opted in to transactional messages.") }, "Opt in"),
    el("button", { type: "button", id: "opt-out", onclick: () => act(() => mobile.optOut(pageId, me.userId), "Opted out.") }, "Opt out"),
    el("button", { type: "button", id: "block-page", onclick: () => act(async () => {
      await mobile.blockPage(pageId);
      location.hash = "#/";
    }, "Blocked.") }, "Block this Page"),
    el("span", { id: "notice", class: "muted", role: "status" }));
  const report = el("details", { class: "report" }, el("summary", {}, "Report this Page"),
    form("report", [{ name: "reason", label: "What is wrong?", multiline: true }], "Report", async (v, inputs) => {
      const r = await mobile.report({ pageId }, v.reason);
      inputs.reason.input.value = "";
      document.getElementById("notice").textContent = `Reported: staff will look at it (${r.status}).`;
    }));
  const composer = form("composer", [{ name: "text", label: "Message", multiline: true }], "Send", async (v, inputs) => {
    await mobile.writeToPage(pageId, v.text);
    inputs.text.input.value = "";
    await refresh();
  });
  show(el("section", { class: "card thread-card" }, el("a", { href: "#/", class: "back" }, "← Chats"), header, problems, items, typing, composer, controls, report));

  async function act(fn, done) {
    const notice = document.getElementById("notice");
    try { await fn(); notice.textContent = done; problems.replaceChildren(); } catch (e) { problems.replaceChildren(errorBox(e)); }
  }

  let lastSeen = "";
  async function refresh() {
    try {
      const t = await mobile.pageThread(cid);
      document.getElementById("thread-title").textContent = t.pageName || `Page ${pageId}`;
      header.dataset.controlHolder = t.controlHolder || "";
      items.replaceChildren(...(t.messages || []).map(messageItem));
      typing.hidden = !(typingUntil(t) > Date.now());
      problems.replaceChildren();
      // The user is looking at the thread: what the Page sent is read.
      const newest = (t.messages || []).filter((m) => m.direction === "outbound" && m.status !== "read").pop();
      if (newest && newest.id !== lastSeen && document.visibilityState === "visible") {
        lastSeen = newest.id;
        mobile.markRead(cid).catch(() => {});
      }
    } catch (e) {
      problems.replaceChildren(errorBox(e));
    }
  }
  await refresh();
  poll = setInterval(refresh, POLL_MS);
}

async function directThreadView(id) {
  const items = el("ol", { id: "messages", class: "messages" });
  const problems = el("div", { id: "thread-error" });
  const title = el("h1", { id: "thread-title" }, "…");
  let other = "";
  const composer = form("composer", [{ name: "text", label: "Message", multiline: true }], "Send", async (v, inputs) => {
    await mobile.sendDirect(other, v.text);
    inputs.text.input.value = "";
    await refresh();
  });
  show(el("section", { class: "card thread-card" }, el("a", { href: "#/", class: "back" }, "← Chats"), title, problems, items, composer));
  async function refresh() {
    try {
      const t = await mobile.directThread(id);
      other = t.withUserId;
      title.textContent = t.withUserName || `User ${t.withUserId}`;
      items.replaceChildren(...(t.messages || []).map((m) =>
        messageItem({ ...m, direction: m.senderLabel === "You" ? "inbound" : "outbound" })));
      problems.replaceChildren();
    } catch (e) {
      problems.replaceChildren(errorBox(e));
    }
  }
  await refresh();
  poll = setInterval(refresh, POLL_MS);
}

// managedThreadView is a Page's thread seen by one of its people: the
// customer's messages on the left, the Page's (app, assistant, people) on
// the right; the composer replies as the Page.
async function managedThreadView(pageId, cid) {
  const items = el("ol", { id: "messages", class: "messages" });
  const problems = el("div", { id: "thread-error" });
  const title = el("h1", { id: "thread-title" }, "…");
  const sub = el("p", { class: "muted", id: "thread-sub" });
  const composer = form("composer", [{ name: "text", label: "Reply as the Page", multiline: true }], "Send", async (v, inputs) => {
    await mobile.reply(cid, v.text);
    inputs.text.input.value = "";
    await refresh();
  });
  show(el("section", { class: "card thread-card" }, el("a", { href: "#/", class: "back" }, "← Chats"), title, sub, problems, items, composer));
  const senders = { user: "Customer", app: "App", page_human: "Page (a person)", svc_ai: "Assistant" };
  pageSide.page(pageId).then((p) => { title.textContent = p.name; }).catch(() => {});
  async function refresh() {
    try {
      const msgs = ((await pageSide.messages(pageId, cid)).data || []).slice().reverse();
      sub.textContent = `Conversation ${cid}: you answer as the Page.`;
      // messageItem draws "inbound" as the viewer's own: here, the Page's.
      items.replaceChildren(...msgs.map((m) => messageItem({
        id: m.id, direction: m.direction === "outbound" ? "inbound" : "outbound",
        senderLabel: senders[m.sender] || m.sender, text: m.text, createdAt: m.created_time,
        status: m.direction === "outbound" ? m.status : "", error: m.error,
      })));
      problems.replaceChildren();
    } catch (e) {
      problems.replaceChildren(errorBox(e));
    }
  }
  await refresh();
  poll = setInterval(refresh, POLL_MS);
}

// ---- routing -------------------------------------------------------------------

async function route() {
  if (poll) { clearInterval(poll); poll = null; }
  const s = session();
  who.textContent = s ? `Signed in as ${s.username}` : "";
  signoutButton.hidden = !s;
  const link = new URLSearchParams(location.search).get("link");
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (!s) return signInView();
  if (link) {
    history.replaceState(null, "", location.pathname);
    try { return openDeepLink(link); } catch (e) { return show(errorBox(e)); }
  }
  switch (parts[0]) {
    case "page": return pageThreadView(parts[1], parts[2]);
    case "dm": return directThreadView(parts[1]);
    case "inbox": return managedThreadView(parts[1], parts[2]);
    case "signin": location.hash = "#/"; return;
    default: return chatsView();
  }
}

signoutButton.addEventListener("click", async () => {
  try { await api("DELETE", "/api/mobile/auth/session"); } catch { /* signed out either way */ }
  setSession(null);
  location.hash = "#/signin";
  route();
});
window.addEventListener("hashchange", route);
route();

// embed.js turns each <blockquote class="svc-post" data-post-id="<id>"> of
// the page into the post it names: a sandboxed frame of the post's embed
// view, which sets no cookie and whose styles and the page's cannot meet.
// The blockquote stays, hidden, once the frame shows the post; a post that
// is not public never reports itself, so its frame is removed and its
// blockquote left as it is. Including the script twice mounts each post
// once. It defines no global: one symbol-keyed property of window marks it
// loaded (Symbol.for("svc.embed")), holding the function that mounts posts
// added since.
(function () {
  "use strict";
  var key = Symbol.for("svc.embed");
  if (typeof window[key] === "function") {
    window[key]();
    return;
  }
  var base = "{{BASE}}";
  var mounted = [];

  function mount(quote) {
    if (quote.hasAttribute("data-svc-embed")) {
      return;
    }
    var id = quote.getAttribute("data-post-id") || "";
    if (!/^[0-9]{1,20}$/.test(id)) {
      quote.setAttribute("data-svc-embed", "unavailable");
      return;
    }
    quote.setAttribute("data-svc-embed", "loading");
    var frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-popups allow-popups-to-escape-sandbox");
    frame.setAttribute("title", "Post");
    frame.setAttribute("scrolling", "no");
    frame.setAttribute("data-svc-post-frame", id);
    // Laid out at its width, out of sight, until the post reports itself.
    frame.style.cssText = "position:absolute;left:-10000px;top:0;width:550px;height:0;border:0;visibility:hidden";
    var m = { quote: quote, frame: frame, id: id, shown: false };
    mounted.push(m);
    frame.addEventListener("load", function () {
      // The post reports itself while its view loads; give a late message
      // a moment before giving up.
      setTimeout(function () {
        if (!m.shown) {
          drop(m);
        }
      }, 3000);
    });
    frame.src = base + "/posts/" + id + "?embed=1";
    quote.parentNode.insertBefore(frame, quote.nextSibling);
  }

  function drop(m) {
    if (m.frame.parentNode) {
      m.frame.parentNode.removeChild(m.frame);
    }
    m.quote.setAttribute("data-svc-embed", "unavailable");
  }

  function show(m, height) {
    m.frame.style.cssText = "display:block;width:100%;max-width:550px;border:0;height:" + height + "px";
    if (!m.shown) {
      m.shown = true;
      m.quote.style.display = "none";
      m.quote.setAttribute("data-svc-embed", "rendered");
    }
  }

  // The frame is sandboxed, so its messages come from an opaque origin:
  // they are recognised by the window that sent them, which is one of our
  // frames or ignored.
  window.addEventListener("message", function (e) {
    var d = e.data;
    if (!d || typeof d !== "object" || typeof d.svcPost !== "string") {
      return;
    }
    for (var i = 0; i < mounted.length; i++) {
      var m = mounted[i];
      if (m.frame.contentWindow === e.source && m.id === d.svcPost && m.frame.parentNode) {
        var h = Math.min(Math.max(Number(d.height) || 0, 0), 5000);
        show(m, h);
        return;
      }
    }
  });

  function scan() {
    var quotes = document.querySelectorAll("blockquote.svc-post[data-post-id]");
    for (var i = 0; i < quotes.length; i++) {
      mount(quotes[i]);
    }
  }

  Object.defineProperty(window, key, { value: scan });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", scan);
  } else {
    scan();
  }
})();

"""One visitor speaking Streamlit's own websocket protocol: no browser, so a load run measures
the server alone.

What the browser does, done by hand (read from streamlit/web/server/starlette/starlette_websocket.py
and the frontend's ClientState, Streamlit 1.67):
- connect to ws://host/_stcore/stream with the subprotocol "streamlit" (its second entry would
  carry an XSRF token, needed only for signed-in users; a third, a session id to resume);
- send a BackMsg `rerun_script` (ClientState: query string, page name or page_script_hash, the
  widget states, a fragment id when the widget lives in an st.fragment);
- read ForwardMsgs: deltas carry every widget with its id `$$ID-<hash>-<user key>` (so a widget is
  found by its key), `navigation` lists the pages with their hashes, `script_finished` ends a run
  (FINISHED_EARLY_FOR_RERUN means st.rerun started another run: keep waiting).

A step's latency runs from sending the BackMsg to the end of the run it caused.
"""
from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

EARLY_FOR_RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN
# The page's own words for a heavy job's place in line (ui/server/jobs.py): its first sighting starts a
# wait, the first progress that is not a place in line ends it.
QUEUE_PATTERN = re.compile(r"number \d+ in the queue", re.IGNORECASE)
ERROR_ALERT = 1          # Alert.Format.ERROR (st.error)


@dataclass
class StepResult:
    name: str
    seconds: float                       # send -> end of the run it caused
    runs: int                            # script runs seen (st.rerun makes two)
    errors: list[str] = field(default_factory=list)
    queue_seconds: float | None = None   # time spent with a place in line shown (heavy jobs)
    skipped: bool = False                # nothing to do (a shared map already made: shown at once)


@dataclass
class Widget:
    id: str
    kind: str                 # the element's proto field: text_input, radio, selectbox, button, ...
    options: list[str]        # radio / selectbox: the option labels as shown
    fragment_id: str          # "" unless the widget lives in an st.fragment


def _element_text(kind: str, element) -> str:
    for name in ("body", "text", "message"):
        if hasattr(element, name):
            return str(getattr(element, name))
    return ""


class Session:
    """One browser tab's worth of protocol: `open` a page, `set` a widget by its key."""

    def __init__(self, url: str, timeout: float = 300.0, cookie: str | None = None,
                 headers: dict[str, str] | None = None):
        self.base = url.rstrip("/")
        # more handshake headers: X-Forwarded-For from 127.0.0.1 is trusted by uvicorn (its default
        # FORWARDED_ALLOW_IPS), so a test can be several visitors, or one visitor with several sockets
        self.headers = dict(headers or {})
        self.url = self.base.replace("http://", "ws://").replace("https://", "wss://") + "/_stcore/stream"
        self.timeout = timeout
        self.cookie = cookie        # None: fetched from the page, as a browser does before the websocket
        self.socket = None
        self.widgets: dict[str, Widget] = {}       # user key -> widget, as last drawn
        self.pages: dict[str, str] = {}            # url path ("" = home) -> page_script_hash
        self.query_string = ""
        self.page_hash = ""
        self.session_id = ""
        self.texts: list[str] = []                 # alerts, spinners and progress shown by the last run

    async def connect(self) -> None:
        """Load the page's HTML first, keeping its cookies (a load balancer's affinity cookie,
        Streamlit's XSRF cookie), then open the websocket with them, as a browser does."""
        if self.cookie is None:
            self.cookie = await asyncio.to_thread(_page_cookies, self.base + "/", self.timeout)
        headers = {**self.headers, **({"Cookie": self.cookie} if self.cookie else {})} or None
        self.socket = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None,
                                               open_timeout=self.timeout, ping_interval=None,
                                               additional_headers=headers)

    async def send_only(self, message: BackMsg) -> None:
        """Send a BackMsg that starts no run (clear_cache): the server answers nothing to wait for;
        the next `open` or `set` is handled after it (one session's messages are handled in order)."""
        await self.socket.send(message.SerializeToString())

    async def close(self) -> None:
        if self.socket is not None:
            try:
                await self.socket.close()
            except websockets.ConnectionClosed:     # the server went first (a replica stopped)
                pass
            self.socket = None

    async def open(self, page: str, query: str = "", name: str | None = None) -> StepResult:
        """A page by its url path ("" is Home), as a link or the sidebar opens it."""
        message = BackMsg()
        state = message.rerun_script
        state.query_string = query
        self.query_string = query                  # the address bar: the server rewrites it if it differs
        state.page_name = page
        if page in self.pages:
            state.page_script_hash = self.pages[page]
        return await self._run(message, name or f"open {page or 'home'}")

    async def set(self, key: str, value, name: str | None = None) -> StepResult:
        """Change the widget with user key `key` to `value` (a radio/selectbox: the start of an
        option's label; a button: any value clicks it)."""
        widget = self.widgets.get(key)
        if widget is None:
            return StepResult(name or f"set {key}", 0.0, 0, [f"no widget with key {key!r} on the page"])
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_hash
        state.fragment_id = widget.fragment_id
        entry = state.widget_states.widgets.add()
        entry.id = widget.id
        try:
            _fill(entry, widget, value)
        except ValueError as error:
            return StepResult(name or f"set {key}", 0.0, 0, [str(error)])
        return await self._run(message, name or f"set {key}")

    async def _run(self, message: BackMsg, name: str) -> StepResult:
        start = time.perf_counter()
        self.texts = []
        try:
            await self.socket.send(message.SerializeToString())
        except websockets.ConnectionClosed as closed:
            return StepResult(name, time.perf_counter() - start, 0, [f"connection closed ({closed.rcvd.code if closed.rcvd else 'no code'})"])
        errors: list[str] = []
        runs = 0
        queue_since = None
        queue_seconds = None
        deadline = start + self.timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                errors.append(f"no end of run within {self.timeout:.0f} s")
                break
            try:
                raw = await asyncio.wait_for(self.socket.recv(), remaining)
            except asyncio.TimeoutError:
                errors.append(f"no end of run within {self.timeout:.0f} s")
                break
            except websockets.ConnectionClosed as closed:
                errors.append(f"connection closed ({closed.rcvd.code if closed.rcvd else 'no code'})")
                break
            forward = ForwardMsg()
            forward.ParseFromString(raw)
            kind = forward.WhichOneof("type")
            if kind == "delta":
                text = self._read_delta(forward.delta, errors)
                now = time.perf_counter()
                if text is not None and QUEUE_PATTERN.search(text):
                    queue_since = queue_since or now
                elif text is not None and queue_since is not None and queue_seconds is None:
                    queue_seconds = now - queue_since
            elif kind == "navigation":
                self.pages = {page.url_pathname: page.page_script_hash for page in forward.navigation.app_pages}
                self.page_hash = forward.navigation.page_script_hash
            elif kind == "new_session":
                self.session_id = forward.new_session.initialize.session_id if forward.new_session.HasField(
                    "initialize") else self.session_id
                self.page_hash = forward.new_session.page_script_hash or self.page_hash
            elif kind == "page_info_changed":
                self.query_string = forward.page_info_changed.query_string
            elif kind == "page_not_found":
                errors.append(f"page not found: {forward.page_not_found.page_name!r}")
            elif kind == "script_finished":
                runs += 1
                if forward.script_finished != EARLY_FOR_RERUN:
                    break
        if queue_since is not None and queue_seconds is None:
            queue_seconds = time.perf_counter() - queue_since
        return StepResult(name, time.perf_counter() - start, runs, errors, queue_seconds)

    def _read_delta(self, delta, errors: list[str]) -> str | None:
        """Remember widgets; collect errors. Returns the text an alert or progress bar shows."""
        kind_of_delta = delta.WhichOneof("type")
        if kind_of_delta == "new_transient":         # spinners: shown while their block runs
            texts = [self._read_element(delta, element, errors) for element in delta.new_transient.elements]
            return next((text for text in texts if text is not None), None)
        if kind_of_delta != "new_element":
            return None
        return self._read_element(delta, delta.new_element, errors)

    def _read_element(self, delta, element, errors: list[str]) -> str | None:
        kind = element.WhichOneof("type")
        proto = getattr(element, kind)
        if kind == "exception":
            errors.append(f"exception: {proto.type}: {proto.message[:200]}")
            return None
        if kind == "alert" and proto.format == ERROR_ALERT:
            errors.append(f"error box: {proto.body[:200]}")
        if kind in ("alert", "progress", "spinner"):
            self.texts.append(_element_text(kind, proto))
        if kind in ("alert", "progress", "markdown", "spinner"):
            return _element_text(kind, proto)
        widget_id = getattr(proto, "id", "") if hasattr(proto, "id") else ""
        if widget_id.startswith("$$ID-"):
            key = widget_id.split("-", 2)[2]
            options = [str(option) for option in getattr(proto, "options", [])] if kind in ("radio", "selectbox") else []
            self.widgets[key] = Widget(widget_id, kind, options, delta.fragment_id)
        return None


def _page_cookies(url: str, timeout: float) -> str:
    """GET url; its Set-Cookie headers as one Cookie header value ("" when none)."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        response.read()
        pairs = [header.split(";", 1)[0].strip() for header in response.headers.get_all("Set-Cookie") or []]
    return "; ".join(pair for pair in pairs if "=" in pair)


def _fill(entry, widget: Widget, value) -> None:
    """Put `value` in the WidgetState field Streamlit 1.67 reads for this kind of widget."""
    if widget.kind in ("button", "download_button"):
        entry.trigger_value = True
    elif widget.kind in ("radio", "selectbox"):
        wanted = str(value)
        chosen = [option for option in widget.options if option == wanted] or \
                 [option for option in widget.options if option.startswith(wanted)]
        if not chosen:
            raise ValueError(f"{wanted!r} is not an option ({', '.join(widget.options[:6])})")
        entry.string_value = chosen[0]
    elif widget.kind in ("text_input", "text_area"):
        entry.string_value = str(value)
    elif widget.kind == "number_input":
        entry.double_value = float(value)
    elif widget.kind == "checkbox":          # st.toggle and st.checkbox
        entry.bool_value = bool(value)
    else:
        raise ValueError(f"widgets of kind {widget.kind} are not supported by this client")

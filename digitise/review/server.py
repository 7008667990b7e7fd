"""The review page's local web server: standard library only (``http.server``).

It binds to 127.0.0.1 unless told otherwise, serves the page's own static
files, board crops and SVG diagrams made on the fly, the files under the
report's folder (never outside it), and a small JSON API. It serves one
report at ``/``, or a folder of them (a batch's output): then ``/`` lists the
matches (``GET /api/matches``) and match N's page and API are under
``/m/N/`` (its paths below prefixed so):

=========================  ====================================================
``GET /``                  the page
``GET /static/NAME``       the page's script and style sheet
``GET /api/state``         turns, candidates, readings, corrections, changes
``GET /api/crop/P/B.png``  board B of page P cut from its scan
``GET /api/overlay/P/B.png``  the same with its squares as placed drawn over it (a board the fit was unsure of)
``GET /api/board.svg``     ``?position=ID&mover=bottom|top[&highlight=8,6]``
``GET /api/export.mat``    the corrected match, as a download
``GET /files/PATH``        a scan, report or .mat under the report's folder (no hidden file)
``POST /api/correct``      ``{"page", "board", "action", "dice", "move", "points"}``
``POST /api/uncorrect``    ``{"page", "board"}``
``POST /api/match``        ``{"players": [BOTTOM, TOP] | null, "length": N | null}``
``POST /api/save``         the corrected match written over the scan's ``.mat`` (``{}``)
=========================  ====================================================

Errors are JSON ``{"error": message}`` with a 4xx status; bodies are limited
to :data:`MAX_BODY` bytes and must be ``application/json``. A change may carry
the ``"revision"`` of the state it was made on (``/api/state`` gives it): one
made on a state since changed (another tab of the same match) is refused with
409 and ``"changed_elsewhere": true``, not applied over a change it never saw.
"""

from __future__ import annotations

import errno
import functools
import ipaddress
import json
import logging
import mimetypes
import re
import socket
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from digitise.errors import DigitiseError, OptionError
from digitise.fileio import json_document
from digitise.game.position import Position, Side
from digitise.review.board_svg import board_svg
from digitise.review.first_view import first_view
from digitise.review.folder import ReviewFolder
from digitise.review.refusals import ChangedElsewhere, CorrectionRefused
from digitise.review.session import ReviewSession

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"index.html": "text/html", "review.js": "text/javascript", "review.css": "text/css",
                "folder.html": "text/html", "folder.js": "text/javascript",
                "dom.js": "text/javascript"}
SAFE_FILE_TYPES = frozenset({"image/png", "image/jpeg", "image/tiff", "image/bmp", "image/webp", "application/pdf",
                             "application/json"})
MAX_BODY = 16 * 1024

_CROP = re.compile(r"^/api/(crop|overlay)/([0-9]{1,4})/([0-9]{1,2})\.png$")
#: A match of a folder: /m/N, then its own paths.
_MATCH = re.compile(r"^/m/([0-9]{1,4})(/.*)?$")
# ASCII digits only: "\d" and str.isdigit() take "²" and other digits int() refuses.
_POINT = re.compile(r"[0-9]{1,2}")
#: A Host header: a name or [IPv6 address], then an optional port; nothing else ("127.0.0.1:1@evil.com").
_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::[0-9]{1,5})?")
_POSITION_ID = re.compile(r"^[A-Za-z0-9+/]{14}$")


def _is_address(name: str) -> bool:
    """Whether ``name`` is an IP address written out (no name to rebind)."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@functools.cache
def _own_names() -> frozenset[str]:
    """The names a browser may use for this machine: ``localhost`` and its host names."""
    names = {"localhost", "localhost.localdomain"}
    for found in (socket.gethostname(), socket.getfqdn()):
        if found:
            names.add(found.lower().rstrip("."))
    return frozenset(names)


class RequestError(Exception):
    """A request the server refuses, with its HTTP status and a message for the page."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


#: The listen backlog: a page's requests, several tabs' and a script's corrections sent at once all queue.
LISTEN_BACKLOG = 128


class ReviewServer(ThreadingHTTPServer):
    """An HTTP server bound to one :class:`ReviewSession`, or to a :class:`ReviewFolder` of them."""

    daemon_threads = True
    #: Connections the kernel queues while the server is busy (socketserver's 5 lost corrections sent at once;
    #: the kernel caps it at its own somaxconn).
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, reviewed: ReviewSession | ReviewFolder, host: str = "127.0.0.1", port: int = 0) -> None:
        self.session = reviewed if isinstance(reviewed, ReviewSession) else None
        self.folder = reviewed if isinstance(reviewed, ReviewFolder) else None
        #: Held while the session is looked at and made again after a new scan: one request makes it.
        self.renewing = threading.Lock()
        # "[::1]", as a URL writes it, is the address ::1.
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), ReviewHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up before its answer (an error answer most often) is nobody to tell: no traceback."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host, port = self.server_address[:2]
        # Bound to every address: this machine's own is the one to open here.
        shown = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(str(host), str(host))
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{port}/"

    def start_in_thread(self) -> threading.Thread:
        """Serve in a background thread (for tests and embedding); stop with :meth:`shutdown`."""
        # A short poll interval so shutdown() returns at once (tests start many servers).
        thread = threading.Thread(target=self.serve_forever, args=(0.05,), name="digitise-review", daemon=True)
        thread.start()
        return thread


#: Seconds the server waits for a request's missing bytes before it drops the connection.
BODY_TIMEOUT_SECONDS = 10.0


class ReviewHandler(BaseHTTPRequestHandler):
    """Routes requests to the session; every answer is a file, an image or JSON."""

    server: ReviewServer
    server_version = "digitise-review"
    sys_version = ""
    #: Seconds a connection may sit silent (a body shorter than its Content-Length): then it is dropped,
    #: not left holding a thread.
    timeout = BODY_TIMEOUT_SECONDS

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: the CLI prints the address; request logs would bury it.
        return

    # -- plumbing ----------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, doc: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(doc).encode("utf-8"), "application/json; charset=utf-8", extra)

    def _error(self, status: HTTPStatus, message: str, extra: dict[str, str] | None = None) -> None:
        self._json(status, {"error": message}, extra)

    def _check_host(self) -> None:
        """Refuse requests addressed to a host name that is not this machine's (DNS rebinding).

        A web page the user visits can have its own name resolve to this
        server's address and then read and post here as "same origin"; its
        requests still carry that name. An address (any: the server may be
        shared on a network with ``--host``), ``localhost`` and this machine's
        own names are this server; every other name is refused, whatever
        address the server is bound to (127.0.0.2 and 0.0.0.0 were not checked).
        """
        given = self.headers.get_all("Host") or []
        if len(given) > 1:
            # Which one names the server is the question a proxy in front may have answered otherwise (RFC 9112).
            raise RequestError(HTTPStatus.BAD_REQUEST, f"{len(given)} Host headers in one request: send one")
        host = (given[0] if given else "").strip()
        found = _HOST.fullmatch(host)
        name = (found.group("v6") or found.group("name")) if found else None
        if name is None or not (_is_address(name) or name.lower().rstrip(".") in _own_names()):
            raise RequestError(HTTPStatus.FORBIDDEN, f"host {host!r} is not this review server")

    def _body(self) -> Any:
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            raise RequestError(HTTPStatus.LENGTH_REQUIRED, "a JSON body with a Content-Length is required")
        try:
            length = int(length_text)
        except ValueError:
            raise RequestError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
        if length < 0:
            raise RequestError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
        if length > MAX_BODY:
            raise RequestError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"request body over {MAX_BODY} bytes")
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            # Also keeps other web sites from posting here with a plain form.
            raise RequestError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the correction as application/json")
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raw = b""
        if len(raw) < length:
            # What is left of the stream cannot be trusted to start the next request.
            self.close_connection = True
            raise RequestError(HTTPStatus.BAD_REQUEST, "the body is shorter than its Content-Length")
        try:
            return json_document(raw.decode("utf-8"))
        except ValueError as exc:  # not UTF-8, not JSON, or a number too long
            raise RequestError(HTTPStatus.BAD_REQUEST, f"the body is not JSON: {exc}") from None
        except RecursionError:
            raise RequestError(HTTPStatus.BAD_REQUEST, "the body is nested too deeply") from None

    def _change(self) -> tuple[Any, str | None]:
        """A change's body, and the revision of the state it was made on (taken out of it), if it says."""
        body = self._body()
        if not isinstance(body, dict) or "revision" not in body:
            return body, None
        revision = body.pop("revision")
        if not isinstance(revision, str):
            raise RequestError(HTTPStatus.BAD_REQUEST, "$.revision: must be the revision /api/state gave")
        return body, revision

    def _guarded(self, route: Any) -> None:
        try:
            self._check_host()
            route()
        except RequestError as exc:
            self._error(exc.status, exc.message)
        except ChangedElsewhere as exc:
            # Said in the answer itself, so the page loads the match again without matching the message's words.
            self._json(HTTPStatus.CONFLICT, {"error": exc.reason, "changed_elsewhere": True})
        except CorrectionRefused as exc:
            self._error(HTTPStatus.CONFLICT, exc.reason)
        except DigitiseError as exc:
            # A bad request body: say where in it ("$.dice[0]: ..."), not which file.
            where = f"{exc.where}: " if exc.path == "request" and exc.where and exc.where != "$" else ""
            self._error(HTTPStatus.BAD_REQUEST, where + exc.reason if exc.path == "request" else exc.message)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except TimeoutError:
            # The client went silent before its answer: nobody to tell.
            self.close_connection = True
        except Exception as exc:
            # A bug here must cost one answer, not the connection with no word: the page shows the message,
            # the terminal the traceback.
            log.exception("review server: %s %s", self.command, self.path[:200])
            self.close_connection = True
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR,
                        f"internal error ({type(exc).__name__}: {exc}); the terminal running digitise review "
                        "shows the details")

    # -- routes ------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._guarded(self._get)

    def do_HEAD(self) -> None:
        self._guarded(self._get)

    def do_POST(self) -> None:
        self._guarded(self._post)

    def do_PUT(self) -> None:
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "only GET and POST", {"Allow": "GET, HEAD, POST"})

    do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = do_PUT

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (an unknown method, a request line too long) as JSON, like ours."""
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.close_connection = True
        self._error(status, message or status.phrase)

    def _session_for(self, path: str) -> tuple[ReviewSession | None, str]:
        """The session a path is for and the path within it; (None, path) for the folder's own pages."""
        if self.server.session is not None:
            with self.server.renewing:
                # Made again after a new scan of the match (see ReviewSession.renewed).
                self.server.session = self.server.session.renewed()
                return self.server.session, path
        folder = self.server.folder
        found = _MATCH.match(path)
        if folder is None or found is None:
            return None, path
        try:
            session = folder.session(int(found.group(1)))
        except KeyError:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no match {found.group(1)} in this folder") from None
        return session, found.group(2) or ""

    def _folder_get(self, path: str) -> None:
        folder = self.server.folder
        if folder is None:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such page: {path[:80]}")
        if path in ("/", "/index.html"):
            self._static("folder.html")
        elif path == "/api/matches":
            self._json(HTTPStatus.OK, {"folder": str(folder.folder), "matches": folder.matches()})
        else:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such page: {path[:80]}")

    def _get(self) -> None:
        parts = urlsplit(self.path)
        if parts.path.startswith("/static/"):
            self._static(unquote(parts.path[len("/static/") :]))
            return
        if parts.path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
            return
        folder = self.server.folder
        found = _MATCH.match(parts.path) if folder is not None else None
        if folder is not None and found is not None and (found.group(2) or "") in ("", "/", "/index.html"):
            # The page with the match opened (solved on first use) and its first turn drawn; a match that
            # cannot be opened says why on its page, from its state request.
            if not folder.holds(int(found.group(1))):
                raise RequestError(HTTPStatus.NOT_FOUND, f"no match {found.group(1)} in this folder")
            if not found.group(2):
                # A match's page is /m/N/: its links are relative to that folder.
                self._send(HTTPStatus.MOVED_PERMANENTLY, b"", "text/plain", {"Location": parts.path + "/"})
            else:
                try:
                    opened = folder.session(int(found.group(1)))
                except DigitiseError:
                    # Said on the page, by its state request, as when the page comes alone.
                    self._static("index.html")
                else:
                    self._first_view(opened)
            return
        session, path = self._session_for(parts.path)
        if session is None:
            self._folder_get(path)
            return
        if path in ("/", "/index.html"):
            self._first_view(session)
        elif path == "/api/state":
            self._json(HTTPStatus.OK, session.state())
        elif path == "/api/board.svg":
            self._svg(parse_qs(parts.query))
        elif path == "/api/export.mat":
            text = session.export_mat()
            name = session.export_name()
            self._send(
                HTTPStatus.OK,
                text.encode("utf-8"),
                "text/plain; charset=utf-8",
                # The plain name for any client, the name as it is (RFC 6266) for those that read it.
                {"Content-Disposition": f"attachment; filename=\"{_safe_filename(name)}\"; "
                                        f"filename*=UTF-8''{quote(name, safe='', errors='replace')}"},
            )
        elif (found := _CROP.match(path)) is not None:
            png = session.crop_png(int(found.group(2)), int(found.group(3)), overlay=found.group(1) == "overlay")
            if png is None:
                raise RequestError(HTTPStatus.NOT_FOUND, "no picture of that board")
            self._send(HTTPStatus.OK, png, "image/png")
        elif path.startswith("/files/"):
            self._file(session, path[len("/files/") :])
        else:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such page: {path[:80]}")

    def _post(self) -> None:
        origin = self.headers.get("Origin")
        if origin and urlsplit(origin).netloc != (self.headers.get("Host") or ""):
            raise RequestError(HTTPStatus.FORBIDDEN, "cross-origin request refused")
        session, path = self._session_for(urlsplit(self.path).path)
        if session is None:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such action: {path[:80]}")
        if path == "/api/correct":
            self._json(HTTPStatus.OK, session.correct(*self._change()))
        elif path == "/api/uncorrect":
            self._json(HTTPStatus.OK, session.uncorrect(*self._change()))
        elif path == "/api/match":
            self._json(HTTPStatus.OK, session.set_header(*self._change()))
        elif path == "/api/save":
            # An empty object: a JSON body keeps other sites from posting a plain form here. Saving writes the
            # match as it now is, whatever state the page showed: no revision to check.
            if self._change()[0] != {}:
                raise RequestError(HTTPStatus.BAD_REQUEST, "send {} to save the match")
            self._json(HTTPStatus.OK, session.save_mat())
        else:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such action: {path[:80]}")

    def _first_view(self, session: ReviewSession) -> None:
        """The match's page with its first turn to review drawn in it: no blank page while the state is fetched."""
        page = first_view((STATIC_DIR / "index.html").read_text(encoding="utf-8"), session.state())
        self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")

    def _static(self, name: str) -> None:
        if name not in STATIC_FILES:
            raise RequestError(HTTPStatus.NOT_FOUND, "no such file")
        body = (STATIC_DIR / name).read_bytes()
        self._send(HTTPStatus.OK, body, STATIC_FILES[name] + "; charset=utf-8")

    def _file(self, session: ReviewSession, raw: str) -> None:
        """A file under the report's folder; anything resolving outside it is refused."""
        relative = unquote(raw)
        root = session.root
        if "\x00" in relative or not relative:
            raise RequestError(HTTPStatus.NOT_FOUND, "no such file")
        try:
            target = (root / relative).resolve()
            inside = target.is_relative_to(root)
            found = inside and target.is_file()
        except (OSError, ValueError):  # a name the file system refuses (too long, ...): nothing there
            raise RequestError(HTTPStatus.NOT_FOUND, "no such file") from None
        if not inside:
            raise RequestError(HTTPStatus.FORBIDDEN, "outside the report's folder")
        if any(part.startswith(".") for part in target.relative_to(root).parts):
            # Hidden files and folders (a .ssh or .git kept in a home folder that holds scans) are no one's business.
            raise RequestError(HTTPStatus.FORBIDDEN, "a hidden file")
        if not found:
            raise RequestError(HTTPStatus.NOT_FOUND, "no such file")
        content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if content_type not in SAFE_FILE_TYPES and target.suffix.lower() != ".mat":
            # Scans, reports and matches only: never a page or script to run on this origin, nor a stray file.
            raise RequestError(HTTPStatus.FORBIDDEN, "only scans, reports and .mat files are served")
        if content_type not in SAFE_FILE_TYPES:
            content_type = "text/plain; charset=utf-8"
        self._send(HTTPStatus.OK, target.read_bytes(), content_type)

    def _svg(self, query: dict[str, list[str]]) -> None:
        position_id = (query.get("position") or [""])[0]
        mover_text = (query.get("mover") or [""])[0]
        if not _POSITION_ID.match(position_id):
            raise RequestError(HTTPStatus.BAD_REQUEST, "position must be a 14-character gnubg position ID")
        if mover_text not in ("bottom", "top"):
            raise RequestError(HTTPStatus.BAD_REQUEST, "mover must be bottom or top")
        try:
            position = Position.from_position_id(position_id)
        except ValueError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        highlight: list[int] = []
        for item in (query.get("highlight") or [""])[0].split(","):
            if _POINT.fullmatch(item.strip()) and int(item) <= 25:
                highlight.append(int(item))
        numbers_text = (query.get("numbers") or [mover_text])[0]
        numbers = Side(numbers_text) if numbers_text in ("bottom", "top") else Side(mover_text)
        svg = board_svg(position, Side(mover_text), numbers_for=numbers, highlight=highlight)
        self._send(HTTPStatus.OK, svg.encode("utf-8"), "image/svg+xml")


def _safe_filename(name: str) -> str:
    return re.sub(r'[^A-Za-z0-9._ -]', "_", name) or "match.mat"


def make_server(
    report: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    readings: str | Path | None = None,
    learn_dir: str | Path | None = None,
) -> ReviewServer:
    """Load the report (and its readings and saved corrections), or find a folder's reports, and bind the server.

    Raises :class:`DigitiseError` for a bad report, readings or corrections
    file, or a folder with no report, and :class:`OptionError` when the
    address cannot be bound (port in use) or ``readings`` is given with a
    folder: usage errors, as the fix is in the command line.
    """
    reviewed: ReviewSession | ReviewFolder
    if Path(report).is_dir():
        if readings is not None:
            raise OptionError("--readings names one report's readings: give a report, not a folder")
        reviewed = ReviewFolder(report, learn_dir=learn_dir)
    else:
        reviewed = ReviewSession(report, readings_path=readings, learn_dir=learn_dir)
    try:
        return ReviewServer(reviewed, host, port)
    except OSError as exc:
        hint = "try another --port" if exc.errno in (errno.EADDRINUSE, errno.EACCES) else "check --host"
        raise OptionError(f"cannot listen on {host}:{port}: {exc.strerror or exc} ({hint})") from exc

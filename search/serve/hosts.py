"""Which ``Host`` and ``Origin`` headers ``fortekit serve`` answers: no web page may read it by DNS rebinding.

The server has no authentication; listening on 127.0.0.1 keeps other machines out, but not a
web page the user opens: the page's own name (``attacker.example``) can be made to resolve to
127.0.0.1, and the browser then lets the page read whatever the server answers, since for the
browser it is the page's own origin. What gives such a request away is its ``Host`` header,
which names the page's host. So the server answers only the names it is known by (as Jupyter
and Django's ``ALLOWED_HOSTS`` do):

- bound to a loopback address: ``localhost``, ``127.0.0.1`` and ``[::1]`` (any port), and the
  address itself;
- bound to another address (the user chose to expose it): those, the address and the name
  ``--host`` gave; bound to every address (``0.0.0.0``, ``::``): any address written as an IP
  (a page cannot be made to carry an IP in its Host: DNS rebinding needs a name the attacker
  owns) and this machine's host name;
- and the names given with ``--allowed-host`` (``.example.org``: it and its subdomains; ``*``:
  every name, which undoes this protection).

A request that changes something (any method but GET, HEAD and OPTIONS) sent by a web page
carries an ``Origin`` header; it is accepted only from the server's own pages (the origin's
host and port are the ``Host`` header's) or from a host named with ``--allowed-host``. No CORS
header is ever sent, so a page of another origin cannot read an answer either.

This module holds the rules only (no FastAPI); the check of each request is
:func:`fortekit.search.serve.errors_http.install_error_handling`'s.

Example:
    >>> policy = HostPolicy()
    >>> policy.allows_host("localhost:8000"), policy.allows_host("attacker.example:8000")
    (True, False)
    >>> HostPolicy(bound="0.0.0.0", allowed=(".example.org",)).allows_host("search.example.org")
    True
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from fortekit.errors import Errors, ServeError

__all__ = ["LOOPBACK_NAMES", "SAFE_METHODS", "HostPolicy", "check_allowed_host", "host_of"]

#: The names every server answers to: only a program on this machine reaches it by them.
LOOPBACK_NAMES: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
#: The methods that change nothing: a request of another method from a web page needs its Origin checked.
SAFE_METHODS: frozenset[str] = frozenset({"GET", "HEAD", "OPTIONS"})
_WILDCARDS = ("0.0.0.0", "::", "")
# A host as a Host header or URL writes it: a DNS name, an IPv4 address, or an IPv6 one in brackets;
# then an optional port. Nothing else (no user info, path or space) is a host.
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+(?:%[0-9A-Za-z._~-]+)?)\]|(?P<name>[A-Za-z0-9._-]+))"
                   r"(?::(?P<port>\d{1,5}))?$")


def host_of(header: str) -> str | None:
    """The host of a ``Host`` header (lower case, without port, brackets or a final dot), or None.

    Args:
        header: the header's value, e.g. ``"LocalHost:8000"`` or ``"[::1]:8000"``.

    Returns:
        The host, or None for a value that is no host (empty, a path, a space, a bad IPv6 ...).

    Example:
        >>> host_of("LocalHost:8000"), host_of("[::1]:8000"), host_of("a.example."), host_of("a b")
        ('localhost', '::1', 'a.example', None)
    """
    found = _HOST.match(header.strip())
    if found is None:
        return None
    if found.group("v6") is not None:
        try:
            return str(ipaddress.IPv6Address(found.group("v6").split("%")[0]))
        except ValueError:
            return None
    name = found.group("name").lower()
    name = name[:-1] if name.endswith(".") else name
    return name or None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def check_allowed_host(value: str) -> str:
    """An ``--allowed-host`` value as the policy keeps it (lower case; ``*`` and ``.suffix`` kept).

    Args:
        value: a name or address as written in a URL, ``.example.org``, or ``*``.

    Returns:
        The normalised value.

    Raises:
        ServeError: a value that is no host: a scheme, a port, a path, a space (E812).

    Example:
        >>> check_allowed_host("Search.Example.org"), check_allowed_host("[FE80::1]"), check_allowed_host("*")
        ('search.example.org', 'fe80::1', '*')
        >>> check_allowed_host(check_allowed_host("[fe80::1]"))  # a value kept is valid again
        'fe80::1'
        >>> check_allowed_host("http://example.org")
        Traceback (most recent call last):
        ...
        fortekit.errors.ServeError: [E812] --allowed-host 'http://example.org' is not a host name: ...
    """
    if value == "*":
        return value
    if ":" in value and not value.startswith("["):  # a bare IPv6 address (as the policy keeps one)
        try:
            return str(ipaddress.IPv6Address(value))
        except ValueError:
            pass
    suffix = value.startswith(".")
    host = host_of(value[1:] if suffix else value)
    if host is None or ":" in value.lstrip("[").split("]")[-1]:
        problem = "it holds a scheme, a port or a path" if any(mark in value for mark in ":/") else \
            "it holds characters a host name does not"
        raise ServeError(Errors.E812.format(value=value, problem=problem))
    if suffix and _is_ip(host):
        raise ServeError(Errors.E812.format(value=value, problem="a leading '.' is for names, not addresses"))
    return "." + host if suffix else host


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The Host names a server answers to, from the address it listens on and ``--allowed-host``.

    Attributes:
        bound: the address (or name) the server listens on, as ``--host`` gave it.
        allowed: further names (``--allowed-host``): a host, ``.example.org`` for it and its
            subdomains, or ``*`` for every host (unsafe).
        machine_name: this machine's host name, answered to when bound to every address
            (default: :func:`socket.gethostname`).
    """

    bound: str = "127.0.0.1"
    allowed: tuple[str, ...] = ()
    machine_name: str = field(default_factory=lambda: socket.gethostname().lower())

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed", tuple(check_allowed_host(value) for value in self.allowed))

    @property
    def loopback(self) -> bool:
        """Whether the server listens on a loopback address only (this machine alone reaches it)."""
        return _is_loopback(self.bound)

    @property
    def everyone(self) -> bool:
        """Whether ``--allowed-host '*'`` switched the check off."""
        return "*" in self.allowed

    def names(self) -> list[str]:
        """The names answered to, for a message (``any IP address`` when bound to every address).

        Example:
            >>> HostPolicy(allowed=("example.org",)).names()
            ['localhost', '127.0.0.1', '[::1]', 'example.org']
        """
        shown = [f"[{host}]" if ":" in host else host for host in self._exact()]
        if self.bound in _WILDCARDS:
            shown.append("any IP address")
        return shown + [host for host in self.allowed if host.startswith(".") or host == "*"]

    def _exact(self) -> list[str]:
        hosts = list(LOOPBACK_NAMES)
        bound = host_of(self.bound if ":" not in self.bound else f"[{self.bound}]") or ""
        if self.bound in _WILDCARDS:
            hosts.append(self.machine_name)
        elif bound:
            hosts.append(bound)
        hosts += [host for host in self.allowed if not host.startswith(".") and host != "*"]
        return list(dict.fromkeys(hosts))

    def allows_host(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header is answered.

        Args:
            header: the header's value (None: the request has none).

        Returns:
            True for a name the server answers to; False for any other, a missing or malformed one.

        Example:
            >>> HostPolicy().allows_host("127.0.0.1:8000"), HostPolicy().allows_host(None)
            (True, False)
        """
        if self.everyone:
            return True
        host = host_of(header) if header is not None else None
        if host is None:
            return False
        if host in self._exact() or (self.bound in _WILDCARDS and _is_ip(host)):
            return True
        return any(host == rule[1:] or host.endswith(rule) for rule in self.allowed if rule.startswith("."))

    def allows_origin(self, origin: str, host_header: str | None, scheme: str = "http") -> bool:
        """Whether a state-changing request from a page of ``origin`` is answered.

        Args:
            origin: the ``Origin`` header (``scheme://host[:port]``, or ``null``).
            host_header: the request's ``Host`` header (already allowed).
            scheme: the request's scheme (the port of a Host header without one).

        Returns:
            True when the origin is the server's own (the same host and port as the Host header),
            or its host is named by ``--allowed-host``; False otherwise (``null`` included).

        Example:
            >>> HostPolicy().allows_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
            True
            >>> HostPolicy().allows_origin("http://localhost:9000", "127.0.0.1:8000")
            False
        """
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
            return False
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        hostname = parts.hostname or ""
        origin_host = host_of(f"[{hostname}]" if ":" in hostname else hostname)
        if origin_host is None:
            return False
        if host_header is not None:
            found = _HOST.match(host_header.strip())
            default = 443 if scheme == "https" else 80
            same_port = found is not None and int(found.group("port") or default) == port
            if same_port and host_of(host_header) == origin_host:
                return True
        return self.everyone or any(
            origin_host == rule
            or (rule.startswith(".") and (origin_host == rule[1:] or origin_host.endswith(rule)))
            for rule in self.allowed)

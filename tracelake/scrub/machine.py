"""Personal data inside machine-written text (part of :mod:`freetext`'s pass).

* a user's name in a home directory (``/Users/AlexandreHamel/``, ``/home/kim.minjun/``,
  ``C:\\Users\\MinjunKim\\``): the directory name, unless it is a service account
  (root, ubuntu, runner, app, ...);
* MAC addresses (``00:1A:2B:3C:4D:5E``, ``00-1a-2b-3c-4d-5e``, ``001a.2b3c.4d5e``): a device
  identifier;
* IPv4 addresses written into host names (``ip-203-0-113-25``, ``ec2-203-0-113-25.compute-1
  .amazonaws.com``): the four numbers;
* the machine-readable zone of a passport or an id card (``P<USAPALMER<<SUZANNE<<<...``):
  the whole line;
* webhook URLs whose path is the secret (Slack, Discord, Teams): the path after the host;
* coordinates after geo:/lat/lng/위도/경도, and in degrees, minutes and seconds.
"""

from __future__ import annotations

import re

Span = tuple[int, int, str]

_ACCOUNTS = (
    "root ubuntu runner app admin user users ec2-user centos debian fedora vagrant docker node "
    "www-data nobody jenkins gitlab-runner circleci travis build builder deploy ci shared public "
    "default guest administrator all users localservice networkservice systemprofile"
)
_SERVICE_ACCOUNTS = frozenset(_ACCOUNTS.split())
# (case-sensitive: /api/v1/users/42 is a resource, not a home directory)
_HOME = re.compile(r"(?:/Users/|/home/|\\Users\\|\\Documents and Settings\\)([^/\\\s\"'<>:]{1,64})")
_MAC = re.compile(
    r"(?<![0-9A-Fa-f:.-])(?:[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![0-9A-Fa-f]|[:.-][0-9A-Fa-f])"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
HOST_IP = re.compile(rf"(?<=[A-Za-z0-9]-){_OCTET}(?:-{_OCTET}){{3}}(?![\d])")
_MRZ = re.compile(r"(?<![A-Z0-9<])[A-Z0-9<]{5,}<<[A-Z0-9<]{10,}")
_WEBHOOK = re.compile(
    r"(?i:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/|"
    r"webhook\.office\.com/webhookb2/|outlook\.office\.com/webhook/)([^\s\"'<>]+)"
)
# Coordinates in text: geo:37.5665,126.9780, 위도 37.5665 경도 126.9780, lat=37.56 lng=126.97
_GEO = re.compile(
    r"(?i:geo:|lat(?:itude)?\s*[:=]?\s*|lo?ng(?:itude)?\s*[:=]?\s*|위도\s*:?\s*|경도\s*:?\s*)"
    r"(-?\d{1,3}\.\d{3,}(?:\s*,\s*-?\d{1,3}\.\d{3,})?)"
    r"|(?<![\d.])\d{1,3}°\s?\d{1,2}['′]\s?\d{1,2}(?:\.\d+)?[\"″]?\s?[NSEW]"
)
HINT = re.compile(
    r"(?i:users|home|documents and settings|geo:|lat|lng|long|°)|위도|경도|[0-9A-Fa-f]{2}[:-][0-9A-Fa-f]{2}[:-]|"
    r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.|[A-Za-z0-9]-\d{1,3}-\d|<<|hook"
)


def in_token(text: str) -> bool:
    """Whether a code-like token (no spaces) holds a MAC address or an IP in a host name."""
    return HOST_IP.search(text) is not None or _MAC.search(text) is not None


def spans(text: str, out: list[Span]) -> None:
    """Append the spans of the values above found in *text*."""
    for match in _HOME.finditer(text):
        if match.group(1).lower() not in _SERVICE_ACCOUNTS:
            out.append((match.start(1), match.end(1), "PERSON"))
    out.extend((m.start(), m.end(), "DEVICE_ID") for m in _MAC.finditer(text))
    out.extend((m.start(), m.end(), "IP_ADDRESS") for m in HOST_IP.finditer(text))
    out.extend((m.start(), m.end(), "PASSPORT") for m in _MRZ.finditer(text))
    out.extend((m.start(1), m.end(1), "CREDENTIAL") for m in _WEBHOOK.finditer(text))
    for match in _GEO.finditer(text):
        group = 1 if match.group(1) is not None else 0
        out.append((match.start(group), match.end(group), "LOCATION"))

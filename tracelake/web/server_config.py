"""``tracelake serve`` settings, and the rule that a server reachable from other machines has
a token."""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from tracelake.errors import ConfigError

TOKEN_ENV = "TRACELAKE_UI_TOKEN"
MIN_TOKEN_LENGTH = 16
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and ``localhost``; anything else (0.0.0.0, a LAN address) is not."""
    host = host.strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class WebConfig:
    """``token`` None: no login needed (loopback only). ``secure_cookies`` False only for a
    plain-HTTP test server that is not on localhost (browsers treat localhost as secure)."""

    host: str = "127.0.0.1"
    port: int = 8080
    token: str | None = None
    read_only: bool = False
    follow: bool = True
    secure_cookies: bool = True
    session_hours: float = 12.0
    # Signs session cookies; a fresh one per process unless given (sessions end on restart).
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> WebConfig:
        env = os.environ if env is None else env
        token = env.get(TOKEN_ENV) or None
        secret = env.get("TRACELAKE_UI_SECRET")
        clean = {k: v for k, v in overrides.items() if v is not None}
        config = cls(
            token=token,
            **({"secret": secret.encode()} if secret else {}),  # type: ignore[arg-type]
            **clean,  # type: ignore[arg-type]
        )
        config.check()
        return config

    def check(self) -> None:
        if self.token is not None and len(self.token) < MIN_TOKEN_LENGTH:
            raise ConfigError(
                f"{TOKEN_ENV} is {len(self.token)} characters; use at least {MIN_TOKEN_LENGTH} "
                "(e.g. `openssl rand -hex 32`)"
            )
        if self.token is None and not is_loopback(self.host):
            raise ConfigError(
                f"refusing to serve on {self.host}, which other machines can reach, without a "
                f"token: set {TOKEN_ENV} (e.g. `export {TOKEN_ENV}=$(openssl rand -hex 32)`) or "
                "use --host 127.0.0.1"
            )
        if not 0 < self.port < 65536:
            raise ConfigError(f"--port {self.port} is not a TCP port (1-65535)")

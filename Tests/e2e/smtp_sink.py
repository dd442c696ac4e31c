"""A real SMTP server on loopback (aiosmtpd) that keeps every message it receives,
parsed with the standard `email` package, for the end-to-end tests of features that
send email. It can be stopped and started again on the same port, to play a relay outage."""

from __future__ import annotations

import email
import email.policy
import re
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Callable

from aiosmtpd.controller import Controller

from e2e_support import free_port


@dataclass
class Mail:
    """One message as it arrived: the envelope, the bytes, and the parsed message."""
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    message: EmailMessage
    received_at: float

    @property
    def to(self) -> str:
        return str(self.message["To"])

    @property
    def subject(self) -> str:
        """Decoded (RFC 2047)."""
        return str(self.message["Subject"])

    @property
    def raw_subject(self) -> str:
        """The Subject header as sent, unfolded: `=?UTF-8?B?...?=` when it is not ASCII."""
        head = self.raw.split(b"\r\n\r\n", 1)[0].replace(b"\r\n ", b" ").replace(b"\r\n\t", b" ")
        match = re.search(rb"^Subject: ?(.*)$", head, re.MULTILINE | re.IGNORECASE)
        return match.group(1).decode("ascii") if match else ""

    def part(self, content_type: str) -> EmailMessage | None:
        for part in self.message.walk():
            if part.get_content_type() == content_type and not part.is_multipart():
                return part
        return None

    @property
    def text(self) -> str:
        part = self.part("text/plain")
        return part.get_content() if part is not None else ""

    @property
    def html(self) -> str:
        part = self.part("text/html")
        return part.get_content() if part is not None else ""

    def code(self, length: int = 8) -> str | None:
        """The one-time code: the only word of exactly `length` digits in the text part (digits
        inside a word, as in a random address like `x-dd85205967a4@example.com`, are not one)."""
        found = re.findall(rf"(?<![0-9A-Za-z])(\d{{{length}}})(?![0-9A-Za-z])", self.text)
        return found[0] if len(set(found)) == 1 else None


class SMTPSink:
    """`start()`, `stop()`, and `wait_for(...)` the messages that arrived."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.url = f"smtp://127.0.0.1:{self.port}"
        self.mails: list[Mail] = []
        self.cond = threading.Condition()
        self.controller: Controller | None = None

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's handler hook
        raw = envelope.original_content or envelope.content
        message = email.message_from_bytes(raw, policy=email.policy.default)
        mail = Mail(envelope.mail_from, list(envelope.rcpt_tos), raw, message, time.time())
        with self.cond:
            self.mails.append(mail)
            self.cond.notify_all()
        return "250 2.0.0 Message accepted for delivery"

    def start(self) -> "SMTPSink":
        # The socket is bound with SO_REUSEADDR, so a restart gets the same port at once.
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, ready_timeout=10)
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    @property
    def running(self) -> bool:
        return self.controller is not None

    def to(self, address: str) -> list[Mail]:
        with self.cond:
            return [m for m in self.mails if address.lower() in (r.lower() for r in m.rcpt_tos)]

    def wait_for(self, predicate: Callable[[Mail], bool], timeout: float = 15) -> Mail | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for mail in self.mails:
                    if predicate(mail):
                        return mail
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def next_to(self, address: str, after: int = 0, timeout: float = 15) -> Mail:
        """The first message to `address` beyond the `after` it had already received."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                mails = [m for m in self.mails if address.lower() in (r.lower() for r in m.rcpt_tos)]
                if len(mails) > after:
                    return mails[after]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no email to {address} within {timeout} s (had {after})")
                self.cond.wait(left)

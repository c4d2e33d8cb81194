"""SSH signatures for the audit trail, made and checked in-process: the audit commits (the
`gpgsig` header Git writes and `git verify-commit` checks with `gpg.format=ssh`) and the
checkpoints published outside the repository.

The format is OpenSSH's `SSHSIG` (PROTOCOL.sshsig in OpenSSH's source): a signature over
`"SSHSIG" || string(namespace) || string(reserved) || string(hash algorithm) || string(H(message))`,
wrapped with the signer's public key in an armored blob. Git signs a commit object without its
`gpgsig` header in the namespace `git`; checkpoints use their own namespace, so a signature made
for one can never pass as the other. Doing it here rather than through `ssh-keygen` (what Git
runs) costs microseconds a signature instead of a process, which is what lets `audit verify`
check 100,000 records in seconds; a test checks that `git verify-commit` accepts what we sign.

Keys are Ed25519 (OpenSSH's default): one per writer, from `audit_signing_key` or generated on
first use in the state directory. Keys are read and signatures made with `cryptography`;
signatures are checked with libsodium (PyNaCl), whose Ed25519 verification takes 60 us where the
OpenSSL that `cryptography` bundles takes 150 (measured here; the check dominates `audit verify`
of a trail without checkpoints: 50,000 commits at 100,000 records).
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from engines.outcomes import PermanentError
from hypergov.redaction import register_key

MAGIC = b"SSHSIG"
VERSION = 1
GIT_NAMESPACE = "git"
CHECKPOINT_NAMESPACE = "hypergov-audit-checkpoint@hypergov"
HASH = "sha512"
KEY_TYPE = "ssh-ed25519"
_ARMOR_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_ARMOR_END = "-----END SSH SIGNATURE-----"
_LINE = 70  # ssh-keygen wraps the armored base64 at 70 columns


class SigningKeyError(PermanentError):
    """The signing key cannot be used; the message says which file and what to do."""

    reason = "audit-signing-key"


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _read_string(blob: bytes, at: int) -> tuple[bytes, int]:
    if at + 4 > len(blob):
        raise ValueError("truncated")
    (size,) = struct.unpack(">I", blob[at:at + 4])
    end = at + 4 + size
    if end > len(blob):
        raise ValueError("truncated")
    return blob[at + 4:end], end


def public_blob(key: Ed25519PublicKey) -> bytes:
    """The SSH wire form of the public key (what signatures carry and allowed-signers lists)."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _string(KEY_TYPE.encode()) + _string(raw)


def public_line(blob: bytes) -> str:
    """`ssh-ed25519 AAAA...`: the form of `.pub` files and of git's allowed-signers file."""
    key_type, _ = _read_string(blob, 0)
    return f"{key_type.decode()} {base64.b64encode(blob).decode()}"


def blob_of_line(line: str) -> bytes | None:
    """The key blob of `ssh-ed25519 AAAA...` (None when it is not one)."""
    parts = line.split()
    for i, part in enumerate(parts[:-1]):
        if part.startswith(("ssh-", "ecdsa-", "sk-")):
            try:
                return base64.b64decode(parts[i + 1], validate=True)
            except ValueError:
                return None
    return None


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 key that signs audit commits and checkpoints."""

    private: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load(cls, path: Path) -> SigningKey:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise SigningKeyError(f"audit_signing_key {path}: cannot read it ({exc.strerror})") from exc
        register_key(raw)  # masked wherever it could be quoted (hypergov.redaction)
        try:
            key = serialization.load_ssh_private_key(raw, password=None)
        except (ValueError, TypeError) as exc:
            raise SigningKeyError(f"audit_signing_key {path}: not an unencrypted OpenSSH private key ({exc}); make "
                                  "one with `ssh-keygen -t ed25519 -N '' -f FILE`") from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError(f"audit_signing_key {path}: a {type(key).__name__.removesuffix('PrivateKey')} key; "
                                  "hypergov signs with Ed25519 (`ssh-keygen -t ed25519 -N '' -f FILE`)")
        return cls(key)

    @classmethod
    def of_writer(cls, path: Path) -> SigningKey:
        """The key at `path`, made (0600, with `path.pub` beside it) when there is none yet."""
        if path.exists():
            return cls.load(path)
        key = cls.generate()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key.private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                                serialization.NoEncryption()))
        tmp.replace(path)
        path.with_name(path.name + ".pub").write_text(key.public_line + " hypergov-audit\n")
        return key

    @property
    def blob(self) -> bytes:
        return public_blob(self.private.public_key())

    @property
    def public_line(self) -> str:
        return public_line(self.blob)

    def sign(self, message: bytes, namespace: str) -> str:
        """The armored SSHSIG signature of `message` in `namespace`."""
        signature = self.private.sign(_signed_data(message, namespace))
        blob = (MAGIC + struct.pack(">I", VERSION) + _string(self.blob) + _string(namespace.encode()) + _string(b"")
                + _string(HASH.encode()) + _string(_string(KEY_TYPE.encode()) + _string(signature)))
        text = base64.b64encode(blob).decode()
        lines = [text[i:i + _LINE] for i in range(0, len(text), _LINE)]
        return "\n".join([_ARMOR_BEGIN, *lines, _ARMOR_END]) + "\n"


def _signed_data(message: bytes, namespace: str) -> bytes:
    digest = hashlib.new(HASH, message).digest()
    return MAGIC + _string(namespace.encode()) + _string(b"") + _string(HASH.encode()) + _string(digest)


@dataclass(frozen=True)
class Checked:
    """A signature's verdict: `signer` is the key blob that made a good signature (None: not
    good); `why` says what is wrong otherwise; `foreign` when we cannot check it here (a key type
    other than Ed25519: left to `ssh-keygen`)."""

    signer: bytes | None
    why: str = ""
    foreign: bool = False


def check(armored: str, message: bytes, namespace: str, allowed: Iterable[bytes] | None = None) -> Checked:
    """Whether `armored` is a good signature of `message` in `namespace` by one of `allowed`
    (public key blobs; None: by whichever key it names, for a caller that judges the key itself)."""
    try:
        body = "".join(line.strip() for line in armored.strip().splitlines()
                       if line.strip() not in (_ARMOR_BEGIN, _ARMOR_END))
        blob = base64.b64decode(body, validate=True)
        if not blob.startswith(MAGIC) or struct.unpack(">I", blob[6:10])[0] != VERSION:
            return Checked(None, "not an SSH signature (SSHSIG, version 1)")
        key, at = _read_string(blob, 10)
        signed_ns, at = _read_string(blob, at)
        _, at = _read_string(blob, at)
        hash_name, at = _read_string(blob, at)
        sig_blob, _ = _read_string(blob, at)
        sig_type, sat = _read_string(sig_blob, 0)
        raw_sig, _ = _read_string(sig_blob, sat)
        key_type, kat = _read_string(key, 0)
        raw_key, _ = _read_string(key, kat)
    except (ValueError, struct.error):
        return Checked(None, "a malformed SSH signature")
    if signed_ns.decode(errors="replace") != namespace:
        return Checked(None, f"signed for {signed_ns.decode(errors='replace')!r}, not {namespace!r}")
    if allowed is not None and key not in set(allowed):
        return Checked(None, f"signed by {fingerprint(key)}, which is not an allowed signer")
    if key_type != KEY_TYPE.encode() or sig_type != KEY_TYPE.encode():
        return Checked(None, f"a {key_type.decode(errors='replace')} signature", foreign=True)
    if hash_name.decode() not in ("sha512", "sha256"):
        return Checked(None, f"hash {hash_name.decode(errors='replace')!r} is not one SSHSIG allows")
    digest = hashlib.new(hash_name.decode(), message).digest()
    data = MAGIC + _string(signed_ns) + _string(b"") + _string(hash_name) + _string(digest)
    try:
        VerifyKey(raw_key).verify(data, raw_sig)
    except (BadSignatureError, ValueError, TypeError):
        return Checked(None, f"a bad signature by {fingerprint(key)} (the signed content was changed)")
    return Checked(key)


def fingerprint(blob: bytes) -> str:
    """`SHA256:...`, as `ssh-keygen -l` prints a key."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


# -- commits ---------------------------------------------------------------------------------------

def signed_commit(unsigned: bytes, key: SigningKey) -> bytes:
    """The commit object `unsigned` (headers, blank line, message) with the `gpgsig` header Git
    writes for an SSH signature: each line of the armored signature after `gpgsig `, the rest
    indented by one space, inserted after the last header."""
    signature = key.sign(unsigned, GIT_NAMESPACE)
    head, sep, message = unsigned.partition(b"\n\n")
    lines = signature.rstrip("\n").split("\n")
    header = "gpgsig " + "\n ".join(lines)
    return head + b"\n" + header.encode() + sep + message


def split_signature(commit: bytes) -> tuple[str | None, bytes]:
    """The armored signature of a commit object and the bytes it signs (the object without its
    `gpgsig` header); (None, commit) when it carries none."""
    head, sep, message = commit.partition(b"\n\n")
    lines = head.split(b"\n")
    kept: list[bytes] = []
    signature: list[str] = []
    inside = False
    for line in lines:
        if line.startswith(b"gpgsig "):
            inside = True
            signature.append(line[len(b"gpgsig "):].decode())
        elif inside and line.startswith(b" "):
            signature.append(line[1:].decode())
        else:
            inside = False
            kept.append(line)
    if not signature:
        return None, commit
    return "\n".join(signature) + "\n", b"\n".join(kept) + sep + message


def allowed_signers(path: Path) -> set[bytes]:
    """The key blobs of a git allowed-signers file (`principals [options] keytype base64`)."""
    keys = set()
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            blob = blob_of_line(line)
            if blob is not None:
                keys.add(blob)
    return keys


def allowed_signers_text(keys: Iterable[bytes], principal: str = "hypergov@localhost") -> str:
    """An allowed-signers file for `git verify-commit` (gpg.ssh.allowedSignersFile)."""
    return "".join(f"{principal} {public_line(k)}\n" for k in sorted(keys))

"""A fresh age X25519 identity and its recipient (run alone: two lines, identity then recipient).

The format is age's (https://age-encryption.org/v1, "X25519 recipients"): the 32-byte
scalar, Bech32 with HRP "AGE-SECRET-KEY-" (upper case), and its X25519 public key, Bech32
with HRP "age". Only the harness uses it: `oracles/talosctl/check` seals a throwaway bundle
for a scratch copy of a fleet, so that `fleetc talos render` can decrypt it.
"""

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives import serialization

CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def polymod(values):
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    return chk


def bech32(hrp, data):
    acc, bits, five = 0, 0, []
    for byte in data:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            five.append((acc >> bits) & 31)
    if bits:
        five.append((acc << (5 - bits)) & 31)
    expand = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = polymod(expand + five + [0] * 6) ^ 1
    check = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(CHARSET[d] for d in five + check)


def generate():
    """A fresh identity and its recipient."""
    key = X25519PrivateKey.generate()
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return bech32("age-secret-key-", raw).upper(), bech32("age", pub)


if __name__ == "__main__":
    print("\n".join(generate()))

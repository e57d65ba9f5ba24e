"""A workload identity issuer for tests: what a platform (Kubernetes, a cloud, a CI runner) is to
a deployment. It holds a key pair and signs short-lived JWTs naming the workload (`sub`) for an
audience, which the platform writes to a file or an environment variable of the deployment. An
authorization server that trusts the issuer (testing/oauth_server.py `workload_issuers`) takes
such a JWT as the assertion of the RFC 7523 JWT bearer grant."""

from __future__ import annotations

import time
import uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ISSUER = "https://workload-issuer.test"


class WorkloadIssuer:
    def __init__(self, issuer: str = ISSUER) -> None:
        self.issuer = issuer
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.public_pem = (
            self._key.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
        )

    def token(self, audience: str, subject: str = "odoo-deployment", lifetime: int = 600) -> str:
        """A workload JWT for `audience` (the authorization server's issuer); negative `lifetime`:
        one that expired that long ago."""
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience,
            "iat": now - max(0, -lifetime) - 60,
            "exp": now + lifetime,
            "jti": str(uuid.uuid4()),
        }
        return jwt.encode(claims, self._key, algorithm="ES256")

// Bearer-token authentication of the REST server's requests: tokens are kept as SHA-256
// digests and compared in constant time in the token's content; a read-only token may
// make reads and the scan reports engines send after reading.
#pragma once

#include <openssl/sha.h>

#include <array>
#include <string_view>
#include <vector>

namespace httplib {
struct Request;
}

namespace floe::server::internal {

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest Sha256(std::string_view data);

// RFC 6750 §2.1 b64token: what a configured token must be.
bool IsToken68(std::string_view token);

enum class Access { kNone, kRead, kAll };

// What the request's `Authorization: Bearer <token>` header grants: kAll when no token
// is configured at all.
Access Authorized(const std::vector<Digest>& token_digests,
                  const std::vector<Digest>& read_digests, const httplib::Request& req);

// Whether a read-only token may make this request: reads, and the scan reports engines
// send after reading (POST .../tables/{table}/metrics).
bool IsRead(const httplib::Request& req);

}  // namespace floe::server::internal

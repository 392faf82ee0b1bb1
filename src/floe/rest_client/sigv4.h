// AWS Signature Version 4 for the REST catalog client (AWS Glue's and S3 Tables' Iceberg
// REST endpoints). The time is an input, so the signer is checked against AWS's
// published SigV4 test suite (sigv4_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace floe::rest_client {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "": none
};

struct SigV4Request {
  std::string method;  // "GET"
  // The path as it goes on the wire (already percent-encoded where the HTTP layer
  // encodes): the canonical path encodes it once more, as AWS services other than S3
  // expect.
  std::string path;
  std::string query;  // as sent, without '?'
  // Every header to sign, including host; names in any case.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string authorization;  // the Authorization header's value
};

// `amz_date`: "20150830T123600Z" (the X-Amz-Date header, which must be among the
// request's headers). A session token is signed when the request carries an
// X-Amz-Security-Token header.
SigV4Signature SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                      const std::string& region, const std::string& service,
                      const std::string& amz_date);

// UTC "YYYYMMDDTHHMMSSZ" of a wall time in ms.
std::string AmzDate(int64_t unix_ms);

}  // namespace floe::rest_client

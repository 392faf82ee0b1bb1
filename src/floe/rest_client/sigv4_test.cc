// The signer against AWS's published Signature Version 4 test suite
// (aws-sig-v4-test-suite, as vendored by botocore in tests/unit/auth/aws4_testsuite):
// credentials AKIDEXAMPLE, region us-east-1, service "service", 2015-08-30T12:36:00Z.
#include "floe/rest_client/sigv4.h"

#include <gtest/gtest.h>

namespace floe::rest_client {
namespace {

constexpr const char* kDate = "20150830T123600Z";
constexpr const char* kEmptyHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

AwsCredentials SuiteCredentials() {
  return {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
}

SigV4Request Request(std::string method, std::string path, std::string query = "") {
  SigV4Request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.query = std::move(query);
  r.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", kDate}};
  return r;
}

std::string Authz(const std::string& signed_headers, const std::string& signature) {
  return "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
         "aws4_request, SignedHeaders=" +
         signed_headers + ", Signature=" + signature;
}

SigV4Signature Sign(const SigV4Request& r) {
  return SignV4(r, SuiteCredentials(), "us-east-1", "service", kDate);
}

TEST(SigV4Test, GetVanilla) {
  auto sig = Sign(Request("GET", "/"));
  EXPECT_EQ(sig.canonical_request,
            std::string("GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:") + kDate +
                "\n\nhost;x-amz-date\n" + kEmptyHash);
  EXPECT_EQ(
      sig.string_to_sign,
      "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
      "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(sig.authorization,
            Authz("host;x-amz-date",
                  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

TEST(SigV4Test, PostVanilla) {
  EXPECT_EQ(Sign(Request("POST", "/")).authorization,
            Authz("host;x-amz-date",
                  "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"));
}

TEST(SigV4Test, QueryParametersAreSortedByName) {
  auto sig = Sign(Request("GET", "/", "Param2=value2&Param1=value1"));
  EXPECT_NE(sig.canonical_request.find("\nParam1=value1&Param2=value2\n"),
            std::string::npos);
  EXPECT_EQ(sig.authorization,
            Authz("host;x-amz-date",
                  "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"));
}

TEST(SigV4Test, FormBodyAndContentType) {
  auto r = Request("POST", "/");
  r.headers.insert(r.headers.begin(),
                   {"Content-Type", "application/x-www-form-urlencoded"});
  r.body = "Param1=value1";
  auto sig = Sign(r);
  EXPECT_TRUE(sig.canonical_request.ends_with(
      "\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"));
  EXPECT_EQ(sig.authorization,
            Authz("content-type;host;x-amz-date",
                  "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
}

TEST(SigV4Test, UnreservedCharactersStayAsTheyAre) {
  const std::string unreserved =
      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(Sign(Request("GET", "/", unreserved + "=" + unreserved)).authorization,
            Authz("host;x-amz-date",
                  "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"));
  EXPECT_EQ(Sign(Request("GET", "/" + unreserved)).authorization,
            Authz("host;x-amz-date",
                  "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"));
}

TEST(SigV4Test, HeaderValuesAreTrimmedAndSpacesFolded) {
  auto r = Request("GET", "/");
  r.headers = {{"Host", "example.amazonaws.com"},
               {"My-Header1", " value1"},
               {"My-Header2", " \"a   b   c\""},
               {"X-Amz-Date", kDate}};
  auto sig = Sign(r);
  EXPECT_NE(sig.canonical_request.find("my-header1:value1\nmy-header2:\"a b c\"\n"),
            std::string::npos);
  EXPECT_EQ(sig.authorization,
            Authz("host;my-header1;my-header2;x-amz-date",
                  "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"));
}

TEST(SigV4Test, SessionTokenSignedWhenSent) {
  const std::string token =
      "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAe"
      "MicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phU"
      "ZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38"
      "xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQw"
      "j2ICCR/oLxBA==";
  auto r = Request("POST", "/");
  r.headers.emplace_back("X-Amz-Security-Token", token);
  EXPECT_EQ(Sign(r).authorization,
            Authz("host;x-amz-date;x-amz-security-token",
                  "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"));
}

TEST(SigV4Test, PathIsEncoded) {
  auto sig = Sign(Request("GET", "/example space/"));
  EXPECT_TRUE(sig.canonical_request.starts_with("GET\n/example%20space/\n"));
  EXPECT_EQ(sig.authorization,
            Authz("host;x-amz-date",
                  "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"));
}

TEST(SigV4Test, AnEncodedPathIsEncodedAgain) {
  // Non-S3 services sign the path encoded twice: "%1F" on the wire is "%251F" signed.
  auto sig = Sign(Request("GET", "/v1/namespaces/a%1Fb"));
  EXPECT_TRUE(sig.canonical_request.starts_with("GET\n/v1/namespaces/a%251Fb\n"));
}

TEST(SigV4Test, AmzDateIsUtc) { EXPECT_EQ(AmzDate(1440938160000), kDate); }

}  // namespace
}  // namespace floe::rest_client

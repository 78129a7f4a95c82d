#include "tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>

#include "bisca/client/log.h"
#include "text.h"

namespace bisca::client::detail {
namespace {

constexpr const char* kTlsScheme = "grpcs://";
constexpr const char* kUnixScheme = "unix:";
constexpr const char* kCaVariable = "BISCA_CA";
constexpr const char* kClientCertVariable = "BISCA_CLIENT_CERT";
constexpr const char* kClientKeyVariable = "BISCA_CLIENT_KEY";
constexpr const char* kCertificateMarker = "-----BEGIN CERTIFICATE-----";
constexpr const char* kKeyMarker = "PRIVATE KEY-----";

// OpenSSL's words (in gRPC core's details) for a peer that answered the client's hello with
// something that is not TLS: a plaintext server, most likely.
constexpr std::initializer_list<const char*> kNotTls = {
    "wrong version number", "packet length too long", "unknown protocol", "http request"};
// Words of gRPC core's details for a handshake that failed on the client's side: a server
// certificate it could not verify, or a name it does not carry.
constexpr std::initializer_list<const char*> kHandshakeFailures = {
    "handshake failed", "verification check failed", "certificate"};
// gRPC core's words for TLS files it could not use after all, in versions that say so (1.51
// only logs it and retries "empty address list": target_for() parses the files first).
constexpr const char* kUnusableFiles = "failed to create security handshaker";
// What the client sees when a mutual-TLS server refuses its certificate (or its lack of one):
// with TLS 1.3 the client's side of the handshake is done when the server checks, so the server
// just closes the connection.
constexpr const char* kClosedInHandshake = "socket closed";

bool starts_with(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char letter) { return static_cast<char>(std::tolower(letter)); });
  return text;
}

/// A file given, and what it is called in messages (with the variable it came from).
struct GivenFile {
  std::string path;
  std::string name;
};

/// The file given, else the environment variable's (unset or empty: none).
std::optional<GivenFile> given(const std::string& value, const char* variable, const char* what) {
  if (!value.empty()) return GivenFile{value, cat(what, " ", value)};
  const char* from_environment = std::getenv(variable);
  if (from_environment == nullptr || *from_environment == '\0') return std::nullopt;
  return GivenFile{from_environment, cat(what, " ", from_environment, " (from ", variable, ")")};
}

/// The file's bytes, checked to hold a PEM block: gRPC takes anything and only fails at the
/// handshake, with a message that names no file.  "" when no file was given.
std::string read_pem(const std::optional<GivenFile>& file, const char* marker) {
  if (!file) return "";
  std::FILE* stream = std::fopen(file->path.c_str(), "rb");
  if (stream == nullptr) {
    const int error = errno;
    throw std::invalid_argument(
        cat(file->name, ": ", error == ENOENT ? "no such file"
                                              : cat("cannot read it: ", std::strerror(error))));
  }
  std::string data;
  char buffer[4096];
  std::size_t read = 0;
  while ((read = std::fread(buffer, 1, sizeof buffer, stream)) > 0) data.append(buffer, read);
  const int error = std::ferror(stream) ? errno : 0;  // a folder opens, then cannot be read
  std::fclose(stream);
  if (error != 0) {
    throw std::invalid_argument(cat(file->name, ": cannot read it: ", std::strerror(error)));
  }
  if (data.find(marker) == std::string::npos) {
    std::string block = marker;
    block.erase(0, block.find_first_not_of('-'));
    block.erase(block.find_last_not_of('-') + 1);
    throw std::invalid_argument(cat(file->name, ": not PEM (no '", block, "' block)"));
  }
  return data;
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;
using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bio memory_bio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

/// OpenSSL's reason for the last failure, its error queue emptied (gRPC shares it).
std::string openssl_error() {
  unsigned long last = 0;
  while (const unsigned long code = ERR_get_error()) last = code;
  if (last == 0) return "no reason given";
  char text[256];
  ERR_error_string_n(last, text, sizeof text);
  return text;
}

/// A bot has no terminal to ask a pass phrase on: an encrypted key fails to load instead.
int no_pass_phrase(char*, int, int, void*) { return 0; }

/// The first certificate of a PEM file, every one of its certificates parsed: gRPC 1.51 only
/// logs a file it cannot parse and retries the connection ("empty address list") for the whole
/// backoff budget, so it is said here, naming the file, before any connection.
Certificate parse_certificates(const GivenFile& file, const std::string& pem) {
  ERR_clear_error();
  const Bio input = memory_bio(pem);
  Certificate first(nullptr, &X509_free);
  while (X509* certificate = PEM_read_bio_X509(input.get(), nullptr, no_pass_phrase, nullptr)) {
    if (first) {
      X509_free(certificate);
    } else {
      first.reset(certificate);
    }
  }
  // Reading stops at the end of the file ("no start line") or at a block that does not parse.
  const unsigned long stopped_by = ERR_peek_last_error();
  const bool at_the_end =
      ERR_GET_LIB(stopped_by) == ERR_LIB_PEM && ERR_GET_REASON(stopped_by) == PEM_R_NO_START_LINE;
  if (!first || !at_the_end) {
    throw std::invalid_argument(
        cat(file.name, ": a certificate in it cannot be parsed (", openssl_error(), ")"));
  }
  ERR_clear_error();
  return first;
}

/// The client key parsed and checked against the client certificate (gRPC 1.51 would retry a
/// key that is not the certificate's, as a broken file, for the whole budget).
void check_key(const GivenFile& file, const std::string& pem, X509* certificate,
               const GivenFile& certificate_file) {
  ERR_clear_error();
  const Key key(PEM_read_bio_PrivateKey(memory_bio(pem).get(), nullptr, no_pass_phrase, nullptr),
                &EVP_PKEY_free);
  if (!key) {
    throw std::invalid_argument(cat(file.name,
                                    ": its private key cannot be parsed (an encrypted key is not "
                                    "supported: decrypt it first) (",
                                    openssl_error(), ")"));
  }
  if (X509_check_private_key(certificate, key.get()) != 1) {
    ERR_clear_error();
    throw std::invalid_argument(cat(file.name, ": not the key of the ", certificate_file.name));
  }
}

}  // namespace

Target target_for(const std::string& address, const Options& options) {
  const auto ca = given(options.ca, kCaVariable, "CA file");
  const auto client_cert = given(options.client_cert, kClientCertVariable, "client certificate");
  const auto client_key = given(options.client_key, kClientKeyVariable, "client key");
  const bool wants_tls = starts_with(address, kTlsScheme);
  Target target;
  target.address = address;
  target.dial = wants_tls ? address.substr(std::strlen(kTlsScheme)) : address;
  target.credentials = grpc::InsecureChannelCredentials();
  if (starts_with(target.dial, kUnixScheme)) {
    if (wants_tls) {
      throw std::invalid_argument(cat(address, ": a unix socket is served in plaintext; drop ",
                                      kTlsScheme, " (TLS is for TCP addresses)"));
    }
    if (ca || client_cert || client_key) {
      log(LogLevel::warn, cat(address, " is a unix socket, which the server serves in plaintext: "
                                       "the TLS files given are not used"));
    }
    return target;
  }
  if (client_cert.has_value() != client_key.has_value()) {
    throw std::invalid_argument(
        cat("a client certificate needs its key and a key its certificate: give both "
            "Options::client_cert and Options::client_key (",
            kClientCertVariable, ", ", kClientKeyVariable, ")"));
  }
  if (!wants_tls && !ca && !client_cert) return target;
  grpc::SslCredentialsOptions files;
  files.pem_root_certs = read_pem(ca, kCertificateMarker);  // "": the system's roots
  files.pem_cert_chain = read_pem(client_cert, kCertificateMarker);
  files.pem_private_key = read_pem(client_key, kKeyMarker);
  if (ca) parse_certificates(*ca, files.pem_root_certs);
  if (client_cert) {
    const Certificate certificate = parse_certificates(*client_cert, files.pem_cert_chain);
    check_key(*client_key, files.pem_private_key, certificate.get(), *client_cert);
  }
  target.credentials = grpc::SslCredentials(files);
  target.tls = true;
  target.ca = ca ? ca->path : "";
  target.client_cert = client_cert ? client_cert->path : "";
  target.client_key = client_key ? client_key->path : "";
  return target;
}

std::optional<std::string> Target::refusal(const std::string& details,
                                           bool ever_welcomed) const {
  if (!tls || ever_welcomed) return std::nullopt;
  const std::string words = lowered(details);
  const auto says = [&words](const char* phrase) {
    return words.find(phrase) != std::string::npos;
  };
  if (says(kUnusableFiles)) {
    std::string files;
    for (const std::string* file : {&ca, &client_cert, &client_key}) {
      if (!file->empty()) files += cat(files.empty() ? "" : ", ", *file);
    }
    return cat("cannot set up TLS for ", address,
               ": gRPC could not use the certificates or the key in ", files,
               " (is one of them broken?) (", details, ")");
  }
  if (std::any_of(kNotTls.begin(), kNotTls.end(), says)) {
    return cat("TLS handshake with ", address,
               " failed: the server does not speak TLS there (a plaintext server? then connect to ",
               dial, " with no CA file or client certificate) (", details, ")");
  }
  if (std::any_of(kHandshakeFailures.begin(), kHandshakeFailures.end(), says)) {
    const std::string against =
        ca.empty() ? cat("the system's root certificates (give the server's CA: Options::ca or ",
                         kCaVariable, ")")
                   : cat("the CA in ", ca);
    return cat("TLS handshake with ", address,
               " failed: the server's certificate could not be verified against ", against,
               ", or it does not name the host connected to (", details, ")");
  }
  if (says(kClosedInHandshake)) {
    const std::string need =
        client_cert.empty()
            ? cat("it requires a client certificate (mutual TLS): give Options::client_cert and "
                  "Options::client_key (",
                  kClientCertVariable, ", ", kClientKeyVariable, ")")
            : cat("it does not accept the client certificate ", client_cert,
                  " (mutual TLS: the certificate must be signed by the CA the server trusts)");
    return cat("the server at ", address, " closed the connection during the TLS handshake: ",
               need, " (", details, ")");
  }
  return std::nullopt;
}

std::string Target::hint(const std::string& details) const {
  if (tls || starts_with(dial, kUnixScheme) ||
      lowered(details).find(kClosedInHandshake) == std::string::npos) {
    return "";
  }
  return cat(" (if the server serves TLS, connect to ", kTlsScheme, dial, ")");
}

}  // namespace bisca::client::detail

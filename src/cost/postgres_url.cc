#include "cost/postgres_url.h"

namespace collage {

namespace {

// The end of the authority ("user:password@host:port"): the first '/', '?' or '#' after "//".
size_t AuthorityEnd(const std::string& url, size_t start) {
  const size_t end = url.find_first_of("/?#", start);
  return end == std::string::npos ? url.size() : end;
}

}  // namespace

std::string RedactPassword(const std::string& url) {
  std::string shown = url;
  const size_t scheme = shown.find("://");
  if (scheme != std::string::npos) {
    const size_t start = scheme + 3;
    const size_t end = AuthorityEnd(shown, start);
    // The user part ends at the last '@' of the authority (a password may hold '@' escaped
    // as %40 only, but be lenient).
    const size_t at = shown.rfind('@', end == 0 ? 0 : end - 1);
    if (at != std::string::npos && at >= start) {
      const size_t colon = shown.find(':', start);
      if (colon != std::string::npos && colon < at) shown.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // "password=..." among the parameters, up to the next '&' (or the end).
  for (size_t pos = shown.find("password="); pos != std::string::npos;
       pos = shown.find("password=", pos + 1)) {
    const bool parameter = pos > 0 && (shown[pos - 1] == '?' || shown[pos - 1] == '&');
    if (!parameter) continue;
    const size_t value = pos + 9;
    size_t end = shown.find_first_of("&#", value);
    if (end == std::string::npos) end = shown.size();
    shown.replace(value, end - value, "***");
  }
  return shown;
}

std::string WithConnectTimeout(const std::string& url, int seconds) {
  if (url.find("connect_timeout=") != std::string::npos) return url;
  const size_t fragment = url.find('#');
  const std::string base = url.substr(0, fragment);
  const std::string rest = fragment == std::string::npos ? "" : url.substr(fragment);
  const char separator = base.find('?') == std::string::npos ? '?' : '&';
  return base + separator + "connect_timeout=" + std::to_string(seconds) + rest;
}

}  // namespace collage
